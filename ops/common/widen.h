// Widening f16/bf16 values to f32: as they are loaded (as_f32), or as an
// f32 copy of a whole tensor, for plans whose f32 kernels read a narrow
// input many times (converting it once is cheaper than at every read).
#pragma once
#include "dsl/dsl.h"
#include "ir/ir.h"
#include "ops/core/op.h"

namespace kgen::ops {

// v (a scalar or line of any float type) in f32: f32 as it is, else cast at
// the same width.
dsl::Value as_f32(const dsl::Value& v);

// y[i] = f32(x[i]) for i < n; scalars n, gx; workgroup 256, the wrapped
// grid of ceil(n / 256) groups (x size gx).
ir::Kernel widen_kernel(ir::Type dt);
// Appends a widen launch of slot src's n values into a new f32 temporary;
// returns its slot.
int plan_widen(Plan& pl, size_t n_io, ir::Type dt, int src, int64_t n);

}  // namespace kgen::ops
