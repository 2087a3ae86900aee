// The attention op: every variant against the C++ reference on odd shapes
// (S = 1, 17, Skv != S, D = 16/24/64/80, GQA, causal both ways, B = 2), on
// the CPU with 1 and 2 threads, in the interpreter, and on the GPU targets
// available here.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "codegen/cuda.h"
#include "tests/ops/op_test_util.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

using namespace kgen;
using namespace kgen::test;

namespace {

ops::Problem att(std::vector<int64_t> dims, bool causal) {
  ops::Problem p;
  p.op = "attention";
  p.dims = std::move(dims);
  p.attrs["causal"] = causal;
  return p;
}

}  // namespace

TEST_CASE("attention: every CPU candidate on small odd problems, 1 and 2 threads") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  REQUIRE(d);
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    for (bool causal : {false, true}) {
      // GQA 4/2, S != Skv, ragged key blocks for every kb.
      ops::Problem p = att({2, 4, 19, 64, 2, 37}, causal);
      auto cands = d->candidates(p, dev->caps());
      CHECK(cands.size() >= 10);
      for (const auto& v : cands) check(*dev, p, v);
    }
    // The grouped naive form (rg: a kv head's G query heads per work-item)
    // on decode shapes: one query row, G = 4 and 8, and S > Skv causal,
    // where the first rows see no key.
    for (auto [dims, causal] : {std::pair{std::vector<int64_t>{2, 8, 1, 32, 2, 37}, false},
                                {std::vector<int64_t>{1, 8, 3, 16, 1, 20}, true},
                                {std::vector<int64_t>{1, 4, 5, 16, 1, 3}, true}}) {
      ops::Problem p = att(dims, causal);
      check(*dev, p, ops::Variant{}.set("impl", 0).set("rg", dims[1] / dims[4]));
      check(*dev, p, d->heuristic(p, dev->caps()));
      p.dtype = ir::ScalarKind::BF16;  // a bf16 KV cache (q too), widened as it is read
      check(*dev, p, ops::Variant{}.set("impl", 0).set("rg", dims[1] / dims[4]));
    }
  }
}

TEST_CASE("attention: naive and both flash kernels on the odd shapes (CPU)") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  REQUIRE(d);
  auto dev = cpu(2);
  std::vector<ops::Problem> ps = d->test_problems;
  ps.push_back(att({1, 1, 1, 64, 1, 100}, true));  // one query sees all keys
  ps.push_back(att({1, 2, 5, 16, 2, 1}, false));   // one key
  ps.push_back(att({1, 1, 3, 16, 1, 50}, false));
  for (const auto& p : ps) {
    check(*dev, p, ops::Variant{}.set("impl", 0));
    check(*dev, p, ops::Variant{}.set("impl", 2).set("bq", 8).set("bk", 16));
    if (p.dim(3) % 16 == 0) {
      check(*dev, p, ops::Variant{}.set("impl", 1).set("qb", 3).set("kb", 16));
      check(*dev, p, ops::Variant{}.set("impl", 1).set("qb", 4).set("kb", 64));
      // Accumulators in L1 a line at a time (AVX2's heuristic), whatever the host.
      if (p.dim(3) > 16) check(*dev, p, ops::Variant{}.set("impl", 1).set("qb", 4).set("kb", 32).set("dc", 1));
    }
  }
}

