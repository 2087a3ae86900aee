// The matmul family's variant choice on every target, as rules in the order
// they are tried: each says why, with at most one measured figure. Figures
// are 1 thread unless they say otherwise; "Zen 5" and "Intel" name the hosts
// a rule was measured on (Intel: a Granite Rapids VM).
#include "ops/matmul/strategy.h"

#include <algorithm>
#include <tuple>

#include "codegen/cpu_traits.h"
#include "ops/matmul/forms.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/plan.h"

namespace kgen::ops {

namespace {

using codegen::CpuFamily;
using ir::ScalarKind;

// The CPU families the AVX-512 rules were measured on. Zen 4/5 take their
// own; every other AVX-512 core takes Intel's, whose prefetchers follow
// fewer streams.
bool zen_avx512(const TargetCaps& caps) {
  return caps.cpu.family == CpuFamily::zen4 || caps.cpu.family == CpuFamily::zen5;
}
bool intel_rules(const TargetCaps& caps) { return !zen_avx512(caps); }
bool zen4(const TargetCaps& caps) { return caps.cpu.family == CpuFamily::zen4; }

}  // namespace

// ---------------------------------------------------------------------------
// The default GEMM tiles (also conv's, quant's and attention's).

namespace {

// AVX-512: all of K per pass while the B panel fits half of a 1 MiB L2, the
// next A panel prefetched (apf), 8×8 panels per workgroup.
void avx512_cache_blocking(GemmTile& t, int64_t m, int64_t k) {
  // (Zen 5 2048³: 78 ms against 83 with kc=512.)
  t.kc = int64_t(64) * t.nl * k > (512 << 10) ? 512 : 0;
  t.apf = 1;  // the pass that first reads an A panel no longer streams it
  t.mc = 8;
  t.nc = 8;
  if (t.kc) {
    // Long K in slices: walk the M blocks fastest over B blocks (4 panels ×
    // all of K) small enough for both threads' to share the LLC, with taller
    // row groups to read each B block fewer times.
    // Zen 5, 2048×1024×11008 Bᵀ, 2 threads: 148 -> 112-118 ms.
    t.gm = 1;
    t.mc = 32;
    t.nc = 4;
  }
  // Few rows: one row group over all of M when its A block (mp·mr·kc
  // floats) stays within ~512 KiB of L2, so each packed B panel streams
  // once; narrower column groups keep workgroups for the threads.
  const int64_t mp = (m + t.mr - 1) / t.mr, kc = t.kc ? t.kc : k;
  if (mp > 8 && mp * t.mr * kc * 4 <= (544 << 10)) {
    t.mc = int(mp);
    t.nc = 4;
  }
}

// AVX2's 6×16 block: all of K per pass while a 16-column B panel (64·K
// bytes) stays within half the L2.
void avx2_cache_blocking(GemmTile& t, int64_t k) {
  t.kc = k > 4096 ? 512 : 0;
  t.mc = 16;
  t.nc = 16;
}

}  // namespace

GemmTile default_cpu_tile(int64_t m, int64_t n, int64_t k, const TargetCaps& caps, bool narrow_n) {
  GemmTile t;
  const auto blocks = gemm_register_blocks(caps);
  const bool wide = gemm_wide_registers(caps);
  std::tie(t.mr, t.nl) = blocks.front();
  // Of the two leading AVX-512 blocks (8×48, 6×64: both ~97% of peak), the
  // one that pads C least (1024² pads 8×48 to 1024×1056).
  if (blocks.size() > 1 && blocks[1].second >= 2) {
    auto padded = [&](std::pair<int, int> b) {
      return double((m + b.first - 1) / b.first * b.first) * double((n + 16 * b.second - 1) / (16 * b.second) * 16 * b.second);
    };
    if (padded(blocks[1]) < padded(blocks[0])) std::tie(t.mr, t.nl) = blocks[1];
  }
  // 16 or 32 columns: 8 rows by 1 or 2 lines, not 8×3 padded to 48 columns;
  // A's stream is the limit there, so taller blocks lose.
  // Zen 5, 2048×16×4096: 8×3 3.39 ms, 8×1 1.38-1.48.
  if (narrow_n && wide && n <= 32) {
    t.mr = 8;
    t.nl = int((n + 15) / 16);
  }
  t.ak = 16;
  if (wide) avx512_cache_blocking(t, m, k);
  else avx2_cache_blocking(t, k);
  return t;
}

GpuTile default_gpu_tile(int64_t m, int64_t n, int64_t k, bool trans_b, int64_t batch, uint32_t max_shared_bytes) {
  GpuTile t;
  const bool sw = k > 0 && swap_fits_gpu(m, n, k, trans_b);
  // The line tiles from 65×256 (H100, 128 × 11008 × 4096: 0.42 ms against
  // 1.19 on 4×4 blocks).
  if (sw || (m > 64 && n >= 256)) {
    t.tm = t.tn = 8;
    t.vec = 2;
    if (sw) {
      t.sw = 1;
      t.tn = 4;  // 128×64 tiles: A's rows fill the columns
      // Double-buffered where the shared memory holds it (24 KiB, over WebGPU's 16).
      if (line_tile_fits(max_shared_bytes, 16, 4, true)) t.vec = 3;
    }
    if (k > 0) t.ks = gpu_k_split(t, m, n, k, batch);
    return t;
  }
  t.tm = t.tn = m >= 64 && n >= 64 ? 4 : 2;  // smaller blocks keep more workgroups
  return t;
}

bool swap_fits_gpu(int64_t m, int64_t n, int64_t k, bool trans_b) {
  // (H100, 64 × 11008 × 4096: 0.27 ms against 0.42 unswapped.)
  return trans_b && m > 4 && m <= 64 && n >= 1024 && k >= 256;
}

int gpu_k_split(const GpuTile& t, int64_t m, int64_t n, int64_t k, int64_t batch) {
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t rows = t.sw ? n : m, cols = t.sw ? m : n;
  const int64_t tiles = cdiv(rows, 16 * t.tm) * cdiv(cols, 16 * t.tn) * batch;
  if (m * n > int64_t(65535) * 256) return 1;  // past what the split's sum kernel covers
  // (H100 1024³: 0.134 ms unsplit, 0.080 in 2.)
  return gpu_k_split_for(tiles, k, 512);
}

int gpu_k_split_for(int64_t tiles, int64_t k, int64_t min_k) {
  int ks = 1;
  while (ks < 8 && tiles * ks < kGpuGroupsWanted && k / (2 * ks) >= min_k) ks *= 2;
  return ks;
}

// ---------------------------------------------------------------------------
// matmul: the tile blockings of its forms.

namespace matmul {

namespace {

// The workgroups of a tile variant over `blocks` row blocks in groups of mc
// and `panels` in groups of nc.
int64_t tile_groups(int64_t blocks, int64_t mc, int64_t panels, int64_t nc, int64_t batch) {
  return int64_t(groups_for(blocks, mc)) * groups_for(panels, nc) * batch;
}
// At least 4 workgroups per thread where the product has them.
int64_t tile_groups_wanted(const TargetCaps& caps) { return 4 * std::max<uint32_t>(caps.threads, 1); }

}  // namespace

// mc row blocks of 32 (A from L2) per B panel of 32 columns, nc panels per
// workgroup, with at least 4 workgroups per thread where the product has
// them; K past 4096 in slices of 2048 (kc) so the operands stay in L2.
// Intel, 2048 × 1024 × 33024: 361 -> 225-238 ms with the slices.
Variant tile_variant(const Shape& s, const TargetCaps& caps) {
  const int64_t mb = tile_blocks(s.m), np = tile_blocks(s.n), want = tile_groups_wanted(caps);
  const int64_t kc = s.k > 4096 ? 2048 : 0, depth = kc ? kc : std::max<int64_t>(s.k, 1);
  int64_t mc = std::max<int64_t>(std::min<int64_t>(mb, 4), std::min<int64_t>(mb, (512 << 10) / (64 * depth)));
  int64_t nc = 4;
  while (nc > 1 && tile_groups(mb, mc, np, nc, s.batch) < want) nc /= 2;
  while (mc > 1 && tile_groups(mb, mc, np, nc, s.batch) < want) mc = (mc + 1) / 2;
  Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc);
  if (kc) v.set("kc", kc);
  return v;
}

// Swapped: 4 B row blocks per workgroup against A's panels within 1 MiB of
// L2 (nc·32 rows × K bf16), B's rows read in place.
Variant tile_swapped_variant(const Shape& s, const TargetCaps& caps) {
  const int64_t mb = tile_blocks(s.n), np = tile_blocks(s.m), want = tile_groups_wanted(caps);
  const int64_t nc = std::clamp<int64_t>(16384 / std::max<int64_t>(s.k, 1), 1, np);
  int64_t mc = 4;
  while (mc > 1 && tile_groups(mb, mc, np, nc, s.batch) < want) mc /= 2;
  return Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("sw", 1);
}

namespace {

// The swapped product's panel width: up to 4 lines of A's rows as they
// come, past that the width of 4, 3 or 5 lines (mr 5) that pads Cᵀ's
// columns least, in that order on ties, since padding is wasted work.
int swap_panel_lines(int lines, const TargetCaps& caps) {
  if (lines <= 4) return lines;
  int best = 4;
  auto padded = [&](int nl) { return (lines + nl - 1) / nl * nl; };
  for (int nl : {3, 5})
    if (padded(nl) < padded(best) && gemm_block_fits(nl == 5 ? 5 : 6, nl, caps)) best = nl;
  return best;
}

// The share of the swapped product's Cᵀ columns that are A's rows (the
// rest pads the panels of swap_panel_lines).
double swap_fill(const Shape& s, const TargetCaps& caps) {
  const int lines = int(swap_cols(s) / 16), nl = swap_panel_lines(lines, caps);
  return double(s.m) / double(16 * ((lines + nl - 1) / nl * nl));
}

}  // namespace

// K×N (B read column-major, one line per k shared by the block's rows): more
// rows of B per block use more of each line, so 16 rows for one line of A's
// rows, 14 for two, 8 for three. Bᵀ: groups of 6 rows of B, 5 where f16/bf16
// widening needs registers for the widened lines; more lost at every width.
// Zen 5, 64 × 11008 × 4096 f16: mr 4 / 5 / 6 38.2 / 25.0 / 29.0 ms.
GemmTile swap_tile(const Shape& s, const TargetCaps& caps) {
  const int lines = int(swap_cols(s) / 16);
  GemmTile t;
  t.nl = swap_panel_lines(lines, caps);
  if (!s.trans_b) {
    t.mr = t.nl == 1 ? 16 : t.nl == 2 ? 14 : t.nl == 3 ? 8 : 6;
    while (t.mr > 1 && !gemm_block_fits(t.mr, t.nl, caps)) --t.mr;
    t.ak = 2;
    t.kc = s.k > 1024 ? (t.nl <= 2 ? 1024 : 512) : 0;
    t.mc = t.nl <= 2 ? 16 : 32;
    t.nc = int((swap_cols(s) + 16 * t.nl - 1) / (16 * t.nl));
    return t;
  }
  t.bf2 = caps.bf16_dot && pairs_fit(s);
  const bool widened = s.dt != ScalarKind::F32 && !t.bf2;
  t.mr = widened ? 5 : 6;
  while (t.mr > 1 && !gemm_block_fits(t.mr, t.nl, caps)) --t.mr;
  t.ak = 1;
  t.apf = 1;
  const int64_t k = t.bf2 ? s.k / 2 : s.k;
  t.kc = k > 1024 ? (t.bf2 ? 512 : 1024) : 0;
  t.mc = 16;
  t.nc = int((swap_cols(s) + 16 * t.nl - 1) / (16 * t.nl));  // all of Cᵀ's columns
  return t;
}

// ---------------------------------------------------------------------------
// matmul: the rules.

namespace {

Variant gemv(int64_t rows) { return Variant{}.set("impl", kGemv).set("rows", rows); }
Variant gemv_prefetched(int64_t rows) { return gemv(rows).set("pf", 1); }

// GPUs: up to 8 rows of Bᵀ the GEMV, which reads B once, else the tiles.
// H100, 8 × 11008 × 4096: 0.16 ms with wg 256, the swapped line tiles 0.25.
Variant gpu_choice(const Shape& s, const TargetCaps& caps) {
  if (s.trans_b && s.m <= kGpuGemvMaxM)
    return Variant{}.set("impl", kGpuGemv).set("wg", s.m > kGemvMaxM ? 256 : s.k >= 2048 ? 128 : 64);
  return gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, s.trans_b, s.batch, caps.max_shared_bytes)).set("impl", kGpu);
}

