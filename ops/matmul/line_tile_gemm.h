// The GPU GEMM body in f32x4 lines (ops/matmul/matmul.h: GpuTile vec), over operands
// given as element functions, so the matmul and an implicit-GEMM conv (its A
// gathered from the image as im2col would lay it out) share one tile loop.
#pragma once
#include <cstdint>
#include <functional>

#include "dsl/dsl.h"

namespace kgen::ops {

struct LineTileOperands {
  // Element (r, k) of A (M×K) and (c, k) of B (the K×N operand, by column c)
  // as f32. `guarded`: r, c or k may lie outside, where the element is 0.
  std::function<dsl::Value(const dsl::Value& r, const dsl::Value& k, bool guarded)> a, b;
  // Stores C's element (row, col) = v; called only inside M×N.
  std::function<void(const dsl::Value& row, const dsl::Value& col, const dsl::Value& v)> store;
  bool b_k_fastest = false;   // B's neighbours in memory differ in k (Bᵀ rows): stage k fastest
  bool always_guarded = false;  // no unguarded interior path (A has padding inside the matrix)
};

// The loop's shared memory in bytes (A: tk × 32 lines, B: tk × 4·tn lines of
// 16 bytes; twice that double-buffered): 16 KiB at tk 16 / tn 8, WebGPU's
// guaranteed minimum.
constexpr uint32_t line_tile_shared_bytes(uint32_t tk, uint32_t tn, bool double_buffer) {
  return (double_buffer ? 2u : 1u) * tk * (32u + 4u * tn) * 16u;
}
// True when the target's shared memory (max_shared_bytes, 0: unknown) holds it.
inline bool line_tile_fits(uint32_t max_shared_bytes, uint32_t tk, uint32_t tn, bool double_buffer) {
  return !max_shared_bytes || line_tile_shared_bytes(tk, tn, double_buffer) <= max_shared_bytes;
}

// Records the tile loop into the kernel being built: workgroup (16, 16), a
// 128 × (16·tn) tile of C at rows group_id(1)·128, columns group_id(0)·16·tn;
// tn 8 (tk 8 or 16) or 4 (tk 16); prefetch: the next tile's loads go to
// registers before this tile's FMAs; double_buffer (with prefetch): two
// shared buffers, one barrier per K step. The caller declares
// kb.workgroup(16, 16).
void line_tile_gemm(const LineTileOperands& io, const dsl::Value& M, const dsl::Value& N, const dsl::Value& K,
                    uint32_t tk, uint32_t tn, bool prefetch, bool double_buffer = false);

}  // namespace kgen::ops
