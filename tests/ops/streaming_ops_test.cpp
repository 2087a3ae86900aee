// The memory-bound ops' streaming variants and the fused chains' division-free
// sigmoid (ops/elementwise/fusion.cpp sigmoid_div), beyond the tensor-op conformance
// (which runs every candidate, stream=1 included, on the test problems):
// extreme and special inputs against the C++ reference, streamed and not,
// and the heuristic's choice by output size.
#include <algorithm>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ops/elementwise/fusion.h"
#include "ops/core/op.h"
#include "ops/common/stream_heuristic.h"
#include "runtimes/runtime.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::ops;

namespace {

// Runs chain `c` (1-D, f32) on the CPU with variant `v` and returns the output.
std::vector<float> run_chain(rt::Device& dev, const fusion::Chain& c, const std::vector<std::vector<float>>& in,
                             const fusion::ChainVariant& v) {
  Plan pl;
  std::vector<int> slots;
  for (size_t i = 0; i < in.size(); ++i) slots.push_back(int(i));
  fusion::plan_chain(pl, c, slots, int(in.size()), v);
  REQUIRE(pl.steps.size() == 1);
  const Step& s = pl.steps[0];
  const size_t n = size_t(fusion::numel(c.shape));
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  for (const auto& h : in) {
    bufs.push_back(dev.alloc(h.size() * 4));
    bufs.back()->upload(h.data(), h.size() * 4);
  }
  std::vector<float> out(n, 12345.0f);
  bufs.push_back(dev.alloc(n * 4));
  bufs.back()->upload(out.data(), n * 4);
  rt::LaunchArgs a;
  a.dims = s.dims;
  a.scalars = s.scalars;
  for (int slot : s.buffers) a.buffers.push_back(bufs[size_t(slot)].get());
  auto k = dev.compile(s.kernel);
  dev.launch(*k, a);
  dev.synchronize();
  bufs.back()->download(out.data(), n * 4);
  return out;
}

}  // namespace

TEST_CASE("gelu and sigmoid chains: extreme, infinite and NaN inputs, streamed and not") {
  using namespace fusion;
  const size_t n = 4096;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = -130.0f + 260.0f * float(i) / float(n - 1);
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[8] = std::numeric_limits<float>::infinity();
  x[9] = -std::numeric_limits<float>::infinity();
  x[10] = 0.0f;
  x[11] = -0.0f;
  const Expr exprs[] = {gelu(in(0)), sigmoid(in(0)), silu(in(0))};
  const char* names[] = {"gelu", "sigmoid", "silu"};
  for (unsigned threads : {1u, 2u}) {
    auto dev = test::cpu(threads);
    for (int e = 0; e < 3; ++e)
      for (bool stream : {false, true}) {
        CAPTURE(names[e]);
        CAPTURE(stream);
        Chain c;
        c.inputs = {{"x", ir::ScalarKind::F32, {int64_t(n)}}};
        c.shape = {int64_t(n)};
        c.out = exprs[e];
        ChainVariant v;
        v.stream = stream;
        std::vector<float> got = run_chain(*dev, c, {x}, v), want(n);
        reference_chain(c, {x.data()}, want.data());
        double rms = 0;
        for (float w : want)
          if (std::isfinite(w)) rms += double(w) * w;
        rms = std::sqrt(rms / double(n));
        for (size_t i = 0; i < n; ++i) {
          CAPTURE(x[i]);
          CAPTURE(got[i]);
          CAPTURE(want[i]);
          if (std::isnan(want[i]) && std::isinf(x[i])) {
            // -inf / (1 + e^inf) is NaN exactly; the division-free form gives
            // -inf * (1 / 6e37) = -inf. Neither is the limit 0: both non-finite.
            CHECK_FALSE(std::isfinite(got[i]));
          } else if (std::isnan(want[i])) {
            CHECK(std::isnan(got[i]));
          } else if (std::isinf(want[i])) {
            CHECK(got[i] == want[i]);
          } else {
            CHECK(std::fabs(double(got[i]) - want[i]) <= 2e-5 * std::max(std::fabs(double(want[i])), rms));
          }
        }
      }
  }
}

