// Transpose kernels other ops reuse (the "transpose" op is ops/layout/transpose.cpp).
#pragma once
#include "ir/ir.h"

namespace kgen::ops {

// CPU: y (batch..., A, B) from x contiguous along A and strided along B, in
// 16 × 16 blocks transposed in registers (ta × tb blocks per workgroup).
// Scalars: A, B, sa (1), sb, then per batch axis its size and input stride;
// grid (B / 16tb, A / 16ta, batch elements). stream: nontemporal line stores
// (B % 16 == 0).
ir::Kernel transpose_lines_kernel(ir::Type dt, int nbatch, int ta, int tb, bool stream);

}  // namespace kgen::ops
