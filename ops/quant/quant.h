// The quantized-weight family: GGML block formats (ops/quant/formats.h) and
// the ops that read them.
//
//   dequantize  dims "rows k", attrs format=<GGML type id>: packed u8 → f32
//   quantize    dims "rows k", attrs format=8|2 (Q8_0, Q4_0): f32 → packed
//               bytes, bit-exact with GGML's reference quantizers
//   qmatmul     dims "M N K", attrs format: Y (M×N) = X (M×K) · Wᵀ with W
//               N rows of packed blocks (K a multiple of the block size);
//               layout=16: W is Q4_0, Q8_0, Q4_K or Q6_K repacked at load
//               time with rows interleaved by 16 (repack_r16, ops/quant/formats.h)
//
// Packed tensors are u8 buffers of the exact GGML bytes, padded with zeros
// to whole u32 words (GPU kernels read words). format ids: 2 q4_0, 3 q4_1,
// 6 q5_0, 7 q5_1, 8 q8_0, 10 q2_K, 11 q3_K, 12 q4_K, 13 q5_K, 14 q6_K.
//
// qmatmul variants: impl=0 CPU GEMV decoding blocks to f32x16 lines (rows
// outputs and mb rows of X per work-item; q4_0, q4_1, q8_0, q4_K, q5_K,
// q6_K), impl=1 GEMV for any target (a workgroup of wg work-items per
// output, words, subgroup/shared-memory reduction), impl=6 the same for
// Q4_0/Q8_0 with a work-item per block (the GPU default there), impl=2 tiled: W dequantized once
// into an f32 temporary, then the matmul family's packed GEMM (CPU) or
// shared-memory tiled GEMM (GPU); layout=16: impl=4 CPU GEMV over the
// interleaved tiles (groups of 16 rows and mb rows of X per work-item, pf tiles
// prefetched ahead), or impl=2 after decoding the tiles.
#pragma once

namespace kgen::ops {

void register_quant_ops();

}  // namespace kgen::ops