// Rule: thin f32 products (K ≤ 12, N ≤ 16) put rows in lanes, where the
// packed GEMM spends a register block and its packing on a sliver.
// Zen 5, 100000 × 3 × 3: 11 -> 105 GB/s.
bool rows_in_lanes_pay(const Shape& s) { return narrow_fits(s) && s.k <= 12 && s.m >= 64; }

// Rule: prec 1|2 (and f16) as bf16 terms on a matrix engine where the
// product is compute-bound: the split costs ~10 bytes of traffic per element
// of A and B, the product saves 2·(the other side's rows) fmas per element,
// so the harmonic mean of M and N decides.
// Intel, 1024 × 4096² f32: 223 ms -> 60.1 at prec 2.
bool terms_pay(const Shape& s) {
  const double h = 2.0 * double(s.m) * double(s.n) / double(s.m + s.n);
  const double bytes = double(ir::Type(s.dt).bytes()) * double(s.batch) * double(s.k) * double(s.m + s.n);
  if (terms_f16(s)) {
    if (s.prec) return h >= (s.prec == 2 ? 96 : 256);
    return h >= 256 && bytes <= 16.0 * 1048576.0;
  }
  if (terms_b_bf16(s)) return h >= (s.prec == 2 ? 24 : 48);
  if (s.prec == 2) return h >= 96;
  return h >= 1024 || (h >= 192 && bytes <= 32.0 * 1048576.0);
}

