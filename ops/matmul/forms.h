// The forms (impls) of the matmul family's ops and which of them fit a
// problem on a target: facts that the candidate lists, the plans and the
// strategy (ops/matmul/strategy.h) all check. No choice is made here.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/core/op.h"
#include "ops/matmul/bf16_terms.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"

namespace kgen::ops::matmul {

// Variant param "impl" of the matmul op (ops/matmul/ops.cpp describes each).
enum Impl : int64_t { kGemm = 0, kGemv = 1, kGpu = 2, kGpuGemv = 3, kGemvKSplit = 4, kSwap = 5, kNarrow = 6, kTile = 7, kTerms = 8 };
// The CPU GEMV over a K×N B takes up to 4 rows of A.
constexpr int kGemvMaxM = 4;
// The GPU GEMV (gemv_gpu_kernel) takes up to 8 rows of A.
constexpr int kGpuGemvMaxM = 8;
// The CPU GEMV over Bᵀ rows takes up to 64 rows of A, above 8 in groups of
// mg rows per pass over the work-item's rows of B (its accumulators stay in
// registers).
constexpr int kGemvMaxRowsT = 64;
// The K-split GEMV over a K×N B: up to 32 rows of A, whose partial rows (M ×
// N per split) stay in L2 that far.
constexpr int kKnSplitMaxM = 32;

struct Shape {
  int64_t m, n, k, batch;
  bool trans_b;
  ir::Type dt;   // B's element type (and A's, unless a_f32)
  ir::Type at;   // A's: f32 with a_f32=1 (f32 activations against f16/bf16 weights)
  int64_t prec;  // f32 products: 0 IEEE, 1 as three bf16 products, 2 as one (ops/matmul/bf16_terms.h)
};
inline Shape shape_of(const Problem& p) {
  const ir::Type dt(p.dtype);
  return {p.dim(0), p.dim(1), p.dim(2), p.attr("batch", 1), p.attr("trans_b", 0) != 0, dt,
          p.attr("a_f32", 0) ? ir::Type(ir::ScalarKind::F32) : dt, p.attr("prec", 0)};
}

// bf16 inputs with an even K can run the GEMM on pairs of k (GemmTile::bf2):
// one dot2_bf16 (vdpbf16ps) per line and pair does two fmas' work. The
// pair kernels see K/2 steps of u32 words (A's rows, and Bᵀ's, are read as
// words; a K×N B as u16 rows joined in pairs).
inline bool pairs_fit(const Shape& s) {
  return s.dt == ir::ScalarKind::BF16 && s.at == ir::ScalarKind::BF16 && s.k % 2 == 0;
}
inline Shape pair_shape(Shape s) {
  s.k /= 2;
  s.dt = s.at = ir::Type(ir::ScalarKind::U32);
  return s;
}
// B's element type as the pair kernels read it.
inline ir::Type pair_b_type(const Shape& s) { return ir::Type(s.trans_b ? ir::ScalarKind::U32 : ir::ScalarKind::U16); }

// The GEMV on bf16 pairs: Bᵀ rows of whole 32-element lines.
inline bool gemv_pairs_fit(const Shape& s) { return pairs_fit(s) && s.trans_b && s.k % 32 == 0; }

// The GEMV: Bᵀ takes any K from 16 (K % 16 != 0: a masked last line per
// row, no K parts); a K×N B whole lines of N and K.
inline bool gemv_fits(const Shape& s) {
  if (s.m > (s.trans_b ? kGemvMaxRowsT : kGemvMaxM)) return false;
  return s.trans_b ? s.k >= 16 : (s.n % 16 == 0 && s.k % 16 == 0);
}
inline bool gemv_tail(const Shape& s) { return s.trans_b && s.k % 16 != 0; }

// The K-split GEMV over a K×N B takes any K, and any N from 16 (a masked
// last line per row where N % 16 != 0: a vocabulary of 50257 columns).
inline bool kn_split_fits(const Shape& s) { return !s.trans_b && s.m <= kKnSplitMaxM && s.n >= 16; }
// B small enough to stay in the cache between calls (32 MiB).
inline bool b_cached(const Shape& s) {
  return double(s.n) * double(s.k) * double(ir::Type(s.dt).bytes()) <= 32.0 * 1048576.0;
}
// ... with B's unaligned f32 rows read as shifted aligned lines (sh=1),
// where a runtime 64-byte byte permute is one instruction.
inline bool kn_split_shift_fits(const Shape& s, const TargetCaps& caps) {
  return kn_split_fits(s) && s.n % 16 != 0 && s.dt == ir::ScalarKind::F32 && caps.byte_lookup;
}

// The bf16 GEMM on a matrix engine (impl 7, gemm_tile_kernel): bf16 A and
// B, an even K, a CPU with matrix tiles (AMX-BF16).
inline bool tile_fits(const Shape& s, const TargetCaps& caps) { return is_cpu(caps) && caps.matrix_tiles && pairs_fit(s); }
// 32-row (column) blocks of x rows (columns).
inline int64_t tile_blocks(int64_t x) { return groups_for(x, 32); }
// The swapped tile product (sw=1): Bᵀ, 4-512 rows of A.
inline bool tile_swap_fits(const Shape& s) { return s.trans_b && s.m >= 4 && s.m <= 512; }

// f32 products at a reduced precision (prec 1 or 2) on the matrix engine
// (impl 8): A and B split into bf16 terms laid along K
// (ops/matmul/bf16_terms.h), each part's K rounded up to even (pair words,
// zeros past K), then the bf16 product of depth parts·Kp as the matmul op
// runs it. f32 A against bf16 Bᵀ (a_f32) too: B is exact, so A's [hi | lo]
// each against B's one set of panels (prec 1; gemm_tile_kernel's a_parts)
// or hi against B. f16 A and B at any prec: 4 terms (exact products) at
// prec 0.
inline bool terms_b_bf16(const Shape& s) { return s.dt == ir::ScalarKind::BF16; }
inline bool terms_f16(const Shape& s) { return s.dt == ir::ScalarKind::F16 && s.at == ir::ScalarKind::F16; }
inline bool terms_fits(const Shape& s, const TargetCaps& caps) {
  if (!is_cpu(caps) || !caps.matrix_tiles) return false;
  if (terms_f16(s)) return true;
  if (s.prec == 0 || s.at != ir::ScalarKind::F32) return false;
  return s.dt == ir::ScalarKind::F32 || (terms_b_bf16(s) && s.trans_b);
}
inline int terms_parts(const Shape& s) {
  return terms_f16(s) ? f16_terms_parts(s.prec) : bf16_terms_parts(s.prec, terms_b_bf16(s));
}
inline int64_t terms_seg(const Shape& s) { return bf16_terms_seg(s.k); }
// The bf16 product the terms run as.
inline Problem terms_problem(const Shape& s) {
  Problem q;
  q.op = "matmul";
  q.dims = {s.m, s.n, terms_parts(s) * terms_seg(s)};
  q.dtype = ir::ScalarKind::BF16;
  if (s.trans_b) q.attrs["trans_b"] = 1;
  if (s.batch != 1) q.attrs["batch"] = s.batch;
  return q;
}

// The rows-in-lanes form (impl 6, ops/matmul/narrow.h): f32, K and N of at
// most 16.
inline bool narrow_fits(const Shape& s) {
  return s.dt == ir::ScalarKind::F32 && s.at == ir::ScalarKind::F32 && s.k <= 16 && s.n <= 16;
}

// The swapped product (impl 5) Cᵀ = B·Aᵀ on the GEMM macro-kernel: B's rows
// are its broadcast operand, read where they are (Bᵀ: ak = 1, each row a
// sequential stream; an f32 K×N B read column-major: ak = 2), and A, small,
// is packed as its panel operand; the product goes to a scratch Cᵀ (N × Mp,
// Mp = M rounded up to 16 so its rows are whole lines) which a transpose
// launch turns into C. f32; f16 and bf16 Bᵀ with each broadcast value of B
// widened, or bf16 on pairs (B's rows as u32 words).
inline bool swap_fits(const Shape& s) {
  return s.trans_b || (s.dt == ir::ScalarKind::F32 && s.at == ir::ScalarKind::F32);
}
inline int64_t swap_cols(const Shape& s) { return (s.m + 15) / 16 * 16; }

// Workgroups of the CPU GEMM's M×N blocking (over the whole batch).
inline int64_t gemm_blocks(const Shape& s, const GemmTile& t) {
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  return cdiv(cdiv(s.n, t.nr()), t.nc) * cdiv(cdiv(s.m, t.mr), t.mc) * s.batch;
}
// In-kernel B packing (GemmTile::pb): one row group covers all of M, and its
// panel scratch (a K slice × NR floats) stays within 512 KiB.
inline bool pb_fits(const Shape& s, const GemmTile& t) {
  return t.mc >= (s.m + t.mr - 1) / t.mr && pb_scratch_fits(t, s.k);
}

}  // namespace kgen::ops::matmul

