// The quantized-weight family's variant choices (ops/quant/strategy.h): a
// list of rules per op, first match wins, each with why it holds. Figures are
// kgen op / kgen tune times at N = K = 4096 on one thread unless said.
#include "ops/quant/strategy.h"

#include <algorithm>
#include <array>
#include <optional>

#include "codegen/cpu_traits.h"
#include "ops/common/stream_heuristic.h"
#include "ops/quant/kernels.h"

namespace kgen::ops::quant {

// ---- dequantize ----

Variant dequantize_heuristic(const Problem& p, const TargetCaps& caps) {
  // GPUs read the packed bytes as u32 words (WGSL has no 8-bit storage).
  if (!is_cpu(caps)) return Variant{}.set("impl", 0).set("words", 1);
  // A CPU decodes whole blocks into f32 lines, 4 per work-item, and streams
  // large outputs past the caches (ops/common/stream_heuristic.h): the plain
  // stores' reads for ownership were a third of the traffic.
  if (has_line_decoder(format_of(p)))
    return Variant{}.set("impl", 1).set("bpi", 4).set("nt", stream_output(caps, 4.0 * double(p.dim(0) * p.dim(1))) ? 1 : 0);
  return Variant{}.set("impl", 0).set("words", 0);
}

// ---- quantize ----

Variant quantize_heuristic(const Problem&, const TargetCaps& caps) {
  if (!is_cpu(caps)) return Variant{}.set("impl", 0);
  // CPU lines in chunks of 8 blocks: as fast as 16 on one thread and faster
  // on two (Q8_0 4096 x 4096, 2 threads: 1.2-1.3 ms against 1.4-1.6).
  return Variant{}.set("impl", 1).set("bpi", 64).set("ch", 8);
}

// ---- qmatmul ----

Variant tile_bf16_variant(const QShape& s, const TargetCaps& caps) {
  const int64_t np = cdiv(s.m, 32), rb = cdiv(s.n, 32);
  const int64_t mc = std::clamp<int64_t>(rb / (4 * std::max<int64_t>(caps.threads, 1)), 1, 8);
  return Variant{}.set("impl", kTileBf16).set("mc", mc).set("nc", std::min<int64_t>(np, 16)).set("kc", 256);
}

namespace {

using Rule = std::optional<Variant>;

// What the CPU rules read of the target and the problem, decoded once.
struct CpuGemv {
  const QShape& s;
  const TargetCaps& caps;
  // Byte dot products on 512-bit vectors (AVX-512 VNNI), where the int8
  // forms' 16-lane lines are one register.
  bool dot512 = false;
  // Intel AVX-512 with byte dot products: its prefetchers do not follow
  // strided streams (Zen 4/5's do), so short rows are walked one by one.
  bool intel = false;
  // Rows of X per GEMV work-item: up to 4 so W streams once per 4 rows
  // (M = 4 Q5_0 0.79 ms against 1.50, Zen 5); one on 16-register targets,
  // where 8 rows of W by 4 of X would spill.
  int64_t x_rows = 1;
  // One or two rows of X on Intel with rows under a 4 KiB page: the
  // work-item walks its rows of W one after another (seq=1), one sequential
  // stream instead of several in one page in lockstep; rows of a page or
  // more share no page and gain nothing.
  bool seq_rows = false;
  bool intel_gemv = false;  // intel and one row of X
};

CpuGemv cpu_gemv(const QShape& s, const TargetCaps& caps) {
  CpuGemv c{s, caps};
  c.dot512 = caps.byte_dot && caps.vector_bits >= 512;
  c.intel = caps.byte_dot && caps.cpu.family == codegen::CpuFamily::intel_avx512;
  c.x_rows = caps.vector_bits >= 512 ? std::min<int64_t>(s.m, 4) : 1;
  c.seq_rows = c.intel && s.m <= 2 && packed_bytes(s.f, 1, s.k) < 4096;
  c.intel_gemv = c.intel && s.m == 1;
  return c;
}

Variant x8_gemv_variant(int64_t rows, int64_t mb) { return Variant{}.set("impl", kGemvX8).set("rows", rows).set("mb", mb); }

// Rows of X from which the bf16 matrix tiles (AMX) win: where their speed
// pays for decoding W to bf16 (Q4_0 M = 64: 4.0 ms against 6.8 for impl=5,
// Granite Rapids).
int64_t tile_bf16_from(QFormat f) {
  switch (f) {
    case QFormat::Q8_0: case QFormat::Q6_K: return 16;
    case QFormat::Q4_1: return 20;
    case QFormat::Q4_0: case QFormat::Q4_K: case QFormat::Q5_K: return 24;
    case QFormat::Q5_1: case QFormat::Q3_K: return 28;
    default: return 32;  // Q5_0, Q2_K
  }
}

// Rows of X from which GGML rows packed into interleaved tiles (impl=5) win:
// the packing is amortised over X's rows, and the GEMVs below hold out as
// long as their several X rows per work-item keep the registers (Q4_0 M = 64:
// 3.4 ms against 22 for dequantize + the f32 GEMM, Zen 5). Without byte dot
// products, unmeasured: where the GEMV stops. Intel keeps Q5_0's quads at 4
// rows and takes impl=5 for Q3_K at 8, where its super-block GEMV lost.
int64_t rows_r16_from(const CpuGemv& c) {
  const QFormat f = c.s.f;
  if (!c.caps.byte_dot) return 9;
  if (f == QFormat::Q5_0) return c.intel ? 5 : 4;
  if (f == QFormat::Q4_0 || f == QFormat::Q8_0 || f == QFormat::Q4_1 || f == QFormat::Q5_1) return 5;
  if (f == QFormat::Q6_K) return 7;
  if (f == QFormat::Q3_K && c.intel) return 8;
  return f == QFormat::Q5_K || f == QFormat::Q2_K || f == QFormat::Q3_K ? 9 : 8;
}

// impl=5's X rows per block: 4, except where a block of 4 would be mostly
// padding (Q4_0 M = 5: 0.82 ms with blocks of 1 against 1.00 with 4); six
// rows in blocks of 2 in every format; Q4_1 in blocks of 2 up to 16 rows.
int64_t rows_r16_x_block(const QShape& s) {
  if (s.f == QFormat::Q4_1) return s.m <= 16 ? 2 : 4;
  if (s.m % 4 == 0 || s.m > 8) return 4;
  if (s.m == 6) return 2;
  if (s.f == QFormat::Q4_0) return s.m % 2 == 0 ? 2 : 1;
  if (s.f == QFormat::Q4_K || s.f == QFormat::Q5_1) return s.m <= 6 ? 2 : 4;
  return 4;
}

// Q6_K on AVX-512 VNNI: its 16-lane units (w16), 2 rows of W, where its
// per-row scale and offset lines fill the registers (0.44 ms against 1.09
// for the f32 line decoder, Zen 5); on Intel rows one after another, and
// from 3 rows of X 4 rows of W two workgroups ahead.
Rule q6k_wide_units(const CpuGemv& c) {
  const QShape& s = c.s;
  if (!(c.dot512 && s.f == QFormat::Q6_K && x8_gemv(s))) return std::nullopt;
  if (c.seq_rows) return x8_gemv_variant(2, s.m).set("w16", 1).set("pf", 2).set("seq", 1);
  if (c.intel && s.m >= 3 && s.m <= 8) return x8_gemv_variant(4, 2).set("w16", 1).set("pf", 2).set("seq", 1);
  if (s.m <= 8) return x8_gemv_variant(2, std::min<int64_t>(c.x_rows, 2)).set("w16", 1).set("pf", 1);
  return std::nullopt;
}

// The K-quants on 256-bit vectors without byte dot products (AVX2): the
// integer forms, not the f32 line decoder the VNNI rules leave Q2_K and
// Q3_K on (Q3_K 0.89 ms against 6.9, Zen 3); two workgroups ahead with one
// thread, one with two.
Rule kquants_without_dot(const CpuGemv& c) {
  const QShape& s = c.s;
  if (!(!c.caps.byte_dot && c.caps.vector_bits < 512 && s.x8 && s.m <= 8)) return std::nullopt;
  const int ahead = c.caps.threads == 1 ? 2 : 1;
  auto xk = [&](int pf, bool seq) {
    Variant v = x8_gemv_variant(4, 1).set("xk", 1).set("pf", pf);
    return seq ? v.set("seq", 1) : v;
  };
  auto w16 = [&](int rows) { return x8_gemv_variant(rows, 1).set("w16", 1).set("pf", ahead); };
  if (s.f == QFormat::Q2_K && wide_gemv(s, c.caps)) return w16(2);
  if (s.f == QFormat::Q3_K && x8k_gemv(s)) return xk(1, false);
  if ((s.f == QFormat::Q4_K || s.f == QFormat::Q6_K) && x8k_gemv(s)) return xk(2, true);
  if (s.f == QFormat::Q5_K && wide_gemv(s, c.caps)) return w16(4);
  return std::nullopt;
}

// The K-quants with X per super-block of 256 (xk) on AVX-512 VNNI (Q2_K
// also needs byte lookups): the sub-block scales apply as integers, one
// conversion per super-block (Q2_K 0.179 ms against 0.212 for w16, Zen 5).
// Up to 8 rows of X in one pass over W (9 rows: 5 + 4, not 8 + 1), one row
// of W from 5 rows of X (more spill). On Intel, rows one after another for
// one or two rows of X (Q3_K there in its 16-lane units), and 2 rows of W
// one after another for 4 rows of X.
Rule kquant_superblocks(const CpuGemv& c) {
  const QShape& s = c.s;
  if (c.seq_rows && s.f == QFormat::Q3_K && wide_gemv(s, c.caps))
    return x8_gemv_variant(2, s.m).set("w16", 1).set("pf", 2).set("seq", 1);
  if (!(x8k_gemv(s) && c.dot512 && (s.f != QFormat::Q2_K || c.caps.byte_lookup))) return std::nullopt;
  if (c.seq_rows) return x8_gemv_variant(4, s.m).set("xk", 1).set("pf", 2).set("seq", 1);
  if (c.intel && s.m == 4 && s.f != QFormat::Q2_K) return x8_gemv_variant(2, 4).set("xk", 1).set("pf", 2).set("seq", 1);
  const int64_t xm = s.m > 8 ? cdiv(s.m, cdiv(s.m, 8)) : s.m;
  const int64_t rows = xm > 4 || (xm == 4 && s.f == QFormat::Q2_K) ? 1 : 4;
  return x8_gemv_variant(rows, xm).set("xk", 1).set("pf", xm == 1 ? 2 : 1);
}

// Q2_K, Q3_K and Q5_K otherwise on AVX-512 VNNI: their 16-lane units, 8 rows
// of W (Q5_K 4 for one row of X), 2 rows of X from 2 (Q3_K 0.31 ms where its
// f32 line decoder took 1.2 from the LLC).
Rule kquant_wide_units(const CpuGemv& c) {
  const QShape& s = c.s;
  const bool wide_only = s.f == QFormat::Q3_K || s.f == QFormat::Q2_K || s.f == QFormat::Q5_K;
  if (!(wide_only && wide_gemv(s, c.caps) && c.dot512)) return std::nullopt;
  return x8_gemv_variant(s.f == QFormat::Q5_K && s.m == 1 ? 4 : 8, s.m >= 2 ? 2 : 1).set("w16", 1).set("pf", 1);
}

// Prefill of the formats without impl=5 here, 9 to 64 rows of X: the
// int8 GEMV with 4 rows of X per work-item beats dequantize + the f32 GEMM;
// on AVX-512 in block pairs (quads for Q4_1 and Q5_1), 8 rows of W (Q5_1
// M = 9: 3.2 ms against 6.3 for the 8-lane units), else 8-lane units up to
// 32 rows, where the two break even by 64.
Rule nibble_prefill(const CpuGemv& c) {
  const QShape& s = c.s;
  if (!(c.caps.byte_dot && x8_gemv(s) && !has_r16(s.f) && s.m > 8)) return std::nullopt;
  if (c.dot512 && pair_gemv(s)) {
    const bool quads = (s.f == QFormat::Q4_1 || s.f == QFormat::Q5_1) && quad_gemv(s, c.caps);
    return x8_gemv_variant(8, 4).set(quads ? "p4" : "p2", 1);
  }
  if (s.m <= 32) return x8_gemv_variant(4, 4);
  return std::nullopt;
}

// Q6_K, one row of X, byte dot products but not its 16-lane units: the f32
// line decoder one row of W at a time beat its 8-lane int8 units (1.09 ms
// against 1.87, Zen 5).
Rule q6k_line_decoder(const CpuGemv& c) {
  const QShape& s = c.s;
  if (c.caps.byte_dot && s.m == 1 && s.f == QFormat::Q6_K && has_line_decoder(s.f))
    return Variant{}.set("impl", kGemvCpu).set("rows", 1).set("mb", 1);
  return std::nullopt;
}

// The decode GEMV's rows of W per work-item: 8 for the 32-element formats
// (their units are short), Q6_K 2 (its scale and offset lines per row fill
// the registers), Q4_K 8 for its one-line unit scales, or 4 with byte dot
// products (0.40 ms against 0.97 for 8 with the prefetch, Zen 5).
int decode_rows(const CpuGemv& c) {
  const QShape& s = c.s;
  const int q4k_rows = c.caps.byte_dot ? 4 : 8;
  return info(s.f).block_elems == 32 ? 8 : s.f == QFormat::Q4_K ? q4k_rows : s.f == QFormat::Q6_K ? 2 : 4;
}

// Block quads on AVX-512 (their byte permutes are word-aligned, vpermt2w):
// 15 instructions per row and 128 weights against 30 for pairs. Q5_0 keeps
// pairs from 2 rows of X except on Intel.
bool decode_quads(const CpuGemv& c) {
  const QShape& s = c.s;
  return c.caps.vector_bits >= 512 && quad_gemv(s, c.caps) && !(s.f == QFormat::Q5_0 && s.m >= 2 && !c.intel);
}

// Workgroups ahead to prefetch: each row is a short stream the hardware
// prefetcher picks up late; two ahead with one thread, one with two (Q4_0
// 0.220 ms against 0.232, Zen 5), and one for Q8_0's single row on Intel.
int decode_prefetch_ahead(const CpuGemv& c) {
  return c.caps.threads == 1 && !(c.s.f == QFormat::Q8_0 && c.intel_gemv) ? 2 : 1;
}

// The quads' rows of W: 4 for one row of X (X comes prepared, so fewer rows
// repeat nothing) with 4 work-items ahead on one thread; rows one after
// another where seq_rows; on Intel with 4 rows of X, 4 rows of W two ahead
// (8 by 4 rows of X spill), the longer five-bit rows one after another.
void set_quad_rows(Variant& v, const CpuGemv& c) {
  const QShape& s = c.s;
  if (s.m == 1) v.set("rows", 4).set("pf", c.caps.threads == 1 ? 4 : 1);
  if (c.seq_rows) v.set("rows", 4).set("pf", 1).set("seq", 1);
  if (c.intel && s.m == 4) {
    v.set("rows", 4).set("pf", 2);
    if (s.f == QFormat::Q5_0 || s.f == QFormat::Q5_1) v.set("seq", 1);
  }
}

// The int8 GEMV for up to 8 rows of X (decode).
Variant decode_gemv(const CpuGemv& c) {
  const QShape& s = c.s;
  const TargetCaps& caps = c.caps;
  const int rows = decode_rows(c);
  Variant v = x8_gemv_variant(rows, c.x_rows);
  // Q8_0 with signed codes, also where a u8·i8 byte dot exists: from DRAM
  // they beat the sign flip and offset (0.45 ms against 0.52-0.72, Zen 5);
  // Intel's single row, whose unsigned loop reads DRAM faster, keeps them.
  if (s.f == QFormat::Q8_0 && !c.intel_gemv) v.set("sgn", 1);
  // Q8_0 with 2-4 rows of X: block pairs by byte permutes, 4 rows of W (8 by
  // 4 rows of X spill; M = 4 0.77 ms against 1.16 for the signed units).
  if (s.f == QFormat::Q8_0 && s.m >= 2 && caps.vector_bits >= 512 && q8_pair_gemv(s, caps))
    return x8_gemv_variant(4, c.x_rows).set("p2", 1).set("pf", 2);
  // Nibble formats on AVX-512: two blocks per zmm dot4 (pairs), or quads.
  const bool quads = decode_quads(c);
  if (quads) v.set("p4", 1);
  else if (caps.vector_bits >= 512 && pair_gemv(s)) v.set("p2", 1);
  const int ahead = decode_prefetch_ahead(c);
  if (rows == 8) v.set("pf", ahead);
  // Q4_0 on AVX2 without byte dot products: row pairs (ops/quant/row_pairs.cpp),
  // one line of two rows' codes per block, ~7 instructions per block and row
  // against ~12.
  if (!quads && caps.vector_bits < 512 && !caps.byte_dot && row_pair_gemv_format(s.f) && rows == 8 && c.x_rows <= 2)
    v.set("rp", 1);
  if (quads) set_quad_rows(v, c);
  // Q4_K on AVX-512 VNNI: its 16-lane units, two sub-blocks per zmm dot4 and
  // the scales as lines, 8 rows (0.26 ms against 0.38 for the 8-lane units).
  if (s.f == QFormat::Q4_K && c.dot512) v.set("w16", 1).set("pf", ahead).set("rows", 8).set("mb", std::min<int64_t>(c.x_rows, 2));
  return v;
}

// GGML rows on a CPU, first match wins.
Variant cpu_choice(const QShape& s, const TargetCaps& caps) {
  const CpuGemv c = cpu_gemv(s, caps);
  if (tile_bf16_fits(s, caps) && s.m >= tile_bf16_from(s.f)) return tile_bf16_variant(s, caps);
  if (s.x8 && rows_r16_gemm(s) && s.m >= rows_r16_from(c))
    return Variant{}.set("impl", kGemmRowsR16).set("mb", rows_r16_x_block(s));
  for (auto rule : {q6k_wide_units, kquants_without_dot, kquant_superblocks, kquant_wide_units, nibble_prefill, q6k_line_decoder})
    if (Rule v = rule(c)) return *v;
  if (x8_gemv(s) && s.m <= 8) return decode_gemv(c);
  // Without xq (or an int8 GEMV), the f32 line decoder while the weights'
  // decode dominates; beyond 8 rows of X dequantize + the packed GEMM wins.
  if (has_line_decoder(s.f) && s.m <= 8)
    return Variant{}.set("impl", kGemvCpu).set("rows", 4).set("mb", std::min<int64_t>(s.m, 4));
  return tiled_variant(s, caps);
}

// Rows interleaved by 16 on a CPU with xq: its int8 GEMV for any M, W
// streaming once per block of X rows (M = 512 Q4_0 27 ms against 113 for
// dequantize + the f32 GEMM, Zen 5); one row group per work-item (one
// contiguous stream) and a prefetch ~4.5 KiB ahead, Q4_K's and Q6_K's large
// tiles 4 ahead spread over each tile's steps.
Variant r16_choice(const QShape& s, const TargetCaps& caps) {
  if (!(is_cpu(caps) && s.x8)) return tiled_variant(s, caps);
  const int64_t pf = r16_prefetch_spread(s.f) ? 4 : std::max<int64_t>(1, 4608 / r16_tile_bytes(s.f));
  return Variant{}.set("impl", kGemvR16).set("mb", std::min<int64_t>(s.m, 8)).set("groups", 1).set("pf", pf);
}

// GPUs: up to 4 rows of X a GEMV, a work-item per block for Q4_0 and Q8_0,
// else 256 work-items per output where allowed (Q4_0 0.051 ms against 0.058
// with 64, H200); the tiled GEMM beyond.
Variant gpu_choice(const QShape& s, const TargetCaps& caps) {
  if (s.m <= 4 && gpu_block_gemv(s)) return Variant{}.set("impl", kGemvBlocks).set("wg", 64);
  if (s.m <= 4)
    return Variant{}.set("impl", kGemvAny).set("wg", !caps.max_workgroup_threads || caps.max_workgroup_threads >= 256 ? 256 : 64);
  return tiled_variant(s, caps);
}

}  // namespace

Variant qmatmul_heuristic(const Problem& p, const TargetCaps& caps) {
  const QShape s = qshape(p);
  Variant v = s.r16 ? r16_choice(s, caps) : is_cpu(caps) ? cpu_choice(s, caps) : gpu_choice(s, caps);
  // An int8 GEMV's prefetches into L1 where the CPU pays for it (Zen 5: from
  // ~0.75 to ~0.95 of the triad), whatever its form.
  if (caps.cpu.prefetch_l1_streams && (v.get("impl") == kGemvX8 || v.get("impl") == kGemvR16) && v.get("pf")) v.set("pl1", 1);
  return v;
}

}  // namespace kgen::ops::quant