// Rule: bf16 Bᵀ with 4-512 rows of A on a matrix engine: the swapped tiles,
// which read B's rows in place where the plain form packs all of B per call.
// Intel, 64 × 4096²: 351 -> 934 GFLOP/s.
bool tiles_swapped_pay(const Shape& s, const TargetCaps& caps) { return tile_fits(s, caps) && tile_swap_fits(s); }

// Rule: K×N with 5-32 rows of A where the hardware does not prefetch a
// column walk (the swapped form's, and the packed GEMM's packing of B's
// strided rows): the K-split GEMV reads B's rows whole into partial rows in
// L2, lines in pairs (lb 2) from 16 rows or for 16-bit B; with B cached only
// to 16 rows, and bf16 past 16 rows stays on the matrix tiles.
// Intel, 16 × 11008 × 4096 f32: 79.7 ms swapped -> 19.4.
bool kn_split_gemv_beats_column_walks(const Shape& s, const TargetCaps& caps) {
  return !s.trans_b && caps.vector_bits >= 512 && !caps.cpu.strided_prefetch && s.m > kGemvMaxM && kn_split_fits(s) &&
         s.k >= 256 && (!b_cached(s) || s.m <= 16) && !(tile_fits(s, caps) && s.m > 16);
}
Variant kn_split_gemv_in_line_pairs(const Shape& s) {
  Variant v = Variant{}.set("impl", kGemvKSplit).set("ks", 8).set("kr", 8);
  if (s.m >= 16 || s.dt != ScalarKind::F32) v.set("lb", 2);
  return v;
}

