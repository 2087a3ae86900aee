// The quantized-weight family (ops/quant/quant.h): f16 conversions, dequantize of
// every GGML format on random valid blocks, quantize (bit-exact with GGML's
// reference) and its round trip, qmatmul on odd shapes with every path, on
// the CPU (1 and 2 threads), the GPU devices present, and the interpreter.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <tuple>

#include "tests/ops/op_test_util.h"
#include "codegen/target.h"
#include "ops/core/executor.h"
#include "ops/matmul/plan.h"
#include "ops/core/op.h"
#include "ops/quant/formats.h"
#include "ops/quant/kernels.h"

using namespace kgen;
using namespace kgen::test;
using namespace kgen::ops::quant;

namespace {

// The candidates with each blocking's nearest and farthest prefetch distance
// (pf) only: the distances of one blocking differ in a prefetch's offset,
// which cannot change a result, and each is a kernel of its own (1-11 s to
// compile on AVX2, where LLVM lowers these kernels' 64-byte byte permutes to
// long vpshufb sequences: every distance made this test ~800 s on Zen 3).
std::vector<ops::Variant> prefetch_extremes(const std::vector<ops::Variant>& cands) {
  auto without_pf = [](ops::Variant v) { v.params.erase("pf"); return v; };
  std::vector<ops::Variant> out;
  for (const auto& v : cands) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& u : cands)
      if (without_pf(u) == without_pf(v)) lo = std::min(lo, u.get("pf")), hi = std::max(hi, u.get("pf"));
    if (v.get("pf") == lo || v.get("pf") == hi) out.push_back(v);
  }
  return out;
}

// The candidates without the GEMVs' twins that prefetch into L1 (pl1=1):
// a twin differs from its variant in the prefetch hint alone, which cannot
// change a result but doubles the kernels to compile; the twins of every
// form are checked on their own (the pl1 test below).
std::vector<ops::Variant> without_l1_twins(const std::vector<ops::Variant>& cands) {
  std::vector<ops::Variant> out;
  for (const auto& v : cands)
    if (!v.get("pl1")) out.push_back(v);
  return out;
}

const ops::OpDef& op(const std::string& name) {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op(name);
  REQUIRE(d);
  return *d;
}

// Registers the ops too: every case that builds a problem then runs alone
// (doctest -tc), not only after a case that happened to register them.
ops::Problem problem(const std::string& name, std::vector<int64_t> dims, QFormat f) {
  ops::register_all_ops();
  return ops::Problem{name, std::move(dims), ir::ScalarKind::F32, {{"format", int64_t(f)}}};
}

ops::Problem r16_problem(std::vector<int64_t> dims, QFormat f) {
  ops::Problem p = problem("qmatmul", std::move(dims), f);
  p.attrs["layout"] = 16;
  return p;
}

}  // namespace

TEST_CASE("quant: f16 conversions round trip every half and round to nearest even") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float x = half_to_float(uint16_t(h));
    if (std::isnan(x)) {
      CHECK(std::isnan(half_to_float(float_to_half(x))));
      continue;
    }
    REQUIRE(float_to_half(x) == h);
  }
  CHECK(half_to_float(float_to_half(1.0f + 1.0f / 2048)) == 1.0f);           // tie to even (down)
  CHECK(half_to_float(float_to_half(1.0f + 3.0f / 2048)) == 1.0f + 4.0f / 2048);  // tie to even (up)
  CHECK(float_to_half(65520.0f) == 0x7C00);
  CHECK(float_to_half(65519.0f) == 0x7BFF);
  CHECK(half_to_float(float_to_half(std::ldexp(3.0f, -26))) == std::ldexp(1.0f, -24));  // subnormal rounding
}

TEST_CASE("quant: block layouts have GGML's sizes and the reference decodes known blocks") {
  CHECK(info(QFormat::Q4_0).block_bytes == 18);
  CHECK(info(QFormat::Q8_0).block_bytes == 34);
  CHECK(info(QFormat::Q2_K).block_bytes == 84);
  CHECK(info(QFormat::Q3_K).block_bytes == 110);
  CHECK(info(QFormat::Q4_K).block_bytes == 144);
  CHECK(info(QFormat::Q5_K).block_bytes == 176);
  CHECK(info(QFormat::Q6_K).block_bytes == 210);
  CHECK(parse_format("Q4_K") == QFormat::Q4_K);
  // Q4_0 with d = 0.5: byte j = 0x9F → element j = (15-8)·0.5, j+16 = (9-8)·0.5.
  uint8_t b[18];
  uint16_t d = float_to_half(0.5f);
  std::memcpy(b, &d, 2);
  std::memset(b + 2, 0x9F, 16);
  float y[32];
  dequantize_ref(QFormat::Q4_0, b, y, 1);
  CHECK(y[0] == 3.5f);
  CHECK(y[16] == 0.5f);
  // Q4_K: sub-block 5 takes scale (low nibble of byte 9) | (top bits of byte 1) << 4.
  uint8_t k[144] = {};
  uint16_t one = float_to_half(1.0f);
  std::memcpy(k, &one, 2);       // d
  std::memcpy(k + 2, &one, 2);   // dmin
  k[4 + 9] = 0x23;               // scale low 3, min low 2 of sub-block 5
  k[4 + 1] = 0x40;               // scale of sub-block 5 += 16
  k[4 + 5] = 0x80;               // min of sub-block 5 += 32
  std::memset(k + 16 + 64, 0x70, 32);  // chunk 2: high nibbles 7 = sub-block 5
  float yk[256];
  dequantize_ref(QFormat::Q4_K, k, yk, 1);
  CHECK(yk[5 * 32] == 19.0f * 7.0f - 34.0f);
}

