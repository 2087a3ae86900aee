// Kernels over Q4_0 with rows interleaved by 16 (layout=16: see
// quant_formats.h for the bytes).
//
// The GGML layout makes the int8 GEMV compute-bound on AVX-512: each row's
// 32-element block is 16 bytes, so a zmm dot4 covers at most two blocks of
// one row and every row ends in a horizontal sum, about 11 instructions per
// block and row (session 9: 0.76 of the triad at 1 thread on Zen 5). Here a
// 64-byte chunk holds 4 codes of each of 16 rows, so the same zmm dot4 takes
// 4 activation bytes broadcast to all lanes and advances 16 rows: per tile
// (16 rows x 64 elements) 8 line loads, 16 dot4s, 24 mask/shift ops, and one
// convert and fma per block, under 2 instructions per block and row. The
// 16 results are already one line per row group.
#include <string>

#include "ops/quant_kernels.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

ir::Kernel qgemv_r16_kernel(int groups, int mb, int prefetch) {
  const uint32_t RG = uint32_t(groups), MB = uint32_t(mb), TL = uint32_t(kR16TileBytes / 64);
  std::string name = "quant_gemv_r16_q4_0_g" + std::to_string(RG) + "_m" + std::to_string(MB) +
                     (prefetch ? "_pf" + std::to_string(prefetch) : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", i32);  // 4 activation bytes per element
    auto xd = kb.input("xd", f32);
    auto xs = kb.input("xs", i32);
    auto w = kb.input("w", line(u32, 16));  // tiles as whole cache lines
    auto y = kb.output("y", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value G = (N + 15u) / 16u, nb = K / 32u, np = (nb + 1u) / 2u;
    Value g0 = group_id(0) * RG, m0 = group_id(1) * MB;
    // Line index of each row group's first tile (u64: constant offsets fold
    // into the addressing). Groups past the last re-read it: in bounds, their
    // rows are >= N and never stored.
    std::vector<Value> gline;
    for (uint32_t g = 0; g < RG; ++g) gline.push_back(cast(u64, min(g0 + g, G - 1u)) * cast(u64, np * TL));
    // Per X row (rows past M re-read row M-1, never stored): where its
    // activation words, Σq per 16 and block scales start.
    std::vector<Value> xrow, srow, drow;
    for (uint32_t i = 0; i < MB; ++i) {
      Value row = cast(u64, min(m0 + i, M - 1u));
      xrow.push_back(row * cast(u64, K / 4u));
      srow.push_back(row * cast(u64, K / 16u));
      drow.push_back(row * cast(u64, nb));
    }
    std::vector<Var> acc;
    for (uint32_t i = 0; i < MB * RG; ++i) acc.push_back(var(splat(0.0f, 16)));
    // Block b, the j-th of tile t of every row group.
    auto block = [&](const Value& t, uint32_t j, const Value& b) {
      Value b64 = cast(u64, b);
      std::vector<std::vector<Value>> xa(MB);
      std::vector<Value> init(MB), dx(MB);
      for (uint32_t i = 0; i < MB; ++i) {
        for (uint32_t c = 0; c < 8; ++c) xa[i].push_back(splat(xq[xrow[i] + b64 * 8u + uint64_t(c)], 16));
        // Codes are nibbles u = w/d + 8: Σ (u - 8)·q = Σ u·q - 8·Σq.
        Value sq = xs[srow[i] + b64 * 2u] + xs[srow[i] + b64 * 2u + uint64_t(1)];
        init[i] = splat(sq * -8, 16);
        dx[i] = splat(xd[drow[i] + b64], 16);
      }
      for (uint32_t g = 0; g < RG; ++g) {
        Value tl = gline[g] + cast(u64, t) * uint64_t(TL);
        Value sw = w[tl + uint64_t(8)];
        std::vector<Value> half;
        for (uint32_t e = 0; e < 8; ++e) half.push_back(extract(sw, int(8 * j + e)));
        Value scale = cast(line(f32, 16), bitcast(line(f16, 16), make_line(half)));
        std::vector<Value> lo, hi;
        for (uint32_t c = 0; c < 4; ++c) {
          Value v = w[tl + uint64_t(4 * j + c)];
          lo.push_back(v & 0x0f0f0f0fu);
          // The high nibbles in place, 16 times their codes: no shift per
          // line, one exact shift of their sum (a multiple of 16, |sum| < 2^19).
          hi.push_back(v & 0xf0f0f0f0u);
        }
        for (uint32_t i = 0; i < MB; ++i) {
          // Two dot4 chains of 4 (low and high nibbles) instead of one of 8.
          Value sl = init[i], sh = splat(constant(i32, 0), 16);
          for (uint32_t c = 0; c < 4; ++c) {
            sl = dot4(lo[c], xa[i][c], sl);
            sh = dot4(hi[c], xa[i][4 + c], sh);
          }
          Var& a = acc[i * RG + g];
          a = fma(cast(line(f32, 16), sl + (sh >> 4)), scale * dx[i], a.get());
        }
      }
    };
    for_range(0u, nb / 2u, [&](Value t) {
      // Software prefetch `prefetch` tiles ahead: more lines in flight than
      // the hardware prefetcher keeps for one stream (past a group's end it
      // runs into the next group, the next work-item's; past the buffer a
      // prefetch is harmless).
      if (prefetch)
        for (uint32_t g = 0; g < RG; ++g)
          for (uint32_t l = 0; l < TL; ++l) w[gline[g] + cast(u64, t + uint32_t(prefetch)) * uint64_t(TL) + uint64_t(l)].prefetch();
      block(t, 0, t * 2u);
      block(t, 1, t * 2u + 1u);
    });
    if_((nb & 1u) != 0u, [&] { block(nb / 2u, 0, nb - 1u); });
    Value n0 = g0 * 16u;
    auto store = [&](bool guarded) {
      store_gemv_outputs(y, M, N, m0, n0, MB, 16 * RG, guarded,
                         [&](uint32_t i, uint32_t r) { return extract(acc[i * RG + r / 16].get(), int(r % 16)); });
    };
    if_(n0 + 16u * RG <= N, [&] { store(false); }).else_([&] { store(true); });
  });
}