// Rule: bf16 from 16 rows of A on a matrix engine: the tiles (16-row tiles).
bool tiles_pay(const Shape& s, const TargetCaps& caps) { return tile_fits(s, caps) && s.m >= 16; }

// The swapped product only where its panels are filled: with B in the cache
// (≤ 32 MiB) panels padding A's rows by 5% or more lose to the packed GEMM.
bool swap_panels_filled(const Shape& s, const TargetCaps& caps) { return !(b_cached(s) && swap_fill(s, caps) < 0.95); }

// Rule: Bᵀ with 9-256 rows of A on AVX-512 (bf16 on pairs from 13, f16
// widened from 33: their GEMVs hold up longer), where B has over 4× A's
// rows: the swapped product, which reads B's rows in place where the packed
// GEMM transposes all of B into panels.
// Zen 5, 64 × 11008 × 4096 f32: 35.4 ms packed -> 23.5.
bool bt_swap_pays(const Shape& s, const TargetCaps& caps) {
  const int64_t swap_from = s.dt == ScalarKind::F32 ? 8 : caps.bf16_dot && pairs_fit(s) ? 12 : 32;
  return s.trans_b && swap_fits(s) && caps.vector_bits >= 512 && s.m > swap_from && s.m <= 256 && s.n > 4 * s.m &&
         swap_panels_filled(s, caps);
}

// Rule: f32 K×N past the K×N GEMV's 4 rows on AVX-512: the swapped product,
// to 48 rows, and to 128 where B (≥ 64 MiB) streams from DRAM (with B in the
// cache the packed GEMM's reuse wins from 4 lines of A's rows); only where
// the column walk is prefetched or B is cached.
// Zen 5, 16 × 11008 × 4096: 15.9 ms packed -> 10.8.
bool kn_swap_pays(const Shape& s, const TargetCaps& caps) {
  const bool rows_fit = s.m <= 48 || (s.m <= 128 && s.n * s.k >= (int64_t(16) << 20));
  return !s.trans_b && swap_fits(s) && caps.vector_bits >= 512 && s.m > kGemvMaxM && rows_fit && s.n > 4 * s.m &&
         s.k >= 256 && swap_panels_filled(s, caps) && (caps.cpu.strided_prefetch || b_cached(s));
}

