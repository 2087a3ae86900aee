// Kernels over Q4_0 / Q8_0 / Q4_K / Q6_K with rows interleaved by 16
// (layout=16: see ops/quant/formats.h for the bytes).
//
// The GGML layout makes the int8 GEMV compute-bound on AVX-512: each row's
// 32-element block is 16 (Q4_0) or 32 (Q8_0) bytes, so a zmm dot4 covers at
// most two blocks of one row and every row ends in a horizontal sum, about 11
// instructions per block and row for Q4_0 (0.76 of the triad on one Zen 5
// thread). Here a 64-byte chunk holds 4 codes of each of 16 rows, so
// one zmm dot4 takes 4 activation bytes broadcast to all lanes and advances
// 16 rows. Per Q4_0 tile (16 rows x 64 elements): 8 line loads, 16 dot4s, 16
// masks, and one convert and fma per block: under 2 instructions per block
// and row; Q8_0's codes need no mask at all (stored unsigned, q + 128). The
// 16 results are already one line per row group. Q4_K and Q6_K decode their
// scales for 16 rows at once, a lane per row.
#include <algorithm>
#include <functional>
#include <string>

#include "ops/quant/kernels.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

namespace {

// Lines of a 32-element block's codes within a tile: 4 for the nibble
// formats, 8 where they are bytes (Q8_0, and Q5_0 / Q5_1 widened by the
// packing GEMM), and the tile's lines.
bool nibble_codes(QFormat f) { return f == QFormat::Q4_0 || f == QFormat::Q4_1; }
uint32_t code_lines(QFormat f) { return nibble_codes(f) ? 4 : 8; }
uint32_t tile_lines(QFormat f) { return uint32_t(rows_r16_tile_bytes(f) / 64); }
// What the codes u are offset by (w = d·(u - o)): Q4_0 8, Q5_0 16, Q8_0 128
// (stored unsigned); Q4_1 and Q5_1 have a min instead (w = d·u + m).
int32_t code_offset(QFormat f) {
  return f == QFormat::Q4_0 ? 8 : f == QFormat::Q5_0 ? 16 : f == QFormat::Q8_0 ? 128 : 0;
}
bool has_min(QFormat f) { return f == QFormat::Q4_1 || f == QFormat::Q5_1; }

void check_r16(QFormat f) {
  if (!has_r16(f)) throw std::invalid_argument(std::string("no interleaved layout for ") + info(f).name);
}

}  // namespace

namespace {

// A GEMV work-item's state, shared by the per-format bodies: the buffers,
// where each X row's activation words (xq), Σq per 16 (xs) and block scales
// (xd) start, each row group's first tile line, and the accumulators (one
// f32x16 line, a lane per row, for each X row and row group).
struct R16Item {
  QFormat f;
  uint32_t RG, MB, TL;
  Array xq, xd, xs, w;
  std::vector<Value> gline, xrow, srow, drow;
  std::vector<Var> acc;
  // Q4_K, Q6_K: the prefetch distance in tiles, spread over the tile's
  // steps (see qgemv_r16_kernel).
  uint32_t spread_pf = 0;
  // The prefetches go into L1 (pl1=1), not L2 only (prefetch_ahead).
  bool prefetch_l1 = false;

  Value tile(uint32_t g, const Value& t) const { return gline[g] + cast(u64, t) * uint64_t(TL); }
  // Step `step` of `steps` of tile t: its slice of tile t + spread_pf's lines.
  void prefetch_slice(uint32_t g, const Value& t, uint32_t step, uint32_t steps) const {
    const uint32_t per = (TL + steps - 1) / steps;
    for (uint32_t l = step * per; l < std::min(TL, (step + 1) * per); ++l) prefetch_ahead(w[tile(g, t + spread_pf) + uint64_t(l)], prefetch_l1);
  }
  // Activation word c (bytes 4c..4c+3) of X block xb of X row i, on all lanes.
  Value act(uint32_t i, const Value& xb, uint32_t c) const { return splat(xq[xrow[i] + xb * 8u + uint64_t(c)], 16); }
  Var& out(uint32_t i, uint32_t g) { return acc[i * RG + g]; }

  void block(const Value& t, uint32_t j, const Value& b);      // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
  void q4k_superblock(const Value& b);                          // Q4_K, Q5_K
  void q6k_superblock(const Value& t, uint32_t j, const Value& b);
  void k16_superblock(const Value& b);                          // Q2_K, Q3_K (packing GEMM only)