TEST_CASE("attention: the register-tile flash form (impl 3) on every test problem and edge shapes, 1 and 2 threads") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  REQUIRE(d);
  // Tiles of 6, 3 and 4 rows (1 to 3 tiles per work-item), 1, 2 and 4 lines,
  // key blocks of 32 to 128: rows past S and keys past Skv in every block shape.
  // The first form on every problem, the others at D 64 and 72 (each D is
  // another kernel to compile).
  const std::vector<ops::Variant> forms = {
      ops::Variant{}.set("impl", 3).set("mr", 6).set("nl", 1).set("kb", 64).set("qt", 2),
      ops::Variant{}.set("impl", 3).set("mr", 3).set("nl", 1).set("kb", 32).set("qt", 1),
      ops::Variant{}.set("impl", 3).set("mr", 4).set("nl", 2).set("kb", 128).set("qt", 3),
      ops::Variant{}.set("impl", 3).set("mr", 6).set("nl", 4).set("kb", 64).set("qt", 1),  // AVX-512's block at D 64
  };
  auto fits = [&](const ops::Problem& p, const ops::Variant& v) {
    return (p.dim(3) + 15) / 16 % v.get("nl") == 0 && (v == forms[0] || p.dim(3) == 64 || p.dim(3) == 72);
  };
  std::vector<ops::Problem> ps = d->test_problems;
  for (bool causal : {false, true}) {
    ps.push_back(att({1, 2, 50, 64, 1, 77}, causal));    // S < Skv, neither a multiple of a block
    ps.push_back(att({1, 2, 77, 64, 1, 50}, causal));    // S > Skv: causal rows that see no key
    ps.push_back(att({2, 8, 33, 64, 2, 70}, causal));    // GQA 8/2, B = 2
    ps.push_back(att({1, 2, 45, 128, 1, 100}, causal));  // D = 128
    ps.push_back(att({2, 4, 1, 64, 2, 37}, causal));     // one query row (decode-like)
    ps.push_back(att({1, 3, 19, 32, 3, 130}, causal));   // D = 32, Skv past two 64-key blocks
    ps.push_back(att({1, 2, 37, 72, 1, 50}, causal));    // D off whole lines: 72, 100, 8
    ps.push_back(att({2, 4, 20, 100, 2, 33}, causal));
    ps.push_back(att({1, 2, 9, 8, 1, 20}, causal));
  }
  ops::Problem half = att({1, 8, 21, 64, 2, 35}, true);  // f16 q, k, v (K panels and V widened)
  half.dtype = ir::ScalarKind::F16;
  ps.push_back(half);
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    for (const auto& p : ps)
      for (const auto& v : forms)
        if (fits(p, v)) check(*dev, p, v);
  }
  // Lines per tile row that do not divide D's: refused with the reason.
  auto dev = cpu(1);
  CHECK_THROWS_WITH_AS(ops::prepare(*dev, att({1, 1, 4, 16}, false), forms[2]), doctest::Contains("nl dividing"),
                       std::invalid_argument);
}

TEST_CASE("attention: split-key decode (impl 4) on decode shapes, 1 and 2 threads") {
  ops::register_all_ops();
  // One query row (causal: sees every key) and a few rows (causal: the last
  // keys hidden from the first rows; S > Skv: rows that see no key), odd
  // Skv (a ragged last chunk, a chunk of one key), GQA and MHA, D of whole
  // 8- and 16-lane lines and off them.
  std::vector<ops::Problem> ps;
  for (bool causal : {false, true}) {
    ps.push_back(att({1, 8, 1, 128, 2, 2047}, causal));  // GQA 4, ragged last chunk
    ps.push_back(att({1, 4, 1, 64, 4, 17}, causal));     // MHA
    ps.push_back(att({2, 6, 1, 64, 2, 1}, causal));      // one key, B = 2, G = 3 (rows padded to pairs)
    ps.push_back(att({1, 4, 1, 72, 1, 300}, causal));    // D off 16-lane lines, G = 4
    ps.push_back(att({1, 2, 3, 13, 1, 40}, causal));     // odd D, S = 3
    ps.push_back(att({1, 8, 4, 128, 2, 33}, causal));    // 16 rows per kv head
    ps.push_back(att({1, 2, 5, 16, 1, 3}, causal));      // S > Skv
  }
  ops::Problem bf = att({1, 8, 1, 64, 2, 150}, true);  // a bf16 KV cache
  bf.dtype = ir::ScalarKind::BF16;
  ps.push_back(bf);
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    for (const auto& p : ps)
      for (int kc : {16, 64, 256}) check(*dev, p, ops::Variant{}.set("impl", 4).set("kc", kc));
  }
  // More rows per kv head than a work-item holds: refused with the reason.
  auto dev = cpu(1);
  CHECK_THROWS_WITH_AS(ops::prepare(*dev, att({1, 8, 5, 16, 2, 8}, false), ops::Variant{}.set("impl", 4)),
                       doctest::Contains("query rows per kv head"), std::invalid_argument);
}

TEST_CASE("attention: scale attribute and malformed problems") {
  ops::register_all_ops();
  auto dev = cpu(1);
  ops::Problem p = att({1, 2, 9, 16}, true);
  p.attrs["scale_milli"] = 700;
  check(*dev, p, ops::Variant{}.set("impl", 1).set("qb", 4).set("kb", 16));
  check(*dev, p, ops::Variant{}.set("impl", 0));
  CHECK_THROWS_WITH_AS(ops::op_for(att({1, 3, 4, 16, 2}, false)), doctest::Contains("multiple of Hkv"),
                       std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(att({1, 3, 4}, false)), std::invalid_argument);
  // The CPU flash kernel needs whole f32x16 lines over D: a clear refusal.
  CHECK_THROWS_WITH_AS(ops::prepare(*dev, att({1, 1, 4, 24}, false), ops::Variant{}.set("impl", 1)),
                       doctest::Contains("multiple of 16"), std::invalid_argument);
}

