// The matmul family (matmul, gated_mlp): every test problem with the
// heuristic variant on the CPU (1 and 2 threads) and on the GPU devices
// present, every candidate of small shapes on the CPU, tiny problems through
// the IR interpreter, and the microkernel's assembly (accumulators in zmm
// registers, FMAs with broadcast loads, nothing spilled).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <ctime>

#include "tests/ops/op_test_util.h"
#include "ir/half.h"
#include "ir/interpreter.h"
#include "ops/matmul/bf16_round.h"
#include "ops/core/executor.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"
#include "ops/core/op.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::test;

namespace {

void heuristic_on(rt::Device& dev, const std::string& op) {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op(op);
  REQUIRE(d);
  for (const auto& p : d->test_problems) check(dev, p, d->heuristic(p, dev.caps()));
}

}  // namespace

TEST_CASE("matmul and gated_mlp: heuristic variants on the CPU, 1 and 2 threads") {
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    heuristic_on(*dev, "matmul");
    heuristic_on(*dev, "gated_mlp");
  }
}

TEST_CASE("matmul: the heuristic picks gemv for decode shapes and the packed gemm otherwise") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  const auto& d = *ops::find_op("matmul");
  CHECK(d.heuristic(problem("matmul", {1, 4096, 4096}, {{"trans_b", 1}}), caps).get("impl") == 1);
  CHECK(d.heuristic(problem("matmul", {1, 4095, 4095}, {{"trans_b", 1}}), caps).get("impl") == 1);  // K % 16 != 0: masked tail
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}), caps).get("impl") == 0);
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}), caps).get("ks", 1) == 1);
  CHECK(d.heuristic(problem("matmul", {32, 32, 65536}), caps).get("ks", 1) == 8);  // one M×N block, long K
  // The register block follows the register file: 8×3 or 6×4 lines in 32 zmm
  // (the one that pads C least), 6×1 in 16 ymm.
  const auto avx512 = test::cpu_caps_with(512, 32), avx2 = test::cpu_caps_with(256, 16);
  auto big = problem("matmul", {1024, 1024, 1024});
  CHECK(d.heuristic(big, avx512).get("mr") == 6);  // 8×48 would pad N to 1056
  CHECK(d.heuristic(big, avx512).get("nl") == 4);
  // All of K in one pass, A within half the LLC: one row group, one B panel per workgroup, packed in the kernel.
  CHECK(d.heuristic(big, avx512).get("mc") == 171);
  CHECK(d.heuristic(big, avx512).get("nc") == 1);
  CHECK(d.heuristic(big, avx512).get("pb", 0) == 1);
  CHECK(d.heuristic(big, avx512).get("ak") == 1);  // all of K in one pass: A read unpacked
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}, {}, ir::ScalarKind::F16), avx512).get("ak") == 16);
  // A beyond half the LLC: 8×8-panel blocks, M blocks walked fastest, B packed ahead.
  auto tall = problem("matmul", {8192, 1024, 1024});
  CHECK(d.heuristic(tall, avx512).get("mc") == 8);
  CHECK(d.heuristic(tall, avx512).get("gm", 0) == 1);
  CHECK(d.heuristic(tall, avx512).get("pb", 0) == 0);
  auto n960 = problem("matmul", {960, 960, 960});  // neither pads: the first block
  CHECK(d.heuristic(n960, avx512).get("mr") == 8);
  CHECK(d.heuristic(n960, avx512).get("nl") == 3);
  CHECK(d.heuristic(big, avx2).get("mr") == 6);
  CHECK(d.heuristic(big, avx2).get("nl") == 1);
  {
    // AVX2 with Zen 3's 32 MiB LLC: 24 × 8-panel blocks prefetching the next
    // B panel; A unpacked under few panels; one row group packing its own
    // panels where A is within an eighth of the LLC.
    auto zen3 = avx2;
    zen3.llc_bytes = uint64_t(32) << 20;
    const auto h = d.heuristic(problem("matmul", {2048, 2048, 2048}), zen3);
    CHECK(h.str() == "ak=16 bpf=1 impl=0 kc=0 mc=24 mr=6 nc=8 nl=1");
    CHECK(d.heuristic(problem("matmul", {2048, 16, 4096}), zen3).get("ak") == 1);
    const auto one = d.heuristic(problem("matmul", {96, 4096, 1024}), zen3);
    CHECK(one.str() == "ak=1 bpf=1 impl=0 kc=0 mc=16 mr=6 nc=1 nl=1 pb=1");
    CHECK(d.heuristic(big, zen3).get("mc") == 171);
    CHECK(d.heuristic(big, zen3).get("pb", 0) == 1);
  }
  for (const auto& v : d.candidates(big, avx2))
    if (v.get("impl") == 0) CHECK(ops::gemm_block_fits(int(v.get("mr")), int(v.get("nl")), avx2));
  // Few rows and a long K: one row group covers all of M (B panels streamed once).
  auto down = problem("matmul", {256, 1024, 11008}, {{"trans_b", 1}});
  CHECK(d.heuristic(down, avx512).get("mc") == 43);  // 43 panels of 6 rows
  CHECK(d.heuristic(down, avx512).get("nc") == 1);   // A (11 MiB) within half the LLC: one panel per workgroup
  // A of 22 MiB: the long-K blocking (32 × 4 panels, M blocks walked fastest).
  auto down_big = problem("matmul", {512, 1024, 11008}, {{"trans_b", 1}});
  CHECK(d.heuristic(down_big, avx512).get("mc") == 32);
  CHECK(d.heuristic(down_big, avx512).get("nc") == 4);
  CHECK(d.heuristic(down_big, avx512).get("gm", 0) == 1);
  // ... and then packs its B panels in the kernel; many row groups do not.
  CHECK(d.heuristic(down, avx512).get("pb", 0) == 1);
  const auto& g = *ops::find_op("gated_mlp");
  auto few = problem("gated_mlp", {256, 1024, 11008}), many = problem("gated_mlp", {4096, 1024, 11008});  // X: 1, 16 MiB
  CHECK(g.heuristic(few, avx512).get("mc") == 43);
  CHECK(g.heuristic(few, avx512).get("pb", 0) == 1);
  CHECK(g.heuristic(many, avx512).get("pb", 0) == 0);
  // Few tokens (f32): the products as the matmul op runs them (impl 3).
  auto gated = [&](int64_t t, const codegen::TargetCaps& c, ir::ScalarKind dt = ir::ScalarKind::F32) {
    return g.heuristic(problem("gated_mlp", {t, 1024, 11008}, {}, dt), c).get("impl");
  };
  CHECK(gated(1, avx512) == 3);
  CHECK(gated(128, avx512) == 3);
  CHECK(gated(129, avx512) == 0);
  CHECK(gated(64, avx512, ir::ScalarKind::BF16) == 3);
  CHECK(gated(65, avx512, ir::ScalarKind::BF16) == 0);
  CHECK(gated(4, avx2) == 3);
  // With matrix tiles: bf16 products from 16 rows on them, the gated MLP composed of them.
  auto amx = avx512;
  amx.matrix_tiles = true;
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}, {}, ir::ScalarKind::BF16), amx).get("impl") == 7);
  CHECK(d.heuristic(problem("matmul", {16, 4096, 4096}, {{"trans_b", 1}}, ir::ScalarKind::BF16), amx).get("impl") == 7);
  CHECK(d.heuristic(problem("matmul", {16, 4096, 4096}, {{"trans_b", 1}}, ir::ScalarKind::BF16), amx).get("sw", 0) == 1);
  CHECK(d.heuristic(problem("matmul", {2048, 4096, 4096}, {{"trans_b", 1}}, ir::ScalarKind::BF16), amx).get("sw", 0) == 0);
  CHECK(d.heuristic(problem("matmul", {2, 4096, 4096}, {{"trans_b", 1}}, ir::ScalarKind::BF16), amx).get("impl") == 1);  // GEMV
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1023}, {}, ir::ScalarKind::BF16), amx).get("impl") != 7);  // odd K
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}), amx).get("impl") == 0);  // f32
  CHECK(gated(2048, amx, ir::ScalarKind::BF16) == 3);
  CHECK(gated(5, avx2) == 3);  // AVX2: the products as the matmul op runs them
  auto gpu = caps;
  gpu.name = "vulkan";
  CHECK(d.heuristic(problem("matmul", {1024, 1024, 1024}), gpu).get("impl") == 2);
}