TEST_CASE("the heuristics stream outputs of half the last-level cache (at most 65 MiB) and more, on the CPU") {
  register_all_ops();
  auto dev = test::cpu(1);
  TargetCaps caps = dev->caps();
  MESSAGE("host LLC " << caps.llc_bytes / (1 << 20) << " MiB");
  caps.cpu.split_zmm = false;  // Zen 4's softmax rule is checked below
  // The two machines the bound was measured on; then an unknown LLC.
  for (uint64_t llc_mib : {260, 32, 0}) {
    CAPTURE(llc_mib);
    caps.llc_bytes = llc_mib << 20;
    const double bound = llc_mib ? std::min(double(llc_mib << 20) / 2, kStreamMinOutputBytes) : kStreamMinOutputBytes;
    Problem big;
    big.op = "ew_chain";
    big.dims = {8192, 4096};  // 128 MiB out
    big.attrs = {{"chain", 2}};
    CHECK(op_for(big).heuristic(big, caps).get("stream") == 1);
    CHECK(op_for(big).heuristic(big, caps).get("pf") == fusion::kStreamPrefetch);  // streamed lines prefetch ahead
    Problem small = big;
    small.dims = {1024, 4096};  // 16 MiB out
    CHECK(op_for(small).heuristic(small, caps).get("stream") == int(16.0 * (1 << 20) >= bound));
    Problem odd = big;
    odd.dims = {8192, 4100};  // rows not whole lines: their lines land unaligned, stored plainly
    CHECK(op_for(odd).heuristic(odd, caps).get("stream") == 0);
    Problem flat;  // one contiguous row off whole lines: every line but the tail lands aligned
    flat.op = "ew_unary";
    flat.dims = {int64_t(8192) * 4097};
    flat.attrs = {{"fn", 0}};
    CHECK(op_for(flat).heuristic(flat, caps).get("stream") == 1);
    Problem rows;
    rows.op = "rmsnorm";
    rows.dims = {2048, 1024};  // 8 MiB out: never half of these LLCs
    CHECK(op_for(rows).heuristic(rows, caps).get("stream") == 0);
    rows.dims = {4096, 1024};  // 16 MiB: half the 32 MiB LLC
    CHECK(op_for(rows).heuristic(rows, caps).get("stream") == int(llc_mib == 32));
    rows.dims = {16384, 4096};  // 256 MiB
    CHECK(op_for(rows).heuristic(rows, caps).get("stream") == 1);
    // The softmax family (with its row prefetch) follows the same bound.
    for (const char* name : {"softmax", "log_softmax"}) {
      Problem sm;
      sm.op = name;
      sm.dims = {4096, 4096};  // 64 MiB
      const Variant v = op_for(sm).heuristic(sm, caps);
      CHECK(v.get("stream") == int(64.0 * (1 << 20) >= bound));
      CHECK(v.get("pf") == 1);
      sm.dims = {16384, 4096};
      CHECK(op_for(sm).heuristic(sm, caps).get("stream") == 1);
    }
    CHECK(stream_output(caps, bound));
    CHECK_FALSE(stream_output(caps, bound / 2));
    // Zen 4 (zmm in halves): softmax plainly, log-softmax as above.
    TargetCaps zen4 = caps;
    zen4.cpu.split_zmm = true;
    for (int64_t rows : {4096, 16384}) {
      Problem sm;
      sm.op = "softmax";
      sm.dims = {rows, 4096};
      const Variant v = op_for(sm).heuristic(sm, zen4);
      CHECK(v.get("lanes") == 16);
      CHECK(v.get("stream") == 0);
      CHECK(v.get("pf") == 0);
      sm.op = "log_softmax";
      CHECK(op_for(sm).heuristic(sm, zen4).get("pf") == 1);
    }
  }
  caps.name = "vulkan";
  CHECK_FALSE(stream_output(caps, 1e12));
}
