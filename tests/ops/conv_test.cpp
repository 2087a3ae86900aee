// The conv family (conv2d, maxpool2d, avgpool2d, global_avgpool): every test
// problem (odd shapes: 1×1, 3×3, 5×5 stride 2, dilation 2, groups, depthwise,
// excess and asymmetric padding, prime H/W, N = 1 and 3, OC off the block,
// bias + ReLU) with the heuristic variant and with each GEMM path on the CPU
// (1 and 2 threads) and on the GPU devices present; every candidate of small
// problems; tiny problems of every impl through the IR interpreter.
#include <doctest/doctest.h>

#include <random>

#include "tests/ops/op_test_util.h"
#include "ops/conv/conv.h"
#include "ops/core/executor.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/core/op.h"

using namespace kgen;
using namespace kgen::test;

namespace {

const char* kOps[] = {"conv2d", "maxpool2d", "avgpool2d", "global_avgpool"};

}  // namespace

TEST_CASE("conv family: heuristic variants on every test problem, CPU 1 and 2 threads") {
  ops::register_all_ops();
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (const char* op : kOps) {
      const ops::OpDef* d = ops::find_op(op);
      REQUIRE(d);
      CHECK(d->test_problems.size() >= 5);
      for (const auto& p : d->test_problems) check(*dev, p, d->heuristic(p, dev->caps()));
    }
  }
}

TEST_CASE("conv2d: the GEMM paths and the GPU kernels on every test problem (CPU)") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("conv2d");
  auto dev = cpu(2);
  for (const auto& p : d.test_problems) {
    check(*dev, p, ops::Variant::parse("impl=1 mr=6 nl=1 kc=0 mc=2 nc=2"));  // edge panels everywhere
    check(*dev, p, ops::Variant::parse("impl=1 mr=14 nl=2 kc=0 mc=8 nc=8"));
    if (ops::conv_is_pointwise(ops::conv_shape(p))) check(*dev, p, ops::Variant::parse("impl=2 mr=14 nl=2 kc=0 mc=8 nc=8"));
    // The GPU kernels are plain SIMT code: they run on the CPU too.
    check(*dev, p, ops::Variant::parse("impl=4 wg=64 ocb=4"));
    for (const char* v : {"impl=5 tn=4", "impl=5 tn=8", "impl=5 tn=4 ks=3", "impl=5 tn=8 ks=2 db=1"}) check(*dev, p, ops::Variant::parse(v));
  }
}

TEST_CASE("conv2d: the implicit GEMM on every test problem, on the GPU devices") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("conv2d");
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) continue;  // (the heuristic-variant case below says so)
    auto dev = rt::create_device(name);
    for (const auto& p : d.test_problems)
      for (const char* s : {"impl=5 tn=4", "impl=5 tn=8", "impl=5 tn=4 ks=3", "impl=5 tn=8 ks=2 db=1"}) {
        auto v = ops::Variant::parse(s);
        if (ops::line_tile_fits(dev->caps().max_shared_bytes, 16, uint32_t(v.get("tn")), v.get("db", 0) == 1)) check(*dev, p, v);
      }
  }
}

TEST_CASE("conv2d: every candidate of small problems, CPU 1 and 2 threads") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("conv2d");
  std::vector<ops::Problem> ps = {
      problem("conv2d", {3, 7, 11, 13, 13, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
      problem("conv2d", {2, 9, 5, 7, 11, 1, 1}),
      problem("conv2d", {1, 6, 9, 7, 6, 5, 5}, {{"groups", 6}, {"pad_h", 2}, {"pad_w", 3}, {"stride_w", 2}}),
      // Depthwise rows of 16+ outputs, row counts that leave remainders for
      // every rows/rb: stride 2 (kernel rows shared across output rows at
      // an offset), dilated rows (shared two rows apart).
      problem("conv2d", {1, 3, 15, 37, 3, 3, 3}, {{"groups", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}}),
      problem("conv2d", {2, 2, 13, 20, 2, 3, 3}, {{"groups", 2}, {"dilation_h", 2}, {"pad_h", 2}, {"pad_w", 1}, {"relu", 1}}),
      problem("conv2d", {1, 3, 10, 45, 3, 5, 5}, {{"groups", 3}, {"dilation_w", 2}, {"pad_h", 2}, {"pad_w", 4}, {"pad_r", 2}}),
      problem("conv2d", {1, 5, 7, 15, 36, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}),
      // 70 channels: two groups of the tap table (64 channels each, the
      // second partial), with stride 2 and dilation in its divisions.
      problem("conv2d", {1, 70, 9, 8, 8, 3, 3}, {{"stride_h", 2}, {"dilation_w", 2}, {"pad_h", 1}, {"pad_w", 2}})};
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (const auto& p : ps) {
      auto cands = d.candidates(p, dev->caps());
      CHECK(cands.size() >= 6);
      for (const auto& v : cands) check(*dev, p, v);
    }
  }
}