TEST_CASE("matmul: the heuristic's wide row groups on edge shapes, 1 and 2 threads") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("matmul");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    // 13 row panels of 8 (the last partial), K not a multiple of 16, N
    // not a multiple of the 48-column panel: mc = 13, nc = 4 on AVX-512.
    for (auto p : {problem("matmul", {100, 70, 300}, {{"trans_b", 1}}), problem("matmul", {100, 70, 300})})
      check(*dev, p, d.heuristic(p, dev->caps()));
    // AVX2's choices (bpf, A unpacked, one row group with pb) run on any host.
    auto avx2 = test::cpu_caps_with(256, 16);
    avx2.llc_bytes = uint64_t(32) << 20;
    for (auto p : {problem("matmul", {100, 70, 300}), problem("matmul", {61, 200, 130}), problem("matmul", {61, 200, 130}, {{"trans_b", 1}}),
                   problem("matmul", {300, 290, 77}), problem("matmul", {150, 40, 1000})}) {
      const auto v = d.heuristic(p, avx2);
      CAPTURE(v.str());
      check(*dev, p, v);
    }
  }
}

TEST_CASE("matmul: every candidate of small shapes, 1 and 2 threads") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("matmul");
  // Edges in every direction and K slices (K > 512: kc = 256 and 512 both split).
  std::vector<ops::Problem> ps = {problem("matmul", {31, 83, 777}), problem("matmul", {3, 40, 48}, {{"trans_b", 1}}),
                                  problem("matmul", {2, 48, 64}, {{"batch", 2}}),
                                  problem("matmul", {9, 21, 1100}, {{"trans_b", 1}}),  // K-split candidates
                                  // N and K off whole lines: the K×N K-split GEMV's masked tail and
                                  // pitched partial rows; the Bᵀ GEMV's masked last line of K
                                  problem("matmul", {2, 37, 29}), problem("matmul", {3, 45, 53}, {{"trans_b", 1}}),
                                  // the K-split GEMV's passes of 2 and 4 rows of B with remainders, 4 rows of A
                                  problem("matmul", {4, 50, 77})};
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& p : ps) {
      auto cands = d.candidates(p, dev->caps());
      CHECK(cands.size() >= 8);
      for (const auto& v : cands) check(*dev, p, v);
    }
  }
}

TEST_CASE("matmul: Bᵀ with a few dozen rows of A: the swapped product (Cᵀ = B·Aᵀ) and the grouped GEMV, 1 and 2 threads") {
  // Odd M (Cᵀ's rows padded to whole lines, a partial last panel), N not a
  // multiple of the 6-row groups, K with an edge slice; f32 and bf16 on
  // pairs (vdpbf16ps or lane arithmetic); a batch.
  ops::register_all_ops();
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::BF16, ir::ScalarKind::F16})
      for (const char* v : {"impl=5 mr=6 nl=1 kc=0 mc=16", "impl=5 mr=6 nl=3 kc=32 mc=2 apf=1", "impl=5 mr=4 nl=2 kc=16 mc=3",
                            "impl=5 mr=5 nl=4 kc=0 mc=4 bf2=1", "impl=5 mr=5 nl=5 kc=32 mc=3"})
        for (auto p : {problem("matmul", {37, 83, 130}, {{"trans_b", 1}}, dt),
                       problem("matmul", {9, 50, 66}, {{"trans_b", 1}, {"batch", 2}}, dt),
                       problem("matmul", {70, 29, 64}, {{"trans_b", 1}}, dt)})
          if (std::string(v).find("bf2") == std::string::npos || dt == ir::ScalarKind::BF16) check(*dev, p, ops::Variant::parse(v));
    // f32 K×N: B read column-major in place (ak = 2), 16 / 14 / 8 / 6 / 5 rows
    // of it per block, rows past N clamped.
    for (const char* v : {"impl=5 mr=16 nl=1 kc=0 mc=16", "impl=5 mr=14 nl=2 kc=32 mc=2", "impl=5 mr=8 nl=3 kc=16 mc=3",
                          "impl=5 mr=6 nl=4 kc=0 mc=4", "impl=5 mr=5 nl=5 kc=16 mc=2"})
      for (auto p : {problem("matmul", {37, 83, 130}), problem("matmul", {9, 50, 66}, {{"batch", 2}}), problem("matmul", {70, 29, 64})})
        check(*dev, p, ops::Variant::parse(v));
    // The packed GEMM reading 16-bit A unpacked (ak = 1, widened per chunk),
    // with B packed in the kernel and by a launch.
    for (auto dt : {ir::ScalarKind::F16, ir::ScalarKind::BF16})
      for (const char* v : {"impl=0 mr=5 nl=2 kc=0 mc=8 nc=1 ak=1 apf=1 pb=1", "impl=0 mr=6 nl=1 kc=32 mc=2 nc=2 ak=1"})
        for (int tb : {0, 1}) check(*dev, problem("matmul", {45, 77, 302}, {{"trans_b", tb}}, dt), ops::Variant::parse(v));
    // The GEMV over Bᵀ with K in parts (K = 208: 13 lines in 2, 4 or 8
    // uneven parts, some empty), batched; f32 and widened f16.
    for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::F16})
      for (const char* v : {"impl=1 rows=1 pf=1 kp=2", "impl=1 rows=3 pf=1 kp=4", "impl=1 rows=1 kp=8"})
        check(*dev, problem("matmul", {3, 45, 208}, {{"trans_b", 1}, {"batch", 2}}, dt), ops::Variant::parse(v));
    // The GEMV with A's rows in groups (what f16 takes from 9 to 32 rows).
    for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::F16})
      for (const char* v : {"impl=1 rows=4 pf=1 mg=4", "impl=1 rows=2 mg=8"})
        check(*dev, problem("matmul", {21, 45, 64}, {{"trans_b", 1}}, dt), ops::Variant::parse(v));
  }
  const auto& d = *ops::find_op("matmul");
  auto avx512 = test::cpu_caps_with(512, 32);
  avx512.bf16_dot = true;
  auto impl = [&](int64_t m, int64_t n, ir::ScalarKind dt = ir::ScalarKind::F32) {
    return d.heuristic(problem("matmul", {m, n, 4096}, {{"trans_b", 1}}, dt), avx512).get("impl");
  };
  CHECK(impl(8, 11008) == 1);
  // f32 with 5-8 rows: K in parts where A's slice and a row of B pass 40
  // KiB; 1-4 rows read rows of B whole (4 per work-item, from 4096 k at 1-2
  // rows).
  auto gemv_kp = [&](int64_t m, int64_t k) {
    return d.heuristic(problem("matmul", {m, 11008, k}, {{"trans_b", 1}}), avx512).get("kp", 1);
  };
  CHECK(gemv_kp(1, 4096) == 1);
  CHECK(gemv_kp(2, 4096) == 1);
  CHECK(d.heuristic(problem("matmul", {2, 11008, 4096}, {{"trans_b", 1}}), avx512).get("rows") == 4);
  CHECK(d.heuristic(problem("matmul", {1, 11008, 1024}, {{"trans_b", 1}}), avx512).get("pf") == 1);
  CHECK(d.heuristic(problem("matmul", {1, 11008, 1024}, {{"trans_b", 1}}), avx512).get("rows") == 1);
  {  // Zen 4 (zmm in halves): 8 rows of B per work-item under 4096 k, one row of A
    auto zen4 = avx512;
    zen4.cpu = codegen::cpu_traits_for(codegen::CpuFamily::zen4, 512);
    auto gemv = [&](int64_t m, int64_t k) { return d.heuristic(problem("matmul", {m, 11008, k}, {{"trans_b", 1}}), zen4); };
    CHECK(gemv(1, 1024).get("rows") == 8);
    CHECK(gemv(1, 1024).get("pf") == 1);
    CHECK(gemv(1, 4096).get("rows") == 4);
    CHECK(gemv(2, 1024).get("rows") == 1);
  }
  CHECK(gemv_kp(3, 4096) == 1);
  CHECK(d.heuristic(problem("matmul", {4, 11008, 11008}, {{"trans_b", 1}}), avx512).get("rows") == 4);
  CHECK(gemv_kp(2, 1024) == 1);
  CHECK(gemv_kp(8, 4096) == 4);
  CHECK(gemv_kp(8, 11008) == 1);  // parts under 1024 k: the old rows=4
  CHECK(impl(9, 11008) == 5);
  CHECK(impl(256, 11008) == 5);
  CHECK(impl(257, 11008) == 0);
  CHECK(impl(256, 1024) == 0);  // B not over 4× A's rows
  CHECK(impl(12, 11008, ir::ScalarKind::BF16) == 1);
  CHECK(impl(13, 11008, ir::ScalarKind::BF16) == 5);
  CHECK(impl(32, 11008, ir::ScalarKind::F16) == 1);  // f16 (widened): the grouped GEMV up to 32 rows
  CHECK(impl(33, 11008, ir::ScalarKind::F16) == 5);
  CHECK(d.heuristic(problem("matmul", {64, 11008, 4096}, {{"trans_b", 1}}, ir::ScalarKind::F16), avx512).get("mr") == 5);
  CHECK(d.heuristic(problem("matmul", {64, 11008, 4096}, {{"trans_b", 1}}), avx512).get("nl") == 4);
  CHECK(d.heuristic(problem("matmul", {48, 11008, 4096}, {{"trans_b", 1}}), avx512).get("nl") == 3);
  CHECK(d.heuristic(problem("matmul", {48, 11008, 4096}, {{"trans_b", 1}}), avx512).get("mr") == 6);
  CHECK(test::cpu_caps_with(256, 16).vector_bits == 256);
  CHECK(d.heuristic(problem("matmul", {64, 11008, 4096}, {{"trans_b", 1}}), test::cpu_caps_with(256, 16)).get("impl") == 0);
  CHECK_THROWS_WITH_AS(d.plan(problem("matmul", {16, 64, 32}, {}, ir::ScalarKind::F16), ops::Variant::parse("impl=5 mr=6 nl=1 kc=0 mc=16"),
                              avx512),
                       doctest::Contains("f32 K×N B"), std::invalid_argument);
  // f32 K×N: from past the K×N GEMV's 4 rows to 128.
  auto kn = [&](int64_t m) { return d.heuristic(problem("matmul", {m, 11008, 4096}), avx512); };
  CHECK(kn(4).get("impl") == 4);  // the K-split GEMV, 8 rows of B per pass
  CHECK(kn(4).get("kr") == 8);
  CHECK(kn(5).get("impl") == 5);
  CHECK(kn(16).get("mr") == 16);
  CHECK(kn(32).get("mr") == 14);
  CHECK(kn(128).get("impl") == 5);
  CHECK(kn(129).get("impl") == 0);
  auto kn_impl = [&](int64_t m, int64_t n, int64_t k) { return d.heuristic(problem("matmul", {m, n, k}), avx512).get("impl"); };
  CHECK(kn_impl(48, 2048, 2048) == 5);
  CHECK(kn_impl(64, 2048, 2048) == 0);  // B in the cache: the packed GEMM from 4 lines of A's rows
  CHECK(kn_impl(8, 1024, 64) != 5);     // short K
  CHECK(d.heuristic(problem("matmul", {16, 11008, 4096}, {}, ir::ScalarKind::BF16), avx512).get("impl") != 5);
  // Where the prefetchers do not follow the column walk (Intel): the K-split
  // GEMV to 32 rows (to 16 with B cached), past it the packed GEMM.
  codegen::TargetCaps intel = avx512;
  intel.cpu = codegen::cpu_traits_for(codegen::CpuFamily::intel_avx512, 512);
  auto kn_intel = [&](int64_t m, int64_t n, int64_t k) { return d.heuristic(problem("matmul", {m, n, k}), intel); };
  CHECK(kn_intel(4, 11008, 4096).get("impl") == 4);
  CHECK(kn_intel(5, 11008, 4096).get("impl") == 4);
  CHECK(kn_intel(5, 11008, 4096).get("lb", 1) == 1);  // f32 lines in pairs from 16 rows
  CHECK(kn_intel(15, 11008, 4096).get("lb", 1) == 1);
  CHECK(kn_intel(16, 11008, 4096).get("lb") == 2);
  CHECK(kn_intel(32, 11008, 4096).get("impl") == 4);
  CHECK(kn_intel(33, 11008, 4096).get("impl") == 0);
  CHECK(kn_intel(128, 11008, 4096).get("impl") == 0);
  CHECK(kn_intel(16, 3072, 768).get("impl") == 4);
  CHECK(kn_intel(32, 3072, 768).get("impl") == 5);  // B cached: the swapped form's walk hits the cache
  // f16/bf16 too; bf16 on AMX tiles past 16 rows.
  CHECK(d.heuristic(problem("matmul", {16, 11008, 4096}, {}, ir::ScalarKind::F16), intel).get("impl") == 4);
  CHECK(d.heuristic(problem("matmul", {32, 11008, 4096}, {}, ir::ScalarKind::BF16), intel).get("impl") == 4);
  codegen::TargetCaps amx = intel;
  amx.matrix_tiles = true;
  CHECK(d.heuristic(problem("matmul", {16, 11008, 4096}, {}, ir::ScalarKind::BF16), amx).get("impl") == 4);
  CHECK(d.heuristic(problem("matmul", {32, 11008, 4096}, {}, ir::ScalarKind::BF16), amx).get("impl") == 7);
}

