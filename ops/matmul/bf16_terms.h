// f32 operands of a product as bf16 terms, for f32 matmuls on a bf16 matrix
// engine at a reduced but bounded precision (the `prec` attribute of matmul
// and gated_mlp, as PyTorch's set_float32_matmul_precision):
//   prec=1 ("high"): x = hi + lo + e with hi = bf16(x), lo = bf16(x - hi),
//     |e| <= 2^-16 |x|. A·B ~ hi_a·hi_b + hi_a·lo_b + lo_a·hi_b: one bf16
//     product of depth 3K over A' = [hi | hi | lo] and B' = [hi | lo | hi]
//     (parts laid along K). Each f32 product is off by at most ~3·2^-16 of
//     itself (lo_a·lo_b and the two e terms); the sums stay in f32.
//   prec=2 ("medium"): A' = hi_a, B' = hi_b (2^-8 of each operand).
//   f32 A against bf16 B (matmul's a_f32): B is exact, so A' = [hi | lo],
//     each part against B (each product within 2^-16), or hi against B.
// AMX multiplies bf16 at ~6x the f32 fma rate of a core, so three products
// still run ~2x an f32 GEMM where the product is compute-bound.
#pragma once
#include "ir/ir.h"
#include "ops/core/op.h"

namespace kgen::ops {

// What the terms add to a dot product's tolerance (relative to the larger
// of the element and the output's rms): 0 for prec 0; 2^-12 for prec 1,
// 16x its products' worst error of 3·2^-16 (measured: 1.6-1.7e-5 at 37 ×
// 70 × 131 and 1024³); 2^-5 for prec 2, 4x its 2^-7 (measured 0.007-0.010).
// Each is far below what losing a term costs (prec 1 without lo: ~2^-8).
double terms_tolerance(int64_t prec);

// f16 operands (11 significant bits) are hi + lo exactly (lo keeps the 3
// bits bf16 drops), so an f16 product is four bf16 products, each exact in
// f32, summed in f32 like the widened f32 GEMM's: prec 0 takes all four
// (A' = [hi | hi | lo | lo], B' = [hi | lo | hi | lo]), prec 1 drops lo·lo
// (each product within 2^-18 of itself), prec 2 keeps hi·hi.
int f16_terms_parts(int64_t prec);

// Which of a value's terms {hi, lo, hi2} (0, 1, 2) part j of `parts` holds
// on a side: the A and B orders pair up hi·hi, hi·lo, lo·hi (and lo·lo).
enum class Bf16TermsSide { A, B };
int bf16_term_index(int j, int parts, Bf16TermsSide side);

// Each part's depth for a product of depth k: k rounded up to whole pairs
// (the tile product's pair words), zeros past k.
int64_t bf16_terms_seg(int64_t k);

// Terms per value for a precision: 3 (prec 1) or 1 (prec 2); against bf16
// B (exact), A's: 2 ([hi | lo]) or 1.
int bf16_terms_parts(int64_t prec, bool b_bf16 = false);

// y (bf16) row r = parts segments of `seg` columns each: segment j holds the
// side's term j of x's row r (its `cols` values at x[r·pitch + c]), zeros
// from `cols` to `seg`. A: [hi | hi | lo], or [hi | lo] (parts 2: each
// against bf16 B); B: [hi | lo | hi]. gated: the value is silu(x[i])·u[i] (the gated MLP's H
// from its gate and up products). x f32, or f16 (not gated; 4 parts: A
// [hi | hi | lo | lo], B [hi | lo | hi | lo]). One work-item per 256
// columns of a row: grid (ceil(seg/256), rows).
ir::Kernel bf16_terms_kernel(int parts, Bf16TermsSide side, bool gated = false, ir::Type src = ir::Type(ir::ScalarKind::F32));

// Appends a split of slot src (rows × cols f32, row pitch `pitch`; with
// `up` >= 0 the SiLU·product of src and slot up) into a new bf16 temporary
// of rows × parts·seg; returns its slot.
int plan_bf16_terms(Plan& pl, size_t n_io, int src, int64_t rows, int64_t cols, int64_t seg, int64_t pitch, int parts,
                    Bf16TermsSide side, int up = -1, ir::Type src_dt = ir::Type(ir::ScalarKind::F32));

// B's terms straight into the tile product's pair panels (ops/matmul/matmul.h
// gemm_tile_kernel): Bᵀ (rows × cols f32 per batch, cols = K) becomes
// panels of 32 rows, each `parts`·seg/2 pair rows of 32 u32 words, part j's
// pair rows from j·seg/2 (terms ordered as the B side's; zeros past `cols`
// and past `rows`). One pass instead of a split and a packing launch (10
// bytes of traffic per element instead of 22). One work-item per 16 pairs of
// 16 rows: grid (ceil(seg/32), 2·panels, batch); scalars rows, cols, seg.
// src bf16 (f32 A against bf16 weights, a_f32; parts 1): B is exact, its
// panels are B itself, each of A's [hi | lo] against them (gemm_tile_kernel's
// a_parts). src f16: 1, 3 or 4 parts, as f32's.
ir::Kernel bf16_terms_panels_kernel(int parts, ir::Type src = ir::Type(ir::ScalarKind::F32));
// Appends it for slot src (batch × rows × cols, Bᵀ); returns the panels' slot.
int plan_bf16_terms_panels(Plan& pl, size_t n_io, int src, int64_t batch, int64_t rows, int64_t cols, int64_t seg, int parts,
                           ir::Type src_dt = ir::Type(ir::ScalarKind::F32));
// The same panels from a K×N B (batch × K × N, f32 or f16; 1, 3 or, for
// f16, 4 parts): rows k and k + 1 are a pair row lane by lane, no
// transpose. One work-item per 16 pair rows of a panel (32 columns): grid
// (ceil(seg/32), panels, batch); scalars k, n, seg.
ir::Kernel bf16_terms_kn_panels_kernel(int parts, ir::Type src);
int plan_bf16_terms_kn_panels(Plan& pl, size_t n_io, int src, int64_t batch, int64_t k, int64_t n, int64_t seg, int parts,
                              ir::Type src_dt);

}  // namespace kgen::ops
