// The "matmul" op: C (batch × M × N, f32) = A (batch × M × K) · B (batch × K
// × N, or batch × N × K with trans_b=1, the LLM weight layout), inputs f32,
// f16 or bf16, accumulation in f32.
//
// Variants (param "impl"):
//   0 gemm: pack A and B, then the register-blocked CPU macro-kernel
//           (mr, nl, kc, mc, nc: see GemmTile)
//   1 gemv: M <= 4 rows straight from the unpacked B (rows = outputs per
//           work-item); trans_b needs K % 16 == 0, else N % 16 and K % 16 == 0
//   2 gpu:  shared-memory tiles (wg, tm, tn, tk: see GpuTile)
//   3 gpu gemv: M <= 4 with trans_b, a workgroup of wg per output column
//           (ops/gemv_gpu.cpp); the GPU default there
//   4 K-split gemv: K×N B, M <= 4 (ks splits, then a sum)
//   5 swapped: trans_b, Cᵀ = B·Aᵀ on the gemm macro-kernel with B's rows read
//           in place and A packed (mr, nl, kc, mc), then Cᵀ transposed
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "ops/bf16_terms.h"
#include "ops/fusion.h"
#include "ops/line_tile_gemm.h"
#include "ops/matmul.h"
#include "ops/matmul_narrow.h"
#include "ops/matmul_plan.h"
#include "ops/op.h"
#include "ops/transpose.h"
#include "ops/widen.h"