TEST_CASE("matmul: bf16 pairs (bf2) in every form, on every host (vdpbf16ps or lane arithmetic), 1 and 2 threads") {
  // Odd M and N, even K that is not a multiple of the 16-pair chunks;
  // Bᵀ words and K×N rows joined in pairs; B packed in the kernel (with
  // slices, prefetching the next panel's rows) or by a launch; A read as
  // words, in chunks or k-major; a K split; a batch.
  ops::register_all_ops();
  const std::vector<std::string> forms = {
      "impl=0 mr=6 nl=2 kc=0 mc=8 nc=1 ak=1 apf=1 pb=1 bf2=1", "impl=0 mr=6 nl=2 kc=32 mc=8 nc=1 ak=16 pb=1 bpf=1 bf2=1",
      "impl=0 mr=6 nl=2 kc=0 mc=2 nc=2 ak=16 bpf=1 bf2=1",     "impl=0 mr=4 nl=2 kc=64 mc=2 nc=2 ak=0 bf2=1",
      "impl=0 mr=6 nl=2 kc=0 mc=2 nc=2 ak=16 ks=2 bf2=1"};
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (int tb : {0, 1})
      for (const auto& f : forms)
        for (auto p : {problem("matmul", {45, 77, 302}, {{"trans_b", tb}}, ir::ScalarKind::BF16),
                       problem("matmul", {7, 50, 18}, {{"trans_b", tb}, {"batch", 3}}, ir::ScalarKind::BF16)})
          check(*dev, p, ops::Variant::parse(f));
  }
  // The pair GEMV (Bᵀ, K % 32 == 0): odd N, several rows of A, a batch.
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const char* v : {"impl=1 rows=2 pf=1 bf2=1", "impl=1 rows=4 bf2=1", "impl=1 rows=1 pf=2 bf2=1"})
      for (auto p : {problem("matmul", {1, 77, 96}, {{"trans_b", 1}}, ir::ScalarKind::BF16),
                     problem("matmul", {3, 50, 64}, {{"trans_b", 1}, {"batch", 2}}, ir::ScalarKind::BF16)})
        check(*dev, p, ops::Variant::parse(v));
  }
  // The heuristic takes pairs exactly where the host has the instruction.
  const auto& d = *ops::find_op("matmul");
  auto caps = codegen::cpu_caps();
  CHECK(d.heuristic(problem("matmul", {512, 512, 512}, {{"trans_b", 1}}, ir::ScalarKind::BF16), caps).get("bf2", 0) ==
        (caps.bf16_dot ? 1 : 0));
  CHECK(d.heuristic(problem("matmul", {512, 512, 511}, {{"trans_b", 1}}, ir::ScalarKind::BF16), caps).get("bf2", 0) == 0);
  CHECK_THROWS_WITH_AS(d.plan(problem("matmul", {8, 8, 9}, {}, ir::ScalarKind::BF16),
                              ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=2 nc=1 ak=16 bf2=1"), caps),
                       doctest::Contains("even K"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(d.plan(problem("matmul", {1, 8, 48}, {{"trans_b", 1}}, ir::ScalarKind::BF16),
                              ops::Variant::parse("impl=1 rows=2 bf2=1"), caps),
                       doctest::Contains("K % 32"), std::invalid_argument);
}

TEST_CASE("gated_mlp: every candidate of a small shape, 1 and 2 threads") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("gated_mlp");
  auto p = problem("gated_mlp", {19, 48, 77});
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& v : d.candidates(p, dev->caps())) check(*dev, p, v);
  }
}

