// The row kernels against double-precision C++ references (in the
// interpreter, which test_cpu_conformance shows the JIT matches): checks the
// maths itself, including the DSL-level fast_exp, not just backend agreement.
#include <doctest/doctest.h>

#include <cmath>

#include "dsl/dsl.h"
#include "ops/common/fast_exp.h"
#include "ops/rowwise/rowwise.h"
#include "tests/dsl/host_buffers.h"

using namespace kgen;

TEST_CASE("fast_exp is within 2 ulp of exp on [-87, 88]") {
  ir::Kernel k = dsl::kernel("fast_exp_probe", [](dsl::KernelBuilder& kb) {
    auto x = kb.input("x", dsl::f32);
    auto y = kb.output("y", dsl::f32);
    auto i = dsl::global_id(0);
    y[i] = ops::fast_exp(x[i]);
  });
  const size_t n = 20001;
  std::vector<dsl::test::HostBuf> bufs{{dsl::f32, n + 3}, {dsl::f32, n + 3}};
  for (size_t i = 0; i < n; ++i) bufs[0].set(i, -87.0 + 175.0 * double(i) / double(n - 1));
  bufs[0].set(n, NAN);
  bufs[0].set(n + 1, -INFINITY);
  bufs[0].set(n + 2, INFINITY);
  ir::LaunchDims d;
  d.grid = {uint32_t(n + 3), 1, 1};
  dsl::test::run(k, d, bufs, {});
  CHECK(std::isnan(bufs[1].get(n)));  // NaN passes the clamps
  CHECK(bufs[1].get(n + 1) >= 0.0);   // e^-inf: clamped to e^-87
  CHECK(bufs[1].get(n + 1) < 1e-37);
  CHECK(std::isfinite(bufs[1].get(n + 2)));  // e^inf: clamped to e^88
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    double want = std::exp(bufs[0].get(i));
    worst = std::max(worst, std::fabs(bufs[1].get(i) - want) / want);
  }
  CAPTURE(worst);
  CHECK(worst < 2e-7);  // < 2 ulp of f32 (measured 8e-8)
}

namespace {

void check_op(ops::RowOp op, const ir::Kernel& k, int lanes, int64_t rows, int64_t cols) {
  CAPTURE(k.name);
  CAPTURE(rows);
  CAPTURE(cols);
  ir::Workload w = ops::rowwise_workload(op, lanes, true, rows, cols);
  auto bufs = dsl::test::make_buffers(k, w, 7);
  const auto in = bufs;
  dsl::test::run(k, w.dims, bufs, w.scalars);
  const auto& x = in[0];
  const auto& y = bufs.back();
  const double eps = 1e-5;
  // Relative error, with a floor for outputs that cancel towards zero (the
  // norms' and log-softmax's outputs are O(1); softmax's are tiny but never cancel).
  const double floor = op == ops::RowOp::Softmax ? 1e-12 : 1e-2;
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    auto X = [&](int64_t c) { return x.get(size_t(r * cols + c)); };
    double mx = -INFINITY, s = 0, ss = 0, mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, X(c));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(X(c) - mx), ss += X(c) * X(c), mean += X(c);
    mean /= double(cols);
    for (int64_t c = 0; c < cols; ++c) var += (X(c) - mean) * (X(c) - mean);
    var /= double(cols);
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      switch (op) {
        case ops::RowOp::Softmax: want = std::exp(X(c) - mx) / s; break;
        case ops::RowOp::LogSoftmax: want = X(c) - mx - std::log(s); break;
        case ops::RowOp::RmsNorm: want = X(c) / std::sqrt(ss / double(cols) + eps) * in[1].get(size_t(c)); break;
        case ops::RowOp::LayerNorm:
          want = (X(c) - mean) / std::sqrt(var + eps) * in[1].get(size_t(c)) + in[2].get(size_t(c));
          break;
      }
      double got = y.get(size_t(r * cols + c));
      worst = std::max(worst, std::fabs(got - want) / std::max(std::fabs(want), floor));
    }
  }
  CHECK(worst < 2e-5);
}

}  // namespace

TEST_CASE("row kernels match double-precision references") {
  using ops::RowOp;
  for (auto [lanes, rows, cols] : {std::tuple{1, 3, 17}, std::tuple{1, 2, 1000}, std::tuple{16, 3, 48}, std::tuple{16, 2, 4096}}) {
    check_op(RowOp::Softmax, ops::softmax_rows(dsl::f32, lanes), lanes, rows, cols);
    check_op(RowOp::Softmax, ops::softmax_rows(dsl::f32, lanes, true), lanes, rows, cols);
    check_op(RowOp::LogSoftmax, ops::log_softmax_rows(dsl::f32, lanes), lanes, rows, cols);
    check_op(RowOp::RmsNorm, ops::rmsnorm_rows(dsl::f32, lanes), lanes, rows, cols);
    check_op(RowOp::LayerNorm, ops::layernorm_rows(dsl::f32, lanes), lanes, rows, cols);
  }
}
