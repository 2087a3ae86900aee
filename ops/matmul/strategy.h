// The matmul family's choice of variant on every target (ops/matmul/strategy.cpp):
// the untuned choices of the matmul and gated_mlp ops, and the default GEMM
// tiles that other families' plans take too (conv, quant, attention). The only
// place of the family that reads the CPU's identity (TargetCaps::cpu).
#pragma once
#include <cstdint>

#include "ops/core/op.h"
#include "ops/matmul/matmul.h"

namespace kgen::ops {

// The OpDefs' heuristics.
Variant matmul_heuristic(const Problem& p, const TargetCaps& caps);
Variant gated_mlp_heuristic(const Problem& p, const TargetCaps& caps);

// The untuned CPU tile for an M×N×K product on this CPU's register file.
// narrow_n: N of 32 or fewer columns takes a block of 1 or 2 lines on a wide
// register file (the matmul op's GEMM; other users keep their usual blocks).
GemmTile default_cpu_tile(int64_t m, int64_t n, int64_t k, const TargetCaps& caps, bool narrow_n = false);

// The GPU GEMM tile for an M×N×K product: the f32x4-line 128×128 tiles with
// the next tile's loads in registers (vec 2, tk 16) from 65×256, else 4×4
// blocks (2×2 below 64, keeping more workgroups). Given K (k > 0): the
// swapped product where swap_fits_gpu, and a K split (gpu_k_split) where the
// tiles are too few to fill the GPU.
GpuTile default_gpu_tile(int64_t m, int64_t n, int64_t k = 0, bool trans_b = false, int64_t batch = 1,
                         uint32_t max_shared_bytes = 0);
// Bᵀ with 5-64 rows of A against N ≥ 1024: Cᵀ = B·Aᵀ on 128×64 line tiles,
// whose 64 columns A's rows fill where they would fill half of 128 rows or less.
bool swap_fits_gpu(int64_t m, int64_t n, int64_t k, bool trans_b);
// The K split that brings the line tiles' workgroups to kGpuGroupsWanted
// (2 waves on a 132-SM H100/H200), keeping ≥ 512 of K per split; at most 8.
constexpr int64_t kGpuGroupsWanted = 256;
int gpu_k_split(const GpuTile& t, int64_t m, int64_t n, int64_t k, int64_t batch);
// The split (a power of two, at most 8) of a product of `tiles` workgroups
// over depth k that reaches kGpuGroupsWanted, keeping ≥ min_k per split.
int gpu_k_split_for(int64_t tiles, int64_t k, int64_t min_k);

namespace matmul {

struct Shape;  // ops/matmul/forms.h
// The matrix-tile blocking (impl 7) of a bf16 product, unswapped and
// swapped (sw=1, Bᵀ).
Variant tile_variant(const Shape& s, const TargetCaps& caps);
Variant tile_swapped_variant(const Shape& s, const TargetCaps& caps);
// The swapped product's (impl 5) default tile.
GemmTile swap_tile(const Shape& s, const TargetCaps& caps);

}  // namespace matmul

}  // namespace kgen::ops
