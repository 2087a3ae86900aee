// Plan building blocks shared by the matmul and gated_mlp ops: each appends
// the launches (and temporaries) of one stage of a GEMM to a Plan.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/matmul.h"
#include "ops/op.h"

namespace kgen::ops {

// Packs A (batch × M × K, rows lda apart) into a new temporary; returns its slot.
int plan_pack_a(Plan& pl, size_t nio, ir::Type dt, int a, int64_t batch, int64_t m, int64_t k, int64_t lda, int mr,
                int ak = 0);
// Packs B (batch × K × N, or batch × N × K when trans_b) into a new temporary.
// `pairs` (GemmTile::bf2): k counts bf16 pairs; dt is u32 (trans_b: pair
// words) or u16 (K×N: bf16 bits, rows 2k and 2k + 1 joined).
int plan_pack_b(Plan& pl, size_t nio, ir::Type dt, bool trans_b, int b, int64_t batch, int64_t n, int64_t k, int nl,
                bool pairs = false);
// The macro-kernel over packed ap/bp into c (n = C's columns).
// A K split (t.ks > 1) needs `nio` (the op's tensor count) for its partials.
// B from `src`: Packed reads slot bp (packed lines); Raw reads B itself from
// slot bp; GateUp reads G from bp and U from `up`, with f features.
void plan_gemm_cpu(Plan& pl, const GemmTile& t, int ap, int bp, int c, int64_t batch, int64_t m, int64_t n, int64_t k,
                   GemmEpilogue ep = GemmEpilogue::Store, size_t nio = 0, const GemmBSource& src = {}, int up = -1,
                   int64_t f = 0);
// The in-kernel B panel scratch (GemmTile::pb) for a product of depth k:
// its depth in k (kc, else a K split's range rounded up to 16), and whether
// it stays within 512 KiB (the plans' bound; the kernel allows 1 MiB).
int64_t pb_depth(const GemmTile& t, int64_t k);
bool pb_scratch_fits(const GemmTile& t, int64_t k);
// The launch adding up ks partial products part[batch][ks][mn] into c
// (matmul_ksplit_sum_kernel; index64 = false for the GPU dialects). With
// n > 0 the partials are rows of n elements `pitch` apart (mn / n rows).
void plan_ksplit_sum(Plan& pl, int ks, int part, int c, int64_t batch, int64_t mn, bool index64 = true, int64_t n = 0,
                     int64_t pitch = 0);
// C = A·B (or A·Bᵀ) on a GPU target with the shared-memory kernel; a K
// split (t.ks > 1) needs `nio` (the op's tensor count) for its partials.
void plan_gemm_gpu(Plan& pl, ir::Type dt, bool trans_b, const GpuTile& t, int a, int b, int c, int64_t batch, int64_t m,
                   int64_t n, int64_t k, size_t nio = 0);

// The untuned CPU tile for an M×N×K product on this CPU's register file.
// narrow_n: N of 32 or fewer columns takes a block of 1 or 2 lines on a wide
// register file (the matmul op's GEMM; other users keep their usual blocks).
GemmTile default_cpu_tile(int64_t m, int64_t n, int64_t k, const TargetCaps& caps, bool narrow_n = false);
// True on a register file that holds the 2-4 line blocks (32 zmm).
bool gemm_wide_registers(const TargetCaps& caps);
// Register blocks (mr, nl) worth trying on this CPU, the default first: the
// mr·nl accumulator lines, nl B lines and a broadcast fit the register file
// (32 zmm on AVX-512: 14×2 lines; 16 ymm on AVX2, two per line: 6×1).
std::vector<std::pair<int, int>> gemm_register_blocks(const TargetCaps& caps);
// True when an (mr, nl) block keeps its accumulators in registers.
bool gemm_block_fits(int mr, int nl, const TargetCaps& caps);
// Variant parameters <-> tiles.
GemmTile tile_of(const Variant& v);
Variant variant_of(const GemmTile& t);
GpuTile gpu_tile_of(const Variant& v);
// The GPU GEMM tile for an M×N×K product and its variant: the f32x4-line
// 128×128 tiles with the next tile's loads in registers (vec 2, tk 16) from
// 65×256 (H100, 128 × 11008 × 4096: 1.19 ms on 4×4 blocks, 0.42 on line
// tiles with a K split of 4; H200, kgen tune: 1024³ 0.129 ms, 2048³ 0.452, 4096³ 3.50, against
// 0.22, 1.17 and 8.8 for the best scalar tiles and 0.142, 0.483, 3.77 for
// vec 1; cuBLAS fp32 in the same run 0.078, 0.377, 2.72), else 4×4 blocks
// (2×2 below 64, keeping more workgroups). Given K (k > 0): the swapped
// product where swap_fits_gpu, and a K split (gpu_k_split) where the tiles
// are too few to fill the GPU.
GpuTile default_gpu_tile(int64_t m, int64_t n, int64_t k = 0, bool trans_b = false, int64_t batch = 1,
                         uint32_t max_shared_bytes = 0);
// Bᵀ with 5-64 rows of A against N ≥ 1024: Cᵀ = B·Aᵀ on 128×64 line tiles
// (A's rows fill the 64 columns, where they would fill half of 128 rows or
// less). H100, 64 × 11008 × 4096: 0.27 ms against 0.42 for the best
// unswapped tile (K split 4); at 128 rows the two are even (0.44 / 0.42).
bool swap_fits_gpu(int64_t m, int64_t n, int64_t k, bool trans_b);
// The K split that brings the line tiles' workgroups to kGpuGroupsWanted
// (2 waves on a 132-SM H100/H200), keeping ≥ 512 of K per split; at most 8.
// H100: 1024³ 0.134 ms unsplit, ks 2 / 4 / 8 0.080 / 0.087 / 0.104; 64 ×
// 11008 × 4096 swapped, ks 1 / 2 / 4 / 8 0.332 / 0.329 / 0.271 / 0.280.
constexpr int64_t kGpuGroupsWanted = 256;
int gpu_k_split(const GpuTile& t, int64_t m, int64_t n, int64_t k, int64_t batch);
// The split (a power of two, at most 8) of a product of `tiles` workgroups
// over depth k that reaches kGpuGroupsWanted, keeping ≥ min_k per split.
int gpu_k_split_for(int64_t tiles, int64_t k, int64_t min_k);
Variant gpu_tile_variant(const GpuTile& t);

// |err| bound for an f32-accumulated dot product of length k (relative to
// max(|want|, rms(want))).
double dot_tolerance(int64_t k);

// C (m × n f32) = A·Bᵀ at prec 1|2 as matmul impl=8 runs it, with A's terms
// split already (slot a_terms: m × parts·seg bf16, bf16_terms.h's A side,
// seg = bf16_terms_seg(k)) and B f32 n × k (slot b): the gated MLP's
// products sharing one split of X, or of H from its fused pass.
void plan_terms_product(Plan& pl, size_t n_io, int a_terms, int b, int c, int64_t m, int64_t n, int64_t k, int64_t prec,
                        const TargetCaps& caps);

}  // namespace kgen::ops
