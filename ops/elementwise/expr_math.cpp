// Compositions of ops/elementwise/expr_math.h. Every branch of a select is
// evaluated (lanes), so each form is chosen where it is accurate and the
// others may overflow harmlessly there.
#include "ops/elementwise/expr_math.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/elementwise/expr_ops.h"

namespace kgen::ops::fusion {

using ir::ScalarKind;

namespace {

constexpr double kPi2 = 1.57079632679489661923, kPi4 = 0.78539816339744830962, kLn2 = 0.69314718055994530942;

Expr float_arg(const char* fn, Expr a) {
  if (!a.node) throw std::invalid_argument("fusion: empty expression");
  if (a.node->weak) a = cast(ScalarKind::F32, a);
  if (!is_float_kind(a.kind()))
    throw std::invalid_argument(std::string("fusion: ") + fn + " needs a float, got " + std::string(ir::scalar_name(a.kind())) +
                                " (cast it first)");
  return a;
}

// Horner's rule: c[0] z^n + ... + c[n].
Expr poly(const Expr& z, std::initializer_list<double> c) {
  Expr r = lit(*c.begin());
  for (auto it = c.begin() + 1; it != c.end(); ++it) r = r * z + lit(*it);
  return r;
}

// The sign of x on a nonnegative result r (r = f(|x|) of an odd f).
Expr odd(const Expr& x, const Expr& r) { return where(lt(x, lit(0)), -r, r); }

// atan on t in [-0.4142, 0.4142] (f32, Cephes atanf) or [-0.66, 0.66] (f64,
// Cephes atan: a rational function).
Expr atan_core(const Expr& t) {
  Expr z = t * t;
  if (t.kind() == ScalarKind::F32)
    return poly(z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1}) * z * t + t;
  Expr p = poly(z, {-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
                    -1.228866684490136173410e2, -6.485021904942025371773e1});
  Expr q = poly(z, {1.0, 2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
                    4.853903996359136964868e2, 1.945506571482613964425e2});
  return t * (z * p / q) + t;
}

// x + x^3/3! + ... + x^11/11!: sinh where exp's difference cancels.
Expr sinh_series(const Expr& x) {
  Expr z = x * x;
  return x + x * z * poly(z, {1.0 / 39916800, 1.0 / 362880, 1.0 / 5040, 1.0 / 120, 1.0 / 6});
}

}  // namespace

Expr tan(Expr a) {
  a = float_arg("tan", a);
  return sin(a) / cos(a);
}

// Reduced to |x| <= tan(pi/8) (f32) or 0.66 (f64) by atan(x) = pi/2 -
// atan(1/x) and pi/4 + atan((x-1)/(x+1)).
Expr atan(Expr a) {
  a = float_arg("atan", a);
  const bool f32 = a.kind() == ScalarKind::F32;
  Expr x = abs(a);
  Expr big = gt(x, lit(2.414213562373095)), mid = gt(x, lit(f32 ? 0.4142135623730950 : 0.66));
  Expr t = where(big, lit(-1) / x, where(mid, (x - lit(1)) / (x + lit(1)), x));
  Expr base = where(big, lit(kPi2), where(mid, lit(kPi4), lit(0)));
  return odd(a, base + atan_core(t));
}

// asin x = atan(x / sqrt(1 - x^2)), with 1 - x^2 = (1 - x)(1 + x) exact near 1.
Expr asin(Expr a) {
  a = float_arg("asin", a);
  return atan(a / sqrt((lit(1) - a) * (lit(1) + a)));
}

// acos x = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near either end.
Expr acos(Expr a) {
  a = float_arg("acos", a);
  return lit(2) * atan(sqrt((lit(1) - a) / (lit(1) + a)));
}

Expr sinh(Expr a) {
  a = float_arg("sinh", a);
  Expr e = exp(abs(a));
  Expr large = lit(0.5) * e - lit(0.5) / e;
  return where(lt(abs(a), lit(0.25)), sinh_series(a), odd(a, large));
}

Expr cosh(Expr a) {
  a = float_arg("cosh", a);
  Expr e = exp(abs(a));
  return lit(0.5) * e + lit(0.5) / e;
}

// log(1 + y) = log(u) * y / (u - 1) with u = 1 + y rounded: the quotient
// corrects u's rounding (Goldberg); u == 1: y itself; u == inf: inf.
Expr log1p(Expr a) {
  a = float_arg("log1p", a);
  Expr u = lit(1) + a;
  Expr corrected = log(u) * (a / (u - lit(1)));
  return where(eq(u, lit(1)), a, where(eq(u, lit(INFINITY)), u, corrected));
}

// asinh x = log1p(x + x^2 / (1 + sqrt(1 + x^2))); past 2^28, log(2x).
Expr asinh(Expr a) {
  a = float_arg("asinh", a);
  Expr x = abs(a), z = x * x;
  Expr small = log1p(x + z / (lit(1) + sqrt(lit(1) + z)));
  return odd(a, where(gt(x, lit(268435456.0)), log(x) + lit(kLn2), small));
}

// acosh x = log1p(d + sqrt(2d + d^2)), d = x - 1 (exact near 1); past 2^28, log(2x).
Expr acosh(Expr a) {
  a = float_arg("acosh", a);
  Expr d = a - lit(1);
  Expr near = log1p(d + sqrt(d * (lit(2) + d)));
  return where(gt(a, lit(268435456.0)), log(a) + lit(kLn2), near);
}

// atanh x = log1p(2x / (1 - x)) / 2 on |x|, where log1p's argument is >= 0
// (well conditioned; near -1 it would not be).
Expr atanh(Expr a) {
  a = float_arg("atanh", a);
  Expr x = abs(a);
  return odd(a, lit(0.5) * log1p(lit(2) * x / (lit(1) - x)));
}

}  // namespace kgen::ops::fusion