TEST_CASE("quant: dequantize every format, every candidate, CPU 1 and 2 threads") {
  const auto& d = op("dequantize");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& p : d.test_problems)
      for (const auto& v : d.candidates(p, dev->caps())) check(*dev, p, v);
  }
}

TEST_CASE("quant: quantize is bit-exact with GGML's reference, CPU 1 and 2 threads") {
  const auto& d = op("quantize");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& p : d.test_problems)
      for (const auto& v : d.candidates(p, dev->caps())) check(*dev, p, v);
  }
}

// Random inputs almost never tie: blocks whose largest magnitude appears
// with both signs (GGML's Q4_0 takes the first), halfway cases of Q8_0's
// roundf, all-zero blocks led by -0.0 (Q4_0's d is then -0), placed in full
// and partial chunks of the line kernels, on every candidate.
TEST_CASE("quant: quantize ties, halfway cases and signed zeros match GGML on every candidate") {
  const auto& d = op("quantize");
  auto dev = cpu(1);
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0}) {
    CAPTURE(info(f).name);
    const int64_t nblocks = 25, n = nblocks * 32;
    ops::Problem p = problem("quantize", {1, n}, f);
    uint64_t seed = fresh_seed();
    CAPTURE(seed);
    ops::HostTensors h = ops::make_host_tensors(p, seed);
    float* x = reinterpret_cast<float*>(h.in[0].data());
    auto block = [&](int b) { return x + 32 * b; };
    for (int b : {0, 9, 17, 22}) {  // +3 before -3 (first half, then across halves)
      block(b)[2] = 3.0f, block(b)[5] = -3.0f;
      block(b + 1)[20] = -3.0f, block(b + 1)[27] = 3.0f;
      block(b + 1)[4] = 2.9f;
    }
    for (int b : {3, 16, 24}) {  // zeros, -0.0 first
      for (int i = 0; i < 32; ++i) block(b)[i] = 0.0f;
      block(b)[0] = -0.0f;
    }
    block(12)[0] = 127.0f;  // d = 1: x·id = x, and the rest are k + 0.5
    for (int i = 1; i < 32; ++i) block(12)[i] = float(i % 2 ? -1 : 1) * (float(4 * i) + 0.5f);
    std::vector<uint8_t> ref(padded_bytes(f, 1, n), 0);
    if (f == QFormat::Q8_0) quantize_q8_0_ref(x, ref.data(), n);
    else quantize_q4_0_ref(x, ref.data(), n);
    for (const auto& v : d.candidates(p, dev->caps())) {
      CAPTURE(v.str());
      auto pp = ops::prepare(*dev, p, v);
      std::fill(h.out[0].begin(), h.out[0].end(), uint8_t(0xA5));  // poisoned
      auto io = ops::upload(*dev, h);
      ops::execute(*dev, pp, io.io());
      ops::download(io, h, 1);
      const auto bytes = int64_t(packed_bytes(f, 1, n));
      CHECK(std::equal(ref.begin(), ref.begin() + bytes, h.out[0].begin()));
    }
  }
}

