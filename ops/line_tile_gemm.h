// The GPU GEMM body in f32x4 lines (matmul.h: GpuTile vec), over operands
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

// Records the tile loop into the kernel being built: workgroup (16, 16), a
// 128 × (16·tn) tile of C at rows group_id(1)·128, columns group_id(0)·16·tn;
// tn 8 (tk 8 or 16) or 4 (tk 16); prefetch: the next tile's loads go to
// registers before this tile's FMAs. The caller declares kb.workgroup(16, 16).
void line_tile_gemm(const LineTileOperands& io, const dsl::Value& M, const dsl::Value& N, const dsl::Value& K,
                    uint32_t tk, uint32_t tn, bool prefetch);

}  // namespace kgen::ops
