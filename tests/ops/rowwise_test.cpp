// The rowwise family (ops/rowwise/): softmax, log_softmax, rmsnorm and
// layernorm against the C++ references on the CPU (every candidate), the
// interpreter and the GPU devices present; NaN and infinities in rows.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "runtimes/runtime.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

KGEN_OP_FAMILY_TESTS("row ops", "softmax", "log_softmax", "rmsnorm", "layernorm")

TEST_CASE("softmax and log-softmax rows holding a NaN come out NaN; +-inf and the other rows as the reference") {
  // The CPU kernels' running max skips a NaN (one vmaxps) and fast_exp passes
  // it on: the row's sum, and so the whole row, is NaN, as the exact maths
  // makes it. A row with -inf entries stays finite (exp(-inf) = 0).
  ops::register_all_ops();
  auto dev = cpu(1);
  for (const char* op : {"softmax", "log_softmax"}) {
    ops::Problem p;
    p.op = op;
    p.dims = {6, 64};
    const ops::OpDef& d = ops::op_for(p);
    for (const auto& v : d.candidates(p, dev->caps())) {
      CAPTURE(op);
      CAPTURE(v.str());
      ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
      float* x = reinterpret_cast<float*>(t.in[0].data());
      x[1 * 64 + 5] = NAN;        // row 1: NaN at the start of a line
      x[3 * 64 + 63] = NAN;       // row 3: NaN at the last lane
      x[4 * 64 + 9] = -INFINITY;  // row 4: finite outputs, 0 (or -inf) at the -inf
      ops::PreparedPlan pp = ops::prepare(*dev, p, v);
      ops::DeviceTensors dt = ops::upload(*dev, t);
      ops::execute(*dev, pp, dt.io());
      ops::HostTensors want = t;
      ops::run_reference(p, want);
      ops::download(dt, t, t.in.size());
      const float* y = reinterpret_cast<const float*>(t.out[0].data());
      const float* r = reinterpret_cast<const float*>(want.out[0].data());
      for (int row = 0; row < 6; ++row)
        for (int c = 0; c < 64; ++c) {
          const float g = y[row * 64 + c], w = r[row * 64 + c];
          CAPTURE(row);
          CAPTURE(c);
          CAPTURE(g);
          CAPTURE(w);
          if (row == 1 || row == 3) CHECK(std::isnan(g));
          else if (std::isinf(w)) CHECK(g == w);
          else CHECK(std::fabs(g - w) <= 1e-5 * std::max(1.0f, std::fabs(w)));
        }
    }
  }
}