// The K-split GEMV over a K×N B: rows of B per pass over the partial rows
// (kr) 8, which saves partial loads and stores; 2 on AVX2, whose 16
// registers hold fewer of A's broadcasts, and for one f32 row on Intel,
// whose prefetchers follow 2 streams of B's rows better than 8.
// Zen 5, 2 × 4096²: 3.78 ms with kr 1 -> 2.15 with kr 4.
Variant kn_split_gemv(const Shape& s, const TargetCaps& caps) {
  const int kr = caps.vector_bits < 512 || (s.m == 1 && s.dt == ScalarKind::F32 && intel_rules(caps)) ? 2 : 8;
  return Variant{}.set("impl", kGemvKSplit).set("ks", 16).set("kr", kr);
}

// Rule: K×N with K or N off whole lines (the GEMVs need them) and up to 4
// rows of A: the K-split GEMV, any K, any N with a masked last line per row.
// Rows off whole lines come from aligned lines shifted by a byte permute on
// Zen, where unaligned DRAM loads split cache lines; Intel's unaligned loads
// are faster than the permutes.
// Zen 5, 1 × 50257 × 768 (GPT-2's vocabulary): 8.7 ms packed -> 5.4.
bool kn_split_gemv_off_lines(const Shape& s) {
  return !gemv_fits(s) && kn_split_fits(s) && s.m <= kGemvMaxM && s.n * s.k >= (int64_t(1) << 16);
}
Variant kn_split_gemv_off_lines_variant(const Shape& s, const TargetCaps& caps) {
  Variant v = kn_split_gemv(s, caps);
  if (kn_split_shift_fits(s, caps) && zen_avx512(caps)) v.set("sh", 1);
  return v;
}

// Rule: the GEMV up to 4 rows of A, and over Bᵀ up to 32 on AVX-512, where
// the packed GEMM spends its time packing B (AVX2's 16 registers would
// spill the GEMV's accumulators past 4 rows).
// Zen 5, 8 × 11008 × 4096 f32: 18.1 ms packed -> 7.3-9.7.
bool gemv_pays(const Shape& s, const TargetCaps& caps) {
  return gemv_fits(s) && (s.m <= kGemvMaxM || (s.trans_b && caps.vector_bits >= 512 && s.m <= 32));
}

// Past 8 rows of A: A's rows in groups of 4 per pass over 4 rows of B (bf16
// on pairs where the host has them).
Variant grouped_rows_gemv(const Shape& s, const TargetCaps& caps) {
  Variant v = gemv_prefetched(4).set("mg", 4);
  if (caps.bf16_dot && gemv_pairs_fit(s)) v.set("bf2", 1);
  return v;
}

// f16/bf16 Bᵀ rows (weights N×K) on AVX-512, up to 8 rows of A.
Variant half_weights_gemv(const Shape& s, const TargetCaps& caps) {
  // bf16 pairs where the host has them, up to 2 rows of A (half the conversions).
  if (s.m <= 2 && caps.bf16_dot && gemv_pairs_fit(s)) return gemv_prefetched(1).set("bf2", 1);
  // One row of A on Intel: rows of B of 16 KiB or more 4 per work-item, of
  // 8 KiB 2, shorter ones 1, so enough streams are in flight.
  // Intel, 1 × 1024 × 11008 f32 A: 1.39 ms against 2.53 with K in parts.
  if (s.m == 1 && intel_rules(caps)) {
    const int64_t row_bytes = s.k * 2;
    return gemv_prefetched(row_bytes >= (16 << 10) ? 4 : row_bytes >= (8 << 10) ? 2 : 1);
  }
  // One f32 row of A (a_f32) too long to stay in L1 beside B's rows: 1
  // thread K in two parts, more threads 8 rows of B per pass over A.
  if (s.m == 1 && s.at == ScalarKind::F32 && s.k * 4 >= (int64_t(32) << 10)) {
    if (caps.threads == 1 && !gemv_tail(s)) return gemv_prefetched(1).set("kp", 2);
    return gemv(8);
  }
  // More rows of B per work-item as A has more rows; 3-4 rows of A on Intel 4.
  const bool four = s.m >= 3 && intel_rules(caps);
  return gemv_prefetched(s.m == 1 ? 1 : four ? 4 : 2);
}

// K in parts (kp) whose slice of A and the work-item's two rows' slices of
// B fit in L1 ((M + 2)·(K / kp)·4 ≤ 40 KiB of Zen 5's 48, parts of ≥ 1024
// k), so A stays in L1 while B streams; 0 where no such split exists.
int l1_k_parts(const Shape& s) {
  int kp = 1;
  while (kp < 16 && (s.m + 2) * (s.k / kp) * 4 > 40 * 1024) kp *= 2;
  // (5-8 rows with the whole of K in L1 keep 4 rows of B per work-item.)
  return kp > 1 && s.k / kp >= 1024 && !gemv_tail(s) ? kp : 0;
}

