// tanh and erf for f32 scalars and lines written in the DSL (as fast_exp):
// polynomials, fast_exp and one division, within 1.4 ulp over all floats.
// The C++ dialect's tanh and erf follow glibc's fdlibm algorithms bit for bit
// (all ranges evaluated and selected, f64 exps with table lookups), which
// the fused CPU chains measured at 7.5 and 2.4 GB/s; these keep an
// activation memory-bound. NaN gives NaN, ±inf gives ±1.
#pragma once
#include "dsl/value.h"

namespace kgen::ops {

dsl::Value fast_tanh(const dsl::Value& x);
dsl::Value fast_erf(const dsl::Value& x);

}  // namespace kgen::ops