TEST_CASE("attention: kernels in the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  ops::Problem p = att({1, 2, 5, 16, 1, 7}, true);
  for (const auto& v : {ops::Variant{}.set("impl", 0), ops::Variant{}.set("impl", 1).set("qb", 2).set("kb", 16),
                        ops::Variant{}.set("impl", 3).set("mr", 2).set("nl", 1).set("kb", 16).set("qt", 2),
                        ops::Variant{}.set("impl", 4).set("kc", 16),
                        ops::Variant{}.set("impl", 2).set("bq", 4).set("bk", 4)}) {
    CAPTURE(v.str());
    ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
    INFO(c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("attention: GPU targets (naive and flash)") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: attention on " << name << " skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    // The register tiles (D 16 to 96) with ragged row groups and key blocks:
    // S > Skv causal (the first 23 or 40 rows see no key), Skv > S; key
    // splits (ks 2 and 4) where Skv has 256 keys or more; D 128 with K and V
    // through one buffer (kv1) where apart they do not fit.
    for (const auto& p : {att({2, 4, 17, 16, 2, 23}, true), att({1, 2, 33, 64, 1, 20}, false),
                          att({1, 2, 9, 24}, true), att({1, 2, 100, 64, 1, 77}, true), att({1, 1, 40, 32, 1, 150}, true),
                          att({1, 1, 70, 96, 1, 45}, false), att({1, 2, 70, 32, 1, 600}, true), att({1, 1, 300, 32, 1, 260}, true),
                          att({1, 2, 40, 128, 1, 300}, true)})
      for (const auto& v : d->candidates(p, dev->caps())) check(*dev, p, v);
    // Key splits (the last 6 of 16 empty: 10 blocks of 32 keys), merged.
    const ops::Problem p9 = att({1, 1, 9, 64, 1, 300}, false);
    const ops::Variant tiled = ops::Variant{}.set("impl", 2).set("bq", 32).set("bk", 32).set("tile", 1);
    const auto c9 = d->candidates(p9, dev->caps());
    if (std::find(c9.begin(), c9.end(), tiled) != c9.end()) check(*dev, p9, ops::Variant(tiled).set("ks", 16));
    // More rows than a grid axis holds (65535 groups): the row groups wrap.
    ops::Problem many = att({1, 1, 70001, 16, 1, 9}, true);
    check(*dev, many, ops::Variant{}.set("impl", 0));
    check(*dev, many, ops::Variant{}.set("impl", 2).set("bq", 1).set("bk", 8));
    if (dev->caps().bf16) {
      ops::Problem p = att({1, 4, 9, 32, 2, 23}, true);
      p.dtype = ir::ScalarKind::BF16;
      for (const auto& v : d->candidates(p, dev->caps())) check(*dev, p, v);
    }
  }
}

TEST_CASE("attention: the GPU heuristic's tiles and key splits (CUDA's 48 KiB, lavapipe's 32 KiB)") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  const auto cuda = codegen::cuda_caps();
  auto pick = [&](std::vector<int64_t> dims, const codegen::TargetCaps& caps) { return d->heuristic(att(std::move(dims), true), caps); };
  // D 64: 64 × 32 tiles, keys split to ~1024 workgroups (B1 H8: 128 groups, ks 8).
  auto v = pick({1, 8, 1024, 64}, cuda);
  CHECK(v.get("tile") == 1);
  CHECK(v.get("bq") == 64);
  CHECK(v.get("ks") == 8);
  CHECK(pick({1, 32, 512, 64}, cuda).get("ks") == 4);
  CHECK(pick({1, 8, 4096, 64}, cuda).get("ks", 1) == 1);
  // D 128: 32 × 32 tiles with K and V through one buffer (apart: 57 KiB).
  v = pick({1, 32, 1024, 128}, cuda);
  CHECK(v.get("bq") == 32);
  CHECK(v.get("bk") == 32);
  CHECK(v.get("kv1") == 1);
  // 32 KiB (lavapipe): D 128 only as 32 × 16 through one buffer.
  auto small = cuda;
  small.max_shared_bytes = 32768;
  small.subgroup_size = 8;
  v = pick({1, 4, 300, 128}, small);
  CHECK(v.get("bk") == 16);
  CHECK(v.get("kv1") == 1);
}