// f32 Bᵀ rows on AVX-512, up to 8 rows of A: as many rows of B per
// work-item as keep enough streams in flight for the host's prefetchers.
Variant f32_weights_gemv(const Shape& s, const TargetCaps& caps) {
  // Two rows of A on Intel, rows of 4096 k or more: 2 rows of B, the next prefetched.
  if (s.m == 2 && s.k >= 4096 && intel_rules(caps)) return gemv_prefetched(2);
  // 1-2 rows of A, rows of 4096 k or more: 4 rows of B, no software
  // prefetch (the hardware prefetchers have lines enough to follow).
  // Zen 5, 1 × 4096²: 1.61 ms (41.8 GB/s, a plain read 41.5).
  if (s.m <= 2 && s.k >= 4096) return gemv(4);
  // One row of A on Intel: two rows of B, the next pair prefetched.
  // Intel, 1 × 8192 × 2048: 4.22 ms against 5.61 for one row.
  if (s.m == 1 && intel_rules(caps)) return gemv_prefetched(2);
  // One row of A on Zen 4 (zmm in halves): 8 rows of B, the next prefetched.
  // Zen 4, 1 × 11008 × 1024: 2.01 ms against 2.43 for one row.
  if (s.m == 1 && zen4(caps)) return gemv_prefetched(8);
  // Shorter rows (fewer lines for the hardware prefetcher) one at a time, the next prefetched.
  if (s.m <= 2) return gemv_prefetched(1);
  if (s.m <= 4) return gemv_prefetched(4);
  // 5-8 rows of A on Zen: K in parts that keep A in L1 (Intel: 4 rows of B
  // prefetched over all of K was faster).
  // Zen 5, 8 × 4096²: 3.68 ms -> 2.52 with kp 4.
  if (s.m >= 5 && s.m <= 8 && zen_avx512(caps))
    if (const int kp = l1_k_parts(s)) return gemv_prefetched(2).set("kp", kp);
  return gemv_prefetched(4);
}

// The GEMV's form for the rows gemv_pays takes.
Variant gemv_choice(const Shape& s, const TargetCaps& caps) {
  if (s.m > 8) return grouped_rows_gemv(s, caps);
  const bool wide_bt = s.trans_b && caps.vector_bits >= 512;
  if (wide_bt && s.dt != ScalarKind::F32) return half_weights_gemv(s, caps);
  if (wide_bt) return f32_weights_gemv(s, caps);
  // K×N: one work-item per 1/16 of K, reading its rows of B whole (the
  // column strips of a row-wise GEMV read 256 bytes of each 16 KiB row).
  // Zen 5, 1 × 4096² f32: 3.9 ms -> 1.76.
  if (!s.trans_b) return kn_split_gemv(s, caps);
  return gemv(4);
}

// The K split of the packed GEMM: enough splits for ~8 workgroups when the
// M×N blocks are fewer than 4, each split still >= 512 long.
int default_ksplit(const Shape& s, const GemmTile& t) {
  const int64_t blocks = gemm_blocks(s, t);
  int ks = 1;
  if (blocks < 4)
    while (ks < 8 && blocks * ks * 2 <= 8 && s.k / (ks * 2) >= 512) ks *= 2;
  return ks;
}

// The packed GEMM's blocking on AVX-512, given the row panels mp and
// column panels of the product and the A size that stays in the LLC.
void avx512_row_groups(GemmTile& t, const Shape& g, bool pairs, int64_t mp, int64_t panels, int64_t a_max) {
  // An A within half the LLC: one row group over all of M and one B panel
  // per workgroup, so each panel is packed once and used from L2 by every A
  // panel streaming from the LLC; with all of K in one pass A is read as it
  // is (its MR rows the broadcast streams).
  // Zen 5, 512 × 4096 × 4096: 82-83 ms -> 71-73.
  if (t.ks == 1 && g.m * g.k * 4 <= a_max && panels >= 8 && (mp > t.mc || t.kc)) {
    t.mc = int(mp);
    t.nc = 1;
    t.gm = 0;
    if (t.kc == 0 && (g.at == ScalarKind::F32 || pairs)) t.ak = 1;
  } else if (t.ak == 16 && (g.at == ScalarKind::F32 || pairs)) {
    // Row groups of mc panels: A read as it is too, since a packing launch
    // (a pass over all of A) pays only where each panel serves many B panels.
    // Zen 5, 4096 × 96 × 1024: 4.2 ms -> 3.2.
    t.ak = 1;
  }
}

