// tanh, erf and log for f32 scalars and lines written in the DSL (as
// fast_exp): polynomials, fast_exp and one division, within 2 ulp over all
// floats (tests/runtime/math_accuracy_test.cpp).
// The C++ dialect's tanh and erf follow glibc's fdlibm algorithms bit for bit
// (all ranges evaluated and selected, f64 exps with table lookups), which
// the fused CPU chains measured at 7.5 and 2.4 GB/s; these keep an
// activation memory-bound. NaN gives NaN, ±inf gives ±1.
#pragma once
#include "dsl/value.h"

namespace kgen::ops {

dsl::Value fast_tanh(const dsl::Value& x);
dsl::Value fast_erf(const dsl::Value& x);
// The prelude's kg_logf in DSL operations (the same reduction, polynomial
// and special cases: log(0) = -inf, log(x < 0) = NaN, log(inf) = inf), so
// the row kernels' log lines are explicit line arithmetic whatever the
// vectoriser does with a per-lane helper (measured the same speed there).
dsl::Value fast_log(const dsl::Value& x);

}  // namespace kgen::ops