TEST_CASE("bf16_upper_bits rounds like ir::f32_to_bf16: ties to even, NaN quiet, on lines and scalars, interpreter and JIT") {
  // The gated MLP's h_bf16 rounding; its op tests bound H's rounding only by
  // a whole bf16 ulp, which would not tell truncation from rounding.
  using namespace kgen::dsl;
  ir::Kernel k = kernel("bf16_round_test", [](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    auto y = kb.output("y", line(f32, 16));
    auto xs = kb.input("xs", f32);
    auto ys = kb.output("ys", f32);
    kb.workgroup(1);
    Value i = group_id(0);
    y[i] = bitcast(line(f32, 16), ops::bf16_upper_bits(x[i]));
    for (uint32_t j = 0; j < 16; ++j) ys[i * 16u + j] = bitcast(f32, ops::bf16_upper_bits(xs[i * 16u + j]));
  });
  std::vector<float> in;
  for (uint32_t b : {0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x3f808001u, 0x7f7fffffu, 0xff7f8000u, 0x00008000u,
                     0x80018000u, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u, 0xffa00000u, 0x00000000u, 0x80000000u})
    in.push_back(std::bit_cast<float>(b));
  std::mt19937 rng(5);
  while (in.size() % 16 || in.size() < 64) in.push_back(std::bit_cast<float>(uint32_t(rng())));
  const size_t n = in.size();
  std::vector<float> want(n);
  for (size_t j = 0; j < n; ++j) want[j] = ir::bf16_to_f32(ir::f32_to_bf16(in[j]));
  auto same_bits = [&](const std::vector<float>& got, const char* where) {
    for (size_t j = 0; j < n; ++j) {
      CAPTURE(where);
      CAPTURE(j);
      CHECK(std::bit_cast<uint32_t>(got[j]) == std::bit_cast<uint32_t>(want[j]));
    }
  };
  ir::LaunchDims dims;
  dims.grid = {uint32_t(n / 16), 1, 1};
  std::vector<float> y(n), ys(n);
  {
    std::vector<ir::InterpBuffer> bufs = {{in.data(), n * 4}, {y.data(), n * 4}, {in.data(), n * 4}, {ys.data(), n * 4}};
    ir::interpret(k, dims, bufs, {});
    same_bits(y, "interpreter lines");
    same_bits(ys, "interpreter scalars");
  }
  auto dev = cpu(1);
  auto bx = dev->alloc(n * 4), by = dev->alloc(n * 4), bxs = dev->alloc(n * 4), bys = dev->alloc(n * 4);
  bx->upload(in.data(), n * 4);
  bxs->upload(in.data(), n * 4);
  rt::LaunchArgs a;
  a.dims = dims;
  a.buffers = {bx.get(), by.get(), bxs.get(), bys.get()};
  dev->launch(*dev->compile(k), a);
  dev->synchronize();
  by->download(y.data(), n * 4);
  bys->download(ys.data(), n * 4);
  same_bits(y, "jit lines");
  same_bits(ys, "jit scalars");
}