namespace kgen::ops {

namespace {

enum Impl : int64_t { kGemm = 0, kGemv = 1, kGpu = 2, kGpuGemv = 3, kGemvKSplit = 4, kSwap = 5, kNarrow = 6, kTile = 7, kTerms = 8 };
constexpr int kGemvMaxM = 4;
// The GPU GEMV (gemv_gpu_kernel) takes up to 8 rows of A.
constexpr int kGpuGemvMaxM = 8;
// The CPU GEMV over Bᵀ rows takes up to 64 rows of A, above 8 in groups of
// mg rows per pass over the work-item's rows of B (its accumulators stay in
// registers). For few rows the packed GEMM spent its time packing B (a
// transpose of all of it): Zen 5, 1 thread, M × 11008 × 4096 Bᵀ, GEMM ->
// GEMV: f32 M = 5 15.7 -> 5.5-6.3 ms, 8 18.1 -> 7.3-9.7, 16 17.3 -> 12.9-13.8
// (mg = 4), 32 21.9 -> 20.2; bf16 M = 8 7.9 -> 4.2, 16 8.7-9.4 -> 6.5 (mg
// = 4, pairs), 32 11.5 -> 10.1. The heuristic takes it on AVX-512 up to 32.
constexpr int kGemvMaxRowsT = 64;
constexpr int kGemvMaxRowsHeuristic = 32;

struct Shape {
  int64_t m, n, k, batch;
  bool trans_b;
  ir::Type dt;  // B's element type (and A's, unless a_f32)
  ir::Type at;  // A's: f32 with a_f32=1 (f32 activations against f16/bf16 weights)
  int64_t prec;  // f32 products: 0 IEEE, 1 as three bf16 products, 2 as one (bf16_terms.h)
};
Shape shape_of(const Problem& p) {
  const ir::Type dt(p.dtype);
  return {p.dim(0), p.dim(1), p.dim(2), p.attr("batch", 1), p.attr("trans_b", 0) != 0, dt,
          p.attr("a_f32", 0) ? ir::Type(ir::ScalarKind::F32) : dt, p.attr("prec", 0)};
}

// bf16 inputs with an even K can run the GEMM on pairs of k (GemmTile::bf2):
// one dot2_bf16 (vdpbf16ps) per line and pair does two fmas' work. The
// pair kernels see K/2 steps of u32 words (A's rows, and Bᵀ's, are read as
// words; a K×N B as u16 rows joined in pairs).
bool pairs_fit(const Shape& s) { return s.dt == ir::ScalarKind::BF16 && s.at == ir::ScalarKind::BF16 && s.k % 2 == 0; }
Shape pair_shape(Shape s) {
  s.k /= 2;
  s.dt = s.at = ir::Type(ir::ScalarKind::U32);
  return s;
}
// B's element type as the pair kernels read it.
ir::Type pair_b_type(const Shape& s) { return ir::Type(s.trans_b ? ir::ScalarKind::U32 : ir::ScalarKind::U16); }

// The GEMV on bf16 pairs: Bᵀ rows of whole 32-element lines.
bool gemv_pairs_fit(const Shape& s) { return pairs_fit(s) && s.trans_b && s.k % 32 == 0; }

// Bᵀ takes any K from 16 (K % 16 != 0: a masked last line per row, no K
// parts; Zen 5, 1 thread, against the packed GEMM it fell to: f32
// 1×4096×4095 4.0 -> 1.29 ms (4096 k: 1.30), bf16 8.4 -> 0.92 (pairs at
// 4096 k: 0.63), 1×11008×4095 4.2 (4096 k: 4.4)); a K×N B whole lines of N
// and K.
bool gemv_fits(const Shape& s) {
  if (s.m > (s.trans_b ? kGemvMaxRowsT : kGemvMaxM)) return false;
  return s.trans_b ? s.k >= 16 : (s.n % 16 == 0 && s.k % 16 == 0);
}
bool gemv_tail(const Shape& s) { return s.trans_b && s.k % 16 != 0; }

// The K-split GEMV over a K×N B takes any K, and any N from 16 (a masked
// last line per row where N % 16 != 0: a vocabulary of 50257 columns).
// Up to 32 rows of A: its partial rows (M × N per split) stay in L2 that far.
constexpr int kKnSplitMaxM = 32;
bool kn_split_fits(const Shape& s) { return !s.trans_b && s.m <= kKnSplitMaxM && s.n >= 16; }
// B small enough to stay in the cache between calls (32 MiB).
bool b_cached(const Shape& s) { return double(s.n) * double(s.k) * double(ir::Type(s.dt).bytes()) <= 32.0 * 1048576.0; }
// ... with B's unaligned f32 rows read as shifted aligned lines (sh=1),
// where a runtime 64-byte byte permute is one instruction.
bool kn_split_shift_fits(const Shape& s, const TargetCaps& caps) {
  return kn_split_fits(s) && s.n % 16 != 0 && s.dt == ir::ScalarKind::F32 && caps.byte_lookup;
}

// The bf16 GEMM on a matrix engine (impl 7, gemm_tile_kernel): bf16 A and
// B, an even K, a CPU with matrix tiles (AMX-BF16).
bool tile_fits(const Shape& s, const TargetCaps& caps) { return is_cpu(caps) && caps.matrix_tiles && pairs_fit(s); }
// 32-row (column) blocks of x rows (columns); the workgroups of a tile
// variant over `blocks` row blocks in groups of mc and `panels` in groups of nc.
int64_t tile_blocks(int64_t x) { return groups_for(x, 32); }
int64_t tile_groups(int64_t blocks, int64_t mc, int64_t panels, int64_t nc, int64_t batch) {
  return int64_t(groups_for(blocks, mc)) * groups_for(panels, nc) * batch;
}
// At least 4 workgroups per thread where the product has them.
int64_t tile_groups_wanted(const TargetCaps& caps) { return 4 * std::max<uint32_t>(caps.threads, 1); }
// Its blocking: mc row blocks of 32 (A: mc·32 rows × K bf16, from L2) per
// B panel of 32 columns (K/2 × 128 bytes), nc panels per workgroup, with
// at least 4 workgroups per thread where the product has them.
// K past 4096 in slices of 2048 (kc), 4 row blocks per slice: the Granite
// Rapids VM, 1 thread, 2048 × 1024 × 33024 (the gated MLP's down product on
// bf16 terms) 361 -> 225-238 ms (slices of 1024, 8 blocks: 221-224), 2048 ×
// 2048 × 6144 (2048³ f32 at prec 1) mc 4 67 -> 63 (1024, 8 blocks: 79); at
// least 4 row blocks to 4096 deep (2048 × 11008 × 3072: mc 2 220-300 ms, 4
// 185, 8 190; 2048³: 4 845-859 GFLOP/s, 8 793-813).
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
// Bᵀ with 4-512 rows of A: the swapped form (sw=1), B's rows read in place
// where the plain form packs all of B per call. 4 B row blocks per
// workgroup against A's panels within 1 MiB of L2 (nc·32 rows × K bf16).
// Granite Rapids VM, 1 thread, bf16 GFLOP/s plain -> swapped (the GEMV
// below 16 rows): 256×11008×1024 534 -> 878, 256×1024×11008 502 -> 635,
// 512×4096×4096 576 -> 648, 64×4096×4096 351 -> 934, 16 × 4096² 121 -> 394
// (GEMV 94), 8 × 4096² 205 (GEMV 97), 4 × 4096² 102 (GEMV 89); 1024³ 916 ->
// 760 and 2048×11008×1024 667 -> 566, so not past 512.
bool tile_swap_fits(const Shape& s) { return s.trans_b && s.m >= 4 && s.m <= 512; }
Variant tile_swapped_variant(const Shape& s, const TargetCaps& caps) {
  const int64_t mb = tile_blocks(s.n), np = tile_blocks(s.m), want = tile_groups_wanted(caps);
  const int64_t nc = std::clamp<int64_t>(16384 / std::max<int64_t>(s.k, 1), 1, np);
  int64_t mc = 4;
  while (mc > 1 && tile_groups(mb, mc, np, nc, s.batch) < want) mc /= 2;
  return Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("sw", 1);
}

// f32 products at a reduced precision (prec 1 or 2) on the matrix engine
// (impl 8): A and B split into bf16 terms laid along K (bf16_terms.h), each
// part's K rounded up to even (pair words, zeros past K), then the bf16
// product of depth parts·Kp as the matmul op runs it.
// f32 A against bf16 Bᵀ (a_f32) too: B is exact, so A's [hi | lo] each
// against B's one set of panels (prec 1, each product within 2^-16 of
// itself; gemm_tile_kernel's a_parts) or hi against B.
// f16 A and B at any prec: 4 terms (exact products) at prec 0.
bool terms_b_bf16(const Shape& s) { return s.dt == ir::ScalarKind::BF16; }
bool terms_f16(const Shape& s) { return s.dt == ir::ScalarKind::F16 && s.at == ir::ScalarKind::F16; }
bool terms_fits(const Shape& s, const TargetCaps& caps) {
  if (!is_cpu(caps) || !caps.matrix_tiles) return false;
  if (terms_f16(s)) return true;
  if (s.prec == 0 || s.at != ir::ScalarKind::F32) return false;
  return s.dt == ir::ScalarKind::F32 || (terms_b_bf16(s) && s.trans_b);
}
int terms_parts(const Shape& s) { return terms_f16(s) ? f16_terms_parts(s.prec) : bf16_terms_parts(s.prec, terms_b_bf16(s)); }
int64_t terms_seg(const Shape& s) { return bf16_terms_seg(s.k); }
Problem terms_problem(const Shape& s) {
  Problem q;
  q.op = "matmul";
  q.dims = {s.m, s.n, terms_parts(s) * terms_seg(s)};
  q.dtype = ir::ScalarKind::BF16;
  if (s.trans_b) q.attrs["trans_b"] = 1;
  if (s.batch != 1) q.attrs["batch"] = s.batch;
  return q;
}
// Where the split pays: it costs ~10 bytes of traffic per element of A and
// B (and B's pair panels are packed from the terms), the product saves
// 2·(the other side's rows) fmas per element: the harmonic mean of M and N
// decides. The Granite Rapids VM, 1 thread, ms, f32 -> prec 1 / prec 2,
// Bᵀ: 32 × 4096² 7.5 -> 20.1 / 8.5, 64 × 4096² 15.0 -> 26.8 / 8.8, 128 ×
// 4096² 30.2 -> 38.8 / 11.7, 256 × 4096² 58.9 -> 84.0 / 16.8, 384 × 4096²
// 84.8 -> 87.7 / 23.9, 512 × 4096² 113 -> 112 / 29.6, 1024 × 4096² 223 ->
// 188 / 60.1; cached: 128³ 0.029 -> 0.031 / 0.013, 256³ 0.195 -> 0.169 /
// 0.066, 512³ 1.64 -> 1.43 / 0.68, 2048 × 256 × 256 1.72 -> 1.23 / 0.52,
// 128 × 128 × 1024 0.228 -> 0.266 / 0.098, 4096 × 64 × 1024 3.15 -> 3.53 / 1.69.
// f32 A against bf16 Bᵀ (B written once as the pair panels, which the bf16
// product packs anyway; A's two parts each against them), against the
// widened GEMM or the GEMVs, ms, default -> prec 1 / prec 2: 8 × 4096² 3.8
// -> 9.3 / 4.6-5.2, 16 × 4096² 5.4 -> 6.6-7.4 / 4.6, 32 × 4096² 9.9-11.0 ->
// 10.2 / 4.7-6.8, 48 × 4096² 13.6 -> 9.5 / 6.7, 64 × 4096² 18.3 -> 9.8-11.8
// / 5.3-8.3, 128 × 4096² 35.2 -> 21.4 / 8.5, 256 × 4096² 72.1 -> 34.4-36.4 /
// 11.5 (B's panels twice: 42-43), 1024 × 4096² 217 -> 121 / 36.6, 256 ×
// 1024² 3.1-3.3 -> 1.45 / 0.78-0.81 (two runs where given: the machine
// was loaded unevenly).
// f16 (prec 0: four terms, B' four times B), widened f32 GEMM -> terms, ms,
// 1 thread, Bᵀ / K×N: 1024³ 12.8 -> 8.8 / 12.4 -> 9.5, 2048³ 96.7 -> 82.8 /
// 102 -> 87.4, 4096 × 1024² 53.6 -> 41.1, 2048 × 512² 6.0 -> 4.3, 256³ 0.197
// -> 0.188 / 0.198 -> 0.168, 128³ 0.031 -> 0.037 / 0.031 -> 0.029; where
// B's terms outweigh the products, not: 256 × 4096² 70.8 -> 84.6 / 61.1 ->
// 82.6, 512 × 4096² 106 -> 159, 1024 × 4096² 229 -> 240 (prec 1: 256 ×
// 4096² 57.7, 128 × 4096² 34.6 -> 36.5; prec 2 8.6).
bool terms_pays(const Shape& s) {
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

// The swapped product (impl 5) for Bᵀ with few rows of A and many of B
// (prefill of a short prompt, batched decode): Cᵀ = B·Aᵀ on the GEMM
// macro-kernel. B's rows are its broadcast operand, read where they are (ak
// = 1: each row is a sequential stream), and A, small, is packed as its
// panel operand; the product goes to a scratch Cᵀ (N × Mp, Mp = M rounded up
// to 16 so its rows are whole lines) which a transpose launch turns into C.
// The packed GEMM instead transposes all of B into panels, which for 64 rows
// of A costs about as much as the product itself. f32; f16 and bf16 with
// each broadcast value of B widened, or bf16 on pairs (B's rows as u32 words).
// Bᵀ (B's rows read as A rows, ak = 1), or an f32 K×N B (read column-major,
// ak = 2).
// The rows-in-lanes form (matmul_narrow.h): f32, K and N of at most 16.
bool narrow_fits(const Shape& s) {
  return s.dt == ir::ScalarKind::F32 && s.at == ir::ScalarKind::F32 && s.k <= 16 && s.n <= 16;
}

bool swap_fits(const Shape& s) {
  return s.trans_b || (s.dt == ir::ScalarKind::F32 && s.at == ir::ScalarKind::F32);
}
int64_t swap_cols(const Shape& s) { return (s.m + 15) / 16 * 16; }

// Its default tile: A's rows in panels of up to 4 lines (3 where that packs
// them whole), B's rows in groups of 6 (fewer where the registers hold
// fewer). More rows of B per group lost at every width, most where the
// block nearly fills the registers: Zen 5, 1 thread, M × 11008 × 4096, kc
// 1024: M = 16 (nl 1) mr 4 / 6 / 8 / 12 / 16: 11.2 / 8.8 / 8.8 / 10.2 /
// 11.2 ms; M = 32 (nl 2) mr 6 / 8 / 10 / 12 / 14: 13.1 / 14.4 / 15.9 / 21.4
// / 27.0; M = 48 (nl 3) mr 6 / 8 / 9: 18.3 / 18.6 / 28.7; M = 64 (nl 4) mr
// 5 / 6: 24.2 / 23.5.
// f16 (and bf16 off pairs) widens each 16-step chunk of B's rows into lines
// that clang keeps in registers: groups of 5 rows leave room for them (64 ×
// 11008 × 4096 f16: mr 4 / 5 / 6 38.2 / 25.0 / 29.0 ms).
// K×N (f32, B read column-major, one line per k shared by the block's rows):
// more rows per block use more of each line, so 16 rows (a whole line) for
// one line of A's rows, 14 for two, 8 for three (Zen 5, 1 thread, M × 11008
// × 4096 K×N, the packed GEMM -> swapped: M = 5 12.9 -> 11.8 ms, 8 11.8 ->
// 10.9, 16 15.9 -> 10.8 (mr 12: 13.9), 32 21.8 -> 15.7 (mr 6 / 16: 22.6 /
// 21.1), 48 26.5 -> 19.9 (mr 6: 23.8), 64 33.0 -> 26.4, 128 58.2 -> 52.7,
// 256 107 -> 105; 2 threads M = 16 7.4 -> 6.1, 64 17.1 -> 14.3).
// Past 4 lines, the panel width of 4, 3 or 5 lines (mr 5) that pads Cᵀ's
// columns least, in that order on ties: Zen 5, 1 thread, M × 3072 × 768 Bᵀ,
// nl 4 / 3 / 5: M = 77 (5 lines) 2.51 / 1.89 / 1.56 ms, 105 (7) 2.53 /
// 2.83 / 3.26, 160 (10) 3.80 / 3.78 / 3.16, 176 (11) 3.78 / 3.85 / 4.93,
// 197 (13) 5.07 / 4.79 / 5.04; 77 × 768 × 3072 2.63 / 1.97 / 1.56.
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
  const bool widened = s.dt != ir::ScalarKind::F32 && !t.bf2;
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

void validate(const Problem& p) {
  if (p.dims.size() != 3) throw std::invalid_argument("expected 3 sizes M N K");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && p.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument("dtype must be f32, f16 or bf16");
  int64_t tb = p.attr("trans_b", 0), batch = p.attr("batch", 1), af = p.attr("a_f32", 0);
  if (tb != 0 && tb != 1) throw std::invalid_argument("trans_b must be 0 or 1");
  if (af != 0 && af != 1) throw std::invalid_argument("a_f32 must be 0 or 1");
  if (batch < 1) throw std::invalid_argument("batch must be >= 1");
  for (const auto& [k, v] : p.attrs)
    if (k != "trans_b" && k != "batch" && k != "a_f32" && k != "prec")
      throw std::invalid_argument("unknown attribute '" + k + "' (trans_b, batch, a_f32, prec)");
  const int64_t prec = p.attr("prec", 0);
  if (prec < 0 || prec > 2) throw std::invalid_argument("prec must be 0 (IEEE f32), 1 (bf16x3) or 2 (bf16)");
  if (prec && p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && !af)
    throw std::invalid_argument("prec=1|2 is for f32 or f16 A and B, or f32 A (a_f32=1)");
  // Index arithmetic is u32, packed buffers included (~(M + 16) · (K + 32) · batch).
  const Shape s = shape_of(p);
  // (The swapped product's Cᵀ has rows of M rounded up to 16.)
  double biggest = double(batch) * std::max({double(s.m + 16) * double(s.k), double(s.n + 64) * double(s.k),
                                             double(s.m + 16) * double(s.n)});
  if (biggest >= 4294967295.0) throw std::invalid_argument("too large for 32-bit indexing");
}

// Workgroups of the CPU GEMM's M×N blocking (over the whole batch).
int64_t gemm_blocks(const Shape& s, const GemmTile& t) {
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  return cdiv(cdiv(s.n, t.nr()), t.nc) * cdiv(cdiv(s.m, t.mr), t.mc) * s.batch;
}

// The K split the heuristic takes: enough splits for ~8 workgroups when the
// M×N blocks are fewer than 4, each split still >= 512 long.
int default_ksplit(const Shape& s, const GemmTile& t) {
  const int64_t blocks = gemm_blocks(s, t);
  int ks = 1;
  if (blocks < 4)
    while (ks < 8 && blocks * ks * 2 <= 8 && s.k / (ks * 2) >= 512) ks *= 2;
  return ks;
}

// In-kernel B packing (GemmTile::pb) pays when one row group covers all of
// M, and its panel scratch (a K slice × NR floats) must stay within 512 KiB.
Variant heuristic(const Problem& p, const TargetCaps& caps);

bool pb_fits(const Shape& s, const GemmTile& t) { return t.mc >= (s.m + t.mr - 1) / t.mr && pb_scratch_fits(t, s.k); }

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  const Shape s = shape_of(p);
  std::vector<Variant> out;
  if (is_cpu(caps) && narrow_fits(s)) out.push_back(Variant{}.set("impl", kNarrow));
  if (tile_fits(s, caps)) {
    out.push_back(tile_variant(s, caps));
    for (int mc : {2, 4, 8, 16})
      for (int nc : {1, 2, 4, 8})
        if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc); std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
    if (s.k > 2048)  // K slices
      for (auto [mc, nc, kc] : {std::tuple{8, 4, 1024}, {4, 4, 2048}, {8, 2, 1024}})
        if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("kc", kc); std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
    // Bᵀ swapped: 1-4 row blocks of B per workgroup against all of A's panels, or 8 of them.
    if (tile_swap_fits(s))
      if (Variant v = tile_swapped_variant(s, caps); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    if (s.trans_b)
      for (int mc : {1, 2, 4})
        for (int64_t nc : {int64_t(8), tile_blocks(s.m)})
          if (Variant v = Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc).set("sw", 1); std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
  }
  if (terms_fits(s, caps)) {
    // The bf16 terms: the bf16 product's own heuristic, and its tile blockings.
    out.push_back(Variant{}.set("impl", kTerms));
    const Shape q = shape_of(terms_problem(s));
    std::vector<Variant> tiles = {tile_variant(q, caps)};
    for (auto [mc, nc] : {std::pair{4, 4}, {8, 2}, {16, 1}, {2, 8}}) tiles.push_back(Variant{}.set("impl", kTile).set("mc", mc).set("nc", nc));
    if (tile_swap_fits(q) && !terms_b_bf16(s)) tiles.push_back(tile_swapped_variant(q, caps));
    for (Variant t : tiles)
      if (Variant v = t.set("impl", kTerms); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (!is_cpu(caps)) {
    for (auto [tm, tn] : {std::pair{4, 4}, {2, 2}, {4, 2}, {8, 4}, {8, 8}}) {
      GpuTile t;
      t.tm = tm;
      t.tn = tn;
      out.push_back(Variant{}.set("impl", kGpu).set("wg", t.wg).set("tm", tm).set("tn", tn).set("tk", t.tk));
    }
    for (int vec : {1, 2, 3})
      for (int tk : {8, 16})
        if (line_tile_fits(caps.max_shared_bytes, tk, 8, vec == 3))
          out.push_back(Variant{}.set("impl", kGpu).set("wg", 16).set("tm", 8).set("tn", 8).set("tk", tk).set("vec", vec));
    // The line tiles with 64 columns, K splits and the swapped product (Bᵀ).
    for (int sw : {0, 1}) {
      if (sw && !s.trans_b) continue;
      for (int tn : {8, 4})
        for (int ks : {1, 2, 4, 8}) {
          if ((!sw && tn == 8 && ks == 1) || (ks > 1 && (s.k / ks < 128 || s.m * s.n > int64_t(65535) * 256))) continue;
          for (int vec : {2, 3}) {
            if (!line_tile_fits(caps.max_shared_bytes, 16, tn, vec == 3)) continue;
            GpuTile t;
            t.tm = 8;
            t.tn = tn;
            t.vec = vec;
            t.ks = ks;
            t.sw = sw;
            out.push_back(gpu_tile_variant(t).set("impl", kGpu));
          }
        }
    }
    if (s.trans_b && s.m <= kGpuGemvMaxM)
      for (int wg : {64, 128, 256})
        if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
          out.push_back(Variant{}.set("impl", kGpuGemv).set("wg", wg));
    return out;
  }
  if (gemv_fits(s) && s.m <= 8)
    for (int rows : {1, 2, 4, 8}) {
      if (rows > 1) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows));
      if (s.trans_b) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1));
      if (caps.bf16_dot && gemv_pairs_fit(s)) out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("bf2", 1));
    }
  if (gemv_fits(s) && !gemv_tail(s) && s.trans_b && s.m <= 8)  // Bᵀ, K in parts (A's slice stays in L1)
    for (int kp : {2, 4, 8})
      if (s.k / 16 >= kp) {
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 1).set("pf", 1).set("kp", kp));
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 4).set("pf", 1).set("kp", kp));
        out.push_back(Variant{}.set("impl", kGemv).set("rows", 8).set("kp", kp));
      }
  if (kn_split_fits(s))  // K×N: split along K, 1, 2, 4 or 8 rows of B per pass
    for (int ks : {8, 16, 32})
      for (int kr : {1, 2, 4, 8}) {
        Variant v = Variant{}.set("impl", kGemvKSplit).set("ks", ks);
        if (kr > 1) v.set("kr", kr);
        out.push_back(v);
        if (kn_split_shift_fits(s, caps)) out.push_back(Variant(v).set("sh", 1));
        if (s.m > kGemvMaxM && kr >= 4) out.push_back(Variant(v).set("lb", 2));  // more rows of A: lines in pairs
      }
  if (gemv_fits(s) && s.m > 8)  // Bᵀ, A's rows in groups
    for (int rows : {2, 4})
      for (int mg : {4, 8}) {
        out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("mg", mg));
        if (caps.bf16_dot && gemv_pairs_fit(s))
          out.push_back(Variant{}.set("impl", kGemv).set("rows", rows).set("pf", 1).set("mg", mg).set("bf2", 1));
      }
  // Register blocks that fit this CPU's registers × K slices × block shapes.
  // A in 16-step line chunks, packed (ak = 16) or read as it is (ak = 1, f32
  // A) everywhere; the k-major A layout (ak = 0) stays a candidate for the
  // default register block.
  const GemmTile def = default_cpu_tile(s.m, s.n, s.k, caps, true);
  const bool narrow = !gemm_wide_registers(caps);  // AVX2: short blocks, more of them per workgroup
  auto blocks = gemm_register_blocks(caps);
  if (!narrow && s.n <= 32)  // skinny N: 1- and 2-line blocks too
    for (auto b : {std::pair{8, 1}, {12, 1}, {8, 2}})
      if (b.second * 16 < s.n + 16) blocks.push_back(b);
  for (auto [mr, nl] : blocks) {
    for (int kc : {0, 256, 512}) {
      if (kc && kc >= s.k) continue;  // one slice: the same as kc = 0
      for (auto [mc, nc] : narrow ? std::vector<std::pair<int, int>>{{16, 16}, {8, 8}, {24, 8}, {8, 32}}
                                  : std::vector<std::pair<int, int>>{{8, 8}, {4, 16}}) {
        for (int ak : {16, 1, 0}) {
          if (ak == 0 && !(mr == def.mr && nl == def.nl)) continue;
          if (ak == 1 && s.at != ir::ScalarKind::F32) continue;
          GemmTile t{mr, nl, kc, mc, nc, ak};
          t.apf = ak != 0 ? def.apf : 0;
          out.push_back(variant_of(t).set("impl", kGemm));
        }
      }
    }
  }
  // The default block with the M blocks walked fastest (consecutive groups
  // share B instead of A).
  for (int kc : {0, 512}) {
    if (kc && kc >= s.k) continue;
    GemmTile t = def;
    t.kc = kc;
    t.gm = 1;
    out.push_back(variant_of(t).set("impl", kGemm));
  }
  // The default block prefetching the next B panel (the panels stream from
  // DRAM when B is larger than the LLC).
  if (def.ak == 16) {
    GemmTile t = def;
    t.bpf = 1;
    out.push_back(variant_of(t).set("impl", kGemm));
  }
  // ... and packing its B panels itself, with and without prefetching the
  // next panel's source rows, and reading A unpacked (f32).
  for (int form : {0, 1, 2}) {
    GemmTile t = def;
    t.pb = 1;
    t.bpf = form == 1 && def.ak == 16;
    if (form == 2) t.ak = s.at == ir::ScalarKind::F32 && def.ak == 16 ? 1 : 0;
    if (pb_fits(s, t) && (form == 0 || t.bpf || t.ak == 1)) out.push_back(variant_of(t).set("impl", kGemm));
  }
  // The heuristic's choice (one row group over all of M, B packed in the kernel).
  const Variant h = heuristic(p, caps);
  if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  // bf16 pairs on hosts with the pair dot product: the heuristic takes them;
  // also with B packed by a launch, and with A packed. (Only from a GEMM
  // heuristic: a GEMV's fields, such as the K-split GEMV's ks, mean
  // something else in a GemmTile.)
  if (caps.bf16_dot && pairs_fit(s) && h.get("impl", -1) == kGemm) {
    GemmTile t = tile_of(h);
    for (int form : {1, 2}) {
      GemmTile u = t;
      if (form == 1) u.pb = 0, u.bpf = 0;
      if (form == 2) u.ak = t.ak == 1 ? 16 : t.ak;
      if (Variant v = variant_of(u).set("impl", kGemm); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  // The swapped product, its default tile with other K slices and blocks.
  if (swap_fits(s)) {
    const GemmTile t = swap_tile(s, caps);
    for (auto [kc, mc] : {std::pair{t.kc, t.mc}, {t.kc / 2, t.mc}, {t.kc, 2 * t.mc}, {0, t.mc}}) {
      GemmTile u = t;
      u.kc = kc, u.mc = mc;
      if (Variant v = variant_of(u).set("impl", kSwap); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  // K splits for products with few M×N blocks and a long K.
  GemmTile d = def;
  d.ks = 1;
  if (gemm_blocks(s, d) < 8 && s.k >= 1024)
    for (int ks : {2, 4, 8})
      if (s.k / ks >= 256) {
        d.ks = ks;
        out.push_back(variant_of(d).set("impl", kGemm));
      }
  return out;
}

Variant heuristic(const Problem& p, const TargetCaps& caps) {
  const Shape s = shape_of(p);
  // Thin products (K <= 12, N <= 16, f32): rows in lanes. Zen 5, 1 thread,
  // GB/s against the packed GEMM: 100000 × 3 × 3 11 -> 105, × 1 × 16 18 ->
  // 78, × 3 × 16 18 -> 53, × 8 × 8 20 -> 52, × 12 × 12 21 -> 43; with K =
  // 16 (A's rows whole lines) the GEMM keeps up: × 16 × 8 49 against 37, ×
  // 16 × 16 36 against 23.
  if (is_cpu(caps) && narrow_fits(s) && s.k <= 12 && s.m >= 64) return Variant{}.set("impl", kNarrow);
  // prec 1|2 on a matrix engine: the f32 product as bf16 terms where it is compute-bound.
  if (terms_fits(s, caps) && terms_pays(s)) return Variant{}.set("impl", kTerms);
  if (!is_cpu(caps)) {
    // Up to 8 rows the GEMV, which reads B once (H100, 8 × 11008 × 4096: wg
    // 64 / 128 / 256 0.32 / 0.23 / 0.16 ms, the swapped line tiles 0.25).
    if (s.trans_b && s.m <= kGpuGemvMaxM)
      return Variant{}.set("impl", kGpuGemv).set("wg", s.m > kGemvMaxM ? 256 : s.k >= 2048 ? 128 : 64);
    return gpu_tile_variant(default_gpu_tile(s.m, s.n, s.k, s.trans_b, s.batch, caps.max_shared_bytes)).set("impl", kGpu);
  }
  // bf16 on a matrix engine: Bᵀ with 4-512 rows swapped, else from 16 rows
  // of A (AMX: 16-row tiles; the GEMVs below).
  if (tile_fits(s, caps) && tile_swap_fits(s)) return tile_swapped_variant(s, caps);
  // K×N with 5-32 rows of A where a column walk does not read at DRAM speed
  // (!TargetCaps::strided_prefetch: the swapped form's walk, and the packed
  // GEMM's in-kernel packing of B's strided rows), B from DRAM or (to 16
  // rows) cached: the K-split GEMV, B's rows read whole into M partial rows
  // in L2, lines in pairs (lb 2). Intel Xeon VM, kgen op, ms, 1 thread (2):
  // f32 M × 11008 × 4096, swapped -> this: M = 8 79.2 (39.5) -> 12.0 (5.7),
  // 16 79.7 (40.0) -> 19.4 (10.4), 24 79.3 (39.4) -> 30.2 (15.5), 32 79.4
  // (38.7) -> 29.3 (17.4); the packed GEMM 52.5 (27.3) at 32, at 48 rows a
  // tie (66 / 31), at 64 it wins (71 / 36 against 89 / 48). 24 × 4096²
  // 14.0 (5.5) -> 9.4 (5.0); cached 16 × 3072 × 768 1.09 (0.56) -> 0.95
  // (0.53), but 32 × 3072 × 768 1.42 (0.78) -> 1.99 (1.01). f16 / bf16
  // (the packed GEMM, bf16 from 16 rows on AMX tiles) -> this: M = 8 32.5 /
  // 32.6 -> 9.0 / 8.9, 16 50.2 / 20.9 -> 13.8 / 15.2, 32 58.6 / 22.0 -> 28.2
  // / 30.9 (so tiles keep bf16 past 16 rows; at 24 a tie, 22.4 / 22.9).
  // f32 with fewer than 16 rows of A one line at a time (lb 1): the
  // Granite Rapids VM, kgen tune, 1 / 2 threads, ms, against lb 2: 8 ×
  // 4096² 5.23 / 2.78 (5.74 / 3.01), 12 × 4096² 6.43 / 3.17 (7.09 / 3.72),
  // 8 × 11008 × 4096 12.8 / 6.54 (15.8 / 8.09), 12 × 11008 × 4096 15.1 /
  // 8.50 (17.8 / 8.97); from 16 rows lb 2 (16 × 4096² 8.66 / 4.37 against
  // 8.56 / 4.56), and f16 / bf16 keep it (8 × 4096² within 2%).
  if (!s.trans_b && caps.vector_bits >= 512 && !caps.strided_prefetch && s.m > kGemvMaxM && kn_split_fits(s) &&
      s.k >= 256 && (!b_cached(s) || s.m <= 16) && !(tile_fits(s, caps) && s.m > 16)) {
    Variant v = Variant{}.set("impl", kGemvKSplit).set("ks", 8).set("kr", 8);
    if (s.m >= 16 || s.dt != ir::ScalarKind::F32) v.set("lb", 2);
    return v;
  }
  if (tile_fits(s, caps) && s.m >= 16) return tile_variant(s, caps);
  // Bᵀ with 9-256 rows of A on AVX-512 (bf16 on pairs from 13: its pair
  // GEMV holds up longer): the swapped product. Zen 5, 1 thread, M × 11008
  // × 4096, previous heuristic (GEMV to 32 rows, then the packed GEMM) ->
  // swapped: f32 M = 9 12.0 -> 9.0 ms, 16 14.1 -> 8.8, 32 20.7 -> 13.1, 64
  // 35.4 -> 23.5, 96 51.7 -> 37.6, 128 59.4 -> 48.4, 256 105 -> 97 (384:
  // 153 against 156, 512: 201 against 215); 2 threads M = 16 7.3 -> 5.1, 64
  // 18.5 -> 12.5, 256 55.2 -> 49.2; 32 × 4096 × 11008 29.6 -> 12.5; bf16 M
  // = 9 4.7 -> 5.7 (so not there), 16 7.8 -> 5.6, 64 17.7 -> 12.3, 256 53.5
  // -> 48.0, 512 96.7 -> 98.6. f16 (widened) from 33 rows: M = 16 GEMV 7.8
  // against 10.3, 32 15.2 against 13.9, 64 28.5 -> 25.0, 256 115 -> 99. Only
  // where B has over 4× A's rows: 256 × 1024 × 11008 (kgen tune) 25.3 for
  // the packed GEMM against 26.7 (its A, 11 MiB, packed as panels); 128 ×
  // 1024 × 11008 12.1 swapped, the best.
  // Not where B stays in the cache (≤ 32 MiB) and the swapped panels pad
  // A's rows by 5% or more: Zen 5, 1 thread, M × 3072 × 768 (kgen tune,
  // best of each): M = 50 (fill 0.78) 1.25 swapped against 1.18 packed, 105
  // (0.82) 2.49 / 2.16, 176 (0.92) 3.97 / 3.56, 197 (0.82) 4.77 / 4.22;
  // even at 90 (0.94), 144 (1.0), 240 (1.0). The heuristic's packed GEMM:
  // 197 3.94 ms, 105 2.24, 50 1.21; 197 × 2304 × 768 3.45 -> 2.87.
  const int64_t swap_from = s.dt == ir::ScalarKind::F32 ? 8 : caps.bf16_dot && pairs_fit(s) ? 12 : 32;
  const bool b_in_cache = b_cached(s);
  auto swap_panels_fill = [&] { return !(b_in_cache && swap_fill(s, caps) < 0.95); };  // only once swap_fits
  if (s.trans_b && swap_fits(s) && caps.vector_bits >= 512 && s.m > swap_from && s.m <= 256 && s.n > 4 * s.m &&
      swap_panels_fill())
    return variant_of(swap_tile(s, caps)).set("impl", kSwap);
  // f32 K×N past the K×N GEMV's rows (swap_tile has the figures): to 48
  // rows, and to 128 where B (≥ 64 MiB) streams from DRAM. With B in the
  // cache the packed GEMM's reuse wins from 4 lines of A's rows: 64 × 1024 ×
  // 1024 0.83 against 0.66 ms, 64 × 2048 × 2048 3.45 against 3.03 (48 rows
  // there: 2.32 against 2.41; 32 × 1024 × 1024 0.34 against 0.36).
  const bool kn_swap = s.m <= 48 || (s.m <= 128 && s.n * s.k >= (int64_t(16) << 20));
  // The same fill rule as Bᵀ's: M × 3072 × 768 (kgen tune) M = 20 (fill
  // 0.63) 0.68 swapped against 0.61 packed, 40 (0.83) 1.15 / 0.91; 16 and
  // 32 (1.0) 0.61 / 0.72, 0.69 / 0.75.
  if (!s.trans_b && swap_fits(s) && caps.vector_bits >= 512 && s.m > kGemvMaxM && kn_swap && s.n > 4 * s.m && s.k >= 256 &&
      swap_panels_fill() && (caps.strided_prefetch || b_in_cache))
    return variant_of(swap_tile(s, caps)).set("impl", kSwap);
  // Above 4 rows of A only over Bᵀ on AVX-512 (measured there; AVX2's 16
  // registers would spill the GEMV's accumulators).
  const bool gemv_heuristic = s.m <= kGemvMaxM || (s.trans_b && caps.vector_bits >= 512 && s.m <= kGemvMaxRowsHeuristic);
  // K×N with K or N off whole lines (the GEMVs below need them): the K-split
  // GEMV, any K, and any N with a masked last line per row. Zen 5, 1
  // thread, against the packed GEMM: 1×4097×4096 4.6 -> 2.6 ms, 1×4096×4095
  // 4.1 -> 1.8, 1×50257×768 (GPT-2's vocabulary) 8.7 -> 5.4 (6.6-6.9
  // before the partial rows were padded to whole lines), 1×1000×512 0.063
  // -> 0.024, 2×4096×4095 4.0 -> 3.7, 2×4097×4096 4.3 -> 3.9.
  // Four rows of B per pass over the partial rows (kr 4) took the rest of
  // the cost of rows past L1 and of more rows of A (Zen 5, 1 thread, kr 1
  // -> 4, the heuristic's before): 1×50257×768 5.69 -> 4.45 ms (2 threads
  // 3.31 -> 2.28), 2×50257×768 8.59 -> 5.09, 1×4095×4096 2.20 -> 2.00,
  // 1×4096×4096 2.05 -> 1.92, 2×4096×4096 3.78 -> 2.15, 4×4096×4096 (rows=4
  // GEMV before) 5.45 -> 2.93, 4×11008×4096 2 threads 7.11 -> 4.02; bf16
  // 2×4096×4096 2.41 -> 1.62, 1×: the same. kr 8 a little more (kgen op,
  // GB/s, kr 4 -> 8: 1×50257×768 39.6 -> 40.7, 1×4096² 47.4 -> 49.4,
  // 2×4096² 34.7 -> 37.3, 4×4096² 23.0 -> 26.7; ms: bf16 2×4096² 1.37 ->
  // 0.95, 4×11008×4096 at 2 threads 4.43 -> 3.77). AVX2 (not measured): 2,
  // its 16 registers hold fewer of A's broadcast values. One row of A on
  // Intel (no strided_prefetch): 2, whose 2 streams of B's rows its
  // prefetchers follow better than 8 (Granite Rapids VM, kgen tune, 1 / 2
  // threads, ms, kr 8 -> 2: 1×4096×4096 4.07 / 2.13 -> 3.87 / 2.11,
  // 1×4096×11008 10.99 / 5.57 -> 10.64 / 5.42, 1×11008×4096 10.26 / 5.45
  // -> 9.98 / 5.25 (ks 8), 1×50257×768 9.45 / 5.26 -> 8.70 / 4.92 (ks 8);
  // 2-4 rows of A even; bf16 lost, 1×4096×4096 2.47 / 1.29 -> 2.51 / 1.41).
  const int kn_kr = caps.vector_bits < 512 || (s.m == 1 && s.dt == ir::ScalarKind::F32 && !caps.strided_prefetch) ? 2 : 8;
  if (!gemv_fits(s) && kn_split_fits(s) && s.m <= kGemvMaxM && s.n * s.k >= (int64_t(1) << 16)) {
    Variant v = Variant{}.set("impl", kGemvKSplit).set("ks", 16).set("kr", kn_kr);
    // Rows off whole lines from aligned lines shifted by a byte permute
    // where unaligned loads from DRAM ran a quarter slower (Zen 5, below);
    // Intel's unaligned loads are faster than the permutes (kgen tune
    // 1×50257×768, 1 / 2 threads, kr 2: 8.81 / 4.83 ms against 9.72 / 5.12).
    if (kn_split_shift_fits(s, caps) && caps.strided_prefetch) v.set("sh", 1);
    return v;
  }
  if (gemv_fits(s) && gemv_heuristic) {
    if (s.m > 8) {  // A's rows in groups of 4 (bf16 on pairs where the host has them)
      Variant v = Variant{}.set("impl", kGemv).set("rows", 4).set("pf", 1).set("mg", 4);
      if (caps.bf16_dot && gemv_pairs_fit(s)) v.set("bf2", 1);
      return v;
    }
    // f16/bf16 Bᵀ rows (weights N×K) on AVX-512: bf16 pairs where the host
    // has them, up to 2 rows of A; else more rows per work-item as A has
    // more rows. Zen 5, Bᵀ 4096×4096 from DRAM (kgen tune), 1 / 2 threads:
    // bf16 M = 1 0.82 / 0.70 ms with pairs (0.92 / 0.72 without), M = 2
    // 0.86 (pairs); M = 4 rows=2 0.89 / 0.84 against rows=4 0.99 / 0.87;
    // f16 M = 1 rows=1 1.04.
    const bool wide_bt = s.trans_b && caps.vector_bits >= 512;
    if (wide_bt && s.dt != ir::ScalarKind::F32) {
      if (s.m <= 2 && caps.bf16_dot && gemv_pairs_fit(s))
        return Variant{}.set("impl", kGemv).set("rows", 1).set("pf", 1).set("bf2", 1);
      // One f32 row of A (a_f32: the gated MLP's down projection for one
      // token) too long to stay in L1 beside B's rows: 1 thread K in two
      // parts, more threads 8 rows of B per pass over A. Zen 5, 1×1024×11008
      // bf16 (kgen tune, rotating, two runs), 1 / 2 threads: 0.63-0.65 /
      // 0.51-0.52 ms with kp=2, 0.67-0.69 / 0.47 with rows=8, against 0.74 /
      // 0.50-0.52 for one row prefetched.
      // On Intel (no strided_prefetch) one row of A, f32 or not: rows of B
      // of 16 KiB or more 4 per work-item, of 8 KiB 2, shorter ones 1, the
      // next ones prefetched; for an f32 A K in parts ran at half speed
      // (Granite Rapids VM, kgen tune, 1 / 2 threads, ms: f32 A 1×1024×11008
      // 1.39 / 0.74 against 2.53 / 0.74 for kp=2 / rows=8, 1×2048×8192 2.27 /
      // 1.21 (3.58 / 1.28), 1×4096×14336 7.81 / 4.02 (13.6 / 4.28); bf16 A
      // against one row: 1×4096×11008 5.62 / 2.87 (5.91 / 3.11), 1×4096×4096
      // 2.09-2.18 / 1.11-1.15 (2.10-2.35 / 1.15-1.18), 1×8192×2048 even,
      // 1×11008×1024 1.28 / 0.81 against 1.43 / 0.90 with 2 rows).
      if (s.m == 1 && !caps.strided_prefetch) {
        const int64_t row_bytes = s.k * 2;
        return Variant{}.set("impl", kGemv).set("rows", row_bytes >= (16 << 10) ? 4 : row_bytes >= (8 << 10) ? 2 : 1).set("pf", 1);
      }
      if (s.m == 1 && s.at == ir::ScalarKind::F32 && s.k * 4 >= (int64_t(32) << 10)) {
        if (caps.threads == 1 && !gemv_tail(s)) return Variant{}.set("impl", kGemv).set("rows", 1).set("pf", 1).set("kp", 2);
        return Variant{}.set("impl", kGemv).set("rows", 8);
      }
      // 3-4 rows of A on Intel: 4 rows of B (Granite Rapids VM, kgen tune,
      // 1 / 2 threads, ms, against 2: f32 A 4×1024×11008 1.54 / 0.81 (1.86
      // / 0.96), 4×4096×4096 2.30 / 1.25 (2.63 / 1.42); bf16 A 3×4096×4096
      // 2.32 / 1.19 (2.35 / 1.22), 4×11008×1024 1.96 / 0.99 (2.49 / 1.21)).
      const bool four = s.m >= 3 && !caps.strided_prefetch;
      return Variant{}.set("impl", kGemv).set("rows", s.m == 1 ? 1 : four ? 4 : 2).set("pf", 1);
    }
    // f32 Bᵀ rows on AVX-512, 1-2 rows of A: rows of 4096 or more k take 4
    // rows of B per work-item, no software prefetch; shorter rows (fewer lines for the
    // hardware prefetcher to pick up) one row, the next prefetched. Zen 5,
    // from DRAM (kgen tune; kgen op past L3 for 11008 k), 1 / 2
    // threads: 4096×4096 M = 1 1.61 / 1.41 ms (41.8 GB/s at 1 thread, a plain
    // read of the same bytes 41.5) against 1.76 / 1.47 for one row
    // prefetched; 11008×1024 1.12 / 0.93 against 1.33 / 1.01 for 4 rows,
    // 11008×2048 2.31 against 2.44, 4096×11008 4.37 against 4.44; M = 2
    // 4096×4096 2.01 against 2.34 for K in parts, 4096×11008 5.15 against
    // 6.4. (With u32 addresses, before gemv_kernel widened them, one
    // prefetched row had won at 4096×4096 too: 1.89 against 2.63 for 4
    // rows.) M = 3-4: 4 rows per work-item, the next group's prefetched,
    // against K in parts: 4096×4096 (tune) M = 3 2.27 against 2.43 ms, M =
    // 4 2.65 / 1.69 against 2.77 / 1.94; 4096×11008 (kgen op) M = 4 6.34 /
    // 4.45-4.74 against 7.37 / 5.57-5.81. (A noisy hour: K in parts with 4
    // parts, not the rule's 2, measured 2.42 and 2.22 at 4096×4096, and an
    // earlier run had 2 prefetched rows best at M = 4, 2.12.)
    // Two rows of A on Intel (no strided_prefetch): 2 rows of B, the next
    // prefetched (Granite Rapids VM, kgen tune, 1 / 2 threads, ms, against
    // 4 rows: 2×4096×4096 4.47 / 2.37 (4.70 / 2.52), 2×4096×11008 11.3 /
    // 5.87 (12.2 / 6.19), 2×11008×4096 12.1 / 6.13 (12.8 / 6.73)).
    if (wide_bt && s.m == 2 && s.k >= 4096 && !caps.strided_prefetch) return Variant{}.set("impl", kGemv).set("rows", 2).set("pf", 1);
    if (wide_bt && s.m <= 2 && s.k >= 4096) return Variant{}.set("impl", kGemv).set("rows", 4);
    // Intel (no strided_prefetch), one row of A: two rows of B per
    // work-item, the next pair prefetched (Granite Rapids VM, kgen tune
    // rotating past twice the LLC, 1 / 2 threads, ms, against one row:
    // 12288×1024 3.17 / 1.62 against 3.43 / 1.73, 12288×1536 4.91 / 2.51
    // against 6.21 / 3.21, 8192×2048 4.22 / 2.19 against 5.61 / 2.90,
    // 6144×3072 4.84 / 2.51 against 5.70 / 2.98; 4096×2560 2.69 / 1.39
    // against 3.17 / 1.63). Two rows of A keep one (8192×2048 4.40 ms,
    // 4.36 with two).
    if (wide_bt && s.m == 1 && !caps.strided_prefetch) return Variant{}.set("impl", kGemv).set("rows", 2).set("pf", 1);
    // Zen 4 (split_zmm), one row of A, rows under 4096 k: 8 rows of B per
    // work-item, the next prefetched (kgen tune rotating, ms, against one
    // row prefetched: 1×11008×1024 1 / 2 threads 2.01 / 1.02 (2.43 / 1.42),
    // 1×8192×2048 2.89 (3.19), 1×2048×2048 0.73 (0.78); the gated MLP's
    // gate and up GEMVs for one token).
    if (wide_bt && s.m == 1 && caps.split_zmm) return Variant{}.set("impl", kGemv).set("rows", 8).set("pf", 1);
    if (wide_bt && s.m <= 2) return Variant{}.set("impl", kGemv).set("rows", 1).set("pf", 1);
    if (wide_bt && s.m <= 4) return Variant{}.set("impl", kGemv).set("rows", 4).set("pf", 1);
    // 5-8 rows of A: K in parts (kp) whose slice of A and the work-item's
    // two rows' slices of B fit in L1 ((M + 2)·(K / kp)·4 ≤ 40 KiB of Zen
    // 5's 48; parts of ≥ 1024 k, shorter row pieces lost): A stays in L1
    // while B streams. Zen 5, kgen op, 1 thread, 4 rows of B -> kp (before
    // the widened addresses): 4096×4096 M = 5 2.37 -> 1.69 ms (kp 4), 6
    // 2.82 -> 1.84 (4), 8 3.68 -> 2.52 (4); 11008×4096 M = 8 8.9 -> 7.0 (4);
    // 4096×11008 M = 8 stays at 7.8 (kp 2-16 with 2 rows 9.6-12.2).
    // Otherwise 4 rows of B per work-item (8 × 11008 × 4096: 7.3-9.7 ms
    // against 11.5 for 8).
    // On Intel (no strided_prefetch) 4 rows of B prefetched over all of K
    // (Granite Rapids VM, kgen tune, 1 / 2 threads, ms, against the kp
    // rule: 5×4096×4096 4.60 / 2.42 (5.28 / 2.96), 6×4096×4096 5.15 / 2.48
    // (5.63 / 2.84), 8×4096×4096 5.45 / 2.79 (6.45 / 3.23), 8×11008×4096
    // 14.5 / 7.70 (16.5 / 8.27)).
    if (wide_bt && s.m >= 5 && s.m <= 8 && caps.strided_prefetch) {
      int kp = 1;
      while (kp < 16 && (s.m + 2) * (s.k / kp) * 4 > 40 * 1024) kp *= 2;
      // (5-8 rows with the whole of K in L1 keep 4 rows of B per work-item:
      // 8 × 1024 × 1024 0.20 against 0.25 ms for 2.)
      if (kp > 1 && s.k / kp >= 1024 && !gemv_tail(s)) return Variant{}.set("impl", kGemv).set("rows", 2).set("pf", 1).set("kp", kp);
    }
    if (wide_bt) return Variant{}.set("impl", kGemv).set("rows", 4).set("pf", 1);
    // K×N: one work-item per 1/16 of K, reading its rows of B whole (the
    // column strips of rows=4 read 256 bytes of each 16 KiB row: 4096×4096
    // f32 17 GB/s). Zen 5, 1 / 2 threads, M × 4096 × 4096: f32 M = 1 3.9 /
    // 2.1 -> 1.76 / 1.21 ms, M = 2 3.64 / 2.21 -> 3.57 / 1.87; bf16 M = 1
    // 3.28 -> 0.83, M = 2 3.56 / 1.66 -> 2.21 / 1.27, M = 4 4.6 -> 4.1. f32
    // M = 4 lost (5.6 -> 6.9: its partial rows, 64 KiB, leave L1).
    if (!s.trans_b) return Variant{}.set("impl", kGemvKSplit).set("ks", 16).set("kr", kn_kr);
    return Variant{}.set("impl", kGemv).set("rows", 4);
  }
  // bf16 pairs (where the host has vdpbf16ps): the same blocking for a
  // product of K/2 steps, each a pair of k. Zen 5, 1 thread: see bench/
  // matmul/bf16.
  const bool pairs = caps.bf16_dot && pairs_fit(s);
  const Shape g = pairs ? pair_shape(s) : s;  // what the macro-kernel steps over
  const bool wide = gemm_wide_registers(caps);
  GemmTile t = default_cpu_tile(g.m, g.n, g.k, caps, !pairs);
  t.bf2 = pairs;
  t.ks = default_ksplit(g, t);
  // Square-ish products on AVX-512 (the 8×8-panel blocks): walk the M blocks
  // fastest, so consecutive workgroups share the B block (~4 MB at 1024³)
  // and the A block, 8 panels × K, is what changes. Zen 5 (kgen op, 4 runs
  // each): 1024³ 1 thread 8.96 -> 8.81 ms, 2 threads 4.70 -> 4.59; 2048³ 1
  // thread 76.0 -> 74.4, 2 threads the same.
  if (wide && t.mc == 8 && t.nc == 8) t.gm = 1;
  // An A (M×K) within half the LLC: one row group over all of M and one B
  // panel per workgroup, packed by it (pb below) and used from L2 by every A
  // panel, which stream from the LLC (the next one prefetched: apf). No B
  // packing launch, each panel packed once. Zen 5 (2-3 runs each, 1 thread
  // unless said): 1024³ 8.8 -> 8.5 ms, 2 threads 4.46 -> 4.31; 1024×1024×2048
  // 19.2-19.7 -> 17.7-18.0; 2048×2048×1024 36.4 -> 34.1-34.4; 512³ 1.067 ->
  // 1.05; with K slices (kc = 512) 512×4096×4096 82-83 -> 71-73. With apf
  // (without it the A stream made these erratic): 2048³ 70.4-72.2 -> 68.2-68.6,
  // 2 threads 37.3-37.7 -> 34.8-35.2; 4096×1024×1024 38.4-38.8 -> 35.6;
  // 2048×4096×2048 2 threads 76-77 -> 70-72.
  const int64_t mp = (g.m + t.mr - 1) / t.mr, panels = (g.n + t.nr() - 1) / t.nr();
  const int64_t a_max = caps.llc_bytes ? int64_t(caps.llc_bytes / 2) : int64_t(16) << 20;
  if (wide && t.ks == 1 && g.m * g.k * 4 <= a_max && panels >= 8 && (mp > t.mc || t.kc)) {
    t.mc = int(mp);
    t.nc = 1;
    t.gm = 0;
    // All of K in one pass: A read as it is (no packing launch), its MR rows
    // as the microkernel's broadcast streams. 1024³ 1 thread 8.96-9.06 ->
    // 8.71-8.75 ms, 2048³ 68.0-70.1 -> 66.9-67.6; with K slices A's rows
    // re-read per slice lost (512×4096×4096 71.8 -> 74.5), so not there.
    if (t.kc == 0 && (g.at == ir::ScalarKind::F32 || pairs)) t.ak = 1;
  } else if (wide && t.ak == 16 && (g.at == ir::ScalarKind::F32 || pairs)) {
    // Row groups of mc panels: A read as it is too. A packing launch is a
    // pass over all of A (read, write, read back) that pays only where each
    // packed panel serves many B panels; with few columns it was a third of
    // the time. Zen 5, 1 thread, packed A -> A as it is: 4096×96×1024 4.2 ->
    // 3.2 ms (oneDNN 3.4), 4096×96×4096 17.5 -> 13.4, 4096×200×1024 9.1 ->
    // 8.1, 20000×64×256 3.6 -> 2.5, 8192×512×2048 71-74 -> 68, 4096×256×4096
    // 38.3 -> 34.0, 4096×1024×4096 142-145 -> 142; 2 threads 4096×96×4096
    // 9.9 -> 7.0, 2048×1024×11008 Bᵀ 106.9 -> 106.2.
    t.ak = 1;
  }
  // One row group over all of M: each B panel is used by this workgroup
  // only, so it packs the panel itself (pb) instead of a packing launch
  // writing all of B out and the product reading it back. Zen 5, Bᵀ, 1
  // thread: 64×4096×4096 17.5 -> 12.1 ms; 256×1024×11008 2 threads 16.0 ->
  // 13.6 ms.
  if (wide && pb_fits(g, t)) t.pb = 1;
  // AVX2 (Zen 3): 24 row panels per workgroup against 8 B panels, the next B
  // panel prefetched during the passes over this one (bpf). Zen 3's
  // prefetchers left the 16-column panels' first passes streaming them; the
  // prefetch wins at every size measured (alternated runs, medians, ms,
  // against cblas_sgemm in the same rounds): 2048³ 1 thread 263 -> 242
  // (OpenBLAS 255), 2 threads 143 -> 122 (130); 1024³ 1 thread 34.7 -> 32.6
  // (33.2), 2 threads 19.4 -> 16.3 (18.3). apf on top: even. With few B
  // panels A is read as it is: its packing launch, a pass over all of A,
  // served few panels (1 thread, ms: 2048×16×4096 17.1 -> 4.6, OpenBLAS
  // 14.2; 4096×96×1024 17.2 -> 12.6 (19.5); 2048×256×2048 34.5 -> 31.3
  // (33.6); 2048×1024×2048 127.8 -> 131.0, so not there).
  if (!wide && t.ak == 16 && t.ks == 1 && !pairs) {
    t.mc = 24;
    t.nc = 8;
    t.bpf = 1;
    if (g.at == ir::ScalarKind::F32 && panels <= 16) t.ak = 1;
    // A within an eighth of the LLC: one row group over all of M, each
    // workgroup packing its B panel (pb), A read as it is. 1 thread, ms:
    // 96×4096×1024 19.6 -> 14.9 (OpenBLAS 14.3), 197×3072×768 18.4 -> 15.3
    // (15.6), 1024³ 33.5 -> 32.0 (34.3); A of 16 MiB (2048³) streamed from
    // the LLC once per panel: 253 -> 361, so not there.
    GemmTile one = t;
    one.mc = int(mp), one.nc = 1, one.pb = 1, one.ak = g.at == ir::ScalarKind::F32 ? 1 : 16;
    if (t.kc == 0 && panels >= 8 && g.m * g.k * 4 <= a_max / 4 && pb_fits(g, one)) t = one;
  }
  // A K×N B beyond the cache packed so on Intel, whose prefetchers do not
  // follow its strided rows: the next panel slice's rows prefetched into L2
  // during this one's arithmetic (bpf), where few passes share each packed
  // panel and the row stride spreads the rows over L2's sets (a multiple of
  // 4 KiB or more lands a slice in a few sets, which evict each other: 64 ×
  // 4096 × 4096 gained 4%). Intel, 1 / 2 threads, GFLOP/s: 64 × 11008 × 4096
  // 100-107 -> 120-131 / 202 -> 253; 128 × 11008 × 4096 137 -> 169 / 265 ->
  // 311; 64 × 4032 × 4096 118 -> 151; 64 × 11008 × 1024 (all of K per
  // panel) 134 -> 143; 96 × 4096 × 4096 (mr 6) lost 5%. Four panels per
  // workgroup, so that the slices prefetched one after the other are
  // neighbours in B's rows: 64 × 11008 × 4096 1 / 2 threads 120 -> 135-138 /
  // 246-256 -> 268-280 (128 and 256 rows the same either way).
  const int64_t row_bytes = s.n * int64_t(ir::Type(s.dt).bytes());
  if (t.pb && !s.trans_b && !b_cached(s) && !caps.strided_prefetch && (t.ak == 1 || t.ak == 16) && mp <= 64 &&
      (row_bytes & -row_bytes) <= 2048) {
    t.bpf = 1;
    if (panels >= 64) t.nc = 4;
  }
  return variant_of(t).set("impl", kGemm);
}


// The tile kernel's launch (impl 7) on the tile op's A rows (slot a: A, or
// B's rows when swapped) and pair panels (slot bp) into C (slot c).
// a_parts: A's rows hold that many segments of K against the same panels.
// A tile variant's blocking (impl 7, or the bf16 product of impl 8):
// `impl` names the variant in errors.
struct TileBlocking {
  int mc, nc, kc, sw;
};
TileBlocking tile_blocking(const Variant& v, int64_t impl) {
  const std::string at = "matmul: impl=" + std::to_string(impl) + " ";
  const TileBlocking t{int(v.get("mc", 8)), int(v.get("nc", 4)), int(v.get("kc", 0)), int(v.get("sw", 0))};
  if (t.kc < 0 || t.kc % 32 || (t.kc && t.sw)) throw std::invalid_argument(at + "kc (K slice) is a multiple of 32, without sw: " + v.str());
  if (t.mc < 1 || t.mc > 1024 || t.nc < 1 || t.nc > 1024) throw std::invalid_argument(at + "mc and nc must be 1..1024: " + v.str());
  if (t.sw < 0 || t.sw > 1) throw std::invalid_argument(at + "sw is 0 or 1: " + v.str());
  return t;
}

void plan_tile_product(Plan& pl, const Shape& s, int mc, int nc, bool sw, int kc, int a, int bp, int c, int a_parts = 1) {
  Step st;
  st.kernel = gemm_tile_kernel(mc, nc, sw, kc >= s.k ? 0 : kc, a_parts);
  // Pair panels over grid x, the tile op's A row blocks over y.
  const int64_t np = tile_blocks(sw ? s.m : s.n), mb = tile_blocks(sw ? s.n : s.m);
  st.dims.grid = {groups_for(np, nc), groups_for(mb, mc), uint32_t(s.batch)};
  st.buffers = {a, bp, c};
  st.scalars = {ir::scalar_slot(uint32_t(s.m)), ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
  pl.steps.push_back(std::move(st));
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps);

// C = A'·B on bf16 terms, A' split already (slot a), B (slot b, Bᵀ or K×N):
// where the bf16 product runs unswapped on tiles, B's terms are written as
// its pair panels in one pass (Bᵀ through 16×16 transposes; K×N rows k and
// k + 1 pair up lane by lane: f16 2048³ split 3.2 + pack 5.6 -> 6.4 ms, f32
// at prec 1 the same 7.5); else split (a K×N batch's K rows of N as one row
// of K·N values, the parts stacked along K, padded by N zeros where K is
// odd), and the product planned as matmul plans it. iv: the product's
// variant, else its heuristic.
void plan_terms_b(Plan& pl, size_t nio, const Shape& s, const std::optional<Variant>& iv, int a, int b, int c, const TargetCaps& caps) {
  const int parts = terms_parts(s);
  const int64_t seg = terms_seg(s);
  const Problem q = terms_problem(s);
  Variant v = iv ? *iv : heuristic(q, caps);
  // bf16 B (exact) takes the tiles unswapped whatever the product's variant.
  if (terms_b_bf16(s) && (v.get("impl") != kTile || v.get("sw", 0))) v = tile_variant(shape_of(q), caps);
  if (v.get("impl") == kTile && !v.get("sw", 0)) {
    // f32/f16 B: its terms as panels parts·seg deep; bf16 B: itself as
    // panels seg deep, each of A's parts against them (the tile kernel's a_parts).
    const int b_parts = terms_b_bf16(s) ? 1 : parts;
    const int bp = s.trans_b ? plan_bf16_terms_panels(pl, nio, b, s.batch, s.n, s.k, seg, b_parts, s.dt)
                             : plan_bf16_terms_kn_panels(pl, nio, b, s.batch, s.k, s.n, seg, b_parts, s.dt);
    Shape t = shape_of(q);
    t.k = b_parts * seg;
    const TileBlocking tb = tile_blocking(v, kTile);
    plan_tile_product(pl, t, tb.mc, tb.nc, false, tb.kc, a, bp, c, parts / b_parts);
    return;
  }
  const int bt = s.trans_b ? plan_bf16_terms(pl, nio, b, s.batch * s.n, s.k, seg, s.k, parts, Bf16TermsSide::B, -1, s.dt)
                           : plan_bf16_terms(pl, nio, b, s.batch, s.k * s.n, seg * s.n, s.k * s.n, parts, Bf16TermsSide::B, -1, s.dt);
  pl.append(nio, plan(q, v, caps), 3, {a, bt, c});
}

// The GPU kernels take one element type: with a_f32, B widened to f32 by a
// launch first (slot of the B they read).
int gpu_b(Plan& pl, const Shape& s, size_t nio) {
  return s.at == s.dt ? 1 : plan_widen(pl, nio, s.dt, 1, s.batch * s.n * s.k);
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  const Shape s = shape_of(p);
  const size_t nio = 3;  // a, b, c
  Plan pl;
  switch (v.get("impl", kGemm)) {
    case kNarrow: {
      if (!is_cpu(caps) || !narrow_fits(s))
        throw std::invalid_argument("matmul: impl=6 (rows in lanes) is for the CPU, f32, and K and N of at most 16");
      Step st{matmul_narrow_kernel(int(s.k), int(s.n), s.trans_b), {}, {0, 1, 2}, {ir::scalar_slot(uint32_t(s.m))}};
      st.dims.grid = {groups_for(s.m, kNarrowMatmulRows), uint32_t(s.batch), 1};
      pl.steps.push_back(std::move(st));
      return pl;
    }
    case kGemm: {
      if (!is_cpu(caps)) throw std::invalid_argument("matmul: impl=0 (packed CPU gemm) is for the cpu target");
      GemmTile t = tile_of(v);
      if (t.mr < 1 || t.nl < 1 || t.mr * t.nl + t.nl > 32 || t.kc < 0 || t.mc < 1 || t.nc < 1 || t.bf2 < 0 || t.bf2 > 1)
        throw std::invalid_argument("matmul: bad gemm tile " + v.str());
      if (t.bf2 && !pairs_fit(s))
        throw std::invalid_argument("matmul: bf2=1 (bf16 pairs) needs bf16 inputs and an even K: " + v.str());
      const Shape g = t.bf2 ? pair_shape(s) : s;  // what the macro-kernel steps over
      const ir::Type bt = t.bf2 ? pair_b_type(s) : s.dt;
      const int ap = t.ak == 1 ? 0 : plan_pack_a(pl, nio, g.at, 0, s.batch, s.m, g.k, g.k, t.mr, t.ak);
      if (t.pb) {  // B's panels packed inside the macro-kernel
        if (!pb_scratch_fits(t, g.k))
          throw std::invalid_argument("matmul: pb=1 needs a K slice (kc, else K) of at most 512 KiB of B panel: " + v.str());
        GemmBSource src;
        src.kind = GemmBSource::Raw;
        src.dt = bt;
        src.trans_b = s.trans_b;
        src.a_dt = g.at;  // A as ak = 1 reads it (f16/bf16 widened)
        plan_gemm_cpu(pl, t, ap, 1, 2, s.batch, s.m, s.n, g.k, GemmEpilogue::Store, nio, src);
        return pl;
      }
      int bp = plan_pack_b(pl, nio, bt, s.trans_b, 1, s.batch, s.n, g.k, t.nl, t.bf2);
      GemmBSource src;
      src.a_dt = g.at;
      plan_gemm_cpu(pl, t, ap, bp, 2, s.batch, s.m, s.n, g.k, GemmEpilogue::Store, nio, src);
      return pl;
    }
    case kTile: {
      if (!tile_fits(s, caps))
        throw std::invalid_argument("matmul: impl=7 (matrix tiles) needs bf16 A and B, an even K and a CPU with AMX-BF16");
      const auto [mc, nc, kc, sw] = tile_blocking(v, kTile);
      if (sw && !s.trans_b) throw std::invalid_argument("matmul: impl=7 sw=1 (Cᵀ = B·Aᵀ) needs trans_b=1: " + v.str());
      // Swapped: A's rows packed as the pair panels, B's rows read in place.
      const int bp = sw ? plan_pack_b(pl, nio, pair_b_type(s), true, 0, s.batch, s.m, s.k / 2, 2, true)
                        : plan_pack_b(pl, nio, pair_b_type(s), s.trans_b, 1, s.batch, s.n, s.k / 2, 2, true);
      plan_tile_product(pl, s, mc, nc, sw != 0, kc, sw ? 1 : 0, bp, 2);
      return pl;
    }
    case kTerms: {
      if (!terms_fits(s, caps))
        throw std::invalid_argument("matmul: impl=8 (bf16 terms) needs f16 A and B, or prec=1|2 with f32 A and f32 B or bf16 Bᵀ, "
                                    "and a CPU with AMX-BF16: " + v.str());
      const int parts = terms_parts(s);
      const int64_t seg = terms_seg(s);
      const int a = plan_bf16_terms(pl, nio, 0, s.batch * s.m, s.k, seg, s.k, parts, Bf16TermsSide::A, -1, s.at);
      // The bf16 product's variant: the tile blocking the variant names (mc, nc, sw, kc), else its heuristic.
      const TileBlocking tb = tile_blocking(v, kTerms);
      std::optional<Variant> iv;
      if (v.params.count("mc")) {
        iv = Variant{}.set("impl", kTile).set("mc", tb.mc).set("nc", tb.nc);
        if (tb.sw) iv->set("sw", 1);
        if (tb.kc) iv->set("kc", tb.kc);
      }
      plan_terms_b(pl, nio, s, iv, a, 1, 2, caps);
      return pl;
    }
    case kGemv: {
      if (!gemv_fits(s)) throw std::invalid_argument("matmul: impl=1 (gemv) needs M <= 64 and K >= 16 with trans_b (else M <= 4 and N, K % 16 == 0)");
      int rows = int(v.get("rows", 4));
      Step st;
      const int pf = int(v.get("pf", 0));
      if (rows < 1 || rows > 16 || pf < 0 || pf > 16) throw std::invalid_argument("matmul: bad gemv variant " + v.str());
      const bool pairs = v.get("bf2", 0) != 0;
      if (pairs && !gemv_pairs_fit(s))
        throw std::invalid_argument("matmul: impl=1 bf2=1 (bf16 pair GEMV) needs bf16 inputs, trans_b and K % 32 == 0: " + v.str());
      const int mg = int(v.get("mg", 0));
      if (mg < 0 || mg > 8 || (mg && !s.trans_b) || (s.m > 8 && !mg))
        throw std::invalid_argument("matmul: impl=1 mg (rows of A per pass, Bᵀ) must be 1..8, and is needed above M = 8: " + v.str());
      const int kp = int(v.get("kp", 1));
      if (kp < 1 || kp > 16 || (kp > 1 && (!s.trans_b || gemv_tail(s))))
        throw std::invalid_argument("matmul: impl=1 kp (K parts) is 1..16, for Bᵀ with K % 16 == 0: " + v.str());
      st.kernel = gemv_kernel(s.dt, s.trans_b, rows, int(s.m), s.trans_b ? pf : 0, pairs, mg, s.at, kp, gemv_tail(s));
      int64_t units = s.trans_b ? s.n : s.n / 16;
      st.dims.grid = {uint32_t((units + rows - 1) / rows), uint32_t(kp), uint32_t(s.batch)};
      const int part = kp > 1 ? pl.add_temp(nio, size_t(s.batch * kp * s.m * s.n) * 4) : 2;
      st.buffers = {0, 1, part};
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
      pl.steps.push_back(std::move(st));
      if (kp > 1) plan_ksplit_sum(pl, kp, part, 2, s.batch, s.m * s.n);
      return pl;
    }
    case kGemvKSplit: {
      if (!is_cpu(caps) || !kn_split_fits(s))
        throw std::invalid_argument("matmul: impl=4 (K-split GEMV) is for the CPU, a K×N B with N >= 16 and M <= " + std::to_string(kKnSplitMaxM));
      const int64_t ks = v.get("ks", 32);
      if (ks < 1 || ks > 64) throw std::invalid_argument("matmul: impl=4 ks must be 1..64: " + v.str());
      const int64_t kc = (s.k + ks - 1) / ks;
      // Partial rows of whole lines (N rounded up): see gemv_kn_split_kernel.
      const bool tail = s.n % 16 != 0;
      const int64_t pitch = (s.n + 15) / 16 * 16;
      const int part = pl.add_temp(nio, size_t(s.batch * ks * s.m * pitch) * 4);
      Step st;
      const bool shifted = v.get("sh") != 0;
      if (shifted && !kn_split_shift_fits(s, caps))
        throw std::invalid_argument("matmul: impl=4 sh=1 (shifted rows) needs f32 B, N % 16 != 0 and a runtime byte permute (AVX512-VBMI): " + v.str());
      const int kr = int(v.get("kr", 1));
      if (kr < 1 || kr > 8) throw std::invalid_argument("matmul: impl=4 kr (rows of B per pass) must be 1..8: " + v.str());
      const int lb = int(v.get("lb", 1));
      if ((lb != 1 && lb != 2 && lb != 4) || (lb > 1 && shifted))
        throw std::invalid_argument("matmul: impl=4 lb (lines per block) must be 1, 2 or 4, and 1 with sh=1: " + v.str());
      st.kernel = gemv_kn_split_kernel(s.dt, int(s.m), s.at, tail, shifted, kr, lb);
      st.dims.grid = {uint32_t(ks), 1, uint32_t(s.batch)};
      st.buffers = {0, 1, part};
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k)), ir::scalar_slot(uint32_t(kc))};
      pl.steps.push_back(std::move(st));
      plan_ksplit_sum(pl, int(ks), part, 2, s.batch, s.m * s.n, true, tail ? s.n : 0, pitch);
      return pl;
    }
    case kSwap: {
      if (!is_cpu(caps) || !swap_fits(s))
        throw std::invalid_argument("matmul: impl=5 (Cᵀ = B·Aᵀ) is for the CPU with trans_b=1 or an f32 K×N B");
      GemmTile t = tile_of(v);
      t.ak = s.trans_b ? 1 : 2, t.pb = 0, t.bpf = 0, t.gm = 0, t.ks = 1;
      if (!s.trans_b) t.apf = 0;  // ak = 2 prefetches its own lines
      if (t.bf2 && !pairs_fit(s)) throw std::invalid_argument("matmul: bf2=1 (bf16 pairs) needs bf16 inputs and an even K: " + v.str());
      const int64_t mp = swap_cols(s);
      if (t.mr < 1 || t.nl < 1 || t.mr * t.nl + t.nl > 32 || t.kc < 0 || t.kc % 16 || t.mc < 1)
        throw std::invalid_argument("matmul: bad impl=5 tile " + v.str());
      t.nc = int((mp + 16 * t.nl - 1) / (16 * t.nl));
      const Shape g = t.bf2 ? pair_shape(s) : s;
      // A packed as the panel operand: packed A's k-major layout with
      // panels of NR rows is the packed-B panel layout (Bp[panel][k][c]).
      const int ap = plan_pack_a(pl, nio, g.at, 0, s.batch, s.m, g.k, g.k, 16 * t.nl, 0);
      const int ct = pl.add_temp(nio, size_t(s.batch * s.n * mp) * 4);
      GemmBSource src;  // A packed; B's rows read as they are, f16/bf16 widened unless on pairs
      src.a_dt = t.bf2 ? pair_b_type(s) : s.dt;
      plan_gemm_cpu(pl, t, 1, ap, ct, s.batch, s.n, mp, g.k, GemmEpilogue::Store, nio, src);
      // Cᵀ (batch × N × Mp) -> C (batch × M × N): 16 × 16 blocks in registers.
      const int ta = int(std::min<int64_t>(8, mp / 16)), tb = 4;
      Step tr;
      tr.kernel = transpose_lines_kernel(ir::Type(ir::ScalarKind::F32), s.batch > 1 ? 1 : 0, ta, tb, false);
      tr.dims.grid = {groups_for(s.n, 16 * tb), groups_for(s.m, 16 * ta), uint32_t(s.batch)};
      tr.buffers = {ct, 2};
      tr.scalars = {ir::scalar_slot(uint32_t(s.m)), ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(1u), ir::scalar_slot(uint32_t(mp))};
      if (s.batch > 1) tr.scalars.insert(tr.scalars.end(), {ir::scalar_slot(uint32_t(s.batch)), ir::scalar_slot(uint32_t(s.n * mp))});
      pl.steps.push_back(std::move(tr));
      return pl;
    }
    case kGpu:
      plan_gemm_gpu(pl, s.at, s.trans_b, gpu_tile_of(v), 0, gpu_b(pl, s, nio), 2, s.batch, s.m, s.n, s.k, nio);
      return pl;
    case kGpuGemv: {
      if (!s.trans_b || s.m > kGpuGemvMaxM) throw std::invalid_argument("matmul: impl=3 (GPU gemv) needs trans_b=1 and M <= 8");
      const int wg = int(v.get("wg", 128));
      if (caps.max_workgroup_threads && uint32_t(wg) > caps.max_workgroup_threads)
        throw std::invalid_argument("matmul: wg " + std::to_string(wg) + " exceeds the target's workgroup size");
      Step st;
      st.kernel = gemv_gpu_kernel(s.at, int(s.m), wg, caps.subgroups);
      st.dims.grid = wrapped_grid(s.n, uint32_t(s.batch));
      st.dims.workgroup = {uint32_t(wg), 1, 1};
      st.buffers = {0, gpu_b(pl, s, nio), 2};
      st.scalars = {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(s.k))};
      pl.steps.push_back(std::move(st));
      return pl;
    }
  }
  throw std::invalid_argument("matmul: unknown impl in variant '" + v.str() + "'");
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const Shape s = shape_of(p);
  // f32 copies of the inputs (exact for f16/bf16), then double accumulation.
  const std::vector<float> a = fusion::load_all_as_f32(s.at.kind, in[0], s.batch * s.m * s.k);
  const std::vector<float> b = fusion::load_all_as_f32(p.dtype, in[1], s.batch * s.k * s.n);
  float* c = static_cast<float*>(out[0]);
  std::vector<double> row(size_t(s.n));
  for (int64_t z = 0; z < s.batch; ++z) {
    const float* A = a.data() + z * s.m * s.k;
    const float* B = b.data() + z * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t kk = 0; kk < s.k; ++kk) {
        double av = A[i * s.k + kk];
        if (s.trans_b)
          for (int64_t j = 0; j < s.n; ++j) row[size_t(j)] += av * B[j * s.k + kk];
        else
          for (int64_t j = 0; j < s.n; ++j) row[size_t(j)] += av * B[kk * s.n + j];
      }
      for (int64_t j = 0; j < s.n; ++j) c[(z * s.m + i) * s.n + j] = float(row[size_t(j)]);
    }
  }
}

