// The op builders of ops/elementwise/expr_ops.h: IR ops where one exists,
// small compositions otherwise.
#include "ops/elementwise/expr_ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kgen::ops::fusion {

using ir::Op;
using ir::ScalarKind;

namespace {

void need(bool ok, const char* op, const char* what, const Expr& a) {
  if (!a.node) throw std::invalid_argument("fusion: empty expression");
  if (!ok)
    throw std::invalid_argument(std::string("fusion: ") + op + " needs " + what + ", got " +
                                std::string(ir::scalar_name(a.kind())));
}
// The op built on (and of the kind of) its operands, checked for that kind.
Expr need_bool(const char* op, Expr r) {
  need(r.kind() == ScalarKind::Bool, op, "bool operands", r);
  return r;
}
Expr need_int(const char* op, Expr r) {
  need(is_int_kind(r.kind()), op, "integer operands", r);
  return r;
}
void need_float(const char* op, const Expr& a) { need(a.node && is_float_kind(a.kind()), op, "a float", a); }

}  // namespace

Expr operator+(Expr a, Expr b) { return apply(Op::Add, {a, b}); }
Expr operator-(Expr a, Expr b) { return apply(Op::Sub, {a, b}); }
Expr operator*(Expr a, Expr b) { return apply(Op::Mul, {a, b}); }
Expr operator/(Expr a, Expr b) { return apply(Op::Div, {a, b}); }
Expr operator-(Expr a) { return apply(Op::Neg, {a}); }
Expr max(Expr a, Expr b) { return apply(Op::Max, {a, b}); }
Expr min(Expr a, Expr b) { return apply(Op::Min, {a, b}); }

// The divisor's sign: a C remainder of the other sign moves over by b.
Expr mod(Expr a, Expr b, bool fmod) {
  Expr r = apply(Op::Rem, {a, b});
  if (fmod || (is_int_kind(r.kind()) && !ir::Type(r.kind()).is_signed())) return r;
  Expr zero = lit(0, r.kind());
  Expr other_sign = logical_and(ne(r, zero), ne(lt(r, zero), lt(b, zero)));
  return where(other_sign, r + b, r);
}

Expr pow(Expr a, Expr b) { return apply(Op::Pow, {a, b}); }
Expr abs(Expr a) { return apply(Op::Abs, {a}); }

Expr sign(Expr a) {
  need(a.node && (is_int_kind(a.kind()) || is_float_kind(a.kind())), "sign", "a number", a);
  const ScalarKind k = a.kind();
  Expr pos = where(gt(a, lit(0, k)), lit(1, k), is_float_kind(k) ? a : lit(0, k));
  if (is_int_kind(k) && !ir::Type(k).is_signed()) return pos;
  return where(lt(a, lit(0, k)), lit(-1, k), pos);
}

Expr reciprocal(Expr a) { return lit(1) / a; }

Expr floor(Expr a) { return apply(Op::Floor, {a}); }
Expr ceil(Expr a) { return apply(Op::Ceil, {a}); }
Expr round(Expr a) { return apply(Op::Round, {a}); }
Expr trunc(Expr a) { return apply(Op::Trunc, {a}); }
Expr sqrt(Expr a) { return apply(Op::Sqrt, {a}); }
Expr rsqrt(Expr a) { return apply(Op::Rsqrt, {a}); }
Expr exp(Expr a) { return apply(Op::Exp, {a}); }
Expr log(Expr a) { return apply(Op::Log, {a}); }
Expr sin(Expr a) { return apply(Op::Sin, {a}); }
Expr cos(Expr a) { return apply(Op::Cos, {a}); }
Expr tanh(Expr a) { return apply(Op::Tanh, {a}); }
Expr erf(Expr a) { return apply(Op::Erf, {a}); }

Expr isnan(Expr a) {
  need_float("isnan", a);
  return ne(a, a);
}

Expr isinf(Expr a, bool positive, bool negative) {
  need_float("isinf", a);
  if (positive && negative) return eq(abs(a), lit(INFINITY));
  if (positive) return eq(a, lit(INFINITY));
  if (negative) return eq(a, lit(-INFINITY));
  return ne(lit(0, ScalarKind::Bool), lit(0, ScalarKind::Bool));  // detects nothing: false
}

Expr eq(Expr a, Expr b) { return apply(Op::Eq, {a, b}); }
Expr ne(Expr a, Expr b) { return apply(Op::Ne, {a, b}); }
Expr lt(Expr a, Expr b) { return apply(Op::Lt, {a, b}); }
Expr le(Expr a, Expr b) { return apply(Op::Le, {a, b}); }
Expr gt(Expr a, Expr b) { return apply(Op::Gt, {a, b}); }
Expr ge(Expr a, Expr b) { return apply(Op::Ge, {a, b}); }

Expr logical_and(Expr a, Expr b) { return need_bool("logical_and", apply(Op::And, {a, b})); }
Expr logical_or(Expr a, Expr b) { return need_bool("logical_or", apply(Op::Or, {a, b})); }
Expr logical_xor(Expr a, Expr b) { return need_bool("logical_xor", apply(Op::Xor, {a, b})); }
Expr logical_not(Expr a) { return need_bool("logical_not", apply(Op::Not, {a})); }
Expr bitwise_and(Expr a, Expr b) { return need_int("bitwise_and", apply(Op::And, {a, b})); }
Expr bitwise_or(Expr a, Expr b) { return need_int("bitwise_or", apply(Op::Or, {a, b})); }
Expr bitwise_xor(Expr a, Expr b) { return need_int("bitwise_xor", apply(Op::Xor, {a, b})); }
Expr bitwise_not(Expr a) { return need_int("bitwise_not", apply(Op::Not, {a})); }
Expr shl(Expr a, Expr b) { return apply(Op::Shl, {a, b}); }
Expr shr(Expr a, Expr b) { return apply(Op::Shr, {a, b}); }

Expr where(Expr c, Expr a, Expr b) { return apply(Op::Select, {c, a, b}); }

Expr clip(Expr x, Expr lo, Expr hi) {
  Expr above_lo = where(lt(x, lo), lo, x);
  return where(gt(above_lo, hi), hi, above_lo);
}

}  // namespace kgen::ops::fusion