TEST_CASE("attention: the CPU heuristic keeps the flash accumulators within the register file") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("attention");
  REQUIRE(d);
  codegen::TargetCaps avx2 = codegen::cpu_caps(), avx512 = codegen::cpu_caps();
  avx2.vector_bits = 256, avx2.vector_registers = 16;
  avx512.vector_bits = 512, avx512.vector_registers = 32;
  avx2.cpu.split_zmm = avx512.cpu.split_zmm = false;  // Zen 4's and Intel's rules are checked below
  avx512.cpu.family = codegen::CpuFamily::zen5;
  codegen::TargetCaps zen4 = avx512, intel = avx512;
  zen4.cpu.split_zmm = true;
  zen4.cpu.family = codegen::CpuFamily::zen4;
  intel.cpu.family = codegen::CpuFamily::intel_avx512;
  for (bool causal : {false, true}) {
    // AVX2 (a line is 2 ymm): the GEMM register tiles, the matmul's 6 × 16
    // block for 16 ymm, at every D of whole lines and with GQA.
    for (int64_t dd : {16, 64, 128}) CHECK(d->heuristic(att({1, 8, 1024, dd}, causal), avx2).str() == "impl=3 kb=64 mr=6 nl=1 qt=2");
    CHECK(d->heuristic(att({1, 32, 512, 128, 8}, causal), avx2).get("impl") == 3);
    // Short S: 4-row tiles where 6 would pad the rows; one tile per work-item where two would.
    CHECK(d->heuristic(att({1, 8, 8, 64, 8, 1024}, causal), avx2).str() == "impl=3 kb=64 mr=4 nl=1 qt=2");
    CHECK(d->heuristic(att({1, 8, 12, 64, 8, 512}, causal), avx2).str() == "impl=3 kb=64 mr=6 nl=1 qt=2");
    CHECK(d->heuristic(att({1, 8, 30, 64, 8, 512}, causal), avx2).str() == "impl=3 kb=64 mr=6 nl=1 qt=1");
    // 4 rows × 4 lines in zmm registers on AVX-512 (Zen 5); Zen 4 and Intel take the tiles.
    CHECK(d->heuristic(att({1, 8, 1024, 64}, causal), avx512).str() == "impl=1 kb=64 qb=4");
    CHECK(d->heuristic(att({1, 8, 1024, 64}, causal), zen4).str() == "impl=3 kb=64 mr=6 nl=4 qt=2");
    CHECK(d->heuristic(att({8, 12, 128, 64}, causal), zen4).get("impl") == 3);
    CHECK(d->heuristic(att({1, 8, 1024, 64}, causal), intel).str() == "impl=3 kb=64 mr=6 nl=4 qt=2");
    CHECK(d->heuristic(att({1, 32, 1024, 128}, causal), intel).get("impl") == 3);
    // Decode rows (up to 4, G·S <= 16): the split-key decode form. D off
    // whole lines: the tiles everywhere.
    CHECK(d->heuristic(att({1, 32, 1, 128, 8, 2048}, causal), avx2).str() == "impl=4 kc=256");
    CHECK(d->heuristic(att({1, 32, 4, 128, 8, 2048}, causal), avx512).get("impl") == 4);
    CHECK(d->heuristic(att({1, 32, 1, 128, 8, 2048}, causal), avx512).str() == "impl=4 kc=256");
    CHECK(d->heuristic(att({1, 32, 1, 128, 8, 2048}, causal), intel).str() == "impl=4 kc=256");
    // Zen 4: one grouped row takes the grouped naive form; four rows still split.
    CHECK(d->heuristic(att({1, 32, 1, 128, 8, 2048}, causal), zen4).str() == "impl=0 rg=4");
    CHECK(d->heuristic(att({1, 32, 4, 128, 8, 2048}, causal), zen4).get("impl") == 4);
    CHECK(d->heuristic(att({1, 32, 8, 128, 8, 2048}, causal), avx2).get("impl") != 4);
    CHECK(d->heuristic(att({1, 8, 1024, 24}, causal), avx2).get("impl") == 3);
    CHECK(d->heuristic(att({1, 8, 1024, 24}, causal), avx512).get("impl") == 3);
  }
  // The tuner sees the L1 walks on AVX2.
  const auto c = d->candidates(att({1, 8, 1024, 64}, false), avx2);
  CHECK(std::count_if(c.begin(), c.end(), [](const ops::Variant& v) { return v.get("dc") == 1; }) >= 6);
}

KGEN_OP_FAMILY_TESTS("rope", "rope")