  // X rows m0 .. m0 + MB - 1 (past M: row M-1 again, never stored) and
  // fresh accumulators.
  void start_rows(const Value& m0, const Value& M, const Value& K) {
    xrow.clear(), srow.clear(), drow.clear(), acc.clear();
    for (uint32_t i = 0; i < MB; ++i) {
      Value row = cast(u64, min(m0 + i, M - 1u));
      xrow.push_back(row * cast(u64, K / 4u));
      srow.push_back(row * cast(u64, K / 16u));
      drow.push_back(row * cast(u64, K / 32u));
    }
    for (uint32_t i = 0; i < MB * RG; ++i) acc.push_back(var(splat(0.0f, 16)));
  }
  // Every tile of the `nb` blocks (and a last half tile), `before(t)` at
  // the start of each whole tile.
  void all_tiles(const Value& nb, const std::function<void(const Value&)>& before) {
    const bool q4k = f == QFormat::Q4_K || f == QFormat::Q5_K, q6k = f == QFormat::Q6_K;
    const bool k16 = f == QFormat::Q2_K || f == QFormat::Q3_K;
    auto one = [&](const Value& t, uint32_t j, const Value& b) {
      if (q6k) q6k_superblock(t, j, b);
      else block(t, j, b);
    };
    for_range(0u, nb / uint32_t(rows_r16_blocks_per_tile(f)), [&](Value t) {
      before(t);
      if (q4k) return q4k_superblock(t);
      if (k16) return k16_superblock(t);
      one(t, 0, t * 2u);
      one(t, 1, t * 2u + 1u);
    });
    if (!q4k && !k16) if_((nb & 1u) != 0u, [&] { one(nb / 2u, 0, nb - 1u); });
  }
  // y for the item's X rows and its RG groups of 16 rows from n0.
  void store(const Array& y, const Value& M, const Value& N, const Value& m0, const Value& n0) {
    auto put = [&](bool guarded) {
      store_gemv_outputs(y, M, N, m0, n0, MB, 16 * RG, guarded,
                         [&](uint32_t i, uint32_t r) { return extract(out(i, r / 16).get(), int(r % 16)); });
    };
    if_(n0 + 16u * RG <= N, [&] { put(false); }).else_([&] { put(true); });
  }
};

// 16 f16 values held in words 8h..8h+7 of a line, as f32.
Value halves(const Value& words, uint32_t h) {
  std::vector<Value> v;
  for (uint32_t e = 0; e < 8; ++e) v.push_back(extract(words, int(8 * h + e)));
  return cast(line(f32, 16), bitcast(line(f16, 16), make_line(v)));
}

// The 32-element formats: block b, the j-th of tile t, of every row group.
// Lines 0 .. 2·CL - 1 of the tile hold the two blocks' codes, then a line of
// their d (words 0-7 block 0, 8-15 block 1) and, with a min, one of m.
void R16Item::block(const Value& t, uint32_t j, const Value& b) {
  const bool q4 = nibble_codes(f), mins = has_min(f);
  const uint32_t CL = code_lines(f);
  const int32_t o = code_offset(f);
  Value b64 = cast(u64, b);
  std::vector<std::vector<Value>> xa(MB);
  std::vector<Value> init(MB), dx(MB), dsq(MB);
  for (uint32_t i = 0; i < MB; ++i) {
    for (uint32_t c = 0; c < 8; ++c) xa[i].push_back(act(i, b64, c));
    // Codes are u = w/d + o: Σ (u - o)·q = Σ u·q - o·Σq; with a min m,
    // Σ (d·u + m)·dx·q = d·dx·Σ u·q + m·(dx·Σq).
    Value sq = xs[srow[i] + b64 * 2u] + xs[srow[i] + b64 * 2u + uint64_t(1)];
    init[i] = o ? splat(sq * -o, 16) : splat(constant(i32, 0), 16);
    Value d = xd[drow[i] + b64];
    dx[i] = splat(d, 16);
    if (mins) dsq[i] = splat(d * cast(f32, sq), 16);
  }
  for (uint32_t g = 0; g < RG; ++g) {
    Value tl = tile(g, t);
    Value scale = halves(w[tl + uint64_t(2 * CL)], j);
    Value mn = mins ? halves(w[tl + uint64_t(2 * CL + 1)], j) : Value();
    // Codes of activation words 0-7 of the block, in two dot4 chains
    // (a and b) of 4 rather than one of 8.
    std::vector<Value> ca, cb;
    for (uint32_t c = 0; c < CL; ++c) {
      Value v = w[tl + uint64_t(CL * j + c)];
      if (q4) {
        ca.push_back(v & 0x0f0f0f0fu);
        // The high nibbles in place, 16 times their codes: no shift per
        // line, one exact shift of their sum (a multiple of 16, |sum| < 2^19).
        cb.push_back(v & 0xf0f0f0f0u);
      } else {
        (c < 4 ? ca : cb).push_back(v);
      }
    }
    for (uint32_t i = 0; i < MB; ++i) {
      Value sa = init[i], sb = splat(constant(i32, 0), 16);
      for (uint32_t c = 0; c < 4; ++c) {
        sa = dot4(ca[c], xa[i][c], sa);
        sb = dot4(cb[c], xa[i][4 + c], sb);
      }
      Var& a = out(i, g);
      a = fma(cast(line(f32, 16), sa + (q4 ? sb >> 4 : sb)), scale * dx[i], a.get());
      if (mins) a = fma(mn, dsq[i], a.get());
    }
  }
}

// Q4_K: super-block b (tile b) of every row group. Per sub-block sb (32
// elements, one X block): w = d·sc·u - dmin·m, so Σ w·x̂ = d·sc·dx·Σ u·q -
// dmin·m·dx·Σq, two fmas per 16 rows; the 6-bit scales and mins of 16 rows
// unpack as 3 lines of words (GGML's utmp trick, lane = row). Q5_K (packing
// GEMM only) the same with its five-bit codes as bytes, 8 lines per
// sub-block.
void R16Item::q4k_superblock(const Value& b) {
  const bool five = f == QFormat::Q5_K;
  const uint32_t CL = five ? 64 : 32;  // code lines
  Value b64 = cast(u64, b);
  for (uint32_t g = 0; g < RG; ++g) {
    Value tl = tile(g, b);
    Value w0 = w[tl + uint64_t(CL)], w1 = w[tl + uint64_t(CL + 1)], w2 = w[tl + uint64_t(CL + 2)],
          dd = w[tl + uint64_t(CL + 3)];
    Value sc_lo = w0 & 0x3f3f3f3fu, m_lo = w1 & 0x3f3f3f3fu;
    Value sc_hi = (w2 & 0x0f0f0f0fu) | (((w0 >> 6u) & 0x03030303u) << 4u);
    Value m_hi = ((w2 >> 4u) & 0x0f0f0f0fu) | (((w1 >> 6u) & 0x03030303u) << 4u);
    Value d = halves(dd, 0), dmin = halves(dd, 1);
    auto field = [&](const Value& words, uint32_t sb) {
      return cast(line(f32, 16), (sb % 4 ? words >> (8u * (sb % 4)) : words) & 0xffu);
    };
    for (uint32_t p = 0; p < 4; ++p) {
      if (spread_pf) prefetch_slice(g, b, p, 4);
      std::vector<Value> lo, hi;
      for (uint32_t c = 0; c < 8; ++c) {
        if (five) {
          lo.push_back(w[tl + uint64_t(16 * p + c)]);
          hi.push_back(w[tl + uint64_t(16 * p + 8 + c)]);
          continue;
        }
        Value v = w[tl + uint64_t(8 * p + c)];
        lo.push_back(v & 0x0f0f0f0fu);
        hi.push_back(v & 0xf0f0f0f0u);  // 16 times the codes (see block())
      }
      for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t sb = 2 * p + h;
        Value dsc = d * field(sb < 4 ? sc_lo : sc_hi, sb), dm = dmin * field(sb < 4 ? m_lo : m_hi, sb);
        const std::vector<Value>& codes = h ? hi : lo;
        for (uint32_t i = 0; i < MB; ++i) {
          Value xb = b64 * 8u + uint64_t(sb);  // the X block
          Value sa = splat(constant(i32, 0), 16), sc2 = sa;
          for (uint32_t c = 0; c < 4; ++c) {
            sa = dot4(codes[c], act(i, xb, c), sa);
            sc2 = dot4(codes[4 + c], act(i, xb, 4 + c), sc2);
          }
          Value isum = sa + sc2;
          if (h && !five) isum = isum >> 4;
          Value dx = xd[drow[i] + xb];
          Value sq = cast(f32, xs[srow[i] + xb * 2u] + xs[srow[i] + xb * 2u + uint64_t(1)]);
          Var& a = out(i, g);
          a = fma(cast(line(f32, 16), isum), dsc * splat(dx, 16), a.get());
          a = fma(dm, splat(-(dx * sq), 16), a.get());
        }
      }
    }
  }
}

