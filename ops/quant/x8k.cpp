// The int8-activation GEMV for the K-quants with X quantized per super-block
// of 256 (GGML's Q8_K activations: one scale per 256, Σq per group of 16).
//
// With X in blocks of 32 (ops/quant/int8.cpp), every 64 weights' integer dot
// product is converted to f32 and scaled by its own sub-block scale times
// its X block's scale: conversion, scale permute and FMA per dot4, which made
// the 2- and 3-bit formats compute-bound (Zen 5, 1 thread, 1x4096x4096: 0.69
// and 0.58 of the triad). With one X scale per super-block the sub-block
// scales, small integers, apply in the integer domain and a super-block's
// sum is converted once:
//   Q2_K (w = d·sc·q - dmin·m, sc and m 4 bits, q 2 bits): sc·q <= 45 fits a
//     byte, so each group's sc·q is looked up in a 64-byte table of
//     [0, sc, 2sc, 3sc] per group (one vpermi2b per 64 weights, the code plus
//     4·group as the index) and the dot4 chain runs over the whole
//     super-block: 4 instructions per 64 weights. The mins are one integer
//     multiply with X's Σq per group, summed in the odd lanes of the same
//     conversion.
//   Q3_K (w = d·s·(u - 4), s = sc - 32 in [-32, 31], u = q | h << 2 in
//     0..7): a dot4 of the codes per 64 weights, whose sums (|Σ| <= 4·7·127)
//     one dot2_i16 (vpdpwssd) multiplies by the groups' scales and adds; the
//     offset -4 is one multiply of the scales with -4·Σq per super-block.
//     (A lookup of s·(u - 4) + 124 in a 128-byte per-row table lost to it:
//     M = 64 8.6 ms against 7.5.)
//   Q4_K and Q5_K (w = d·sc·q - dmin·m per sub-block of 32, sc and m 6
//     bits, q 4 or 5 bits): a dot4 of the codes per 64 weights (two
//     sub-blocks, the 16-lane units of ops/quant/int8.cpp) and a dot2_i16 with
//     the sub-blocks' scales; the mins one multiply with X's Σq per sub-block,
//     in the upper lanes of the same conversion. Their X units follow those
//     units' sub-block order (quantize_x8k_kernel's k4_units). 7-8% faster
//     than the 16-lane units for one row of X, more for several (the X side
//     is then all that repeats).
//   Q6_K (w = d·sc·(u - 32), sc a signed byte per group of 16, u 6 bits):
//     Q3_K's form. Its 64-element units are runs (the low or high nibbles of
//     64 code bytes, the two high bits from 32 qh bytes in both halves), a
//     dot4 sum fits i16 (4·63·127 < 2^15) for the dot2_i16 with the scales,
//     and the offset is -32·Σ sc·Σq per super-block (one pair multiply, then
//     a shift).
// Sums stay far inside i32: |Σ| <= 63·31·127·256 (Q6_K: 63·128·127·256
// plus the offset, 32·128·16·127·16).
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "ops/quant/int8_lines.h"

