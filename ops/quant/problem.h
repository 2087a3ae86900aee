// What the quantized-weight family's OpDefs (ops/quant/ops.cpp), candidate
// lists and strategy (ops/quant/strategy.cpp) read of a problem: its GGML
// format, qmatmul's shape, its impl numbers, and where each kernel form
// applies. These are facts about the kernels, not choices among them.
#pragma once
#include <cstdint>

#include "ops/core/op.h"
#include "ops/quant/formats.h"

namespace kgen::ops::quant {

constexpr int64_t kDefaultFormat = int64_t(QFormat::Q8_0);
// The problem's attr format (default Q8_0); throws on an unknown id.
QFormat format_of(const Problem& p);

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// qmatmul's variant key impl (ops/quant/quant.h).
enum QImpl {
  kGemvCpu = 0,      // CPU GEMV decoding blocks to f32 lines
  kGemvAny = 1,      // any-target GEMV, a workgroup per output
  kTiled = 2,        // W dequantized to f32, then the matmul family's GEMM
  kGemvX8 = 3,       // CPU int8-activation GEMV on GGML rows
  kGemvR16 = 4,      // CPU int8-activation GEMV on rows interleaved by 16
  kGemmRowsR16 = 5,  // CPU int8 GEMM packing GGML rows into interleaved tiles
  kGemvBlocks = 6,   // GPU GEMV with a work-item per block
  kTileBf16 = 7,     // CPU prefill on bf16 matrix tiles (AMX)
};

struct QShape {
  int64_t m, n, k;
  QFormat f;
  bool x8;   // attr xq: X may be quantized to int8 blocks (GGML's numerics)
  bool r16;  // attr layout=16: W (Q4_0, Q8_0, Q4_K, Q6_K) with rows interleaved by 16 (ops/quant/formats.h)
  // W's bytes in its layout.
  size_t w_bytes() const { return r16 ? r16_bytes(f, n, k) : padded_bytes(f, n, k); }
};
QShape qshape(const Problem& p);

// The int8-activation GEMV applies (CPU, few rows of X; up to 64 for the
// formats without the interleaved GEMM, impl=5, whose prefill it is).
int64_t x8_gemv_max_m(const QShape& s);
bool x8_gemv(const QShape& s);
// The GPU GEMV with a work-item per block (impl=6): Q4_0 and Q8_0 on GGML rows.
bool gpu_block_gemv(const QShape& s);
// The int8 GEMV's block-pair form (two 32-element blocks per line): the
// nibble formats; Q8_0's pairs need byte permutes (q8_pair_gemv).
bool pair_gemv(const QShape& s);
// The 16-lane unit forms (w16; Q2_K's and Q3_K's only int8 GEMV), whose
// scales decode by byte permutes.
bool wide_gemv(const QShape& s, const TargetCaps& caps);
// The super-block form (xk; X per 256, ops/quant/x8k.cpp): Q2_K to Q6_K, and
// for Q2_K and Q3_K also prefill, where it beats dequantize + the f32 GEMM
// up to 2048 and 512 rows of X.
int64_t x8k_gemv_max_m(QFormat f);
bool x8k_gemv(const QShape& s);
// Q8_0's block pairs regrouped by byte permutes (p2 on Q8_0).
bool q8_pair_gemv(const QShape& s, const TargetCaps& caps);
// The nibble formats' block quads (four blocks regrouped by byte permutes).
bool quad_gemv(const QShape& s, const TargetCaps& caps);

// GGML rows packed into the interleaved tiles inside the GEMM (impl=5):
// the layout=16 formats, while a row group's tiles fit a 256 KiB stack scratch.
int64_t rows_r16_tiles(const QShape& s);
bool rows_r16_gemm(const QShape& s);

// Prefill on bf16 matrix tiles (impl=7, ops/quant/tile.cpp): GGML rows, X
// that may be rounded (xq=1), a CPU with AMX-BF16. A work-item's scratch
// (decoded W: mc·32·kc bf16; Yᵀ's blocks: mc·nc·32·32 f32) must fit the CPU
// target's 1 MiB.
bool tile_bf16_scratch_fits(int64_t mc, int64_t nc, int64_t kc);
bool tile_bf16_fits(const QShape& s, const TargetCaps& caps);

// Dequantize W, then the matmul family's GEMM (impl=2) with its default tile
// on the target: the path every problem has.
Variant tiled_variant(const QShape& s, const TargetCaps& caps);

}  // namespace kgen::ops::quant