TEST_CASE("quant: quantize -> dequantize round trip on the device matches the host and bounds the error") {
  auto dev = cpu(2);
  for (QFormat f : {QFormat::Q8_0, QFormat::Q4_0}) {
    CAPTURE(info(f).name);
    ops::Problem pq = problem("quantize", {3, 4096}, f), pd = problem("dequantize", {3, 4096}, f);
    uint64_t seed = fresh_seed();
    CAPTURE(seed);
    ops::HostTensors hq = ops::make_host_tensors(pq, seed);
    // Blocks of very different magnitudes, and an all-zero block (d = 0).
    float* x = reinterpret_cast<float*>(hq.in[0].data());
    const int64_t n = 3 * 4096;
    for (int64_t i = 0; i < n; ++i) x[i] *= std::ldexp(1.0f, int((i / 32) % 17) - 8);
    for (int i = 0; i < 32; ++i) x[64 + i] = 0;
    auto pp = ops::prepare(*dev, pq, ops::choose_variant(*dev, pq));
    auto dq = ops::upload(*dev, hq);
    ops::execute(*dev, pp, dq.io());
    ops::download(dq, hq, 1);
    auto pp2 = ops::prepare(*dev, pd, ops::choose_variant(*dev, pd));
    ops::HostTensors hd = ops::make_host_tensors(pd, seed);
    hd.in[0] = hq.out[0];
    auto dd = ops::upload(*dev, hd);
    ops::execute(*dev, pp2, dd.io());
    ops::download(dd, hd, 1);
    // Host: GGML reference quantize, reference dequantize.
    std::vector<uint8_t> qref(padded_bytes(f, 3, 4096), 0);
    if (f == QFormat::Q8_0) quantize_q8_0_ref(x, qref.data(), n);
    else quantize_q4_0_ref(x, qref.data(), n);
    REQUIRE(qref == hq.out[0]);
    std::vector<float> yref(n);
    dequantize_ref(f, qref.data(), yref.data(), n / 32);
    const float* y = reinterpret_cast<const float*>(hd.out[0].data());
    const int bb = info(f).block_bytes;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      bad += y[i] != yref[i];
      // |x - deq| ≤ d/2 (Q8_0), ≤ |d| (Q4_0: the element opposite the
      // max clamps at 15), d being the stored f16 scale (its rounding ≤ 2^-11).
      uint16_t h;
      std::memcpy(&h, qref.data() + (i / 32) * bb, 2);
      float dd16 = std::fabs(half_to_float(h));
      float bound = (f == QFormat::Q8_0 ? 0.5f : 1.0f) * dd16 * (1 + 1.0f / 64) + 1e-30f;
      if (std::fabs(x[i] - y[i]) > bound + 127 * dd16 / 1024) ++bad;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("quant: qmatmul heuristic variants on odd shapes, CPU 1 and 2 threads") {
  const auto& d = op("qmatmul");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& p : d.test_problems) check(*dev, p, d.heuristic(p, dev->caps()));
  }
}

// Rows of W walked one after another (seq=1) instead of in lockstep: every
// such candidate of every format (plain units, pairs, quads, 16-lane units,
// X per super-block), one row of X at 1 and 2 threads and two at 2, N = 13
// past the last whole group of rows (the guarded rows).
TEST_CASE("quant: qmatmul GEMV with rows one after another (seq=1), every format") {
  const auto& d = op("qmatmul");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (const auto& fi : all_formats())
      for (int64_t m : {1, 2}) {
        if (m == 2 && t == 1) continue;
        ops::Problem p = problem("qmatmul", {m, 13, 512}, fi.format);
        int seq = 0;
        for (const auto& v : prefetch_extremes(without_l1_twins(d.candidates(p, dev->caps()))))
          if (v.get("seq")) {
            check(*dev, p, v);
            ++seq;
          }
        if (has_int8_gemv(fi.format)) CHECK_MESSAGE(seq > 0, fi.name << " has no seq=1 candidate");
      }
  }
}

// The prefetches into L1 (pl1=1): every int8 GEMV form of every format
// that has one (plain units, Q8_0's signed codes, pairs, quads, row pairs,
// 16-lane units, X per super-block, rows in lockstep or one after another),
// at its nearest and farthest distance, one row of X (the decode GEMV the
// heuristic gives pl1) and N = 13 past the last whole group of rows; and the
// GEMV over rows interleaved by 16 (N = 37: past a group); 2 threads.
TEST_CASE("quant: qmatmul GEMV prefetching into L1 (pl1=1), every form") {
  const auto& d = op("qmatmul");
  auto dev = cpu(2);
  auto check_twins = [&](const ops::Problem& p, bool expected) {
    std::vector<ops::Variant> twins;
    for (const auto& v : d.candidates(p, dev->caps()))
      if (v.get("pl1")) twins.push_back(v);
    int checked = 0;
    for (const auto& v : prefetch_extremes(twins)) check(*dev, p, v), ++checked;
    if (expected) CHECK_MESSAGE(checked > 0, p.str() << " has no pl1=1 candidate");
  };
  for (const auto& fi : all_formats()) check_twins(problem("qmatmul", {1, 13, 512}, fi.format), has_int8_gemv(fi.format));
  for (QFormat f : {QFormat::Q4_0, QFormat::Q8_0, QFormat::Q4_K, QFormat::Q6_K})
    check_twins(r16_problem({1, 37, 3 * info(f).block_elems}, f), true);
}

