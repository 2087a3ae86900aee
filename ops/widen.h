// An f32 copy of an f16/bf16 tensor, for plans whose f32 kernels read a
// narrow input many times (converting it once is cheaper than at every read).
#pragma once
#include "ir/ir.h"

namespace kgen::ops {

// y[i] = f32(x[i]) for i < n; scalar n; workgroup 256, grid ceil(n / 256).
ir::Kernel widen_kernel(ir::Type dt);

}  // namespace kgen::ops