namespace kgen::ops::quant {

using namespace kgen::dsl;

bool has_x8k_gemv(QFormat f) {
  return f == QFormat::Q2_K || f == QFormat::Q3_K || f == QFormat::Q4_K || f == QFormat::Q5_K || f == QFormat::Q6_K;
}
X8kUnits x8k_units(QFormat f) {
  if (f == QFormat::Q4_K || f == QFormat::Q5_K) return X8kUnits::SubBlocks;
  if (f == QFormat::Q6_K) return X8kUnits::Runs;
  return X8kUnits::Fields;
}

namespace {

// The 16-element groups of X unit j (its 64 bytes, in order): Q2_K/Q3_K
// units hold elements 32j.. and 128 + 32j.. (the 2-bit fields j of their
// 64 code bytes); Q4_K/Q5_K units sub-blocks sb and sb + 2, sb = 4·(j / 2) +
// j % 2 (the low or high nibbles of 64 code bytes); Q6_K units elements
// 64j..64j + 63.
std::array<uint32_t, 4> unit_groups(X8kUnits units, uint32_t j) {
  if (units == X8kUnits::SubBlocks) {
    const uint32_t sb = 4 * (j / 2) + j % 2;
    return {2 * sb, 2 * sb + 1, 2 * sb + 4, 2 * sb + 5};
  }
  if (units == X8kUnits::Runs) return {4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3};
  return {2 * j, 2 * j + 1, 8 + 2 * j, 9 + 2 * j};
}

}  // namespace

ir::Kernel quantize_x8k_kernel(int superblocks_per_item, X8kUnits units) {
  const uint32_t SPI = uint32_t(superblocks_per_item);
  const char* suffix = units == X8kUnits::SubBlocks ? "_k4" : units == X8kUnits::Runs ? "_runs" : "";
  return kernel("quant_x8k_b" + std::to_string(SPI) + suffix, [&](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    auto xq = kb.output("xq", line(i32, 16));
    auto xd = kb.output("xd", f32);
    auto xs = kb.output("xs", line(i32, 16));
    auto ns = kb.scalar("nsuper", u32);
    kb.workgroup(1);
    Value s0 = group_id(0) * SPI;
    for_range(s0, min(s0 + SPI, ns), [&](Value s) {
      std::vector<Value> v, a;
      for (uint32_t g = 0; g < 16; ++g) {
        v.push_back(x[s * 16u + g]);
        a.push_back(abs(v.back()));
      }
      while (a.size() > 1) {
        std::vector<Value> next;
        for (size_t i = 0; i < a.size(); i += 2) next.push_back(max(a[i], a[i + 1]));
        a = next;
      }
      Value d = tree_max(a[0]) / 127.0f;
      Value id = splat(select(d != 0.0f, 1.0f / d, 0.0f), 16);
      xd[s] = d;
      std::vector<Value> q, bytes;
      for (uint32_t g = 0; g < 16; ++g) {
        // round-to-even(x·id) as quantize_x8_kernel does (|x·id| <= 127)
        Value t = v[g] * id + 12582912.0f;
        q.push_back(bitcast(line(i32, 16), t) - 0x4b400000);
        bytes.push_back(bitcast(line(i32, 4), cast(line(i8, 16), q.back())));
      }
      xs[s] = tree_add_lanes(q);
      for (uint32_t j = 0; j < 4; ++j) {
        std::vector<Value> words;
        for (uint32_t g : unit_groups(units, j))
          for (int k = 0; k < 4; ++k) words.push_back(extract(bytes[g], k));
        xq[s * 4u + j] = make_line(words);
      }
    });
  });
}

ir::Kernel qgemv_x8k_kernel(QFormat fmt, int rows, int mb, int prefetch, bool seq_rows, bool prefetch_l1) {
  if (!has_x8k_gemv(fmt)) throw std::invalid_argument(std::string("no super-block int8 GEMV for ") + info(fmt).name);
  const bool q2 = fmt == QFormat::Q2_K, k4 = x8k_units(fmt) == X8kUnits::SubBlocks, q5 = fmt == QFormat::Q5_K;
  const bool q6 = fmt == QFormat::Q6_K;
  const uint32_t R = uint32_t(rows), MB = uint32_t(mb), BB = uint32_t(info(fmt).block_bytes);
  const std::string name = std::string("quant_gemv_x8k_") + info(fmt).name + "_r" + std::to_string(R) + "_m" +
                           std::to_string(MB) + prefetch_suffix(prefetch, prefetch_l1) + (seq_rows ? "_seq" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", line(i32, 16));
    auto xd = kb.input("xd", f32);
    auto xs = kb.input("xs", line(i32, 16));
    const auto [w, y, M, N, K, pb] = quant_row_params(kb);
    Value n0 = group_id(0) * R, m0 = group_id(1) * MB;
    Value nb = K / 256u, rowbytes = nb * BB;
    // Rows of X past M (last group only) re-read row M-1: in bounds, never stored.
    std::vector<Value> xrow;
    for (uint32_t i = 0; i < MB; ++i) xrow.push_back(min(m0 + i, M - 1u) * nb);
    // The R rows `prefetch` workgroups ahead are one span (for_row_steps).
    const Value pf_base = cast(u64, n0 + R * uint32_t(prefetch)) * cast(u64, rowbytes);
    // Q2_K: unit j's table index base in each byte of a quarter, the group's
    // first entry (4 per group).
    std::vector<Value> group_base;
    for (uint32_t j = 0; j < 4; ++j) {
      std::vector<uint32_t> bytes;
      for (uint32_t p = 0; p < 64; ++p) bytes.push_back(4u * unit_groups(X8kUnits::Fields, j)[p / 16]);
      group_base.push_back(byte_index(bytes));
    }
    auto emit = [&](bool guarded) {
      std::vector<Value> wrow;
      for (uint32_t r = 0; r < R; ++r) wrow.push_back(cast(u64, guarded ? min(n0 + r, N - 1u) : n0 + r) * cast(u64, rowbytes));
      std::vector<Var> acc;
      for (uint32_t i = 0; i < MB * R; ++i) acc.push_back(var(splat(0.0f, 16)));
      for_row_steps(w, pf_base, prefetch != 0, prefetch_l1, R, seq_rows, nb, BB, [&](Value b, uint32_t r0, uint32_t r1) {
        // X's super-block per row: the four units' bytes; Σq per group
        // (Q2_K: its mins), -4·Σq (Q3_K: the offset) or Σq per sub-block in
        // lanes 8-15 (Q4_K/Q5_K: their mins); dx as the conversion's factor
        // against the weights' [d, dmin, d, ...] (Q2_K), [d ×8, dmin ×8]
        // (Q4_K/Q5_K) or d.
        std::vector<std::vector<Value>> xv(MB);
        std::vector<Value> xsum(MB), dx(MB);
        for (uint32_t i = 0; i < MB; ++i) {
          Value sb = xrow[i] + b;
          for (uint32_t j = 0; j < 4; ++j) xv[i].push_back(xq[sb * 4u + j]);
          dx[i] = xd[sb];
          if (k4) {
            const Value g = xs[sb];
            std::vector<Value> even(8, constant(i32, 0)), odd(8, constant(i32, 0));
            for (int l = 0; l < 8; ++l) even.push_back(extract(g, 2 * l)), odd.push_back(extract(g, 2 * l + 1));
            xsum[i] = make_line(even) + make_line(odd);
          } else {
            xsum[i] = q2 || q6 ? xs[sb] : xs[sb] * -4;
          }
          if (q2) {
            std::vector<Value> l;
            for (int k = 0; k < 8; ++k) l.push_back(dx[i]), l.push_back(-dx[i]);
            dx[i] = make_line(l);
          } else if (k4) {
            dx[i] = halves(dx[i], -dx[i]);
          } else {
            dx[i] = splat(dx[i], 16);
          }
        }
        // Q3_K and Q6_K: from `isum` (the offset term), per unit j the dot4
        // of its codes with X's unit, times its groups' scales (sc16: i16
        // in the low halves) by dot2_i16; then one conversion × d·dx.
        auto scaled_units = [&](uint32_t r, const Value& sc16, X8kUnits units, std::vector<Value> isum, const Value& d,
                                const std::function<Value(uint32_t)>& codes) {
          for (uint32_t j = 0; j < 4; ++j) {
            const Value u = codes(j);
            std::vector<Value> sj;
            for (uint32_t g : unit_groups(units, j)) sj.push_back(extract(sc16, int(g)));
            const Value scale = quarters(sj);
            for (uint32_t i = 0; i < MB; ++i) isum[i] = dot2_i16(dot4(u, xv[i][j], splat(constant(i32, 0), 16)), scale, isum[i]);
          }
          for (uint32_t i = 0; i < MB; ++i) {
            Var& a = acc[i * R + r];
            a = fma(cast(line(f32, 16), isum[i]), d * dx[i], a.get());
          }
        };
        for (uint32_t r = r0; r < r1; ++r) {
          const Value base = wrow[r] + cast(u64, b) * uint64_t(BB);
          std::vector<Value> isum(MB);
          if (q2) {
            const Value s = u32x4(pb.line16(base));
            // dword g: [0, sc, 2sc, 3sc] (sc·3 <= 45: no carries)
            const Value table = cast(line(u32, 16), bitcast(line(u8, 16), s & 0x0f0f0f0fu)) * 0x03020100u;
            const Value mins = cast(line(i32, 16), bitcast(line(u8, 16), (s >> 4u) & 0x0f0f0f0fu));
            const Value qs = bytes64(pb, base + uint64_t(16));
            for (uint32_t i = 0; i < MB; ++i) isum[i] = splat(constant(i32, 0), 16);
            for (uint32_t j = 0; j < 4; ++j) {
              Value idx = ((j ? qs >> (2u * j) : qs) & 0x03030303u) | group_base[j];
              Value scaled = permute_bytes(table, table, idx);  // sc·q per byte
              for (uint32_t i = 0; i < MB; ++i) isum[i] = dot4(scaled, xv[i][j], isum[i]);
            }
            const Value dd = bitcast(line(f16, 2), pb.u32le(base + uint64_t(80)));
            std::vector<Value> dl;
            for (int k = 0; k < 8; ++k) dl.push_back(extract(dd, 0)), dl.push_back(extract(dd, 1));
            const Value dm = cast(line(f32, 16), make_line(dl));
            for (uint32_t i = 0; i < MB; ++i) {
              // Σ sc·q·x in the even lanes, Σ m·Σq in the odd ones (vpunpck{l,h}dq + add).
              // m < 16 and |Σq| <= 16·127: one pair multiply-add (vpmaddwd), not vpmulld (2 uops, latency 10).
              const Value mq = dot2_i16(mins, xsum[i], splat(constant(i32, 0), 16));
              std::vector<Value> lo, hi;
              for (int p = 0; p < 4; ++p)
                for (int e = 0; e < 2; ++e) {
                  lo.push_back(extract(isum[i], 4 * p + e)), lo.push_back(extract(mq, 4 * p + e));
                  hi.push_back(extract(isum[i], 4 * p + 2 + e)), hi.push_back(extract(mq, 4 * p + 2 + e));
                }
              Var& a = acc[i * R + r];
              a = fma(cast(line(f32, 16), make_line(lo) + make_line(hi)), dm * dx[i], a.get());
            }
          } else if (k4) {
            // [sc_0..7, m_0..7] as i32 lanes; d and dmin as [d ×8, dmin ×8]
            const Value sm = cast(line(i32, 16), q4k_scale_min_codes(pb, base));
            const Value dd = bitcast(line(f16, 2), pb.u32le(base));
            const Value dm = cast(line(f32, 16), halves(extract(dd, 0), extract(dd, 1)));
            const uint64_t qs_at = q5 ? 48 : 16;
            const std::array<Value, 2> wq = {bytes64(pb, base + qs_at), bytes64(pb, base + (qs_at + 64))};
            const Value qh = q5 ? bytes64(pb, base + uint64_t(16), 2) : Value();
            for (uint32_t k = 0; k < 4; ++k) {
              const uint32_t sb = 4 * (k / 2) + k % 2;
              Value codes = k % 2 ? (wq[k / 2] >> 4u) & 0x0f0f0f0fu : wq[k / 2] & 0x0f0f0f0fu;
              // Q5_K: bit s of qh byte l is the fifth bit of sub-block s's element l.
              if (q5) codes = codes | (((qh >> halves(constant(u32, sb), constant(u32, sb + 2))) & 0x01010101u) << 4u);
              // sc < 64 and |Σ| <= 4·31·127 (< 2^15): one dot2_i16 of the sum's
              // low half and the scale per lane.
              const Value scale = halves(extract(sm, int(sb)), extract(sm, int(sb + 2)));
              for (uint32_t i = 0; i < MB; ++i)
                isum[i] = dot2_i16(dot4(codes, xv[i][k], splat(constant(i32, 0), 16)), scale, k ? isum[i] : splat(constant(i32, 0), 16));
            }
            for (uint32_t i = 0; i < MB; ++i) {
              // Σ sc·q·x folded into lanes 0-7, Σ m·Σq (lanes 8-15 of the
              // multiply; its lanes 0-7 are 0) above them.
              // m < 64 and |Σq| <= 32·127: one pair multiply-add (vpmaddwd),
              // not vpmulld (2 uops, latency 10); lanes 0-7 of xsum are 0.
              const Value mq = dot2_i16(sm, xsum[i], splat(constant(i32, 0), 16));
              std::vector<Value> lo, hi;
              for (int l = 0; l < 16; ++l) lo.push_back(l < 8 ? extract(isum[i], l) : extract(mq, l));
              for (int l = 0; l < 16; ++l) hi.push_back(l < 8 ? extract(isum[i], l + 8) : constant(i32, 0));
              Var& a = acc[i * R + r];
              a = fma(cast(line(f32, 16), make_line(lo) + make_line(hi)), dm * dx[i], a.get());
            }
          } else if (q6) {
            // Half h's 64 low-bit bytes: low nibbles are unit 2h (elements
            // 128h..+63), high nibbles unit 2h + 1; its 32 high-bit bytes in
            // both halves of a line, bits 2q..2q+1 of byte l belonging to
            // element 32q + l of the half: shifted to bits 4-5 per half.
            const Value low_shift = halves(constant(u32, 4), constant(u32, 2));
            const Value high_shift = halves(constant(u32, 0), constant(u32, 2));
            const Value sc16 = cast(line(i32, 16), bitcast(line(i8, 16), pb.line16(base + uint64_t(192)))) & 0xffff;
            for (uint32_t i = 0; i < MB; ++i) isum[i] = dot2_i16(sc16, xsum[i], splat(constant(i32, 0), 16)) * -32;
            std::array<Value, 2> ql, qh;
            for (uint32_t h = 0; h < 2; ++h) ql[h] = bytes64(pb, base + uint64_t(64 * h)), qh[h] = bytes64(pb, base + uint64_t(128 + 32 * h), 2);
            scaled_units(r, sc16, X8kUnits::Runs, isum, pb.half_splat(base + uint64_t(208)), [&](uint32_t k) {
              const Value &l = ql[k / 2], &h = qh[k / 2];
              return k % 2 == 0 ? (l & 0x0f0f0f0fu) | ((h << low_shift) & 0x30303030u)
                                : ((l >> 4u) & 0x0f0f0f0fu) | ((h >> high_shift) & 0x30303030u);
            });
          } else {
            // The 32 hmask bytes in both halves; bit j (first half) or 4 + j
            // (second) of byte l is the third bit of field j's element l.
            // Shifted so that field j's bit is at 2 + j of its byte in both
            // halves (bits crossing into a neighbouring byte are never read):
            // then every field's is one immediate shift away from bit 2.
            const Value hm = (bytes64(pb, base, 2) << halves(constant(u32, 2), constant(u32, 0))) >>
                             halves(constant(u32, 0), constant(u32, 2));
            const Value qs = bytes64(pb, base + uint64_t(32));
            const Value sc = cast(line(i32, 16), bitcast(line(i8, 16), q3k_scale_codes(pb, base) - splat(constant(u8, 32), 16)));
            // The scales in the low halves (dot2_i16 pairs them with the
            // dot4 sums, |Σ| <= 4·7·127, whose high halves are their signs).
            const Value sc16 = sc & 0xffff;
            // The offset -4·Σ s·Σq (|4·Σq| <= 64·127 < 2^15) as a pair
            // multiply-add too, not vpmulld.
            for (uint32_t i = 0; i < MB; ++i) isum[i] = dot2_i16(sc16, xsum[i], splat(constant(i32, 0), 16));
            scaled_units(r, sc16, X8kUnits::Fields, isum, pb.half_splat(base + uint64_t(108)), [&](uint32_t j) {
              return ((j ? qs >> (2u * j) : qs) & 0x03030303u) | ((j ? hm >> j : hm) & 0x04040404u);
            });
          }
        }
      });
      store_gemv_outputs(y, M, N, m0, n0, MB, R, guarded, [&](uint32_t i, uint32_t r) { return reduce_add(acc[i * R + r].get()); });
    };
    if_(n0 + R <= N, [&] { emit(false); }).else_([&] { emit(true); });
  });
}

}  // namespace kgen::ops::quant