TEST_CASE("quant: qmatmul every CPU candidate, and the any-target GEMV on the CPU") {
  const auto& d = op("qmatmul");
  auto dev = cpu(2);
  // Every candidate for two formats (the kernel structure is shared), the
  // line decoders of the others through a few register blockings.
  for (QFormat f : {QFormat::Q4_0, QFormat::Q4_K}) {
    int64_t qk = info(f).block_elems;
    // (K = 4 blocks: Q4_0's block quads, p4)
    for (auto p : {problem("qmatmul", {3, 11, 2 * qk}, f), problem("qmatmul", {5, 9, qk}, f), problem("qmatmul", {2, 13, 4 * qk}, f)})
      for (const auto& v : without_l1_twins(d.candidates(p, dev->caps()))) check(*dev, p, v);
  }
  for (QFormat f : {QFormat::Q8_0, QFormat::Q6_K, QFormat::Q5_K, QFormat::Q4_1, QFormat::Q5_0, QFormat::Q5_1,
                    QFormat::Q2_K, QFormat::Q3_K}) {
    int64_t qk = info(f).block_elems;
    auto p = problem("qmatmul", {3, 11, 2 * qk}, f);
    for (auto [r, mb] : {std::pair{1, 1}, {8, 2}, {2, 4}})
      check(*dev, p, ops::Variant{}.set("impl", 0).set("rows", r).set("mb", mb));
    if (f == QFormat::Q6_K)  // its 16-lane int8 units, guarded rows and two X rows
      for (auto [r, mb] : {std::pair{2, 2}, {8, 1}})
        check(*dev, p, ops::Variant{}.set("impl", 3).set("rows", r).set("mb", mb).set("w16", 1).set("pf", 1));
    check(*dev, p, ops::Variant{}.set("impl", 1).set("wg", 64));
  }
  // Rows interleaved by 16: every candidate (GEMV blockings, the tiled
  // path; prefetch_extremes' distances), N past a group of 16 and K/32 odd.
  for (QFormat f : {QFormat::Q4_0, QFormat::Q8_0, QFormat::Q4_K, QFormat::Q6_K})
    for (auto dims : {std::vector<int64_t>{3, 37, 3}, {5, 16, 2}}) {
      dims[2] *= info(f).block_elems;  // blocks to elements
      ops::Problem p = r16_problem(dims, f);
      for (const auto& v : prefetch_extremes(without_l1_twins(d.candidates(p, dev->caps())))) check(*dev, p, v);
    }
  // Nine rows of X: the heuristic's prefill path of every format (the packed
  // int8 GEMM on GGML rows, or dequantize + the tiled GEMM).
  for (const auto& fi : all_formats()) {
    ops::Problem p = problem("qmatmul", {9, 21, 512}, fi.format);
    check(*dev, p, d.heuristic(p, dev->caps()));
  }
}

// Prefill on bf16 matrix tiles (impl=7): every format on odd shapes (rows
// of W and X off the 32-blocks, K slices with a short last one, X panels
// split over workgroups), on hosts with AMX-BF16; elsewhere the plan must
// refuse it by name.
TEST_CASE("quant: qmatmul on bf16 matrix tiles, every format, CPU 1 and 2 threads") {
  const auto& d = op("qmatmul");
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    if (!dev->caps().matrix_tiles) {
      MESSAGE("no AMX-BF16 on this host: qmatmul impl=7 runs only through the interpreter (below); checking its refusal");
      auto p = problem("qmatmul", {40, 33, 256}, QFormat::Q4_0);
      CHECK_THROWS_WITH_AS(d.plan(p, ops::Variant::parse("impl=7 mc=1 nc=1 kc=256"), dev->caps()), doctest::Contains("AMX"),
                           std::invalid_argument);
      break;
    }
    for (const auto& fi : all_formats()) {
      const int64_t qk = fi.block_elems, kc = qk == 32 ? 64 : 256;
      for (auto dims : {std::vector<int64_t>{37, 45, 5 * qk}, {70, 97, 3 * qk}, {1, 33, qk}})
        for (const char* v : {"impl=7 mc=2 nc=1", "impl=7 mc=1 nc=3"}) {
          auto p = problem("qmatmul", dims, fi.format);
          check(*dev, p, ops::Variant::parse(std::string(v) + " kc=" + std::to_string(kc)));
        }
      // The heuristic's (from 24-48 rows of X, with the tiles).
      auto p = problem("qmatmul", {65, 70, 4 * qk}, fi.format);
      CHECK(d.heuristic(p, dev->caps()).get("impl") == 7);
      check(*dev, p, d.heuristic(p, dev->caps()));
    }
  }
  // Where the heuristic takes them: many rows of X, GGML rows, xq=1.
  auto amx = codegen::cpu_caps();
  amx.matrix_tiles = true;
  CHECK(d.heuristic(problem("qmatmul", {64, 4096, 4096}, QFormat::Q4_0), amx).get("impl") == 7);
  CHECK(d.heuristic(problem("qmatmul", {16, 4096, 4096}, QFormat::Q4_0), amx).get("impl") != 7);
  CHECK(d.heuristic(problem("qmatmul", {16, 4096, 4096}, QFormat::Q6_K), amx).get("impl") == 7);
  auto exact = problem("qmatmul", {64, 4096, 4096}, QFormat::Q4_0);
  exact.attrs["xq"] = 0;  // f32 X: bf16 rounding not allowed
  CHECK(d.heuristic(exact, amx).get("impl") != 7);
  amx.matrix_tiles = false;
  CHECK(d.heuristic(problem("qmatmul", {64, 4096, 4096}, QFormat::Q4_0), amx).get("impl") != 7);
}