TEST_CASE("gated_mlp: bf16 weights, every candidate (pairs where the host has vdpbf16ps, else widened) and forced pairs") {
  ops::register_all_ops();
  const auto& d = *ops::find_op("gated_mlp");
  auto dev = cpu(2);
  auto p = problem("gated_mlp", {19, 48, 77}, {}, ir::ScalarKind::BF16);
  for (const auto& v : d.candidates(p, dev->caps())) check(*dev, p, v);
  // f16 weights (widened), every candidate too.
  auto ph = problem("gated_mlp", {19, 48, 77}, {}, ir::ScalarKind::F16);
  for (const auto& v : d.candidates(ph, dev->caps())) check(*dev, ph, v);
  // Pairs on any host (lane arithmetic without the instruction): X read as
  // words or packed, [G;U] packed in the GEMM or by a launch.
  for (const char* v : {"impl=0 mr=6 nl=4 kc=0 mc=4 nc=2 ak=1 pb=1 bf2=1", "impl=0 mr=6 nl=4 kc=0 mc=2 nc=2 ak=16 bpf=1 bf2=1"})
    check(*dev, problem("gated_mlp", {29, 34, 70}, {}, ir::ScalarKind::BF16), ops::Variant::parse(v));
  // h_bf16 (H rounded to bf16): with pairs, H written as pair words for a
  // pair down GEMM (D = 64: both GEMMs take 6-row panels on AVX-512), with
  // [G;U] and Dn packed in the GEMMs or by launches; widened; unfused.
  for (const char* v : {"impl=0 mr=6 nl=4 kc=0 mc=8 nc=2 ak=16 pb=1 bf2=1", "impl=0 mr=6 nl=4 kc=0 mc=2 nc=2 ak=16 bf2=1",
                        "impl=0 mr=6 nl=4 kc=0 mc=2 nc=2 ak=16", "impl=1 mr=6 nl=2 kc=256 mc=8 nc=8 ak=16"})
    for (auto pr : {problem("gated_mlp", {29, 64, 70}, {{"h_bf16", 1}}, ir::ScalarKind::BF16),
                    problem("gated_mlp", {7, 64, 102}, {{"h_bf16", 1}}, ir::ScalarKind::BF16)})
      check(*dev, pr, ops::Variant::parse(v));
  CHECK_THROWS_WITH_AS(d.validate(problem("gated_mlp", {4, 32, 16}, {{"h_bf16", 1}})), doctest::Contains("bf16 inputs"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(d.plan(problem("gated_mlp", {4, 33, 16}, {}, ir::ScalarKind::BF16),
                              ops::Variant::parse("impl=0 mr=6 nl=4 kc=0 mc=2 nc=2 ak=16 bf2=1"), dev->caps()),
                       doctest::Contains("even D"), std::invalid_argument);
}

TEST_CASE("matmul and gated_mlp: tiny problems through the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  auto gpu = caps;
  gpu.name = "vulkan";
  struct Case {
    ops::Problem p;
    ops::Variant v;
  };
  std::vector<Case> cases = {
      {problem("matmul", {5, 20, 7}), ops::Variant::parse("impl=0 mr=6 nl=1 kc=4 mc=1 nc=1")},
      // A in 16-step chunks with a partial chunk, K split in 3 (a short last split), C rows not whole lines.
      {problem("matmul", {5, 19, 37}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=1 nc=1 ak=16 ks=3")},
      // K slices and a K split whose last part is empty (17 = 16 + 1: its
      // partial C must still be written, as zeros), batched.
      {problem("matmul", {5, 19, 17}, {{"batch", 2}}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=1 nc=1 ak=16 ks=3")},
      {problem("matmul", {3, 17, 9}, {{"trans_b", 1}, {"batch", 2}}, ir::ScalarKind::F16),
       ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=2 nc=1")},
      {problem("matmul", {2, 20, 32}, {{"trans_b", 1}}), ops::Variant::parse("impl=1 rows=4")},
      // The K-split GEMV over K×N with empty splits (ks > K).
      {problem("matmul", {2, 32, 16}, {{"batch", 2}}), ops::Variant::parse("impl=4 ks=20")},
      // ... with 5-32 rows of A and lines in pairs: whole lines with an odd
      // line left (N = 80: 5 lines), a masked tail (N = 71), K passes of 8
      // rows of B with rows left (K = 45), batched.
      {problem("matmul", {7, 80, 45}, {{"batch", 2}}), ops::Variant::parse("impl=4 ks=3 kr=8 lb=2")},
      {problem("matmul", {13, 71, 45}), ops::Variant::parse("impl=4 ks=2 kr=4 lb=2")},
      {problem("matmul", {32, 96, 33}), ops::Variant::parse("impl=4 ks=8 kr=8 lb=2")},
      {problem("matmul", {6, 40, 21}, {}, ir::ScalarKind::F16), ops::Variant::parse("impl=4 ks=2 kr=8 lb=2")},
      {problem("matmul", {9, 64, 19}, {{"a_f32", 1}}, ir::ScalarKind::BF16), ops::Variant::parse("impl=4 ks=3 kr=4 lb=2")},
      // A's rows in groups of 3 (a partial last group), rows past N.
      {problem("matmul", {11, 9, 32}, {{"trans_b", 1}, {"batch", 2}}), ops::Variant::parse("impl=1 rows=4 pf=1 mg=3")},
      {problem("matmul", {2, 32, 16}), ops::Variant::parse("impl=1 rows=2")},
      {problem("matmul", {11, 9, 37}, {{"trans_b", 1}, {"batch", 2}}), ops::Variant::parse("impl=5 mr=4 nl=1 kc=16 mc=2")},
      {problem("matmul", {5, 9, 11}, {{"trans_b", 1}}), ops::Variant::parse("impl=2 wg=4 tm=2 tn=2 tk=4")},
      {problem("gated_mlp", {3, 8, 20}), ops::Variant::parse("impl=0 mr=4 nl=2 kc=0 mc=1 nc=1")},
      // The next B panel prefetched (a hint past the end of bp on the last panel).
      {problem("matmul", {9, 40, 37}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=2 ak=16 bpf=1")},
      {problem("gated_mlp", {9, 40, 20}), ops::Variant::parse("impl=0 mr=4 nl=2 kc=0 mc=3 nc=2 ak=16 bpf=1")},
      // The next A panel prefetched (past the end of ap on the last panel).
      {problem("matmul", {13, 40, 37}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=2 ak=16 apf=1")},
      // H written in the down GEMM's packed-A layout where both take 8-row
      // panels on AVX-512 (rows 9-15 zero, a partial last panel), and X read
      // unpacked.
      {problem("gated_mlp", {9, 40, 20}), ops::Variant::parse("impl=0 mr=8 nl=2 kc=0 mc=2 nc=2 ak=16")},
      {problem("gated_mlp", {9, 40, 20}), ops::Variant::parse("impl=0 mr=8 nl=2 kc=0 mc=2 nc=2 ak=1 pb=1")},
      // A read unpacked (ak = 1): rows past M clamped, K slices and a partial
      // chunk, batched; with B packed ahead and in the kernel.
      {problem("matmul", {13, 40, 37}, {{"batch", 2}}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=2 ak=1 apf=1")},
      {problem("matmul", {13, 40, 37}, {{"trans_b", 1}}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=4 nc=1 ak=1 pb=1")},
      // K×N B packed in the kernel with the next panel's rows prefetched.
      {problem("matmul", {13, 40, 37}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=2 ak=1 pb=1 bpf=1")},
      // ... spread over the passes of a block of 4 panels (the next slice of
      // the first panel, the next block's), batched, a partial last block
      // and slice; bf16 K×N rows joined in pairs.
      {problem("matmul", {13, 150, 70}, {{"batch", 2}}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=32 mc=4 nc=4 ak=16 pb=1 bpf=1")},
      {problem("matmul", {5, 70, 74}, {}, ir::ScalarKind::BF16), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=4 ak=16 pb=1 bpf=1 bf2=1")},
      // B panels packed inside the macro-kernel (pb): K×N with K slices and
      // C rows not whole lines; f16 Bᵀ, batched, k-major A; Bᵀ with a K split
      // and the next panel's rows prefetched; the gated [G;U] source with a
      // partial last panel.
      {problem("matmul", {5, 19, 37}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=1 ak=16 pb=1")},
      {problem("matmul", {3, 17, 9}, {{"trans_b", 1}, {"batch", 2}}, ir::ScalarKind::F16),
       ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=1 nc=1 pb=1")},
      {problem("matmul", {9, 40, 37}, {{"trans_b", 1}}), ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=3 nc=2 ak=16 ks=2 pb=1 bpf=1")},
      {problem("gated_mlp", {9, 40, 20}), ops::Variant::parse("impl=0 mr=4 nl=2 kc=0 mc=3 nc=2 ak=16 pb=1 bpf=1")},
      // bf16 weights: the [G;U] GEMM on pairs with H in the packed-A layout
      // and [G;U] packed by a launch; widened, X packed, the GPU sequence
      // (Dn widened by its own launch).
      {problem("gated_mlp", {9, 40, 20}, {}, ir::ScalarKind::BF16), ops::Variant::parse("impl=0 mr=8 nl=2 kc=0 mc=2 nc=2 ak=16 bf2=1")},
      {problem("gated_mlp", {9, 40, 20}, {}, ir::ScalarKind::BF16), ops::Variant::parse("impl=0 mr=4 nl=2 kc=0 mc=3 nc=2 ak=16 pb=1")},
      {problem("gated_mlp", {5, 9, 11}, {}, ir::ScalarKind::BF16), ops::Variant::parse("impl=2 wg=4 tm=2 tn=2 tk=4")},
      {problem("gated_mlp", {9, 64, 40}, {{"h_bf16", 1}}, ir::ScalarKind::BF16), ops::Variant::parse("impl=0 mr=6 nl=4 kc=0 mc=2 nc=1 ak=16 bf2=1")},
      {problem("gated_mlp", {5, 9, 12}, {{"h_bf16", 1}}, ir::ScalarKind::BF16), ops::Variant::parse("impl=2 wg=4 tm=2 tn=2 tk=4")},
      // bf16 pairs (bf2): Bᵀ words packed in the kernel with A read as words;
      // K×N rows joined in pairs, k-major A, K slices of 16 pairs; packed by
      // a launch, batched, with a partial last chunk of pairs.
      {problem("matmul", {13, 40, 38}, {{"trans_b", 1}}, ir::ScalarKind::BF16),
       ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=4 nc=1 ak=1 pb=1 bf2=1")},
      {problem("matmul", {5, 19, 74}, {}, ir::ScalarKind::BF16), ops::Variant::parse("impl=0 mr=4 nl=1 kc=16 mc=2 nc=1 pb=1 bf2=1")},
      {problem("matmul", {9, 33, 22}, {{"batch", 2}}, ir::ScalarKind::BF16),
       ops::Variant::parse("impl=0 mr=4 nl=1 kc=0 mc=2 nc=2 ak=16 bf2=1")},
  };
  for (const auto& c : cases) {
    CAPTURE(c.p.str());
    CAPTURE(c.v.str());
    auto r = ops::check_op_interpreted(c.p, c.v, c.v.get("impl") == 2 ? gpu : caps, fresh_seed());
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("matmul and gated_mlp: heuristic variants on the GPU devices") {
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: matmul GPU checks skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    ops::register_all_ops();
    int skipped = 0;
    for (std::string op : {"matmul", "gated_mlp"}) {
      const auto& d = *ops::find_op(op);
      for (const auto& p : d.test_problems) {
        bool half = p.dtype != ir::ScalarKind::F32;
        if (half && !(p.dtype == ir::ScalarKind::F16 ? dev->caps().f16 : dev->caps().bf16)) {
          ++skipped;  // WGSL: no f16/bf16 storage here
          continue;
        }
        check(*dev, p, d.heuristic(p, dev->caps()));
      }
    }
    if (skipped) MESSAGE(name << ": " << skipped << " f16/bf16 problems skipped (no f16/bf16 capability)");
  }
}

// The GPU kernels' own variants at sizes with interior and edge tiles: the
// scalar and f32x4-line tiles (vec 1 and 2, both K steps) and the GPU GEMV,
// on the CPU device (shared memory, barriers, no subgroups) and on every GPU
// device present (vulkan's subgroups in CI; cuda on a GPU machine).
TEST_CASE("matmul and gated_mlp: the GPU kernels' variants at odd sizes, on the CPU and the GPU devices") {
  ops::register_all_ops();
  std::vector<std::unique_ptr<rt::Device>> devs;
  if (have_device("cpu")) devs.push_back(cpu(2));  // (absent from a build without the C++ JIT)
  for (const std::string& name : gpu_device_names())
    if (have_device(name)) devs.push_back(rt::create_device(name));
  const std::vector<std::string> tiles = {"impl=2 wg=16 tm=4 tn=4 tk=16", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=1",
                                          "impl=2 wg=16 tm=8 tn=8 tk=16 vec=1", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=2",
                                          "impl=2 wg=16 tm=8 tn=8 tk=16 vec=2", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=3"};
  struct Case {
    ops::Problem p;
    std::vector<std::string> variants;
  };
  const std::vector<Case> cases = {
      {problem("matmul", {130, 260, 70}), tiles},
      {problem("matmul", {257, 129, 33}, {{"trans_b", 1}, {"batch", 2}}), tiles},
      {problem("matmul", {129, 131, 20}, {{"trans_b", 1}}, ir::ScalarKind::BF16), tiles},
      {problem("gated_mlp", {130, 40, 150}), {"impl=2 wg=16 tm=8 tn=8 tk=16 vec=2", "impl=3"}},
      // 128×64 line tiles, K splits (an empty last split at K = 33 with 4;
      // K = 70 in 3 uneven ones) and the swapped product (Bᵀ), batched.
      {problem("matmul", {130, 70, 70}), {"impl=2 wg=16 tm=8 tn=4 tk=16 vec=2", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=1 ks=3",
                                         "impl=2 wg=16 tm=8 tn=4 tk=16 vec=2 ks=2"}},
      {problem("matmul", {37, 150, 33}, {{"trans_b", 1}, {"batch", 2}}),
       {"impl=2 wg=16 tm=8 tn=4 tk=16 vec=2 sw=1", "impl=2 wg=16 tm=8 tn=8 tk=16 vec=2 sw=1 ks=4",
        "impl=2 wg=16 tm=8 tn=4 tk=16 vec=1 sw=1 ks=2", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=2 ks=4",
        "impl=2 wg=16 tm=8 tn=4 tk=16 vec=3 sw=1 ks=2"}},
      {problem("matmul", {70, 131, 100}, {{"trans_b", 1}, {"a_f32", 1}}, ir::ScalarKind::BF16),
       {"impl=2 wg=16 tm=8 tn=8 tk=16 vec=2 sw=1 ks=3"}},
      // The GEMV: M of 1 and 3, batched, N past one grid row of 65535 groups.
      {problem("matmul", {3, 100, 64}, {{"trans_b", 1}, {"batch", 2}}), {"impl=3 wg=64", "impl=3 wg=128"}},
      {problem("matmul", {8, 70, 100}, {{"trans_b", 1}}), {"impl=3 wg=64"}},
      {problem("matmul", {1, 70000, 33}, {{"trans_b", 1}}), {"impl=3 wg=64"}},
  };
  // The heuristic's swapped tiles (double-buffered where the shared memory
  // holds them: not WebGPU's 16 KiB) and K splits.
  const auto& mm = *ops::find_op("matmul");
  for (auto& dev : devs)
    for (const auto& p : {problem("matmul", {20, 1030, 300}, {{"trans_b", 1}}), problem("matmul", {100, 300, 1100})}) {
      auto v = mm.heuristic(p, dev->caps());
      if (dev->caps().name.rfind("cpu", 0) != 0) CHECK((v.get("sw", 0) == 1 || v.get("ks", 1) > 1));
      check(*dev, p, v);
    }
  for (auto& dev : devs)
    for (const auto& c : cases) {
      if (c.p.dtype == ir::ScalarKind::BF16 && !dev->caps().bf16) continue;
      for (const auto& s : c.variants) {
        auto v = ops::Variant::parse(s);
        if (v.get("vec", 0) && !ops::line_tile_fits(dev->caps().max_shared_bytes, uint32_t(v.get("tk")), uint32_t(v.get("tn")),
                                                    v.get("vec") == 3))
          continue;  // WebGPU's 16 KiB of shared memory: no double-buffered 128×64 or 128×128 tk 16 tiles
        check(*dev, c.p, v);
      }
    }
}

TEST_CASE("matmul: the microkernel keeps its accumulators in vector registers") {
  auto dev = cpu(1);
  const auto& caps = dev->caps();
  // zmm with AVX-512 (FMAs broadcast A from memory), else ymm (two per f32x16
  // line, A broadcast by vbroadcastss).
  const bool zmm = caps.vector_bits >= 512;
  const std::string reg = zmm ? "zmm" : "ymm";
  const int per_line = int(codegen::registers_per_line(caps));
  MESSAGE("host vector unit: " << caps.vector_bits << " bits x " << caps.vector_registers << " registers");
  // Every register block with packed B, and the first one packing its Bᵀ
  // panels itself (pb: the scratch lives on the stack too, so only a store of
  // a whole register to a fixed stack slot counts as a spill).
  ops::GemmBSource own;
  own.kind = ops::GemmBSource::Raw;
  own.trans_b = true;
  auto blocks = ops::gemm_register_blocks(caps);
  std::vector<std::pair<std::pair<int, int>, ops::GemmBSource>> kernels;
  for (auto b : blocks) kernels.push_back({b, {}});
  kernels.push_back({blocks.front(), own});
  for (auto [block, src] : kernels) {
    auto [mr, nl] = block;
    ops::GemmTile t{mr, nl, 256, 8, 8};
    t.pb = src.kind != ops::GemmBSource::Packed;
    CAPTURE(t.pb);
    rt::CompileOptions o;
    o.keep_ir = true;
    auto ck = dev->compile(ops::gemm_cpu_kernel(t, true, ops::GemmEpilogue::Store, src), o);
    std::string s = ck->debug_asm();
    REQUIRE(!s.empty());
    if (const char* dump = std::getenv("KGEN_MATMUL_ASM_DUMP")) {  // for a human look at the inner loop
      std::ofstream(std::string(dump) + "_mr" + std::to_string(mr) + ".s") << s;
      std::ofstream(std::string(dump) + "_pack_a" + std::to_string(mr) + ".s") << dev->compile(ops::pack_a_kernel(ir::Type(ir::ScalarKind::F32), mr), o)->debug_asm();
      std::ofstream(std::string(dump) + "_pack_b" + std::to_string(nl) + ".s") << dev->compile(ops::pack_b_kernel(ir::Type(ir::ScalarKind::F32), false, nl), o)->debug_asm();
    }
    // FMAs with an embedded broadcast of A (one per row and line at each k).
    std::regex bcast_fma(R"(vfmadd231ps\s+\(.*\)\{1to16\},\s*%zmm\d+,\s*%zmm\d+)");
    std::regex any_fma("vfmadd\\d+ps\\s+[^\\n]*%" + reg);
    std::regex spill("vmov[ua]ps\\s+%" + reg + "\\d+,\\s*-?\\d*\\(%rsp\\)");
    auto count_in = [](const std::regex& re, const std::string& text) {
      return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
    };
    auto count = [&](const std::regex& re) { return count_in(re, s); };
    CAPTURE(mr);
    CAPTURE(nl);
    INFO(s.substr(0, 4000));
    CHECK(count(any_fma) >= mr * nl * per_line);
    CHECK(count(bcast_fma) + count(std::regex(R"(vbroadcastss)")) >= mr);
    // No spill in the basic blocks that hold FMAs (the microkernel's). A pb
    // kernel's Bᵀ packing transposes 16 lines in registers, which spills on
    // AVX2's 16 ymm outside the FMA loop: once per panel, not per k.
    int64_t fma_block_spills = 0;
    {
      std::istringstream lines(s);
      std::string line, block;
      auto flush = [&] {
        if (count_in(any_fma, block) > 0) fma_block_spills += count_in(spill, block);
        block.clear();
      };
      while (std::getline(lines, line)) {
        if (!line.empty() && line[0] == '.' && line.back() == ':') flush();
        block += line + "\n";
      }
      flush();
    }
    CHECK(fma_block_spills == 0);
    if (!t.pb || caps.vector_registers >= 32) CHECK(count(spill) == 0);
  }
}

// Developer aid, skipped by default (run with -tc="*per-step*" --no-skip):
// time each launch of plans separately, variants interleaved; with one
// thread the thread's CPU time is reported too (robust to a loaded machine).
// KGEN_MM_OP, KGEN_MM_SHAPE="MxNxK", KGEN_MM_ATTRS, KGEN_MM_THREADS,
// KGEN_MM_VARIANTS="impl=0 mr=14 ...;impl=0 mr=12 ..." (default: heuristic).
TEST_CASE("matmul: per-step timings" * doctest::skip()) {
  ops::register_all_ops();
  auto env = [](const char* n, const char* d) { const char* v = std::getenv(n); return std::string(v ? v : d); };
  std::string at = env("KGEN_MM_ATTRS", "");
  auto p = problem(env("KGEN_MM_OP", "matmul"), ops::parse_dims(env("KGEN_MM_SHAPE", "1024x1024x1024")),
                   at.empty() ? std::map<std::string, int64_t>{} : ops::parse_attrs(at));
  auto dev = cpu(unsigned(std::atoi(env("KGEN_MM_THREADS", "1").c_str())));
  std::vector<ops::Variant> vs;
  std::stringstream list(env("KGEN_MM_VARIANTS", ""));
  for (std::string item; std::getline(list, item, ';');) if (!item.empty()) vs.push_back(ops::Variant::parse(item));
  if (vs.empty()) vs.push_back(ops::find_op(p.op)->heuristic(p, dev->caps()));
  std::vector<ops::PreparedPlan> pps;
  for (auto& v : vs) pps.push_back(ops::prepare(*dev, p, v));
  auto t = ops::upload(*dev, ops::make_host_tensors(p, 1));
  auto io = t.io();
  auto cpu_now = [] { timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6; };
  std::vector<std::vector<std::vector<double>>> wall(pps.size()), cput(pps.size());
  for (size_t i = 0; i < pps.size(); ++i) wall[i].resize(pps[i].plan.steps.size()), cput[i].resize(pps[i].plan.steps.size());
  for (int rep = 0; rep < 15; ++rep)
    for (size_t i = 0; i < pps.size(); ++i) {
      auto& pp = pps[i];
      for (size_t s = 0; s < pp.plan.steps.size(); ++s) {
        const auto& st = pp.plan.steps[s];
        rt::LaunchArgs a;
        a.dims = st.dims;
        a.scalars = st.scalars;
        for (int b : st.buffers) a.buffers.push_back(size_t(b) < io.size() ? io[b] : pp.temps[b - io.size()].get());
        double c0 = cpu_now();
        auto t0 = std::chrono::steady_clock::now();
        dev->launch(*pp.kernels[s], a);
        dev->synchronize();
        wall[i][s].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        cput[i][s].push_back(cpu_now() - c0);
      }
    }
  for (size_t i = 0; i < pps.size(); ++i) {
    double tw = 0, tc = 0;
    for (size_t s = 0; s < wall[i].size(); ++s) {
      std::sort(wall[i][s].begin(), wall[i][s].end());
      std::sort(cput[i][s].begin(), cput[i][s].end());
      tw += wall[i][s][0];
      tc += cput[i][s][0];
      MESSAGE("  " << pps[i].plan.steps[s].kernel.name << ": wall min " << wall[i][s][0] << " ms, cpu min " << cput[i][s][0] << " ms");
    }
    MESSAGE(p.str() << " [" << vs[i].str() << "]: wall " << tw << " ms, cpu " << tc << " ms, " << 1e-6 * ops::find_op(p.op)->flops(p) / tc << " GFLOP/s (cpu)");
  }
}

namespace {

// Each (problem, variant) through the interpreter, as the target caps plan it.
struct InterpretedCase {
  ops::Problem p;
  const char* v;
};
void check_interpreted(const std::vector<InterpretedCase>& cases, const codegen::TargetCaps& caps) {
  for (const auto& c : cases) {
    CAPTURE(c.p.str());
    CAPTURE(c.v);
    auto r = ops::check_op_interpreted(c.p, ops::Variant::parse(c.v), caps, fresh_seed());
    INFO(r.message);
    CHECK(r.ok);
  }
}
// Every bf16-terms candidate (matmul impl=8) of each problem.
void check_terms_candidates(rt::Device& dev, const std::vector<ops::Problem>& ps) {
  for (const auto& p : ps)
    for (const auto& v : ops::find_op("matmul")->candidates(p, dev.caps()))
      if (v.get("impl") == 8) check(dev, p, v);
}

// Runs p's variant v on t's inputs, leaving its outputs in t.
void run_variant(rt::Device& dev, const ops::Problem& p, const ops::Variant& v, ops::HostTensors& t) {
  ops::PreparedPlan pp = ops::prepare(dev, p, v);
  ops::DeviceTensors d = ops::upload(dev, t);
  ops::execute(dev, pp, d.io());
  dev.synchronize();
  ops::download(d, t, 2);
}

}  // namespace

// f32 at prec=1|2 as bf16 terms on matrix tiles (matmul impl=8, gated_mlp
// impl=4). The tolerances (2^-12 at prec 1, 2^-5 at prec 2) sit well below
// what dropping a term costs (bf16 alone: ~1e-2), so a lost lo term fails.
TEST_CASE("matmul and gated_mlp: f32 at prec=1|2 and f16 as bf16 terms: every candidate, K slices, the interpreter, inf") {
  ops::register_all_ops();
  const auto& mm = *ops::find_op("matmul");
  const auto& gm = *ops::find_op("gated_mlp");
  auto amx = codegen::cpu_caps();
  amx.matrix_tiles = true;
  // The heuristic: compute-bound shapes only, f32 and with matrix tiles only.
  CHECK(mm.heuristic(problem("matmul", {1024, 1024, 1024}, {{"prec", 1}}), amx).get("impl") == 8);
  CHECK(mm.heuristic(problem("matmul", {1, 4096, 4096}, {{"prec", 1}, {"trans_b", 1}}), amx).get("impl") != 8);
  auto plain = amx;
  plain.matrix_tiles = false;
  CHECK(mm.heuristic(problem("matmul", {1024, 1024, 1024}, {{"prec", 1}}), plain).get("impl") != 8);
  CHECK(gm.heuristic(problem("gated_mlp", {2048, 1024, 11008}, {{"prec", 1}}), amx).get("impl") == 4);
  // f32 A against bf16 Bᵀ (a_f32): A's [hi | lo] each against B's panels, from ~24 rows (prec 2: ~12).
  auto af = [&](int64_t m, int64_t prec) {
    return mm.heuristic(problem("matmul", {m, 4096, 4096}, {{"prec", prec}, {"trans_b", 1}, {"a_f32", 1}}, ir::ScalarKind::BF16), amx)
        .get("impl");
  };
  CHECK(af(256, 1) == 8);
  CHECK(af(32, 1) == 8);
  CHECK(af(16, 1) != 8);
  CHECK(af(16, 2) == 8);
  CHECK(af(8, 2) != 8);
  CHECK(mm.heuristic(problem("matmul", {256, 4096, 4096}, {{"prec", 1}, {"a_f32", 1}}, ir::ScalarKind::BF16), amx).get("impl") != 8);  // K×N
  CHECK_THROWS_WITH_AS(mm.validate(problem("matmul", {8, 8, 8}, {{"prec", 1}}, ir::ScalarKind::BF16)), doctest::Contains("f32 A"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(gm.validate(problem("gated_mlp", {8, 8, 8}, {{"prec", 1}}, ir::ScalarKind::F16)), doctest::Contains("prec"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(mm.validate(problem("matmul", {8, 8, 8}, {{"prec", 3}})), doctest::Contains("prec"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(mm.plan(problem("matmul", {64, 64, 64}, {{"prec", 1}}), ops::Variant::parse("impl=8"), plain),
                       doctest::Contains("AMX"), std::invalid_argument);
  // Through the interpreter on any host: odd K (each part padded to whole
  // pairs), K×N and Bᵀ, a batch, K slices of the tile kernel with a partial
  // last slice (3 × 38 = 114 deep in slices of 32).
  check_interpreted({
      {problem("matmul", {5, 19, 37}, {{"prec", 1}}), "impl=8"},
      {problem("matmul", {5, 19, 37}, {{"prec", 1}, {"trans_b", 1}, {"batch", 2}}), "impl=8 mc=1 nc=1 kc=32"},
      {problem("matmul", {33, 9, 11}, {{"prec", 2}, {"trans_b", 1}}), "impl=8 mc=1 nc=1"},
      {problem("matmul", {7, 40, 21}, {{"prec", 2}, {"batch", 2}}), "impl=8"},
      {problem("matmul", {5, 19, 37}, {{"prec", 1}, {"trans_b", 1}, {"a_f32", 1}}, ir::ScalarKind::BF16), "impl=8"},
      {problem("matmul", {33, 9, 12}, {{"prec", 2}, {"trans_b", 1}, {"a_f32", 1}, {"batch", 2}}, ir::ScalarKind::BF16), "impl=8 mc=1 nc=1"},
      {problem("gated_mlp", {3, 8, 21}, {{"prec", 1}}), "impl=4"},
      {problem("gated_mlp", {5, 9, 12}, {{"prec", 2}}), "impl=4"},
      // f16 A and B: four terms at prec 0 (matmul's terms for any f16 product).
      {problem("matmul", {5, 19, 37}, {}, ir::ScalarKind::F16), "impl=8"},
      {problem("matmul", {5, 19, 37}, {{"trans_b", 1}, {"batch", 2}}, ir::ScalarKind::F16), "impl=8 mc=1 nc=1 kc=32"},
      {problem("matmul", {33, 9, 11}, {{"prec", 1}, {"trans_b", 1}}, ir::ScalarKind::F16), "impl=8 mc=1 nc=1"},
      {problem("matmul", {7, 40, 21}, {{"prec", 2}, {"batch", 2}}, ir::ScalarKind::F16), "impl=8"},
  }, amx);
  if (!codegen::cpu_caps().matrix_tiles) {
    MESSAGE("no matrix tiles (AMX-BF16) on this CPU: the bf16 terms ran in the interpreter only");
    return;
  }
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    for (int64_t prec : {0, 1, 2}) {
      const auto f16 = ir::ScalarKind::F16;
      check_terms_candidates(*dev, {problem("matmul", {45, 70, 131}, {{"prec", prec}}, f16), problem("matmul", {45, 70, 131}, {{"prec", prec}, {"trans_b", 1}}, f16),
                                    problem("matmul", {17, 33, 29}, {{"prec", prec}, {"batch", 2}}, f16)});
      check(*dev, problem("matmul", {100, 70, 601}, {{"prec", prec}, {"trans_b", 1}}, f16), ops::Variant::parse("impl=8 mc=2 nc=2 kc=256"));
      if (prec == 0) continue;  // (f32 products at prec 0 are not terms)
      // Every terms candidate (the terms' tile blockings) of odd shapes.
      check_terms_candidates(*dev, {problem("matmul", {45, 70, 131}, {{"prec", prec}}), problem("matmul", {45, 70, 131}, {{"prec", prec}, {"trans_b", 1}}),
                                    problem("matmul", {17, 33, 29}, {{"prec", prec}, {"batch", 2}})});
      // K slices with a partial last one, more row blocks than mc.
      check(*dev, problem("matmul", {100, 70, 601}, {{"prec", prec}, {"trans_b", 1}}), ops::Variant::parse("impl=8 mc=2 nc=2 kc=256"));
      check(*dev, problem("gated_mlp", {37, 40, 71}, {{"prec", prec}}), ops::Variant::parse("impl=4"));
      // f32 A against bf16 Bᵀ: every terms candidate, odd K, a batch; the
      // gated MLP's down product with H in f32 (bf16 weights).
      check_terms_candidates(*dev, {problem("matmul", {45, 70, 131}, {{"prec", prec}, {"trans_b", 1}, {"a_f32", 1}}, ir::ScalarKind::BF16),
                                    problem("matmul", {17, 33, 29}, {{"prec", prec}, {"trans_b", 1}, {"a_f32", 1}, {"batch", 2}}, ir::ScalarKind::BF16)});
      check(*dev, problem("gated_mlp", {60, 36, 70}, {{"prec", prec}}, ir::ScalarKind::BF16), ops::Variant::parse("impl=3"));
    }
  }
  // Infinities and NaN in A keep their f32 meaning: inf·b is ±inf, never
  // NaN from inf meeting a zero lo term of B (B's values exact in bf16 here).
  auto dev = cpu(1);
  for (int64_t prec : {1, 2}) {
    auto p = problem("matmul", {40, 48, 64}, {{"prec", prec}, {"trans_b", 1}});
    ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
    auto* a = reinterpret_cast<float*>(t.in[0].data());
    auto* b = reinterpret_cast<float*>(t.in[1].data());
    for (size_t i = 0; i < t.in[1].size() / 4; ++i) b[i] = ir::bf16_to_f32(ir::f32_to_bf16(b[i])) + (b[i] == 0 ? 0.5f : 0.0f);
    a[3] = INFINITY;
    a[64 * 2 + 5] = -INFINITY;
    a[64 * 4 + 7] = NAN;
    ops::HostTensors want = t;
    ops::run_reference(p, want);
    run_variant(*dev, p, ops::Variant::parse("impl=8"), t);
    const auto* got = reinterpret_cast<const float*>(t.out[0].data());
    const auto* ref = reinterpret_cast<const float*>(want.out[0].data());
    for (int row : {0, 2, 4})
      for (int j = 0; j < 48; ++j) {
        CAPTURE(row);
        CAPTURE(j);
        CHECK(std::isnan(ref[row * 48 + j]) == std::isnan(got[row * 48 + j]));
        if (!std::isnan(ref[row * 48 + j])) CHECK(ref[row * 48 + j] == got[row * 48 + j]);  // ±inf
      }
  }
}

// f16 A and B on matrix tiles (matmul impl=8): each f16 value is hi + lo
// exactly in bf16, so prec 0 runs the four products of the terms (each exact
// in f32, summed in f32 as the widened GEMM sums them), prec 1 three, prec 2
// one. The exactness check uses values whose lo·lo product is the only thing
// below the sum's last bit but one: dropping that term changes the result.
TEST_CASE("matmul: f16 as bf16 terms on matrix tiles: the heuristic, exact products at prec 0, inf") {
  ops::register_all_ops();
  const auto& mm = *ops::find_op("matmul");
  auto amx = codegen::cpu_caps();
  amx.matrix_tiles = true;
  auto plain = amx;
  plain.matrix_tiles = false;
  const auto f16 = ir::ScalarKind::F16;
  CHECK(mm.heuristic(problem("matmul", {1024, 1024, 1024}, {}, f16), amx).get("impl") == 8);
  CHECK(mm.heuristic(problem("matmul", {1024, 1024, 1024}, {}, f16), plain).get("impl") != 8);
  CHECK(mm.heuristic(problem("matmul", {256, 4096, 4096}, {{"trans_b", 1}}, f16), amx).get("impl") != 8);  // weight-bound
  CHECK(mm.heuristic(problem("matmul", {64, 64, 64}, {}, f16), amx).get("impl") != 8);
  CHECK_NOTHROW(mm.validate(problem("matmul", {8, 8, 8}, {{"prec", 1}}, f16)));
  CHECK_THROWS_WITH_AS(mm.plan(problem("matmul", {64, 64, 64}, {}, f16), ops::Variant::parse("impl=8"), plain), doctest::Contains("AMX"),
                       std::invalid_argument);
  if (!codegen::cpu_caps().matrix_tiles) {
    MESSAGE("no matrix tiles (AMX-BF16) on this CPU: no f16 exactness check");
    return;
  }
  // a = b = 1 + 2^-10 (hi 1, lo 2^-10) over K = 6: each product is 1 + 2^-9 +
  // 2^-20, and every partial sum (up to 6 + 6·2^-9 + 6·2^-20, 23 bits) is
  // exact in f32, so C is exact, and 6·2^-20 off without lo·lo. An infinite
  // a keeps only hi·hi: inf·b, never NaN.
  auto dev = cpu(1);
  for (bool trans : {false, true}) {
    CAPTURE(trans);
    auto p = problem("matmul", {40, 36, 6}, {{"trans_b", trans ? 1 : 0}}, f16);
    ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
    const uint16_t one_plus = ir::f32_to_f16(1.0f + 1.0f / 1024);
    auto* a = reinterpret_cast<uint16_t*>(t.in[0].data());
    auto* b = reinterpret_cast<uint16_t*>(t.in[1].data());
    for (size_t i = 0; i < t.in[0].size() / 2; ++i) a[i] = one_plus;
    for (size_t i = 0; i < t.in[1].size() / 2; ++i) b[i] = one_plus;
    a[6 * 3] = ir::f32_to_f16(INFINITY);  // row 3, k 0
    run_variant(*dev, p, ops::Variant::parse("impl=8"), t);
    const auto* got = reinterpret_cast<const float*>(t.out[0].data());
    const double x = 1.0 + 1.0 / 1024;
    for (int i = 0; i < 40; ++i)
      for (int j = 0; j < 36; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        if (i == 3) CHECK(got[i * 36 + j] == INFINITY);
        else CHECK(got[i * 36 + j] == float(6 * x * x));
      }
  }
}

TEST_CASE("gated_mlp's CPU SiLU·product pass (f32 H, rounded to bf16, stored as bf16) against silu_ref") {
  auto dev = rt::create_device("cpu");
  std::mt19937 rng(17);
  // Tails within a line and within a chunk, several chunks, one element;
  // g wide enough that exp(-g) overflows at one end and vanishes at the other.
  for (uint32_t n : {1u, 15u, 4096u, 4113u, 3u * 4096u + 17u})
    for (auto [round, store] : {std::pair{false, false}, {true, false}, {true, true}}) {
      CAPTURE(n);
      CAPTURE(round);
      CAPTURE(store);
      std::uniform_real_distribution<float> wide(-100.0f, 100.0f), narrow(-2.0f, 2.0f);
      std::vector<float> g(n), u(n);
      for (uint32_t i = 0; i < n; ++i) g[i] = i % 7 ? narrow(rng) : wide(rng), u[i] = narrow(rng);
      auto bg = dev->alloc(n * 4), bu = dev->alloc(n * 4), bh = dev->alloc(n * (store ? 2 : 4));
      std::memcpy(bg->host_ptr(), g.data(), n * 4);
      std::memcpy(bu->host_ptr(), u.data(), n * 4);
      std::memset(bh->host_ptr(), 0xff, n * (store ? 2 : 4));  // poison: NaN in either form
      rt::LaunchArgs a;
      a.dims.grid = ops::wrapped_grid(ops::groups_for(n, ops::kGatedSiluChunk));
      a.dims.workgroup = {1, 1, 1};
      a.buffers = {bg.get(), bu.get(), bh.get()};
      a.scalars = {ir::scalar_slot(n)};
      dev->launch(*dev->compile(ops::gated_silu_cpu_kernel(round, store)), a);
      dev->synchronize();
      // Stored as bf16 is exactly the upper half of H rounded in f32 storage.
      std::vector<uint32_t> rounded;
      if (store) {
        auto br = dev->alloc(n * 4);
        rt::LaunchArgs ar = a;
        ar.buffers[2] = br.get();
        dev->launch(*dev->compile(ops::gated_silu_cpu_kernel(true, false)), ar);
        dev->synchronize();
        rounded.resize(n);
        std::memcpy(rounded.data(), br->host_ptr(), n * 4);
      }
      int bad = 0, unequal = 0;
      for (uint32_t i = 0; i < n; ++i) {
        float want = ops::silu_ref(g[i]) * u[i];
        float got;
        if (store) {
          uint16_t bits;
          std::memcpy(&bits, static_cast<const char*>(bh->host_ptr()) + 2 * i, 2);
          got = std::bit_cast<float>(uint32_t(bits) << 16);
          unequal += (uint32_t(bits) << 16) != rounded[i];
        } else {
          std::memcpy(&got, static_cast<const char*>(bh->host_ptr()) + 4 * i, 4);
        }
        // fast_exp within an ulp or two; bf16 rounding of want may land on
        // the other side of a tie from got's, so bf16 allows one bf16 ulp.
        // Below g = -87 fast_exp's clamp leaves ~1e-36 · g·u where the exact
        // value is ~0 (as the fused epilogue): an absolute floor of 1e-30.
        const double tol = round ? 1.0 / 128 : 1e-6;
        if (!(std::abs(double(got) - want) <= std::max(tol * std::abs(double(want)), 1e-30))) {
          if (bad++ < 5) MESSAGE("h[" << i << "] = " << got << ", want " << want << " (g " << g[i] << ", u " << u[i] << ")");
        }
      }
      CHECK(bad == 0);
      CHECK(unequal == 0);
    }
}