// The conv test problems Winograd fits, and its tile edges: the output
// transform's row cases, OW = 1 (one tile, no second column), 31 (15 whole
// tiles: all lane by lane), 35 (17 whole: a line, an overlapping line, the
// ragged last column), 64 (two lines), 30 unpadded; odd OH (a tile row's
// second output row dropped); groups with asymmetric padding, bias and ReLU;
// 70 channels (a ragged block of 16 in the weight transform) and OC off the
// GEMM's row panels.
std::vector<ops::Problem> winograd_problems() {
  ops::register_all_ops();
  const std::map<std::string, int64_t> pad1{{"pad_h", 1}, {"pad_w", 1}};
  std::vector<ops::Problem> ps;
  for (const auto& p : ops::find_op("conv2d")->test_problems)
    if (ops::conv_winograd_fits(ops::conv_shape(p))) ps.push_back(p);
  CHECK(ps.size() >= 5);
  ps.push_back(problem("conv2d", {1, 3, 3, 3, 2, 3, 3}));
  ps.push_back(problem("conv2d", {1, 4, 9, 31, 9, 3, 3}, pad1));
  ps.push_back(problem("conv2d", {2, 5, 33, 35, 7, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"bias", 1}}));
  ps.push_back(problem("conv2d", {1, 8, 17, 64, 17, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"relu", 1}}));
  ps.push_back(problem("conv2d", {3, 6, 12, 32, 5, 3, 3}));
  ps.push_back(problem("conv2d", {2, 8, 11, 40, 6, 3, 3}, {{"groups", 2}, {"pad_h", 0}, {"pad_w", 2}, {"pad_b", 2}, {"pad_r", 0}, {"bias", 1}, {"relu", 1}}));
  ps.push_back(problem("conv2d", {1, 70, 13, 21, 13, 3, 3}, pad1));
  return ps;
}

TEST_CASE("conv2d: Winograd F(2x2,3x3) on every test problem that fits and at its tile edges, CPU 1 and 2 threads") {
  const std::vector<ops::Problem> ps = winograd_problems();
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (const auto& p : ps) {
      check(*dev, p, ops::Variant::parse("impl=9"));
      check(*dev, p, ops::Variant::parse("impl=9 mr=6 nl=1 kc=0 mc=2 nc=2"));  // edge panels everywhere
      // Chunks of one image, and of one tile row (the smallest budget).
      check(*dev, p, ops::Variant::parse("impl=9 mr=4 nl=2 kc=0 mc=1 nc=1 ck=1"));
    }
  }
  // Not a 3x3 stride-1 undilated conv: refused with the reason.
  auto dev = cpu(1);
  CHECK_THROWS_AS(ops::check_op(*dev, problem("conv2d", {1, 2, 9, 9, 2, 3, 3}, {{"stride_h", 2}}), ops::Variant::parse("impl=9"), 1),
                  std::invalid_argument);
}