// The GPU GEMVs (a workgroup per output; impl=6: a work-item per block) on the
// CPU device and every GPU device present: odd N, M up to 4, K of 1 and of
// 128 blocks, N past one grid row of 65535 groups.
TEST_CASE("quant: the GPU GEMVs on the CPU and the GPU devices") {
  ops::register_all_ops();
  std::vector<std::unique_ptr<rt::Device>> devs;
  if (have_device("cpu")) devs.push_back(cpu(2));  // (absent from a build without the C++ JIT)
  for (const std::string& name : gpu_device_names())
    if (have_device(name)) devs.push_back(rt::create_device(name));
  for (auto& dev : devs)
    for (QFormat f : {QFormat::Q4_0, QFormat::Q8_0})
      for (auto dims : {std::vector<int64_t>{3, 37, 32}, {1, 33, 4096}, {4, 5, 96}, {1, 70000, 32}}) {
        ops::Problem p = problem("qmatmul", dims, f);
        for (const char* v : {"impl=6 wg=32", "impl=6 wg=64", "impl=1 wg=64"}) {
          if (dims[1] > 65535 && std::string(v) != "impl=6 wg=64") continue;
          check(*dev, p, ops::Variant::parse(v));
        }
      }
}

// The int8-activation GEMV against the exact product with the quantized
// activations x̂ (quantize_x8_ref): what remains is f32 rounding, so the
// kernel's integer dot products, offsets, mins and scales are checked at the
// f32 bound rather than at the op's looser xq=1 tolerance.
TEST_CASE("quant: int8 GEMV equals W·x̂ to f32 rounding, every format, CPU 1 and 2 threads") {
  ops::register_all_ops();
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    for (QFormat f : {QFormat::Q4_0, QFormat::Q4_1, QFormat::Q5_0, QFormat::Q5_1, QFormat::Q8_0, QFormat::Q2_K,
                      QFormat::Q3_K, QFormat::Q4_K, QFormat::Q5_K, QFormat::Q6_K}) {
      const int64_t qk = info(f).block_elems;
      for (auto [m, n, k, r, mb] : {std::tuple<int64_t, int64_t, int64_t, int, int>{1, 37, 4 * qk, 4, 1},
                                    {3, 11, 2 * qk, 8, 2}, {2, 5, qk, 2, 2}, {3, 13, 8 * qk, 8, 2},
                                    {9, 21, 3 * qk, 4, 4}, {10, 7, 2 * qk, 1, 8}, {6, 9, qk, 1, 6}}) {
        // Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 also as block pairs (p2, k % 64 == 0), all but Q8_0 as quads (p4, k % 128 == 0);
        // Q2_K, Q3_K, Q4_K and Q6_K in 16-lane units (w16); GGML rows packed into the
        // interleaved tiles inside the GEMM (impl=5, X in row blocks of mb; every format); Q4_0, Q8_0, Q4_K, Q6_K with rows interleaved by 16 (r16).
        // Q2_K, Q3_K, Q4_K and Q5_K also with X per super-block of 256 (xk; checked against x̂ of that quantization).
        // Q4_0 also in row pairs (rp: rows 4 or 8, mb 1 or 2; odd N is the guarded last group).
        for (int form : {0, 1, 2, 3, 4, 5, 6, 7}) {
          const bool p2 = form == 1, r16 = form == 2, p4 = form == 3, w16 = form == 4, rows_r16 = form == 5, xk = form == 6;
          const bool rp = form == 7;
          if (rp && !row_pair_gemv_format(f)) continue;
          if (rows_r16 && !has_rows_r16_gemm(f)) continue;
          if (xk && !has_x8k_gemv(f)) continue;
          if ((p2 && info(f).block_elems != 32) || (p4 && (info(f).block_elems != 32 || f == QFormat::Q8_0)) || (r16 && !has_r16(f)) || (w16 && !has_wide_int8_gemv(f))) continue;
          if (!has_int8_gemv(f) && !w16 && !rows_r16 && !xk) continue;  // Q2_K, Q3_K: their only int8 GEMVs
          if ((p2 && k % 64) || (p4 && k % 128)) continue;
          ops::Problem p = problem("qmatmul", {m, n, k}, f);
          ops::Variant v = ops::Variant{}.set("impl", 3).set("rows", r).set("mb", mb);
          if (p2) v.set("p2", 1).set("pf", 1);
          if (p4) v.set("p4", 1).set("pf", 2);
          if (w16) v.set("w16", 1).set("pf", 1);
          if (rows_r16) v = ops::Variant{}.set("impl", 5).set("mb", mb);
          if (xk) v = ops::Variant{}.set("impl", 3).set("rows", r).set("mb", mb).set("xk", 1).set("pf", mb);
          if (rp) v = ops::Variant{}.set("impl", 3).set("rows", r == 4 ? 4 : 8).set("mb", std::min(mb, 2)).set("rp", 1).set("pf", mb == 1 ? 0 : 2);
          if (r16) {
            p.attrs["layout"] = 16;
            v = ops::Variant{}.set("impl", 4).set("groups", r / 4 + 1).set("mb", mb).set("pf", 2);
          }
          uint64_t seed = fresh_seed();
          CAPTURE(p.str());
          CAPTURE(v.str());
          CAPTURE(seed);
          ops::HostTensors h = ops::make_host_tensors(p, seed);
          float* x = reinterpret_cast<float*>(h.in[0].data());
          for (int i = 0; i < 32; ++i) x[i] = 0;  // an all-zero block (d = 0)
          for (int64_t i = 32; i < std::min<int64_t>(64, m * k); ++i) x[i] *= 1e-3f;  // a small one
          auto pp = ops::prepare(*dev, p, v);
          auto dt = ops::upload(*dev, h);
          ops::execute(*dev, pp, dt.io());
          ops::download(dt, h, 2);
          std::vector<float> xhat(static_cast<size_t>(m * k)), wr(static_cast<size_t>(k));
          quantize_x8_ref(x, xhat.data(), m * k, xk ? 256 : 32);
          const uint8_t* w = h.in[1].data();
          std::vector<uint8_t> ggml;
          if (r16) {
            ggml.resize(packed_bytes(f, n, k));
            unpack_r16(f, w, ggml.data(), n, k);
            w = ggml.data();
          }
          const float* y = reinterpret_cast<const float*>(h.out[0].data());
          std::vector<double> want(size_t(m * n));
          double ss = 0;
          for (int64_t j = 0; j < n; ++j) {
            dequantize_ref(f, w + size_t(j) * packed_bytes(f, 1, k), wr.data(), k / qk);
            for (int64_t i = 0; i < m; ++i) {
              double acc = 0;
              for (int64_t e = 0; e < k; ++e) acc += double(xhat[size_t(i * k + e)]) * wr[size_t(e)];
              want[size_t(i * n + j)] = acc;
              ss += acc * acc;
            }
          }
          const double rms = std::sqrt(ss / double(m * n)), tol = 4 * ops::dot_tolerance(k);
          double worst = 0;
          for (size_t i = 0; i < want.size(); ++i)
            worst = std::max(worst, std::abs(y[i] - want[i]) / std::max(std::abs(want[i]), rms));
          CHECK(worst <= tol);
        }
      }
    }
  }
}

