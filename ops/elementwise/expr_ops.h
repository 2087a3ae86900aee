// The elementwise ops as expression builders (ONNX's elementwise ops, one
// builder each; the kind rules: ops/elementwise/expr.h). Integer semantics,
// where C++ would trap or leave them undefined:
//   a / b, mod: a zero divisor gives 0 (a kernel must not fault on data);
//     INT_MIN / -1 wraps to INT_MIN; division truncates toward zero;
//   pow on integers: repeated multiplication, wrapping; a negative exponent
//     gives the truncated 1 / a^-b (1 for a == 1, +-1 for a == -1, else 0);
//   shl, shr: an amount past the width (or negative) shifts every bit out:
//     0, or the sign for shr of a negative signed value.
#pragma once
#include "ops/elementwise/expr.h"

namespace kgen::ops::fusion {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // integers: see above
Expr operator-(Expr a);          // floats and signed integers (wraps)
Expr max(Expr a, Expr b);        // floats: the non-NaN operand (fmax)
Expr min(Expr a, Expr b);
// ONNX Mod: fmod = false: the remainder takes the divisor's sign (Python's
// %); fmod = true: the dividend's (C's % and fmod).
Expr mod(Expr a, Expr b, bool fmod);
Expr pow(Expr a, Expr b);
Expr abs(Expr a);    // signed integers wrap: abs(INT_MIN) == INT_MIN
Expr sign(Expr a);   // -1, 0 or 1 in a's kind; floats keep NaN and -0
Expr reciprocal(Expr a);  // 1 / a

// Floats only.
Expr floor(Expr a);
Expr ceil(Expr a);
Expr round(Expr a);  // half to even (ONNX Round)
Expr trunc(Expr a);
Expr sqrt(Expr a);
Expr rsqrt(Expr a);
Expr exp(Expr a);
Expr log(Expr a);
Expr sin(Expr a);
Expr cos(Expr a);
Expr tanh(Expr a);
Expr erf(Expr a);
Expr isnan(Expr a);  // bool
// bool: a is +inf (positive) or -inf (negative); ONNX IsInf's detect flags.
Expr isinf(Expr a, bool positive = true, bool negative = true);

// Comparisons: bool results (NaN compares unequal to everything).
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);

// On bool operands.
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_xor(Expr a, Expr b);
Expr logical_not(Expr a);
// On integer operands.
Expr bitwise_and(Expr a, Expr b);
Expr bitwise_or(Expr a, Expr b);
Expr bitwise_xor(Expr a, Expr b);
Expr bitwise_not(Expr a);
Expr shl(Expr a, Expr b);  // a << b (see above)
Expr shr(Expr a, Expr b);  // a >> b: arithmetic for signed kinds, logical for unsigned

// c ? a : b (c: bool).
Expr where(Expr c, Expr a, Expr b);
// x limited to [lo, hi] (ONNX Clip); NaN passes through.
Expr clip(Expr x, Expr lo, Expr hi);

}  // namespace kgen::ops::fusion