// Q6_K: super-block b, the j-th of tile t. Per half n and quarter q of it
// (32 elements, one X block): 6-bit codes u = nibble | 2 high bits << 4 in
// 8 chunk lines, w = d·sc·(u - 32), one int8 scale per 16 elements.
void R16Item::q6k_superblock(const Value& t, uint32_t j, const Value& b) {
  Value b64 = cast(u64, b);
  for (uint32_t g = 0; g < RG; ++g) {
    Value tl = tile(g, t);
    Value d = halves(w[tl + uint64_t(104)], j);
    std::vector<Value> sw;
    for (uint32_t i = 0; i < 4; ++i) sw.push_back(bitcast(line(i32, 16), w[tl + uint64_t(96 + 4 * j + i)]));
    for (uint32_t n = 0; n < 2; ++n) {
      std::vector<Value> A, B, H;
      for (uint32_t c = 0; c < 8; ++c) {
        A.push_back(w[tl + uint64_t(32 * j + 16 * n + c)]);
        B.push_back(w[tl + uint64_t(32 * j + 16 * n + 8 + c)]);
        H.push_back(w[tl + uint64_t(64 + 16 * j + 8 * n + c)]);
      }
      for (uint32_t q = 0; q < 4; ++q) {
        if (spread_pf) prefetch_slice(g, t, 8 * j + 4 * n + q, 16);
        std::vector<Value> codes;
        for (uint32_t c = 0; c < 8; ++c) {
          Value lo = q & 1 ? B[c] : A[c];
          Value nib = q < 2 ? lo & 0x0f0f0f0fu : (lo >> 4u) & 0x0f0f0f0fu;
          Value hb = q == 0 ? H[c] << 4u : q == 1 ? H[c] << 2u : q == 2 ? H[c] : H[c] >> 2u;
          codes.push_back(nib | (hb & 0x30303030u));
        }
        // The two 16-element halves' scales: int8 byte s of row r's words.
        std::vector<Value> dsc;
        for (uint32_t h = 0; h < 2; ++h) {
          const uint32_t si = 8 * n + 2 * q + h;
          Value v = (sw[si / 4] << (24u - 8u * (si % 4))) >> 24;
          dsc.push_back(d * cast(line(f32, 16), v));
        }
        for (uint32_t i = 0; i < MB; ++i) {
          Value xb = b64 * 8u + uint64_t(4 * n + q);  // the X block
          std::vector<Value> isum;
          for (uint32_t h = 0; h < 2; ++h) {
            // -32·Σq of the 16 activations starts the sum.
            Value s16 = splat(xs[srow[i] + xb * 2u + uint64_t(h)] * -32, 16);
            for (uint32_t c = 4 * h; c < 4 * h + 4; ++c) s16 = dot4(codes[c], act(i, xb, c), s16);
            isum.push_back(s16);
          }
          Value dx = splat(xd[drow[i] + xb], 16);
          Var& a = out(i, g);
          a = fma(cast(line(f32, 16), isum[0]), dsc[0] * dx, a.get());
          a = fma(cast(line(f32, 16), isum[1]), dsc[1] * dx, a.get());
        }
      }
    }
  }
}