TEST_CASE("quant: tiny problems through the IR interpreter") {
  auto caps = codegen::cpu_caps();
  std::vector<std::pair<ops::Problem, ops::Variant>> cases = {
      {problem("qmatmul", {2, 3, 32}, QFormat::Q4_0), ops::Variant{}.set("impl", 0).set("rows", 2).set("mb", 2)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q6_K), ops::Variant{}.set("impl", 0).set("rows", 4).set("mb", 1)},
      {problem("qmatmul", {2, 3, 64}, QFormat::Q4_0), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 2)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q4_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1)},
      // Q4_0 in row pairs: 5 rows of W (a guarded group of 4), 3 of X (mb 2: the last re-read).
      {problem("qmatmul", {3, 5, 64}, QFormat::Q4_0), ops::Variant{}.set("impl", 3).set("rows", 4).set("mb", 2).set("rp", 1).set("pf", 1)},
      {r16_problem({2, 19, 96}, QFormat::Q4_0), ops::Variant{}.set("impl", 4).set("groups", 2).set("mb", 2).set("pf", 1)},
      {r16_problem({2, 19, 96}, QFormat::Q8_0), ops::Variant{}.set("impl", 4).set("groups", 1).set("mb", 2)},
      {r16_problem({2, 19, 96}, QFormat::Q4_0), ops::Variant{}.set("impl", 2).set("ak", 16).set("kc", 64).set("mc", 2).set("mr", 4).set("nc", 2).set("nl", 1)},
      {r16_problem({2, 17, 512}, QFormat::Q4_K), ops::Variant{}.set("impl", 4).set("groups", 1).set("mb", 2).set("pf", 1)},
      {r16_problem({2, 17, 768}, QFormat::Q6_K), ops::Variant{}.set("impl", 4).set("groups", 2).set("mb", 1).set("pf", 1)},
      {r16_problem({1, 17, 256}, QFormat::Q6_K), ops::Variant{}.set("impl", 2).set("ak", 16).set("kc", 64).set("mc", 1).set("mr", 4).set("nc", 2).set("nl", 1)},
      {r16_problem({1, 17, 256}, QFormat::Q4_K), ops::Variant{}.set("impl", 2).set("ak", 16).set("kc", 64).set("mc", 1).set("mr", 4).set("nc", 2).set("nl", 1)},
      {r16_problem({1, 17, 64}, QFormat::Q8_0), ops::Variant{}.set("impl", 2).set("ak", 16).set("kc", 64).set("mc", 1).set("mr", 4).set("nc", 2).set("nl", 1)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q3_K), ops::Variant{}.set("impl", 1).set("wg", 64)},
      {problem("qmatmul", {1, 3, 512}, QFormat::Q2_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("xk", 1)},
      {problem("qmatmul", {3, 3, 256}, QFormat::Q3_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 2).set("xk", 1).set("pf", 1)},
      {problem("qmatmul", {9, 3, 512}, QFormat::Q3_K), ops::Variant{}.set("impl", 3).set("rows", 1).set("mb", 8).set("xk", 1)},
      {problem("qmatmul", {2, 3, 512}, QFormat::Q4_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 2).set("xk", 1)},
      {problem("qmatmul", {2, 5, 512}, QFormat::Q6_K), ops::Variant{}.set("impl", 3).set("rows", 4).set("mb", 2).set("xk", 1).set("pf", 1).set("seq", 1)},
      {problem("qmatmul", {3, 2, 256}, QFormat::Q5_K), ops::Variant{}.set("impl", 3).set("rows", 1).set("mb", 3).set("xk", 1).set("pf", 1)},
      // The 16-lane units on two rows of W: their bytes end with the buffer
      // (no word padding), so a load past a block's end is caught (Q3_K's
      // scale line read 2 bytes past it).
      {problem("qmatmul", {1, 2, 256}, QFormat::Q2_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("w16", 1)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q3_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("w16", 1)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q4_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("w16", 1)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q5_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("w16", 1)},
      {problem("qmatmul", {1, 2, 256}, QFormat::Q6_K), ops::Variant{}.set("impl", 3).set("rows", 2).set("mb", 1).set("w16", 1)},
      {problem("dequantize", {1, 256}, QFormat::Q4_K), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      // The line decoders on two blocks ending with the buffer (as above).
      {problem("dequantize", {2, 256}, QFormat::Q2_K), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {2, 256}, QFormat::Q3_K), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {2, 256}, QFormat::Q5_K), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {2, 256}, QFormat::Q6_K), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {2, 32}, QFormat::Q5_0), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {2, 32}, QFormat::Q5_1), ops::Variant{}.set("impl", 1).set("bpi", 1)},
      {problem("dequantize", {1, 256}, QFormat::Q5_K), ops::Variant{}.set("impl", 0).set("words", 1)},
      {problem("dequantize", {1, 256}, QFormat::Q2_K), ops::Variant{}.set("impl", 0).set("words", 0)},
      {problem("quantize", {1, 96}, QFormat::Q4_0), ops::Variant{}},
      {problem("quantize", {1, 64}, QFormat::Q8_0), ops::Variant{}},
  };
  // The matrix-tile prefill, interpreted on any host (the tile op's
  // meaning): two K slices, the last short, edge rows of W and of X.
  auto amx = caps;
  amx.matrix_tiles = true;
  const std::vector<std::pair<ops::Problem, ops::Variant>> tiles = {
      {problem("qmatmul", {33, 35, 96}, QFormat::Q4_0), ops::Variant::parse("impl=7 mc=2 nc=1 kc=64")},
      {problem("qmatmul", {3, 34, 512}, QFormat::Q4_K), ops::Variant::parse("impl=7 mc=1 nc=1 kc=256")},
  };
  for (const auto& [p, v] : tiles) cases.emplace_back(p, v);
  for (const auto& [p, v] : cases) {
    const uint64_t seed = fresh_seed();
    CAPTURE(p.str());
    CAPTURE(v.str());
    CAPTURE(seed);
    ops::OpCheck c = ops::check_op_interpreted(p, v, v.get("impl") == 7 && p.op == "qmatmul" ? amx : caps, seed);
    INFO(c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("quant: GPU devices when present") {
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    for (const std::string opname : {"dequantize", "quantize", "qmatmul"}) {
      const auto& d = op(opname);
      int i = 0;
      for (const auto& p : d.test_problems) {
        if (++i % 2 && opname != "quantize") continue;  // half of them: keeps the suite short on lavapipe
        ops::Variant v = d.heuristic(p, dev->caps());
        try {
          ops::prepare(*dev, p, v);
        } catch (const std::exception& e) {
          MESSAGE(name << ": " << p.str() << " skipped: " << e.what());
          continue;
        }
        check(*dev, p, v);
      }
    }
  }
}

TEST_CASE("quant: rows interleaved by 16 round-trip, with the documented byte positions") {
  for (QFormat f : {QFormat::Q4_0, QFormat::Q8_0, QFormat::Q4_K, QFormat::Q6_K})
    for (auto [rows, kb] : {std::pair<int64_t, int64_t>{1, 1}, {16, 2}, {37, 3}, {33, 32}}) {
      const int64_t k = kb * info(f).block_elems;
      CAPTURE(info(f).name);
      CAPTURE(rows);
      CAPTURE(k);
      const bool q4 = f == QFormat::Q4_0, q4k = f == QFormat::Q4_K, q6k = f == QFormat::Q6_K;
      const size_t bb = size_t(info(f).block_bytes), tb = size_t(r16_tile_bytes(f)), bpt = q4k ? 1 : 2;
      std::vector<uint8_t> ggml(packed_bytes(f, rows, k)), r16(r16_bytes(f, rows, k), 0xAB), back(ggml.size(), 0);
      random_blocks(f, ggml.data(), rows * kb, fresh_seed());
      repack_r16(f, ggml.data(), r16.data(), rows, k);
      const int64_t groups = (rows + 15) / 16, tiles = (kb + int64_t(bpt) - 1) / int64_t(bpt);
      CHECK(r16.size() == size_t(groups * tiles) * tb);
      unpack_r16(f, r16.data(), back.data(), rows, k);
      CHECK(back == ggml);
      // The positions ops/quant/formats.h documents, for row 1 (or 0) of block 1 (or 0).
      const size_t n = size_t(std::min<int64_t>(rows - 1, 1)), b = size_t(std::min<int64_t>(kb - 1, 1));
      const uint8_t* blk = ggml.data() + (n * size_t(kb) + b) * bb;
      const size_t tile = (b / bpt) * tb, j = b % bpt;
      const size_t header = q4k ? 16 : 2, codes = q4 ? 256 : 512;
      if (q6k) {
        auto at = [&](size_t i) { return 512 * (i / 32) + 64 * ((i % 32) / 4) + 4 * n + i % 4; };
        for (size_t i = 0; i < 128; ++i) CHECK(r16[tile + 2048 * j + at(i)] == blk[i]);              // ql
        for (size_t i = 0; i < 64; ++i) CHECK(r16[tile + 4096 + 1024 * j + at(i)] == blk[128 + i]);  // qh
        for (size_t i = 0; i < 16; ++i) CHECK(r16[tile + 6144 + 256 * j + 64 * (i / 4) + 4 * n + i % 4] == blk[192 + i]);
        CHECK(std::memcmp(&r16[tile + 6656 + 32 * j + 2 * n], blk + 208, 2) == 0);
      }
      for (size_t i = 0; !q6k && i + header < bb; ++i) {
        const size_t at = tile + j * codes + 512 * (i / 32) + 64 * ((i % 32) / 4) + 4 * n + i % 4;
        CHECK(r16[at] == uint8_t(blk[header + i] ^ (f == QFormat::Q8_0 ? 0x80 : 0)));
      }
      if (q4k) {
        CHECK(std::memcmp(&r16[tile + 2240 + 2 * n], blk, 2) == 0);      // d
        CHECK(std::memcmp(&r16[tile + 2272 + 2 * n], blk + 2, 2) == 0);  // dmin
        for (size_t i = 0; i < 12; ++i) CHECK(r16[tile + 2048 + 64 * (i / 4) + 4 * n + i % 4] == blk[4 + i]);
      } else if (!q6k) {
        CHECK(std::memcmp(&r16[tile + 2 * codes + 32 * j + 2 * n], blk, 2) == 0);
      }
      // Padding rows (row 15 of the last group) have zero scales.
      const size_t last = size_t((groups - 1) * tiles) * tb, d15 = q4k ? 2240 + 30 : q6k ? 6656 + 30 : 2 * codes + 30;
      if (rows % 16) CHECK((r16[last + d15] | r16[last + d15 + 1]) == 0);
    }
}