Problem mm(int64_t m, int64_t n, int64_t k, int64_t trans_b = 0, int64_t batch = 1,
           ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = "matmul";
  p.dims = {m, n, k};
  p.dtype = dt;
  if (trans_b) p.attrs["trans_b"] = trans_b;
  if (batch != 1) p.attrs["batch"] = batch;
  return p;
}

Problem f32_a(Problem p) {
  p.attrs["a_f32"] = 1;
  return p;
}

}  // namespace

void plan_terms_product(Plan& pl, size_t n_io, int a_terms, int b, int c, int64_t m, int64_t n, int64_t k, int64_t prec,
                        const TargetCaps& caps) {
  Shape s{m, n, k, 1, true, ir::Type(ir::ScalarKind::F32), ir::Type(ir::ScalarKind::F32), prec};
  plan_terms_b(pl, n_io, s, std::nullopt, a_terms, b, c, caps);
}

void register_gated_mlp_op();  // ops/gated_mlp.cpp

void register_matmul_ops() {
  OpDef d;
  d.name = "matmul";
  d.attr_defaults = {{"trans_b", 0}, {"batch", 1}, {"a_f32", 0}, {"prec", 0}};
  d.description = "C = A·B (f32 C; f32/f16/bf16 A and B, or f32 A with a_f32=1, f32 accumulation); batched; B as K×N or N×K (trans_b=1)";
  d.dims_help = "M N K";
  d.attrs_help =
      "trans_b=0|1 batch=1 a_f32=0|1 (A f32 whatever dtype is: activations against f16/bf16 weights) prec=0|1|2 (f32 products "
      "allowed at a lower precision, as PyTorch's float32_matmul_precision: 1 'high', three bf16 products of two-term splits, "
      "within 3·2^-16 of each product; 2 'medium', bf16 products; taken on AMX hosts where the product is compute-bound; f16 A "
      "and B there: prec 0 four bf16 products of exact two-term splits, each product exact, 1 three, 2 one)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("a", s.at, {s.batch, s.m, s.k}),
                                   tensor("b", s.dt, s.trans_b ? std::vector<int64_t>{s.batch, s.n, s.k}
                                                               : std::vector<int64_t>{s.batch, s.k, s.n})};
  };
  d.outputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("c", ir::Type(ir::ScalarKind::F32), {s.batch, s.m, s.n})};
  };
  d.candidates = candidates;
  d.heuristic = heuristic;
  d.plan = plan;
  d.reference = reference;
  // f16 products as four bf16 terms sum 4K of them.
  d.tolerance = [](const Problem& p) {
    const bool f16 = p.dtype == ir::ScalarKind::F16 && !p.attr("a_f32", 0);
    return dot_tolerance(f16 ? 4 * p.dim(2) : p.dim(2)) + terms_tolerance(p.attr("prec", 0));
  };
  d.flops = [](const Problem& p) {
    Shape s = shape_of(p);
    return 2.0 * double(s.batch) * double(s.m) * double(s.n) * double(s.k);
  };
  d.bytes = [](const Problem& p) {
    Shape s = shape_of(p);
    return double(s.batch) * (double(s.at.bytes()) * double(s.m * s.k) + double(s.dt.bytes()) * double(s.k * s.n) +
                              4.0 * double(s.m * s.n));
  };
  using ir::ScalarKind;
  d.test_problems = {mm(1, 1, 1),
                     mm(17, 33, 29),
                     mm(65, 1, 130),
                     mm(37, 70, 300, 1),
                     mm(29, 45, 600),  // K slices with an edge slice
                     mm(20, 30, 2100, 0, 2),  // one M×N block per batch: the heuristic splits K in 4
                     mm(30, 64, 40, 0, 3),
                     mm(15, 19, 23, 1, 3),
                     mm(20, 50, 33, 0, 1, ScalarKind::F16),
                     mm(20, 50, 33, 1, 1, ScalarKind::BF16),
                     mm(21, 50, 34, 1, 1, ScalarKind::BF16),   // bf16 pairs where the host has vdpbf16ps
                     mm(37, 70, 130, 0, 2, ScalarKind::BF16),  // ... K×N, batched
                     mm(1, 77, 96, 1, 1, ScalarKind::BF16),    // ... the pair GEMV, N odd
                     mm(45, 70, 66, 1, 1, ScalarKind::BF16),   // matrix tiles, swapped: whole 32×32 blocks, edges, a K tail of one pair
                     mm(7, 77, 64, 1), mm(6, 50, 96, 1, 1, ScalarKind::BF16),  // GEMV over Bᵀ with 5-8 rows of A
                     mm(21, 45, 64, 1), mm(17, 33, 96, 1, 1, ScalarKind::BF16),  // ... and in groups of rows (a partial last group)
                     mm(1, 100, 64, 1),      // gemv, N not a multiple of the rows
                     mm(3, 48, 32, 0, 2),    // gemv over K×N, batched
                     mm(2, 64, 48, 0, 3), mm(4, 32, 80, 0, 1, ScalarKind::BF16),  // ... split along K
                     mm(2, 40, 48, 1, 1, ScalarKind::F16),
                     mm(130, 96, 64, 1), mm(70, 300, 50, 1),  // ... the swapped product in panels of 5 lines
                     mm(300, 3, 3), mm(70, 16, 1, 1), mm(75, 5, 12, 0, 2),  // thin products: rows in lanes, batched
                     mm(1, 37, 29, 0, 2), mm(2, 21, 53, 0, 1, ScalarKind::BF16),  // K-split GEMV, N off lines (masked tail)
                     mm(1, 37, 29, 1, 2), mm(3, 45, 53, 1, 1, ScalarKind::BF16), mm(12, 30, 40, 1),  // Bᵀ GEMV, K off lines (masked tail)
                     f32_a(mm(2, 33, 17, 1, 1, ScalarKind::F16)),
                     f32_a(mm(1, 33, 40, 0, 1, ScalarKind::F16)),
                     mm(70, 16, 100), mm(45, 30, 70, 0, 2),  // 1- and 2-line register blocks (skinny N)
                     // f32 A against f16/bf16 B (a_f32): the GEMVs, the K-split GEMV, the swapped product, the GEMM
                     f32_a(mm(1, 77, 96, 1, 1, ScalarKind::BF16)), f32_a(mm(3, 48, 64, 0, 1, ScalarKind::F16)),
                     f32_a(mm(40, 300, 70, 1, 2, ScalarKind::BF16)), f32_a(mm(45, 70, 130, 1, 1, ScalarKind::F16)),
                     f32_a(mm(37, 33, 29, 0, 1, ScalarKind::BF16)),
                     // ... one long f32 row of A (K in two parts at 1 thread, 8 rows of B at 2), K off lines
                     f32_a(mm(1, 20, 8192, 1, 1, ScalarKind::BF16)), f32_a(mm(1, 19, 8200, 1, 1, ScalarKind::F16))};
  d.bench_problems = {mm(1024, 1024, 1024), mm(2048, 2048, 2048), mm(1, 4096, 4096, 1)};
  register_op(std::move(d));
  register_gated_mlp_op();
}

}  // namespace kgen::ops