namespace kgen::ops::gated_mlp {

// Variant param "impl" of the gated_mlp op (ops/matmul/gated_mlp.cpp describes each).
enum Impl : int64_t { kFused = 0, kUnfused = 1, kGpu = 2, kComposed = 3, kTerms = 4 };

// bf16 weights with an even D can run the [G;U] GEMM on pairs of k
// (GemmTile::bf2, as matmul's): X, G and U read as u32 words of two bf16,
// one dot2_bf16 (vdpbf16ps) per line and pair, K = D/2 steps. H stays f32,
// and the down projection widens Dn to f32, unless h_bf16 rounds H to bf16:
// then the epilogue writes H as pair words and the down GEMM runs on pairs.
inline bool pairs_fit(const Problem& p) { return p.dtype == ir::ScalarKind::BF16 && p.dim(1) % 2 == 0; }

// f32 with prec=1|2 as bf16 terms on matrix tiles (impl 4).
inline bool terms_fit(const Problem& p, const TargetCaps& caps) {
  return is_cpu(caps) && caps.matrix_tiles && p.dtype == ir::ScalarKind::F32 && p.attr("prec", 0) != 0;
}

// Register blocks for the fused [G;U] GEMM: nl even (gate and up lines in
// pairs), fitting this CPU's registers (AVX2 has room for 2 × 2 lines only).
inline std::vector<std::pair<int, int>> fused_blocks(const TargetCaps& caps) {
  std::vector<std::pair<int, int>> out;
  for (auto [mr, nl] : gemm_register_blocks(caps))
    if (nl % 2 == 0 && out.size() < 2) out.push_back({mr, nl});  // two are enough to tune (each run is long)
  if (out.empty()) out.push_back({2, 2});
  return out;
}

}  // namespace kgen::ops::gated_mlp
