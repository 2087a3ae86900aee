// Float functions the IR has no op for, composed from those it has (exp,
// log, sqrt, sin, cos, division, selects), accurate to a few ulp of f32 or
// f64 over the whole domain (outside it: NaN, as libm).
#pragma once
#include "ops/elementwise/expr.h"

namespace kgen::ops::fusion {

Expr tan(Expr a);
Expr atan(Expr a);
Expr asin(Expr a);
Expr acos(Expr a);
Expr sinh(Expr a);
Expr cosh(Expr a);
Expr asinh(Expr a);
Expr acosh(Expr a);
Expr atanh(Expr a);
Expr log1p(Expr a);  // log(1 + a), exact near 0

}  // namespace kgen::ops::fusion