// The packed GEMM's blocking on AVX2: 24 row panels per workgroup against 8
// B panels, the next B panel prefetched (bpf) since the prefetchers left its
// first passes streaming; A read as it is where few B panels share it; one
// row group packing its own B panels where A stays within an eighth of the LLC.
// Zen 3, 2048³: 263 ms -> 242 with bpf.
void avx2_row_groups(GemmTile& t, const Shape& g, int64_t mp, int64_t panels, int64_t a_max) {
  t.mc = 24;
  t.nc = 8;
  t.bpf = 1;
  if (g.at == ScalarKind::F32 && panels <= 16) t.ak = 1;
  GemmTile one = t;
  one.mc = int(mp), one.nc = 1, one.pb = 1, one.ak = g.at == ScalarKind::F32 ? 1 : 16;
  if (t.kc == 0 && panels >= 8 && g.m * g.k * 4 <= a_max / 4 && pb_fits(g, one)) t = one;
}

// A K×N B beyond the cache, packed in the kernel where the prefetchers do
// not follow its strided rows: the next panel slice's rows prefetched into
// L2 during this one's arithmetic (bpf), four panels per workgroup so that
// the slices prefetched one after the other are neighbours in B's rows;
// not where the row stride crowds the slice into a few L2 sets.
// Intel, 64 × 11008 × 4096: 100-107 -> 135-138 GFLOP/s.
void prefetch_strided_b_rows(GemmTile& t, const Shape& s, const TargetCaps& caps, int64_t mp, int64_t panels) {
  const int64_t row_bytes = s.n * int64_t(ir::Type(s.dt).bytes());
  if (t.pb && !s.trans_b && !b_cached(s) && !caps.cpu.strided_prefetch && (t.ak == 1 || t.ak == 16) && mp <= 64 &&
      (row_bytes & -row_bytes) <= 2048) {
    t.bpf = 1;
    if (panels >= 64) t.nc = 4;
  }
}

// Rule (the rest): the packed GEMM, on bf16 pairs where the host has
// vdpbf16ps (the same blocking over K/2 pair steps).
GemmTile packed_gemm_tile(const Shape& s, const TargetCaps& caps) {
  const bool pairs = caps.bf16_dot && pairs_fit(s);
  const Shape g = pairs ? pair_shape(s) : s;  // what the macro-kernel steps over
  const bool wide = gemm_wide_registers(caps);
  GemmTile t = default_cpu_tile(g.m, g.n, g.k, caps, !pairs);
  t.bf2 = pairs;
  t.ks = default_ksplit(g, t);
  // Square-ish products on AVX-512 (8×8 panels): the M blocks walked
  // fastest, so consecutive workgroups share the larger B block.
  if (wide && t.mc == 8 && t.nc == 8) t.gm = 1;
  const int64_t mp = (g.m + t.mr - 1) / t.mr, panels = (g.n + t.nr() - 1) / t.nr();
  const int64_t a_max = caps.llc_bytes ? int64_t(caps.llc_bytes / 2) : int64_t(16) << 20;
  if (wide) avx512_row_groups(t, g, pairs, mp, panels, a_max);
  // One row group over all of M: each B panel has this workgroup as its only
  // user, so it packs the panel itself (pb) instead of a packing launch
  // writing all of B out and the product reading it back.
  // Zen 5, 64 × 4096² Bᵀ: 17.5 ms -> 12.1.
  if (wide && pb_fits(g, t)) t.pb = 1;
  if (!wide && t.ak == 16 && t.ks == 1 && !pairs) avx2_row_groups(t, g, mp, panels, a_max);
  prefetch_strided_b_rows(t, s, caps, mp, panels);
  return t;
}

}  // namespace

}  // namespace matmul

Variant matmul_heuristic(const Problem& p, const TargetCaps& caps) {
  using namespace matmul;
  const Shape s = shape_of(p);
  if (!is_cpu(caps)) return gpu_choice(s, caps);
  if (rows_in_lanes_pay(s)) return Variant{}.set("impl", kNarrow);
  if (terms_fits(s, caps) && terms_pay(s)) return Variant{}.set("impl", kTerms);
  if (tiles_swapped_pay(s, caps)) return tile_swapped_variant(s, caps);
  if (kn_split_gemv_beats_column_walks(s, caps)) return kn_split_gemv_in_line_pairs(s);
  if (tiles_pay(s, caps)) return tile_variant(s, caps);
  if (bt_swap_pays(s, caps) || kn_swap_pays(s, caps)) return variant_of(swap_tile(s, caps)).set("impl", kSwap);
  if (kn_split_gemv_off_lines(s)) return kn_split_gemv_off_lines_variant(s, caps);
  if (gemv_pays(s, caps)) return gemv_choice(s, caps);
  return variant_of(packed_gemm_tile(s, caps)).set("impl", kGemm);
}

