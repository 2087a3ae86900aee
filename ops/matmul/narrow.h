// The matmul op's form for K and N of at most 16 (f32, CPU): 16 rows of A in
// lanes (ops/matmul/narrow.cpp).
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace kgen::ops {

// Buffers a (M×K), b (K×N, or N×K with trans_b), c (M×N), all f32 and
// batched back to back; scalar m; kNarrowMatmulRows rows per work-item,
// grid (ceil(M / kNarrowMatmulRows), batch).
constexpr uint32_t kNarrowMatmulRows = 256;
ir::Kernel matmul_narrow_kernel(int k, int n, bool trans_b);

}  // namespace kgen::ops
