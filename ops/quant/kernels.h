// DSL kernels of the quantized-weight family (formats: ops/quant/formats.h).
//
// Packed tensors reach a kernel either as a u8 buffer (the CPU: byte loads
// that clang merges into vector loads) or as u32 words (any target: WGSL
// has no 8-bit storage; blocks are only 2-byte aligned, so a byte is picked
// out of its word with a shift). The bytes in memory are the same; device
// buffers of packed tensors are padded to whole words (padded_bytes).
#pragma once
#include <functional>
#include <string>

#include "dsl/dsl.h"
#include "ir/ir.h"
#include "ops/quant/formats.h"

namespace kgen::ops::quant {

// Q5_0 / Q5_1: bit 16g + j of the block's u32 qh as 0x10 in byte j (u8x16),
// the fifth bit of element 16g + j's code.
dsl::Value q5_high_bits(const dsl::Value& qh, uint32_t g);

// Reads the packed bytes of a buffer parameter. Offsets are u32 byte offsets.
struct PackedBytes {
  dsl::Array buf;
  bool words = false;        // buf holds u32 words (else u8)
  bool native_f16 = false;   // convert halves with the f16 type (else integer bit manipulation)

  dsl::Value byte(const dsl::Value& off) const;    // u32 in [0, 255]
  dsl::Value sbyte(const dsl::Value& off) const;   // i32 in [-128, 127]
  dsl::Value half(const dsl::Value& off) const;    // f32 from f16 bits at an even offset
  dsl::Value half_splat(const dsl::Value& off, int lanes = 16) const;  // the same as an f32 line of copies
  dsl::Value u32le(const dsl::Value& off) const;   // little-endian u32 at an even offset (any offset in u8 buffers)
  // 16 bytes from `off` as a u8x16 line (u8 buffers only).
  dsl::Value line16(const dsl::Value& off) const;
};

// f16 bits (in a u32) to f32 with integer operations (subnormals, Inf, NaN).
dsl::Value half_bits_to_f32(const dsl::Value& h);
// f32 to f16 bits (u32), round to nearest even, with integer operations.
dsl::Value f32_to_half_bits(const dsl::Value& x);

// Element e (u32, 0..block_elems-1) of the block at byte offset `base`,
// computed with GGML's order of operations (bit-identical to dequantize_ref).
dsl::Value dequant_element(QFormat f, const PackedBytes& w, const dsl::Value& base, const dsl::Value& e);

// Generic dequantize (any target): buffers (w: u8 or u32 words, y: f32),
// scalar n (elements); one element per work-item, workgroup 64, grid
// (x, y) with groups numbered x + y·num_groups(0).
ir::Kernel dequantize_kernel(QFormat f, bool words);
uint32_t dequant_grid_x(uint64_t groups);  // x extent used with that numbering

// CPU dequantize: a work-item decodes one block into f32x16 lines (formats
// with a line decoder: see has_line_decoder). Buffers (w: u8, y: f32x16),
// scalar nblocks; grid x = blocks (workgroup 1).
bool has_line_decoder(QFormat f);
ir::Kernel dequantize_lines_kernel(QFormat f, int blocks_per_item, bool stream = false);  // stream: nontemporal stores

// Quantize f32 → Q8_0 / Q4_0 (any target): a work-item quantizes two
// consecutive blocks and writes their bytes as whole u32 words (no two
// work-items share a word). Buffers (x: f32, q: u32), scalar nblocks; grid x
// = ceil(nblocks/2)/64 rounded up, workgroup 64.
ir::Kernel quantize_kernel(QFormat f);
// CPU quantize: a work-item quantizes `blocks_per_item` blocks from f32x16
// lines (the same bytes), in chunks of `chunk` (8 or 16) blocks whose scales
// are lines. Buffers (x: f32x16, q: u8), scalar nblocks; grid x =
// ceil(nblocks / blocks_per_item), workgroup 1.
ir::Kernel quantize_lines_kernel(QFormat f, int blocks_per_item, int chunk);

// CPU GEMV: y[m][n] = Σ_k x[m][k]·w[n][k] for `mb` rows of X per work-item
// and `rows` outputs n per work-item, decoding blocks to f32x16 lines.
// Buffers (x: f32x16, w: u8, y: f32); scalars (m, n, k). Grid x =
// ceil(n/rows), y = ceil(m/mb); workgroup 1.
ir::Kernel qgemv_cpu_kernel(QFormat f, int rows, int mb);
// The parameters every quantized GEMV/GEMM kernel declares after its X
// buffers, in this order: w (u8: the packed rows), y (f32), scalars m, n,
// k; and workgroup 1 (one work-item per group). pb reads w's bytes.
struct QuantRowParams {
  dsl::Array w, y;
  dsl::Value M, N, K;
  PackedBytes pb;
};
QuantRowParams quant_row_params(dsl::KernelBuilder& kb);

// The GEMV work-item's outputs: y[(m0 + i)·N + n0 + r] = out(i, r) for
// i < mb, r < rows inside M×N (guarded: the last column group, which also
// checks n < N). out is evaluated only for stored outputs.
void store_gemv_outputs(const dsl::Array& y, const dsl::Value& M, const dsl::Value& N, const dsl::Value& m0,
                        const dsl::Value& n0, uint32_t mb, uint32_t rows, bool guarded,
                        const std::function<dsl::Value(uint32_t i, uint32_t r)>& out);

// Int8-activation CPU GEMV (ops/quant/int8.cpp). quantize_x8_kernel quantizes
// X to signed bytes per block of 32 (d = amax/127, q = round(x/d)): buffers
// (x: f32x16, xq: i32x4 (16 bytes), xd: f32 per block, xs: i32 Σq per 16),
// scalar nblocks; grid x = ceil(nblocks/blocks_per_item), workgroup 1.
// qgemv_x8_kernel: y = X̂·Wᵀ with byte dot products (dot4): buffers (xq, xd,
// xs, w: u8, y: f32), scalars (m, n, k); grid as qgemv_cpu_kernel.
// signed_q8 (Q8_0 only): signed weight bytes times activations clamped to
// >= -127 (a no-op on quantize_x8's output), which x86 without VNNI does
// with vpsignb/vpabsb/vpmaddubsw instead of widening both to 16 bits.
bool has_int8_gemv(QFormat f);
// The 16-lane unit forms (wide_units below): Q2_K and Q3_K (their only int8 GEMV), Q4_K, Q5_K, Q6_K.
bool has_wide_int8_gemv(QFormat f);
ir::Kernel quantize_x8_kernel(int blocks_per_item);
// prefetch: workgroups ahead whose blocks are prefetched (0: none).
// step_blocks (Q4_0): 2 (pairs; K a multiple of 64): two blocks per 16-lane
// dot4 instead of one per 8-lane one; 4 (quads; K a multiple of 128, a
// target with permute_bytes): four blocks regrouped by byte permutes, two
// 16-lane dot4 per row and step.
// wide_units (has_wide_int8_gemv): two or four groups per 16-lane dot4 (a
// 64-byte load of quant bytes holds several) instead of one per 8-lane one.
// seq_rows: the work-item walks its rows one after another (W read as one
// sequential stream) instead of in lockstep (X's loads shared by the rows).
// prefetch_l1: the prefetches go into L1 (prefetcht0), not L2 only
// (variant pl1=1; the heuristic's rule is in ops/quant/strategy.cpp).
// prefetch_ahead: one such prefetch, of the line holding `at`, by all the
// GEMVs (GGML rows and rows interleaved by 16); prefetch_suffix: their
// kernel names' part for it ("_pf<N>", then "_l1"; empty without one).
void prefetch_ahead(const dsl::ElemRef& at, bool into_l1);
std::string prefetch_suffix(int prefetch, bool into_l1);
ir::Kernel qgemv_x8_kernel(QFormat f, int rows, int mb, bool signed_q8 = false, int prefetch = 0, int step_blocks = 1,
                           bool wide_units = false, bool seq_rows = false, bool prefetch_l1 = false);
// The Q4_0 GEMV in row pairs (ops/quant/row_pairs.cpp; AVX2 without VNNI):
// both rows' code bytes of a block in one 8-lane line, the rows' scales as
// one line, the offset term out of the dot products. Same buffers, scalars
// and grid as qgemv_x8_kernel; rows 4 or 8, mb 1 or 2.
bool row_pair_gemv_format(QFormat f);
ir::Kernel qgemv_x8_row_pairs_kernel(QFormat f, int rows, int mb, int prefetch, bool prefetch_l1 = false);
// X for the block quads (step_blocks 4), prepared once per call from
// quantize_x8's output instead of once per work-item: per row of X and quad
// of 4 blocks q, xqq[2q], xqq[2q + 1] (i32x16: the low and high 16
// activations of each block, 16 bytes per block), xqi[q] (i32x16: -o·Σq of
// each block, over its 4 lanes) and xqf (f32x16, 4 lanes per block: dx at
// [q], or with mins (Q4_1, Q5_1) at [2q], and dx·Σq / 4 at [2q + 1]).
// Buffers (xq, xd, xs, xqq, xqi, xqf), scalar nquads (M·K/128); grid x =
// ceil(nquads/quads_per_item), workgroup 1. qgemv_x8_kernel with
// step_blocks 4 then takes (xqq, xqi, xqf, w, y).
bool quad_x_has_min(QFormat f);
ir::Kernel quad_x8_kernel(QFormat f, int quads_per_item);
// X for the 16-lane Q6_K and Q3_K forms (wide_units), the same way: per row
// of X and super-block s, xsv[4s + k] (i32x16: unit k's 64 activations),
// xsi[4s + k] (i32x16: -o·Σq per group over its 4 lanes) and xsd[s] (f32x16:
// dx of each group of 16). Buffers (xq, xd, xs, xsv, xsi, xsd), scalar
// nsuper (M·K/256); grid x = ceil(nsuper/superblocks_per_item). qgemv_x8_kernel
// with wide_units then takes (xsv, xsi, xsd, w, y) for these formats.
bool has_prepared_wide_x(QFormat f);
ir::Kernel superblock_x8_kernel(QFormat f, int superblocks_per_item);

// X per super-block of 256 (GGML's Q8_K activations; ops/quant/x8k.cpp), for the
// K-quants whose sub-block scales are small integers: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
// quantize_x8k_kernel: d = amax/127 and q = round(x/d) per 256; buffers (x:
// f32x16, xq: i32x16 (64 bytes: four per super-block, unit j holding groups
// 2j, 2j + 1, 8 + 2j, 9 + 2j of 16, or with k4_units (x8k_k4_units: Q4_K,
// Q5_K) 2sb, 2sb + 1, 2sb + 4, 2sb + 5 for sb = 4·(j / 2) + j % 2, Q6_K 4j..4j + 3), xd: f32
// per super-block, xs: i32x16 Σq per group), scalar nsuper; grid x =
// ceil(nsuper/superblocks_per_item), workgroup 1. qgemv_x8k_kernel: y =
// X̂·Wᵀ over those (buffers xq, xd, xs, w: u8, y: f32; scalars m, n, k; grid
// as qgemv_cpu_kernel). Needs lines and dot4 (the CPU); Q2_K's table lookups
// are permute_bytes with a run-time index (one vpermi2b with AVX512-VBMI,
// TargetCaps::byte_lookup).
bool has_x8k_gemv(QFormat f);
// X's unit order per format: Fields (Q2_K, Q3_K), SubBlocks (Q4_K, Q5_K), Runs (Q6_K: groups 4j..4j + 3).
enum class X8kUnits { Fields, SubBlocks, Runs };
X8kUnits x8k_units(QFormat f);
ir::Kernel quantize_x8k_kernel(int superblocks_per_item, X8kUnits units = X8kUnits::Fields);
ir::Kernel qgemv_x8k_kernel(QFormat f, int rows, int mb, int prefetch = 0, bool seq_rows = false, bool prefetch_l1 = false);

// Rows interleaved by 16 (layout=16: Q4_0, Q8_0, Q4_K, Q6_K; ops/quant/formats.h;
// ops/quant/r16.cpp). qgemv_r16_kernel: the int8 GEMV over it, `groups` groups
// of 16 rows and `mb` rows of X per work-item, `prefetch` tiles ahead (0:
// none); buffers (xq, xd, xs as quantize_x8 writes them, w: u32x16 lines
// (the tiles), y: f32), scalars (m, n, k); grid x = ceil(ceil(n/16)/groups),
// y = ceil(m/mb); workgroup 1. Needs lines and dot4 (the CPU).
ir::Kernel qgemv_r16_kernel(QFormat f, int groups, int mb, int prefetch = 0, bool prefetch_l1 = false);
// Its formats with large tiles (Q4_K 36 lines, Q6_K 105), which spread the
// prefetch of the tile `prefetch` ahead over the steps of each tile rather
// than issue it all at the tile's start.
inline bool r16_prefetch_spread(QFormat f) { return f == QFormat::Q4_K || f == QFormat::Q6_K; }
// The same GEMM over GGML's rows: a work-item packs its 16 rows into the
// interleaved tiles on its stack (`tiles`: the tiles of one row group), then runs
// them against every row of X, `mb` at a time: prefill on GGML bytes at the
// repacked layout's speed, the packing amortised over M. Buffers (xq, xd,
// xs, w: u8, y), scalars (m, n, k); grid x = ceil(n/16), workgroup 1.
// Besides the layout=16 formats it packs Q4_1 (nibbles, a line of d and one
// of m per tile), Q5_0 and Q5_1 (codes widened to bytes: Q8_0's tile, plus
// m), Q5_K (Q4_K's tile with 64 byte code lines), Q2_K and Q3_K (64 byte
// code lines, a scale per 16 elements) into tiles of their own.
ir::Kernel qgemm_rows_r16_kernel(QFormat f, int mb, int tiles);
bool has_rows_r16_gemm(QFormat f);
int64_t rows_r16_tile_bytes(QFormat f);       // its tiles: r16_tile_bytes, or Q4_1 640, Q5_0 1088, Q5_1 1152, Q5_K 4352, Q2_K / Q3_K 4416
int64_t rows_r16_blocks_per_tile(QFormat f);
// Prefill on a matrix engine (ops/quant/tile.cpp, qmatmul impl=7). X (f32 rows
// × k) rounded to bf16 as the tile op's pair panels: buffers (x: f32, xp:
// u32x16, ceil(m/32) panels of k/2 × 32 words, rows past m zero), scalars
// (m, k), grid (k/32, 2·ceil(m/32)), workgroup 1; k % 32 == 0.
ir::Kernel x_pair_panels_kernel();
// Y = X·Wᵀ on bf16 tiles: a work-item decodes `mc` blocks of 32 rows of W,
// `kc` of K at a time (a multiple of the block and of 32), into a bf16
// scratch and multiplies them with `nc` panels of X. Buffers (xp as above,
// w: u8 GGML rows, y: f32), scalars (m, n, k); grid (ceil(ceil(n/32)/mc),
// ceil(ceil(m/32)/nc)), workgroup 1. Needs TargetCaps::matrix_tiles.
ir::Kernel qgemm_tile_kernel(QFormat f, int mc, int nc, int kc);

// Dequantize of the layout (any target): buffers (w: u8 or u32 words, y:
// f32 rows x k), scalars (rows, k); one element per work-item, grid as
// dequantize_kernel's.
ir::Kernel dequantize_r16_kernel(QFormat f, bool words);
// The CPU's for the 32-element formats (Q4_0, Q8_0): a work-item decodes one
// tile (16 rows x 2 blocks) into f32x16 lines. Buffers (w: u32 words, y:
// f32x16), scalars (rows, k); grid (ceil(k/64), ceil(rows/16)), workgroup 1.
ir::Kernel dequantize_r16_lines_kernel(QFormat f);

// GPU GEMV: one workgroup of `wg` work-items per output y[m][n], striding
// over K with dequant_element, reduced through the subgroup (`subgroups`) and
// shared memory (ops/common/gpu_reduce.h). Buffers (x: f32, w: u32 words, y: f32);
// scalars (n, k, gx). Grid (gx, ceil(n / gx), m).
ir::Kernel qgemv_gpu_kernel(QFormat f, int wg, bool subgroups);
// The same for Q4_0 and Q8_0 with a work-item per block (qmatmul impl=6):
// the block's codes as u32 words against X as f32x4 lines (K % 32 == 0), one
// scale multiply per block, where qgemv_gpu_kernel decodes every element on
// its own (its scale too). Buffers (x: f32x4, w: u32 words, y: f32); scalars
// and grid as qgemv_gpu_kernel.
ir::Kernel qgemv_gpu_blocks_kernel(QFormat f, int wg, bool subgroups);

}  // namespace kgen::ops::quant
