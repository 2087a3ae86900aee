// f32 -> bf16 rounding written as integer lane arithmetic, for kernels that
// store bf16 values they computed in f32 (the gated MLP's H with h_bf16).
// A DSL cast of a 16-lane line to bf16 is exact too, and one vcvtneps2bf16
// on AVX512-BF16 hosts (the C++ dialect's kg_f32_to_bf16); elsewhere it is
// the same lane arithmetic as this.
#pragma once
#include "dsl/dsl.h"

namespace kgen::ops {

// x (f32 line or scalar) rounded to bf16 as ir::f32_to_bf16 does (nearest
// even; NaN stays a quiet NaN): u32 lanes with the bf16 in the upper half
// and zeros below, so bitcast to f32 gives the rounded value.
dsl::Value bf16_upper_bits(const dsl::Value& x);

}  // namespace kgen::ops
