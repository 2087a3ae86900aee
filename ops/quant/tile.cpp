// Prefill on a matrix engine: Y = X·Wᵀ with W in GGML blocks on bf16 tiles
// (x86 AMX), where the int8 dot products of the GEMVs and of the packing
// GEMM (impl=5) top out at ~300 GOP/s a core and the tiles run ~1000 GFLOP/s.
//
// X is rounded to bf16 once per call, as the tile op's pair panels. Each
// work-item decodes 32 rows of W a K slice at a time into a bf16 scratch
// (BlockLines, then nearest-even rounding), which is the tile op's A operand
// for every panel of X: Yᵀ's 32×32 blocks accumulate over the slices in a
// scratch of their own and are transposed into Y at the end. The decode is
// paid once per row of W and call, the tiles' work once per row of X.
//
// Numerics: X and the decoded weights are rounded to bf16 (relative error
// 2^-9 each), which qmatmul's xq=1 allows: it is below the int8 rounding of
// X that the GEMVs make (1/254 of a block's largest value).
#include <string>

#include "ops/quant/kernels.h"
#include "ops/quant/lines.h"
#include "ops/layout/transpose_block.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

namespace {

// 16 f32 values rounded to bf16, as a bf16 line (one vcvtneps2bf16 on
// AVX512-BF16 hosts; bf16_upper_bits' lane arithmetic costs ~11 uops).
Value bf16_line(const Value& v) { return cast(line(bf16, 16), v); }

}  // namespace

ir::Kernel x_pair_panels_kernel() {
  return kernel("quant_x_pair_panels", [&](KernelBuilder& kb) {
    auto x = kb.input("x", f32);
    auto xp = kb.output("xp", line(u32, 16));
    auto M = kb.scalar("m", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    // Work-item (c, h, p): pairs [16c, 16c + 16) of rows [32p + 16h, +16).
    Value c = group_id(0), h = group_id(1) % 2u, p = group_id(1) / 2u;
    Value kp = K / 2u, K64 = cast(u64, K);
    std::array<Value, 16> rows;
    for (uint32_t i = 0; i < 16; ++i) {
      Value row = p * 32u + h * 16u + i;
      Var v = var(splat(constant(u32, 0u), 16));
      if_(row < M, [&] {
        Value at = cast(u64, row) * K64 + cast(u64, c * 32u);
        // Pair q (element 2q in the low half, 2q + 1 in the high one) is
        // word q of the 32 elements as bf16.
        Value lo = bitcast(line(u32, 8), bf16_line(load_line(x, at)));
        Value hi = bitcast(line(u32, 8), bf16_line(load_line(x, at + uint64_t(16))));
        std::vector<Value> words;
        for (int q = 0; q < 16; ++q) words.push_back(extract(q < 8 ? lo : hi, q % 8));
        v = make_line(words);
      });
      rows[i] = v.get();
    }
    // Panel p's pair row k holds the 32 rows' words: lane i of column half h.
    const std::array<Value, 16> cols = transpose16(rows);
    for (uint32_t q = 0; q < 16; ++q) xp[cast(u64, p * kp + c * 16u + q) * uint64_t(2) + cast(u64, h)] = cols[q];
  });
}

ir::Kernel qgemm_tile_kernel(QFormat fmt, int mc, int nc, int kc) {
  const FormatInfo& fi = info(fmt);
  const uint32_t MC = uint32_t(mc), NC = uint32_t(nc), KC = uint32_t(kc), E = uint32_t(fi.block_elems);
  if (KC == 0 || KC % E || KC % 32) throw std::invalid_argument("qgemm_tile_kernel: kc must be a multiple of the block and of 32");
  const std::string name = std::string("quant_gemm_tile_") + fi.name + "_mc" + std::to_string(MC) + "_nc" + std::to_string(NC) +
                           "_kc" + std::to_string(KC);
  return kernel(name, [&](KernelBuilder& kb) {
    auto xp = kb.input("xp", u32);
    const auto [w, y, M, N, K, pb] = quant_row_params(kb);
    BlockLines dec(fmt, pb);
    // Per K slice: the work-item's MC blocks of 32 rows of W, decoded to
    // bf16 (the tile op's A: lda = KC), each multiplied with the NC panels
    // of X, panel by panel (each panel's slice is read from the cache once
    // for all MC blocks); Yᵀ's blocks (MC × NC of 32×32) accumulate in t.
    Array ws = shared_array(bf16, int64_t(32) * KC * MC);
    Array t = shared_array(f32, int64_t(32 * 32) * NC * MC);
    Value kp = K / 2u, nb = K / E, rowbytes = nb * uint32_t(fi.block_bytes);
    Value rb = (N + 31u) / 32u, np = (M + 31u) / 32u;
    Value r0 = group_id(0) * MC, r1 = min(r0 + MC, rb), p0 = group_id(1) * NC, p1 = min(p0 + NC, np);
    Value N64 = cast(u64, N);
    auto block_at = [&](const Value& r, const Value& p) { return cast(u64, ((r - r0) * NC + (p - p0)) * 1024u); };
    // Valid rows of W's block r and of X's panel p (the tile op's shape).
    auto w_rows = [&](const Value& r) { return min(N - r * 32u, 32u); };
    auto x_rows = [&](const Value& p) { return min(M - p * 32u, 32u); };
    for_range(0u, MC * NC * 64u, [&](Value i) { store_line(t, cast(u64, i) * uint64_t(16), splat(0.0f, 16)); });
    for_range(0u, K, [&](Value k0) {
      Value k1 = min(k0 + KC, K);
      // Rows past N (the last block) decode row N - 1: never used.
      for_range(r0, r1, [&](Value r) {
        for_range(0u, 32u, [&](Value i) {
          Value wrow = cast(u64, min(r * 32u + i, N - 1u)) * cast(u64, rowbytes);
          Value row_at = cast(u64, ((r - r0) * 32u + i) * KC);
          // This row's next slice into L2 (a few lines 2+ KiB from the
          // other rows' is not a stream the hardware prefetchers follow).
          const uint32_t SB = KC / E * uint32_t(fi.block_bytes);
          Value next = wrow + cast(u64, k1 / E) * uint64_t(fi.block_bytes);
          for (uint32_t off = 0; off < SB + 63u; off += 64u) w[next + uint64_t(off)].prefetch_l2();
          for_range(k0 / E, k1 / E, [&](Value b) {
            dec.load(wrow + cast(u64, b) * uint64_t(fi.block_bytes));
            Value at = row_at + cast(u64, b * E - k0);
            for (int g = 0; g < dec.lines(); ++g) store_line(ws, at + uint64_t(16 * g), bf16_line(dec.line(g)));
          });
        });
      });
      for_range(p0, p1, [&](Value p) {
        Value cols = x_rows(p);
        Value x_at = (cast(u64, p) * cast(u64, kp) + cast(u64, k0 / 2u)) * uint64_t(32);
        for_range(r0, r1, [&](Value r) {
          tile_mma_bf16({t, block_at(r, p)}, {ws, cast(u64, (r - r0) * 32u * KC)}, {xp, x_at}, w_rows(r), cols,
                        (k1 - k0) / 2u, constant(u32, 32u), constant(u32, KC), constant(u32, 32u), true);
        });
      });
    }, KC);
    for_range(r0, r1, [&](Value r) {
      for_range(p0, p1, [&](Value p) {
        store_transposed_block32(t, block_at(r, p), y, cast(u64, p) * uint64_t(32) * N64 + cast(u64, r) * uint64_t(32), N64,
                                 w_rows(r), x_rows(p));
      });
    });
  });
}

}  // namespace kgen::ops::quant