// ---------------------------------------------------------------------------
// gated_mlp.

namespace {

// Row panels per workgroup of the fused [G;U] GEMM: as many as keep the A
// block (mc·mr rows of X, all of D) within 768 KiB, so L2 holds it beside
// the 256 KiB [G;U] panel; one row group for all tokens where X fits a
// quarter of the LLC, so each [G;U] panel streams from DRAM once.
// Zen 5, 256 × 1024 × 11008: 125 ms with 8 × 8 panels -> 108.
int fused_row_panels(const Problem& p, const TargetCaps& caps, int mr, int64_t dk) {
  int mc = 8;
  for (int c : {32, 16})
    if (double(c) * mr * double(dk) * 4 <= 768.0 * 1024) {
      mc = c;
      break;
    }
  const int64_t mp = (p.dim(0) + mr - 1) / mr;
  const double a_max = caps.llc_bytes ? double(caps.llc_bytes) / 4 : 8.0 * (1 << 20);
  if (mp > mc && double(p.dim(0)) * double(dk) * 4 <= a_max) mc = int(mp);
  return mc;
}

// The fused GEMM's tile: the first even-lined register block, bf16 pairs
// where the host has vdpbf16ps, the next [G;U] and X panels prefetched
// (bpf, apf), and with one row group the [G;U] and Dn panels packed inside
// the GEMMs that use them (pb).
// Zen 5, 256 × 1024 × 11008: 87-91 ms -> 78-85 with pb.
GemmTile fused_tile(const Problem& p, const TargetCaps& caps) {
  const auto [mr, nl] = gated_mlp::fused_blocks(caps).front();
  const bool pairs = caps.bf16_dot && gated_mlp::pairs_fit(p);
  const int64_t dk = pairs ? p.dim(1) / 2 : p.dim(1);  // the [G;U] GEMM's k steps
  const int mc = fused_row_panels(p, caps, mr, dk);
  GemmTile t{mr, nl, 0, mc, 16, 16};
  t.bf2 = pairs;
  t.bpf = 1;
  t.apf = 1;
  const int64_t mp = (p.dim(0) + mr - 1) / mr;
  if (mc >= mp && pb_scratch_fits(t, dk)) t.pb = 1;
  return t;
}

}  // namespace

Variant gated_mlp_heuristic(const Problem& p, const TargetCaps& caps) {
  using namespace gated_mlp;
  // GPUs: the three products as the matmul op runs them (each its own tile,
  // K split or swapped form; the GEMV for few tokens).
  if (!is_cpu(caps)) return Variant{}.set("impl", kComposed);
  // f32 at prec 1|2 on matrix tiles as bf16 terms, from as many tokens as
  // pay back the split of the weights on each call.
  // Intel, 1024 × 1024 × 11008: 460 ms -> 155 at prec 2.
  if (terms_fit(p, caps) && p.dim(0) >= (p.attr("prec", 0) == 1 ? 640 : 64)) return Variant{}.set("impl", kTerms);
  // bf16 on matrix tiles: the three products as the matmul op runs them (on tiles from 16 tokens).
  if (caps.matrix_tiles && pairs_fit(p)) return Variant{}.set("impl", kComposed);
  // Few tokens (f32 to 128, f16/bf16 to 64): the three products as the
  // matmul op runs them (GEMVs, the swapped product), which read the weights
  // in place where the fused GEMMs pack them.
  // Zen 5, 1 × 1024 × 11008 f32: 11.2 ms fused -> 3.6.
  const int64_t composed_max = p.dtype == ir::ScalarKind::F32 ? 128 : 64;
  if (p.dim(0) <= composed_max) return Variant{}.set("impl", kComposed);
  // AVX2 fits only a 2-row fused block: the matmul op's own blocking wins.
  // Zen 3, 256 × 1024 × 11008: 295 ms fused -> 248.
  if (caps.vector_bits < 512) return Variant{}.set("impl", kComposed);
  return variant_of(fused_tile(p, caps)).set("impl", kFused);
}

}  // namespace kgen::ops