// Q2_K and Q3_K (the packing GEMM's tiles of their own): super-block b
// (tile b) of every row group. Codes widened to bytes, 8 lines per 32
// elements (one X block); a scale per 16 elements, so two dot4 chains per X
// block as in Q6_K. Q3_K: u = 2 low bits | high bit << 2, w = d·s·(u - 4),
// s the signed 6-bit scale as an int8 (lines 64-67, Q6_K's form), d in line
// 68. Q2_K: w = d·sc·u - dmin·m (sc, m the low and high nibbles of the
// scale byte; the 16 bytes raw in lines 64-67, d and dmin in line 68), the
// min a second fma per half as Q4_K's.
void R16Item::k16_superblock(const Value& b) {
  const bool q3 = f == QFormat::Q3_K;
  Value b64 = cast(u64, b);
  for (uint32_t g = 0; g < RG; ++g) {
    Value tl = tile(g, b);
    Value dd = w[tl + uint64_t(68)];
    Value d = halves(dd, 0), dmin = q3 ? Value() : halves(dd, 1);
    std::vector<Value> sw;
    for (uint32_t i = 0; i < 4; ++i) sw.push_back(w[tl + uint64_t(64 + i)]);
    for (uint32_t sb = 0; sb < 8; ++sb) {
      std::vector<Value> codes;
      for (uint32_t c = 0; c < 8; ++c) codes.push_back(w[tl + uint64_t(8 * sb + c)]);
      std::vector<Value> dsc, dm;
      for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t si = 2 * sb + h;
        if (q3) {
          Value v = (bitcast(line(i32, 16), sw[si / 4]) << (24u - 8u * (si % 4))) >> 24;
          dsc.push_back(d * cast(line(f32, 16), v));
        } else {
          Value byte = (si % 4 ? sw[si / 4] >> (8u * (si % 4)) : sw[si / 4]) & 0xffu;
          dsc.push_back(d * cast(line(f32, 16), byte & 0xfu));
          dm.push_back(dmin * cast(line(f32, 16), byte >> 4u));
        }
      }
      for (uint32_t i = 0; i < MB; ++i) {
        Value xb = b64 * 8u + uint64_t(sb);  // the X block
        Value dx = xd[drow[i] + xb];
        Var& a = out(i, g);
        for (uint32_t h = 0; h < 2; ++h) {
          Value sq = xs[srow[i] + xb * 2u + uint64_t(h)];
          // Q3_K: -4·Σq of the 16 activations starts the sum.
          Value s16 = q3 ? splat(sq * -4, 16) : splat(constant(i32, 0), 16);
          for (uint32_t c = 4 * h; c < 4 * h + 4; ++c) s16 = dot4(codes[c], act(i, xb, c), s16);
          a = fma(cast(line(f32, 16), s16), dsc[h] * splat(dx, 16), a.get());
          if (!q3) a = fma(dm[h], splat(-(dx * cast(f32, sq)), 16), a.get());
        }
      }
    }
  }
}

}  // namespace