TEST_CASE("conv2d: Winograd-domain weights (w_layout=16) on every Winograd problem, CPU 1 and 2 threads") {
  // The weights given as U = G g Gᵀ (made from random OIHW weights; the
  // reference unpacks them, so a wrong layout either way fails).
  const auto& d = *ops::find_op("conv2d");
  std::vector<ops::Problem> ps = winograd_problems();
  for (auto& p : ps) p.attrs["w_layout"] = 16;
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (const auto& p : ps) {
      CHECK(d.heuristic(p, dev->caps()).get("impl") == 9);
      check(*dev, p, d.heuristic(p, dev->caps()));
      check(*dev, p, ops::Variant::parse("impl=9 mr=4 nl=2 kc=0 mc=1 nc=1 ck=1"));
    }
  }
  // Every candidate of one problem (the GEMM register blocks).
  auto dev = cpu(2);
  for (const auto& v : d.candidates(ps.back(), dev->caps())) check(*dev, ps.back(), v);
  // The transform round-trips (L G = I) to f32 rounding.
  const ops::ConvShape s = ops::conv_shape(ps[ps.size() - 2]);
  std::vector<float> w(size_t(s.oc * s.cg() * 9)), u(size_t(ops::conv_weights_winograd_size(s))), back(w.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 37 % 101) - 50) / 16.0f;
  ops::conv_pack_weights_winograd(s, w.data(), u.data());
  ops::conv_unpack_weights_winograd(s, u.data(), back.data());
  for (size_t i = 0; i < w.size(); ++i) CHECK(std::abs(back[i] - w[i]) <= 1e-6f * 4.0f);
  // U[ξ = 0] is g[0][0] and U[ξ = 15] g[2][2] (rows 0 and 3 of G are taps 0 and 2).
  CHECK(u[0] == w[0]);
  CHECK(u[size_t(15 * s.ocg() * s.cg())] == w[8]);
  // Only impl=9 on the CPU reads it; other kernels, strides and dilations are refused with the reason.
  auto caps = codegen::cpu_caps();
  CHECK_THROWS_AS(d.plan(ps[0], ops::Variant::parse("impl=0 ocb=6 lines=4 pb=2"), caps), std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(problem("conv2d", {1, 4, 9, 9, 4, 3, 3}, {{"stride_h", 2}, {"w_layout", 16}})), std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(problem("conv2d", {1, 4, 9, 9, 4, 5, 5}, {{"w_layout", 16}})), std::invalid_argument);
  auto gpu = caps;
  gpu.name = "vulkan";
  CHECK(d.candidates(ps[0], gpu).empty());
  CHECK_THROWS_AS(d.plan(ps[0], ops::Variant::parse("impl=9"), gpu), std::invalid_argument);
}

TEST_CASE("conv2d: weights packed by 32 output channels (w_layout=32)") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("conv2d");
  // Channels off the 32-block (40: a half-empty second block, its pad lanes
  // random in the packed input and never stored), groups of 20, stride 2,
  // rows of 7 and 5, bias + ReLU.
  std::vector<ops::Problem> ps = {
      problem("conv2d", {1, 16, 7, 7, 40, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"w_layout", 32}}),
      problem("conv2d", {2, 8, 9, 11, 40, 3, 3}, {{"groups", 2}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1},
                                                  {"bias", 1}, {"relu", 1}, {"w_layout", 32}}),
      problem("conv2d", {1, 12, 14, 14, 64, 1, 1}, {{"w_layout", 32}})};
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (const auto& p : ps) {
      CHECK(d.heuristic(p, dev->caps()).get("impl") == 8);
      auto cands = d.candidates(p, dev->caps());
      CHECK(!cands.empty());
      for (const auto& v : cands) check(*dev, p, v);
    }
  }
  // The packed layout round-trips, zeros in the pad lanes.
  const ops::ConvShape s = ops::conv_shape(ps[1]);
  std::vector<float> w(size_t(s.oc * s.cg() * s.taps())), packed(size_t(ops::conv_weights_oc32_size(s)), -1.0f), back(w.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 97) - 48.0f;
  ops::conv_pack_weights_oc32(s, w.data(), packed.data());
  ops::conv_unpack_weights_oc32(s, packed.data(), back.data());
  CHECK(back == w);
  // OCg = 20: group 0's block holds channels 0..19, lanes 20..31 zeros;
  // consecutive lanes are consecutive channels (a w row apart).
  CHECK(packed[20] == 0.0f);
  CHECK(packed[31] == 0.0f);
  CHECK(packed[0] == w[0]);
  CHECK(packed[1] == w[size_t(s.cg() * s.taps())]);
  // Only impl=8 with two lines reads the layout; other layouts are rejected.
  auto caps = codegen::cpu_caps();
  CHECK_THROWS_AS(d.plan(ps[0], ops::Variant::parse("impl=0 ocb=6 lines=4 pb=2"), caps), std::invalid_argument);
  CHECK_THROWS_AS(d.plan(ps[0], ops::Variant::parse("impl=8 nl=1 pb=7"), caps), std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(problem("conv2d", {1, 16, 7, 7, 40, 3, 3}, {{"w_layout", 8}})), std::invalid_argument);
  auto gpu = caps;
  gpu.name = "vulkan";
  CHECK(d.candidates(ps[0], gpu).empty());
}

