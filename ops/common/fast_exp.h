// exp for f32 scalars and f32 lines written in the DSL itself (range
// reduction + polynomial + exponent bits). The C++ dialect lowers exp on a
// line to llvm.exp.v16f32, which LLVM scalarises into 16 expf calls; this
// form is plain FMAs, floor, integer shift and bitcast, which stay in AVX-512
// registers. The interpreter runs the same IR, so the JIT matches it exactly.
#pragma once
#include "dsl/value.h"

namespace kgen::ops {

// e^x for x: f32 or a line of f32, within 1 ulp for x in [-87, 88]; x is
// clamped to that range first (so e^-inf gives ~1.6e-38, not 0); NaN gives
// NaN: meant for softmax-style arguments x - max <= 0.
// nonpositive: the caller guarantees x <= 0 (x - rowmax), skipping the upper clamp.
dsl::Value fast_exp(const dsl::Value& x, bool nonpositive = false);

}  // namespace kgen::ops