ir::Kernel qgemv_r16_kernel(QFormat fmt, int groups, int mb, int prefetch, bool prefetch_l1) {
  check_r16(fmt);
  const uint32_t RG = uint32_t(groups), MB = uint32_t(mb), TL = tile_lines(fmt);
  const uint32_t BPT = uint32_t(r16_blocks_per_tile(fmt));
  std::string name = std::string("quant_gemv_r16_") + info(fmt).name + "_g" + std::to_string(RG) + "_m" +
                     std::to_string(MB) + prefetch_suffix(prefetch, prefetch_l1);
  return kernel(name, [&](KernelBuilder& kb) {
    R16Item it{fmt, RG, MB, TL};
    it.prefetch_l1 = prefetch_l1;
    it.xq = kb.input("xq", i32);  // 4 activation bytes per element
    it.xd = kb.input("xd", f32);
    it.xs = kb.input("xs", i32);
    it.w = kb.input("w", line(u32, 16));  // tiles as whole cache lines
    auto y = kb.output("y", f32);
    auto M = kb.scalar("m", u32);
    auto N = kb.scalar("n", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value G = (N + 15u) / 16u, nb = K / uint32_t(info(fmt).block_elems), np = (nb + BPT - 1u) / BPT;
    Value g0 = group_id(0) * RG, m0 = group_id(1) * MB;
    // Line index of each row group's first tile (u64: constant offsets fold
    // into the addressing). Groups past the last re-read it: in bounds, their
    // rows are >= N and never stored.
    for (uint32_t g = 0; g < RG; ++g) it.gline.push_back(cast(u64, min(g0 + g, G - 1u)) * cast(u64, np * TL));
    it.start_rows(m0, M, K);
    if (r16_prefetch_spread(fmt)) it.spread_pf = uint32_t(prefetch);
    it.all_tiles(nb, [&](const Value& t) {
      // Software prefetch `prefetch` tiles ahead: more lines in flight than
      // the hardware prefetcher keeps for one stream (past a group's end it
      // runs into the next group, the next work-item's; past the buffer a
      // prefetch is harmless). Q4_K's and Q6_K's tiles (36 and 105 lines)
      // prefetch a slice per step instead (spread_pf): a whole tile's
      // prefetches at once stalled the loads behind them (Q6_K from DRAM:
      // 0.76 ms against 0.34 spread).
      if (prefetch && !it.spread_pf)
        for (uint32_t g = 0; g < RG; ++g)
          for (uint32_t l = 0; l < TL; ++l) prefetch_ahead(it.w[it.tile(g, t + uint32_t(prefetch)) + uint64_t(l)], it.prefetch_l1);
    });
    it.store(y, M, N, m0, g0 * 16u);
  });
}

namespace {

// A line gathered from 16 GGML rows: either lane r is the u32 at byte `off`
// of row r's block j (codes, scale bytes, high bits), or the line holds two
// sets of 16 f16 values, words 0-7 rows 0-15 of (j, off), words 8-15 of
// (j2, off2) (the d / dmin / m lines).
struct RawLine {
  bool halves;
  uint32_t j, off, j2 = 0, off2 = 0;
};
// The lines a tile's packing gathers. For the layout=16 formats they are the
// tile's lines (the inverse of r16_byte_offset, a line at a time); the
// five-bit formats' codes are widened to bytes from them (tile_from_raw).
std::vector<RawLine> raw_line_specs(QFormat f) {
  std::vector<RawLine> v;
  auto words = [&](uint32_t j, uint32_t off, uint32_t n) {
    for (uint32_t l = 0; l < n; ++l) v.push_back({false, j, off + 4 * l});
  };
  switch (f) {
    case QFormat::Q4_0: case QFormat::Q8_0:  // codes from byte 2, d
      for (uint32_t j = 0; j < 2; ++j) words(j, 2, code_lines(f));
      v.push_back({true, 0, 0, 1, 0});
      break;
    case QFormat::Q4_1:  // d, m, codes from byte 4
      for (uint32_t j = 0; j < 2; ++j) words(j, 4, 4);
      v.push_back({true, 0, 0, 1, 0});
      v.push_back({true, 0, 2, 1, 2});
      break;
    case QFormat::Q5_0: case QFormat::Q5_1: {  // d, (m,) qh, nibbles
      const uint32_t qh = f == QFormat::Q5_0 ? 2 : 4;
      for (uint32_t j = 0; j < 2; ++j) words(j, qh + 4, 4), words(j, qh, 1);
      v.push_back({true, 0, 0, 1, 0});
      if (f == QFormat::Q5_1) v.push_back({true, 0, 2, 1, 2});
      break;
    }
    case QFormat::Q4_K: case QFormat::Q5_K:
      words(0, f == QFormat::Q5_K ? 48 : 16, 32);  // qs
      if (f == QFormat::Q5_K) words(0, 16, 8);     // qh
      words(0, 4, 3);                              // the 12 scale bytes
      v.push_back({true, 0, 0, 0, 2});             // d, dmin
      break;
    case QFormat::Q3_K:
      words(0, 32, 16);                      // qs
      words(0, 0, 8);                        // hmask
      words(0, 96, 3);                       // the 12 scale bytes
      v.push_back({true, 0, 108, 0, 108});   // d
      break;
    case QFormat::Q2_K:
      words(0, 16, 16);                      // qs
      words(0, 0, 4);                        // the 16 scale bytes
      v.push_back({true, 0, 80, 0, 82});     // d, dmin
      break;
    case QFormat::Q6_K:
      for (uint32_t j = 0; j < 2; ++j) words(j, 0, 32);    // ql
      for (uint32_t j = 0; j < 2; ++j) words(j, 128, 16);  // qh
      for (uint32_t j = 0; j < 2; ++j) words(j, 192, 4);   // scales
      v.push_back({true, 0, 208, 1, 208});                  // d
      break;
    default: throw std::invalid_argument(std::string("no packing GEMM for ") + info(f).name);
  }
  return v;
}

// Bits 4c .. 4c + 3 of each lane's qh word at bit 4 of its 4 bytes: the
// multiply puts bit i at 8i (the four shifted copies of a nibble do not
// overlap, so no carries), the mask keeps those.
Value spread_high_bits(const Value& qh, uint32_t c) {
  Value nib = (c ? qh >> (4u * c) : qh) & 0xfu;
  return ((nib * 0x00204081u) & 0x01010101u) << 4u;
}

// The tile's lines from the gathered ones (`both`: whether block 1 of a
// two-block tile was gathered; else its lines are zero and stay so).
std::vector<Value> tile_from_raw(QFormat f, const std::vector<Value>& raw, bool both) {
  switch (f) {
    case QFormat::Q8_0: {
      // Codes stored unsigned (q + 128): one xor of the line (16 scalar
      // xors before building it kept clang from one gather).
      std::vector<Value> t = raw;
      for (uint32_t l = 0; l < (both ? 16u : 8u); ++l) t[l] = t[l] ^ 0x80808080u;
      return t;
    }
    case QFormat::Q5_0: case QFormat::Q5_1: {
      // Per block: nibbles (4 lines), qh; each byte's code widened to 5 bits.
      std::vector<Value> t;
      for (uint32_t j = 0; j < 2; ++j)
        for (uint32_t c = 0; c < 8; ++c) {
          const Value& qs = raw[5 * j + c % 4];
          Value nib = c < 4 ? qs & 0x0f0f0f0fu : (qs >> 4u) & 0x0f0f0f0fu;
          t.push_back(nib | spread_high_bits(raw[5 * j + 4], c));
        }
      t.insert(t.end(), raw.begin() + 10, raw.end());  // d (and m)
      return t;
    }
    case QFormat::Q5_K: {
      // Sub-block sb's element 4c + i (line c): the nibble of qs word
      // 8·(sb/2) + c, byte i, low for even sb, and bit sb of qh byte 4c + i.
      std::vector<Value> t;
      for (uint32_t sb = 0; sb < 8; ++sb)
        for (uint32_t c = 0; c < 8; ++c) {
          const Value& qs = raw[8 * (sb / 2) + c];
          Value nib = sb % 2 ? (qs >> 4u) & 0x0f0f0f0fu : qs & 0x0f0f0f0fu;
          Value hb = sb ? raw[32 + c] >> sb : raw[32 + c];
          t.push_back(nib | ((hb & 0x01010101u) << 4u));
        }
      t.insert(t.end(), raw.begin() + 40, raw.end());  // scales, d / dmin
      return t;
    }
    case QFormat::Q2_K: case QFormat::Q3_K: {
      // Sub-block sb = 4·nn + j (32 elements): 2 bits at 2j of qs bytes 32nn
      // .. 32nn + 31; Q3_K's high bit is bit 4nn + j of hmask bytes 0 .. 31.
      const bool q3 = f == QFormat::Q3_K;
      std::vector<Value> t;
      for (uint32_t sb = 0; sb < 8; ++sb)
        for (uint32_t c = 0; c < 8; ++c) {
          const uint32_t nn = sb / 4, j = sb % 4;
          const Value& qs = raw[8 * nn + c];
          Value code = (j ? qs >> (2u * j) : qs) & 0x03030303u;
          if (q3) {
            const uint32_t bit = 4 * nn + j;
            code = code | (((bit ? raw[16 + c] >> bit : raw[16 + c]) & 0x01010101u) << 2u);
          }
          t.push_back(code);
        }
      if (!q3) {
        t.insert(t.end(), raw.begin() + 16, raw.end());  // scale bytes, d / dmin
        return t;
      }
      // The 16 6-bit scales (GGML's aux trick on each lane's words), minus
      // 32 as int8: per byte (b | 0x80) - 0x20 never borrows, ^ 0x80 undoes it.
      const Value &a0 = raw[24], &a1 = raw[25], &tmp = raw[26];
      const Value sc[4] = {(a0 & 0x0f0f0f0fu) | ((tmp & 0x03030303u) << 4u),
                           (a1 & 0x0f0f0f0fu) | (((tmp >> 2u) & 0x03030303u) << 4u),
                           ((a0 >> 4u) & 0x0f0f0f0fu) | (((tmp >> 4u) & 0x03030303u) << 4u),
                           ((a1 >> 4u) & 0x0f0f0f0fu) | (((tmp >> 6u) & 0x03030303u) << 4u)};
      for (const Value& v : sc) t.push_back(((v | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
      t.push_back(raw[27]);  // d
      return t;
    }
    default: return raw;
  }
}

}  // namespace

bool has_rows_r16_gemm(QFormat f) {
  return has_r16(f) || f == QFormat::Q4_1 || f == QFormat::Q5_0 || f == QFormat::Q5_1 || f == QFormat::Q5_K ||
         f == QFormat::Q2_K || f == QFormat::Q3_K;
}
int64_t rows_r16_tile_bytes(QFormat f) {
  switch (f) {
    case QFormat::Q4_1: return 64 * 10;  // 2 x 4 code lines, d, m
    case QFormat::Q5_0: return 64 * 17;  // 2 x 8 code lines, d
    case QFormat::Q5_1: return 64 * 18;  // 2 x 8 code lines, d, m
    case QFormat::Q5_K: return 64 * 68;  // 64 code lines, 3 scale lines, d / dmin
    case QFormat::Q2_K: case QFormat::Q3_K: return 64 * 69;  // 64 code lines, 4 scale lines, d (/ dmin)
    default: return r16_tile_bytes(f);
  }
}
int64_t rows_r16_blocks_per_tile(QFormat f) {
  return f == QFormat::Q5_K || f == QFormat::Q2_K || f == QFormat::Q3_K ? 1 : r16_blocks_per_tile(f);
}

ir::Kernel qgemm_rows_r16_kernel(QFormat fmt, int mb, int tiles) {
  if (!has_rows_r16_gemm(fmt)) throw std::invalid_argument(std::string("no packing GEMM for ") + info(fmt).name);
  const uint32_t MB = uint32_t(mb), TL = tile_lines(fmt), BB = uint32_t(info(fmt).block_bytes);
  const uint32_t BPT = uint32_t(rows_r16_blocks_per_tile(fmt));
  const std::vector<RawLine> specs = raw_line_specs(fmt);
  std::string name = std::string("quant_gemm_rows_r16_") + info(fmt).name + "_m" + std::to_string(MB) + "_t" +
                     std::to_string(tiles);
  return kernel(name, [&](KernelBuilder& kb) {
    R16Item it{fmt, 1, MB, TL};
    it.xq = kb.input("xq", i32);
    it.xd = kb.input("xd", f32);
    it.xs = kb.input("xs", i32);
    const auto [w, y, M, N, K, pb] = quant_row_params(kb);  // w: GGML rows
    Value nb = K / uint32_t(info(fmt).block_elems), rowbytes = nb * BB, n0 = group_id(0) * 16u;
    // The group's 16 rows (past N: row N-1 again, never stored) packed once
    // into the interleaved tiles on the stack, then every X row reads them.
    it.w = shared_array(line(u32, 16), int64_t(tiles) * TL);
    std::vector<Value> rowb;
    for (uint32_t r = 0; r < 16; ++r) rowb.push_back(cast(u64, min(n0 + r, N - 1u)) * cast(u64, rowbytes));
    // Tile t from blocks b0 (and b0 + 1 when `both`; else its lines are zero).
    auto pack_tile = [&](const Value& t, const Value& b0, bool both) {
      auto at = [&](uint32_t r, uint32_t j, uint32_t off) { return rowb[r] + cast(u64, b0 + j) * uint64_t(BB) + uint64_t(off); };
      std::vector<Value> raw;
      for (const RawLine& s : specs) {
        std::vector<Value> words;
        for (uint32_t k = 0; k < 16; ++k) {
          const uint32_t j = s.halves && k >= 8 ? s.j2 : s.j, off = s.halves && k >= 8 ? s.off2 : s.off;
          if (j > 0 && !both) {
            words.push_back(constant(u32, 0));
          } else if (s.halves) {
            auto h = [&](uint32_t r) { return pb.byte(at(r, j, off)) | (pb.byte(at(r, j, off) + uint64_t(1)) << 8u); };
            words.push_back(h(2 * (k % 8)) | (h(2 * (k % 8) + 1) << 16u));
          } else {
            words.push_back(pb.u32le(at(k, j, off)));
          }
        }
        raw.push_back(make_line(words));
      }
      std::vector<Value> lines = tile_from_raw(fmt, raw, both);
      if (lines.size() != TL) throw std::logic_error("qgemm_rows_r16_kernel: tile line count");
      for (uint32_t l = 0; l < TL; ++l) it.w[cast(u64, t) * uint64_t(TL) + uint64_t(l)] = lines[l];
    };
    for_range(0u, nb / BPT, [&](Value t) { pack_tile(t, t * BPT, true); });
    if (BPT == 2) if_((nb & 1u) != 0u, [&] { pack_tile(nb / 2u, nb - 1u, false); });
    it.gline = {constant(u64, 0)};
    for_range(0u, (M + (MB - 1u)) / MB, [&](Value mblk) {
      Value m0 = mblk * MB;
      it.start_rows(m0, M, K);
      it.all_tiles(nb, [](const Value&) {});
      it.store(y, M, N, m0, n0);
    });
  });
}

namespace {

// The signed value of a code byte (u32) with GGML's order of operations:
// an integer, then converted and times d.
Value r16_value(QFormat f, const Value& code) {
  const int lanes = code.type().lanes;
  Value s = bitcast(lanes > 1 ? line(i32, lanes) : ir::Type(i32), code);
  return f == QFormat::Q4_0 ? s - 8 : s - 128;
}

// Element k of row n (u32) read from the interleaved tiles, with GGML's order
// of operations: Q4_0/Q8_0 (q - o)·d, Q4_K (d·sc)·q - dmin·m (scale_min_k4),
// Q6_K (d·sc)·(q - 32).
Value r16_element(QFormat fmt, const PackedBytes& pb, const Value& n, const Value& k, const Value& K) {
  const uint32_t BE = uint32_t(info(fmt).block_elems), BPT = uint32_t(r16_blocks_per_tile(fmt));
  const uint32_t TB = uint32_t(r16_tile_bytes(fmt));
  Value b = k / BE, e = k & (BE - 1u), r = n & 15u, j = b % BPT;
  Value base = ((n >> 4u) * ((K / BE + BPT - 1u) / BPT) + b / BPT) * TB;
  // Code byte i (of a run of 32-byte groups) of row r: 8 chunks per group.
  auto code = [&](const Value& i) { return (i >> 5u) * 512u + ((i & 31u) >> 2u) * 64u + r * 4u + (i & 3u); };
  switch (fmt) {
    case QFormat::Q4_0: case QFormat::Q8_0: {
      const bool q4 = fmt == QFormat::Q4_0;
      const uint32_t CB = 64 * code_lines(fmt);
      // Q4_0: byte i < 16 holds elements i and i + 16; Q8_0: byte i element i.
      Value byte = pb.byte(base + j * CB + code(q4 ? (e & 15u) : e));
      Value q = q4 ? select(e < 16u, byte & 15u, byte >> 4u) : byte;
      return cast(f32, r16_value(fmt, q)) * pb.half(base + 2u * CB + j * 32u + r * 2u);
    }
    case QFormat::Q4_K: {
      Value p = e >> 6u, hi = (e >> 5u) & 1u, l = e & 31u, sb = p * 2u + hi;
      // Scale byte i of row r: word i/4 of its line, byte i%4.
      auto sbyte = [&](const Value& i) { return pb.byte(base + 2048u + (i >> 2u) * 64u + r * 4u + (i & 3u)); };
      Value js = sb & 3u, low = sb < 4u;
      Value A = sbyte(js), B = sbyte(js + 4u), C = sbyte(js + 8u);
      Value sc = select(low, A & 63u, (C & 15u) | ((A >> 6u) << 4u));
      Value m = select(low, B & 63u, (C >> 4u) | ((B >> 6u) << 4u));
      Value q = (pb.byte(base + code(p * 32u + l)) >> (hi * 4u)) & 15u;
      Value d = pb.half(base + 2240u + r * 2u), dmin = pb.half(base + 2272u + r * 2u);
      return (d * cast(f32, sc)) * cast(f32, q) - dmin * cast(f32, m);
    }
    case QFormat::Q6_K: {
      Value h = e >> 7u, t = (e >> 5u) & 3u, l = e & 31u;
      Value lo = (pb.byte(base + j * 2048u + code(h * 64u + (t & 1u) * 32u + l)) >> ((t >> 1u) * 4u)) & 15u;
      Value hb = (pb.byte(base + 4096u + j * 1024u + code(h * 32u + l)) >> (t * 2u)) & 3u;
      Value si = h * 8u + t * 2u + (l >> 4u);
      Value sc = bitcast(i32, pb.byte(base + 6144u + j * 256u + (si >> 2u) * 64u + r * 4u + (si & 3u)) << 24u) >> 24;
      Value q = bitcast(i32, lo | (hb << 4u)) - 32;
      return (pb.half(base + 6656u + j * 32u + r * 2u) * cast(f32, sc)) * cast(f32, q);
    }
    default: break;
  }
  throw std::invalid_argument(std::string("no interleaved layout for ") + info(fmt).name);
}

}  // namespace

ir::Kernel dequantize_r16_kernel(QFormat fmt, bool words) {
  check_r16(fmt);
  return kernel(std::string("quant_dequant_r16_") + info(fmt).name + (words ? "_w32" : "_u8"), [&](KernelBuilder& kb) {
    auto w = kb.input("w", words ? u32 : u8);
    auto y = kb.output("y", f32);
    auto N = kb.scalar("rows", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(64);
    Value g = wrapped_group_id() * 64u + local_id(0);
    PackedBytes pb{w, words, false};
    if_(g < N * K, [&] {
      Value n = g / K;
      y[g] = r16_element(fmt, pb, n, g - n * K, K);
    });
  });
}

ir::Kernel dequantize_r16_lines_kernel(QFormat fmt) {
  check_r16(fmt);
  const bool q4 = fmt == QFormat::Q4_0;
  const uint32_t CW = 16 * code_lines(fmt);  // words of a block's codes
  return kernel(std::string("quant_dequant_r16_lines_") + info(fmt).name, [&](KernelBuilder& kb) {
    auto w = kb.input("w", u32);
    auto y = kb.output("y", line(f32, 16));
    auto N = kb.scalar("rows", u32);
    auto K = kb.scalar("k", u32);
    kb.workgroup(1);
    Value t = group_id(0), g = group_id(1), nb = K / 32u, np = (nb + 1u) / 2u;
    Value tile = (cast(u64, g) * cast(u64, np) + cast(u64, t)) * uint64_t(r16_tile_bytes(fmt) / 4);  // in words
    auto value_line = [&](const Value& codes) {
      return cast(line(f32, 16), r16_value(fmt, cast(line(u32, 16), codes)));
    };
    for (uint32_t j = 0; j < 2; ++j) {
      Value b = t * 2u + j;
      if_(b < nb, [&] {
        for (uint32_t r = 0; r < 16; ++r) {
          Value n = g * 16u + r;
          if_(n < N, [&] {
            // Row r's code bytes: word r of each 64-byte chunk (4 elements each).
            auto bytes16 = [&](uint32_t c0) {
              std::vector<Value> words;
              for (uint32_t c = c0; c < c0 + 4; ++c) words.push_back(w[tile + uint64_t(CW * j + 16 * c + r)]);
              return bitcast(line(u8, 16), make_line(words));
            };
            Value hw = Value(w[tile + uint64_t(2 * CW + 8 * j + r / 2)]) >> (16u * (r % 2));
            Value d = splat(cast(f32, bitcast(f16, cast(u16, hw & 0xFFFFu))), 16);
            Value at = (cast(u64, n) * cast(u64, K) + cast(u64, b) * 32u) / 16u;
            Value q = bytes16(0);
            y[at] = value_line(q4 ? q & 15u : q) * d;
            y[at + uint64_t(1)] = value_line(q4 ? q >> 4u : bytes16(4)) * d;
          });
        }
      });
    }
  });
}

}  // namespace kgen::ops::quant
