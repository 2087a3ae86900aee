// Widening f16/bf16 values to f32: as they are loaded (as_f32), or as an
// f32 copy of a whole tensor, for plans whose f32 kernels read a narrow
// input many times (converting it once is cheaper than at every read).
#pragma once
#include "dsl/dsl.h"
#include "ir/ir.h"

namespace kgen::ops {

// v (a scalar or line of any float type) in f32: f32 as it is, else cast at
// the same width.
dsl::Value as_f32(const dsl::Value& v);

// y[i] = f32(x[i]) for i < n; scalar n; workgroup 256, grid ceil(n / 256).
ir::Kernel widen_kernel(ir::Type dt);

}  // namespace kgen::ops