ir::Kernel dequantize_r16_kernel(bool words) {
  return kernel(std::string("quant_dequant_r16_q4_0") + (words ? "_w32" : "_u8"), [&](KernelBuilder& kb) {
    auto w = kb.input("w", words ? u32 : u8);
    auto y = kb.output("y", f32);
    auto N = kb.scalar("rows", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(64);
    Value g = (group_id(1) * num_groups(0) + group_id(0)) * 64u + local_id(0);
    PackedBytes pb{w, words, false};
    if_(g < N * K, [&] {
      Value n = g / K, k = g - n * K;
      Value b = k >> 5u, e = k & 31u, j = b & 1u, r = n & 15u;
      Value base = ((n >> 4u) * ((K / 32u + 1u) / 2u) + (b >> 1u)) * uint32_t(kR16TileBytes);
      Value byte = pb.byte(base + j * 256u + ((e & 15u) >> 2u) * 64u + r * 4u + (e & 3u));
      Value code = select(e < 16u, byte & 15u, byte >> 4u);
      // GGML's order: (code - 8) as an integer, then times d.
      y[g] = cast(f32, bitcast(i32, code) - 8) * pb.half(base + 512u + j * 32u + r * 2u);
    });
  });
}

ir::Kernel dequantize_r16_lines_kernel() {
  return kernel("quant_dequant_r16_lines_q4_0", [&](KernelBuilder& kb) {
    auto w = kb.input("w", u32);
    auto y = kb.output("y", line(f32, 16));
    auto N = kb.scalar("rows", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value t = group_id(0), g = group_id(1), nb = K / 32u, np = (nb + 1u) / 2u;
    Value tile = (cast(u64, g) * cast(u64, np) + cast(u64, t)) * uint64_t(kR16TileBytes / 4);  // in words
    PackedBytes pb{w, true, false};
    for (uint32_t j = 0; j < 2; ++j) {
      Value b = t * 2u + j;
      if_(b < nb, [&] {
        for (uint32_t r = 0; r < 16; ++r) {
          Value n = g * 16u + r;
          if_(n < N, [&] {
            // Row r's 16 bytes: word r of each 64-byte chunk (elements 4c..4c+3, 16+4c..).
            std::vector<Value> words;
            for (uint32_t c = 0; c < 4; ++c) words.push_back(w[tile + uint64_t(64 * j + 16 * c + r)]);
            Value q = bitcast(line(u8, 16), make_line(words));
            Value d = splat(cast(f32, bitcast(f16, cast(u16, (Value(w[tile + uint64_t(128 + 8 * j + r / 2)]) >> (16u * (r % 2))) & 0xFFFFu))), 16);
            Value at = (cast(u64, n) * cast(u64, K) + cast(u64, b) * 32u) / 16u;
            // GGML's order: (code - 8) as an integer, then times d.
            y[at] = cast(line(f32, 16), bitcast(line(i32, 16), cast(line(u32, 16), q & 15u)) - 8) * d;
            y[at + uint64_t(1)] = cast(line(f32, 16), bitcast(line(i32, 16), cast(line(u32, 16), q >> 4u)) - 8) * d;
          });
        }
      });
    }
  });
}

}  // namespace kgen::ops::quant