TEST_CASE("pooling: every candidate of every test problem, CPU 2 threads") {
  ops::register_all_ops();
  auto dev = cpu(2);
  for (const char* op : {"maxpool2d", "avgpool2d", "global_avgpool"}) {
    const auto& d = *ops::find_op(op);
    for (const auto& p : d.test_problems)
      for (const auto& v : d.candidates(p, dev->caps())) check(*dev, p, v);
  }
}

TEST_CASE("conv2d: heuristic choices") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  const auto& d = *ops::find_op("conv2d");
  // The direct kernel's register block follows the register file.
  const auto avx512 = test::cpu_caps_with(512, 32), avx2 = test::cpu_caps_with(256, 16);
  const auto conv3x3 = problem("conv2d", {1, 64, 56, 56, 64, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}});
  auto v = d.heuristic(problem("conv2d", {1, 32, 112, 112, 32, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512);
  CHECK(v.get("impl") == 0);
  CHECK(v.get("ocb") == 8);
  CHECK(v.get("lines") == 3);
  // Winograd on AVX-512 from 48 input and 32 output channels, on maps of 56+
  // columns or with 8192+ channel pairs, from 12×12 outputs; not 64 -> 64
  // at 28², nor maps of 11² and less.
  CHECK(d.heuristic(problem("conv2d", {1, 64, 13, 13, 256, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512).get("impl") == 9);
  CHECK(d.heuristic(problem("conv2d", {1, 128, 10, 10, 128, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512).get("impl") == 0);
  CHECK(d.heuristic(conv3x3, avx512).get("impl") == 9);
  CHECK(d.heuristic(problem("conv2d", {8, 128, 28, 28, 128, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512).get("impl") == 9);
  CHECK(d.heuristic(problem("conv2d", {1, 64, 28, 28, 64, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512).get("impl") == 8);
  CHECK(d.heuristic(problem("conv2d", {1, 512, 7, 7, 512, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx512).get("impl") == 0);
  v = d.heuristic(conv3x3, avx2);  // Winograd on AVX2 where it saves a third of the multiplies
  CHECK(v.get("impl") == 9);
  CHECK(d.heuristic(problem("conv2d", {1, 256, 14, 14, 256, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx2).get("impl") == 9);
  CHECK(d.heuristic(problem("conv2d", {1, 8, 28, 28, 8, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx2).get("impl") == 0);  // few channels
  CHECK(d.heuristic(problem("conv2d", {1, 64, 56, 56, 64, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"stride_h", 2}}), avx2).get("impl") == 0);
  // Pointwise as a GEMM on x from 14² (AVX-512) or 28² (AVX2).
  CHECK(d.heuristic(problem("conv2d", {1, 24, 56, 56, 144, 1, 1}), avx2).get("impl") == 2);
  CHECK(d.heuristic(problem("conv2d", {1, 256, 14, 14, 256, 1, 1}), avx2).get("impl") == 0);
  CHECK(d.heuristic(problem("conv2d", {1, 256, 14, 14, 256, 1, 1}), avx512).get("impl") == 2);
  v = d.heuristic(problem("conv2d", {1, 512, 7, 7, 512, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}}), avx2);  // 7²: no saving
  CHECK(v.get("impl") == 0);
  CHECK(v.get("ocb") == 6);
  CHECK(v.get("lines") == 1);
  // Depthwise: small planes unrolled (7), rows from x (6), else rows over
  // the pre-pass (3).
  auto dw = [&](int64_t c, int64_t hw, int64_t stride) {
    return d.heuristic(problem("conv2d", {1, c, hw, hw, c, 3, 3},
                               {{"groups", c}, {"pad_h", 1}, {"pad_w", 1}, {"stride_h", stride}, {"stride_w", stride}}),
                       caps)
        .get("impl");
  };
  CHECK(dw(960, 7, 1) == 7);
  CHECK(dw(576, 14, 1) == 7);
  CHECK(dw(32, 28, 1) == 6);
  CHECK(dw(144, 56, 2) == 6);
  CHECK(dw(32, 56, 3) == 3);
  auto gpu = caps;
  gpu.name = "vulkan";
  CHECK(d.heuristic(problem("conv2d", {1, 64, 56, 56, 64, 3, 3}), gpu).get("impl") == 5);  // implicit GEMM
  CHECK(d.heuristic(problem("conv2d", {1, 32, 28, 28, 32, 3, 3}, {{"groups", 32}}), gpu).get("impl") == 4);  // depthwise
  // Malformed problems are refused with a reason.
  CHECK_THROWS_AS(ops::op_for(problem("conv2d", {1, 6, 8, 8, 4, 3, 3}, {{"groups", 4}})), std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(problem("conv2d", {1, 2, 2, 2, 4, 3, 3})), std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(problem("maxpool2d", {1, 2, 8, 8}, {{"kernel_h", 2}, {"pad_h", 2}})), std::invalid_argument);
}

TEST_CASE("conv family: tiny problems of every impl through the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  auto gpu = caps;
  gpu.name = "vulkan";
  struct Case {
    ops::Problem p;
    const char* v;
    bool on_gpu;
  };
  const std::map<std::string, int64_t> pad1{{"pad_h", 1}, {"pad_w", 1}};
  std::vector<Case> cases = {
      {problem("conv2d", {1, 2, 5, 6, 3, 3, 3}, {{"pad_h", 1}, {"pad_w", 2}, {"bias", 1}, {"relu", 1}}),
       "impl=0 ocb=2 lines=1 pb=2", false},
      // Weights broadcast from w itself (wd), an OC edge block, groups.
      {problem("conv2d", {1, 4, 5, 6, 10, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}}), "impl=0 ocb=4 lines=1 pb=2 wd=1",
       false},
      {problem("conv2d", {1, 2, 7, 5, 3, 3, 3}, {{"stride_h", 2}, {"stride_w", 2}, {"dilation_w", 2}, {"pad_w", 1}}),
       "impl=0 ocb=4 lines=2 pb=1", false},
      {problem("conv2d", {2, 4, 4, 5, 4, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}}), "impl=1 mr=4 nl=1 kc=0 mc=1 nc=2", false},
      {problem("conv2d", {1, 3, 4, 5, 5, 1, 1}, {{"bias", 1}}), "impl=2 mr=4 nl=1 kc=0 mc=1 nc=1", false},
      {problem("conv2d", {1, 3, 5, 5, 3, 3, 3}, {{"groups", 3}, {"pad_h", 1}, {"pad_w", 1}}), "impl=3 rb=2", false},
      {problem("conv2d", {1, 2, 5, 37, 2, 3, 3}, {{"groups", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
       "impl=3 rb=3", false},
      {problem("conv2d", {1, 2, 9, 37, 2, 3, 3}, {{"groups", 2}, {"dilation_h", 2}, {"pad_h", 2}, {"pad_w", 1}}), "impl=3 rb=7 rows=4", false},
      {problem("conv2d", {1, 2, 9, 20, 2, 3, 3}, {{"groups", 2}, {"stride_h", 2}, {"pad_h", 1}, {"pad_w", 1}}), "impl=3 rb=5 rows=2", false},
      // Depthwise from x: a left edge line, an overlapping last line at the
      // right edge, top and bottom border rows, interior rows in groups and
      // one by one; stride 2 (edge lines of shuffled windows), dilated 5×5.
      {problem("conv2d", {1, 2, 9, 37, 2, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
       "impl=6 rb=5 rows=2", false},
      {problem("conv2d", {1, 2, 8, 41, 2, 3, 3}, {{"groups", 2}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=6 rb=3 rows=1", false},
      {problem("conv2d", {1, 1, 11, 40, 1, 5, 5}, {{"groups", 1}, {"dilation_w", 2}, {"pad_h", 2}, {"pad_w", 3}}),
       "impl=6 rb=16 rows=4", false},
      // Rows under 32 inputs: the edge lines' window is the whole row as two
      // overlapping lines.
      {problem("conv2d", {1, 2, 6, 20, 2, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}}), "impl=6 rb=4 rows=4", false},
      {problem("conv2d", {1, 2, 5, 31, 2, 3, 3}, {{"groups", 2}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=6 rb=2 rows=1", false},
      // Small planes, fully unrolled: two output lines (the last overlapping),
      // taps across three input lines, stride 2, dilation, 5×5, 16 outputs.
      {problem("conv2d", {2, 2, 5, 7, 2, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}), "impl=7",
       false},
      {problem("conv2d", {1, 3, 9, 9, 3, 3, 3}, {{"groups", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=7", false},
      {problem("conv2d", {1, 2, 8, 9, 2, 5, 5}, {{"groups", 2}, {"dilation_h", 2}, {"pad_h", 3}, {"pad_w", 2}}), "impl=7", false},
      {problem("conv2d", {1, 1, 4, 4, 1, 3, 3}, {{"groups", 1}, {"pad_h", 1}, {"pad_w", 1}}), "impl=7", false},
      // The same through the zero-padded plane (stride 1): asymmetric and
      // dilated padding, bias and ReLU, windows across P's lines.
      {problem("conv2d", {2, 2, 5, 7, 2, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
       "impl=7 vp=1", false},
      {problem("conv2d", {1, 2, 8, 9, 2, 5, 5}, {{"groups", 2}, {"dilation_h", 2}, {"pad_h", 3}, {"pad_w", 2}, {"pad_b", 1}, {"pad_r", 4}}),
       "impl=7 vp=1", false},
      {problem("conv2d", {1, 3, 14, 14, 3, 3, 3}, {{"groups", 3}, {"pad_h", 1}, {"pad_w", 1}}), "impl=7 vp=1", false},
      {problem("conv2d", {1, 2, 9, 9, 2, 3, 3}, {{"groups", 2}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=7 vp=1", false},
      // Lines along output channels: an OC edge block (20 = 16 + 4), groups,
      // a row in chunks (the last overlapping), stride 2, bias and ReLU.
      {problem("conv2d", {1, 4, 6, 9, 40, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
       "impl=8 pb=4 nl=1", false},
      {problem("conv2d", {2, 3, 9, 11, 33, 3, 3}, {{"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=8 pb=6 nl=2", false},
      {problem("conv2d", {1, 2, 11, 10, 2, 5, 3}, {{"groups", 2}, {"stride_h", 2}, {"stride_w", 3}, {"dilation_h", 2}, {"pad_h", 4}, {"pad_w", 1}, {"pad_r", 2}}),
       "impl=7 vp=1", false},
      {problem("conv2d", {1, 4, 5, 4, 6, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"stride_w", 2}, {"bias", 1}}), "impl=4 wg=8 ocb=2",
       true},
      // Winograd: odd OH and OW (ragged tiles), groups, bias and ReLU, two
      // images in chunks of one tile row.
      {problem("conv2d", {2, 4, 5, 7, 6, 3, 3}, {{"groups", 2}, {"pad_h", 1}, {"pad_w", 1}, {"bias", 1}, {"relu", 1}}),
       "impl=9 mr=4 nl=1 kc=0 mc=1 nc=1 ck=1", false},
      {problem("maxpool2d", {1, 2, 5, 6}, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "wg=16", false},
      {problem("avgpool2d", {1, 2, 5, 6}, {{"kernel_h", 3}, {"kernel_w", 3}, {"pad_h", 1}, {"pad_w", 1}, {"count_include_pad", 0}}),
       "wg=16", false},
      // The CPU rows kernel: its left-edge chunk (W >= 32), whole and
      // overlapping chunks, and the prefetch of rows past the plane's end.
      {problem("maxpool2d", {1, 2, 7, 37}, {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_h", 1}, {"pad_w", 1}}),
       "impl=1 pf=2", false},
      {problem("avgpool2d", {1, 2, 4, 35}, {{"kernel_h", 3}, {"kernel_w", 2}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"count_include_pad", 0}}),
       "impl=1 pf=3", false},
      // Four output rows per work-item (the last group with three), each
      // averaged over its own clipped rows.
      {problem("avgpool2d", {1, 2, 7, 35}, {{"kernel_h", 3}, {"kernel_w", 2}, {"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"count_include_pad", 0}}),
       "impl=1 pf=1 rb=4", false},
      {problem("conv2d", {1, 4, 5, 6, 36, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}, {"w_layout", 32}}), "impl=8 nl=2 pb=3", false},
      {problem("global_avgpool", {2, 3, 5, 7}), "impl=0", false},
      // 16 planes per work-item: a partial group, an overlapping last line.
      {problem("global_avgpool", {2, 3, 5, 7}), "impl=2", false},
      {problem("global_avgpool", {1, 20, 4, 5}), "impl=2", false},
      {problem("global_avgpool", {2, 3, 5, 7}), "impl=1 wg=4", true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.p.str());
    CAPTURE(c.v);
    auto r = ops::check_op_interpreted(c.p, ops::Variant::parse(c.v), c.on_gpu ? gpu : caps, fresh_seed());
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("conv family: heuristic variants on the GPU devices") {
  ops::register_all_ops();
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: conv GPU checks skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    for (const char* op : kOps) {
      const auto& d = *ops::find_op(op);
      for (const auto& p : d.test_problems) check(*dev, p, d.heuristic(p, dev->caps()));
    }
  }
}
