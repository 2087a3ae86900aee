// Plan building blocks shared by the matmul and gated_mlp ops: each appends
// the launches (and temporaries) of one stage of a GEMM to a Plan.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/core/op.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/strategy.h"  // the default tiles, which other families' plans take too

namespace kgen::ops {

// A fused epilogue (ops/matmul/epilogue.h) as a plan hands it to the launch
// that stores C: its spec and its operands' slots.
struct EpilogueUse {
  const EpilogueSpec* spec = nullptr;
  std::vector<int> slots;
};

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
// eu: the macro-kernel (or with t.ks > 1 the sum) applies that epilogue.
void plan_gemm_cpu(Plan& pl, const GemmTile& t, int ap, int bp, int c, int64_t batch, int64_t m, int64_t n, int64_t k,
                   GemmEpilogue ep = GemmEpilogue::Store, size_t nio = 0, const GemmBSource& src = {}, int up = -1,
                   int64_t f = 0, const EpilogueUse* eu = nullptr);
// The in-kernel B panel scratch (GemmTile::pb) for a product of depth k:
// its depth in k (kc, else a K split's range rounded up to 16), and whether
// it stays within 512 KiB (the plans' bound; the kernel allows 1 MiB).
int64_t pb_depth(const GemmTile& t, int64_t k);
bool pb_scratch_fits(const GemmTile& t, int64_t k);
// The launch adding up ks partial products part[batch][ks][mn] into c
// (matmul_ksplit_sum_kernel; index64 = false for the GPU dialects). With
// n > 0 the partials are rows of n elements `pitch` apart (mn / n rows).
// eu: the sum applies that epilogue on C's cols columns.
void plan_ksplit_sum(Plan& pl, int ks, int part, int c, int64_t batch, int64_t mn, bool index64 = true, int64_t n = 0,
                     int64_t pitch = 0, const EpilogueUse* eu = nullptr, int64_t cols = 0);
// C = A·B (or A·Bᵀ) on a GPU target with the shared-memory kernel; a K
// split (t.ks > 1) needs `nio` (the op's tensor count) for its partials.
// eu: the tile kernel (or with t.ks > 1 the sum) applies that epilogue.
void plan_gemm_gpu(Plan& pl, ir::Type dt, bool trans_b, const GpuTile& t, int a, int b, int c, int64_t batch, int64_t m,
                   int64_t n, int64_t k, size_t nio = 0, const EpilogueUse* eu = nullptr);

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
Variant gpu_tile_variant(const GpuTile& t);

// |err| bound for an f32-accumulated dot product of length k (relative to
// max(|want|, rms(want))).
double dot_tolerance(int64_t k);

// C (m × n f32) = A·Bᵀ at prec 1|2 as matmul impl=8 runs it, with A's terms
// split already (slot a_terms: m × parts·seg bf16, ops/matmul/bf16_terms.h's A side,
// seg = bf16_terms_seg(k)) and B f32 n × k (slot b): the gated MLP's
// products sharing one split of X, or of H from its fused pass.
void plan_terms_product(Plan& pl, size_t n_io, int a_terms, int b, int c, int64_t m, int64_t n, int64_t k, int64_t prec,
                        const TargetCaps& caps);

}  // namespace kgen::ops
