// Lowering expression nodes to DSL values (ops/elementwise/chain_eval.h).
#include "ops/elementwise/chain_eval.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/common/fast_exp.h"
#include "ops/common/fast_math.h"

namespace kgen::ops::fusion {

using namespace kgen::dsl;
using ir::Op;
using ir::ScalarKind;

namespace {

// x / (1 + e^y) without the target's exp: the sigmoid inside silu and the
// tanh-form gelu, where the exact exp made the fused chain compute-bound on
// the CPU. `divide`: 1/d by a line division (strategy.h: cheap_line_division);
// else by Newton steps, where vdivps zmm (one per ~10 cycles) is the bound:
// y is clamped to [-87, 87], so d = 1 + e^y <= 6.1e37 < 2^126 and 1/d is a
// normal float, which the integer first guess (0x7ef311c3 - bits(d), within
// 12%) needs; three steps (the error squares each time: 1.4e-2, 2e-4, 4e-8)
// reach ~1 ulp. A NaN y stays NaN. Differs from the exact form only where
// |y| > 87: there the result is ~1.6e-38 * x instead of (nearly) 0, or
// x / (1 + 1.6e-38); and x = -inf with y = +inf (gelu/silu at -inf) gives
// -inf where the exact form's inf / inf is NaN (the limit is 0 for both).
Value sigmoid_div(const Value& x, const Value& y, bool divide) {
  const ir::Type ft = y.type(), ut = ft.lanes > 1 ? line(u32, ft.lanes) : ir::Type(u32);
  // The upper clamp as a select that keeps a NaN y (one vminps with the
  // NaN-passing operand order), as fast_exp's lower one does, so NaN reaches
  // d and the quotient without a compare and blend at the end.
  Value d = fast_exp(select(y > 87.0f, 87.0f, y), /*nonpositive=*/true) + 1.0f;  // "nonpositive": no upper clamp of its own
  if (divide) return x / d;
  Value r = bitcast(ft, 0x7ef311c3u - bitcast(ut, d));
  for (int i = 0; i < 3; ++i) r = fma(r, fma(-d, r, 1.0f), r);
  return x * r;
}

bool is_const(const Expr& e, double v) { return e.node->kind == Node::Kind::Const && e.node->value == v; }
bool is_op(const Expr& e, Op op) { return e.node->kind == Node::Kind::Op && e.node->op == op; }

// The exponent y when `d` is 1 + exp(y) (either order).
const Expr* one_plus_exp(const Expr& d) {
  if (!is_op(d, Op::Add)) return nullptr;
  const auto& a = d.node->args;
  if (is_const(a[0], 1.0) && is_op(a[1], Op::Exp)) return &a[1].node->args[0];
  if (is_const(a[1], 1.0) && is_op(a[0], Op::Exp)) return &a[0].node->args[0];
  return nullptr;
}

bool is_sigmoid_div(const Expr& e) {
  return is_op(e, Op::Div) && e.kind() == ScalarKind::F32 && one_plus_exp(e.node->args[1]);
}

// An integer kind's range, wide enough for u64 and i64 alike.
struct Range {
  __int128 lo, hi;
};
Range range_of(ScalarKind k) {
  const ir::Type t(k);
  const int bits = t.bits();
  if (t.is_signed()) return {-(__int128(1) << (bits - 1)), (__int128(1) << (bits - 1)) - 1};
  return {0, (__int128(1) << bits) - 1};
}
// A bound as the C++ literal that holds it (the DSL gives it the other operand's kind).
Operand bound(__int128 v) {
  if (v < 0) return Operand(int64_t(v));
  return Operand(uint64_t(v));
}

}  // namespace

bool has_sigmoid_div(const Expr& e) {
  if (is_sigmoid_div(e)) return true;
  for (const auto& a : e.node->args)
    if (has_sigmoid_div(a)) return true;
  return false;
}

ir::Type Evaluator::type(ScalarKind k) const { return lanes_ == 1 ? ir::Type(k) : line(ir::Type(k), lanes_); }

Value Evaluator::fill(ScalarKind k, int64_t v) const {
  Value c = constant(ir::Type(k), v);
  return lanes_ == 1 ? c : splat(c, lanes_);
}

Value Evaluator::constant_of(const Node& n) const {
  Value k;
  switch (n.type) {
    case ScalarKind::F32: k = constant(f32, float(n.value)); break;
    case ScalarKind::F64: k = constant(f64, n.value); break;
    case ScalarKind::Bool: k = constant(bool_, n.ivalue != 0); break;
    case ScalarKind::U64: k = constant(u64, uint64_t(n.ivalue)); break;
    default: k = constant(ir::Type(n.type), n.ivalue); break;
  }
  return lanes_ == 1 ? k : splat(k, lanes_);
}

Value Evaluator::eval(const Expr& e) {
  auto it = memo_.find(e.node.get());
  if (it != memo_.end()) return it->second;
  Value v = compute(*e.node);
  memo_[e.node.get()] = v;
  return v;
}

Value Evaluator::compute(const Node& n) {
  switch (n.kind) {
    case Node::Kind::Input: return input_(n.input);
    case Node::Kind::Const: return constant_of(n);
    case Node::Kind::Round: return cast(type(n.type), cast(type(n.to), eval(n.args[0])));
    case Node::Kind::Cast: return convert(n.args[0].kind(), n.to, eval(n.args[0]));
    case Node::Kind::SaturateCast: return saturate(n.args[0].kind(), n.to, eval(n.args[0]));
    case Node::Kind::Op: break;
  }
  if (fast_ && n.type == ScalarKind::F32 && n.op == Op::Div)
    if (const Expr* y = one_plus_exp(n.args[1])) return sigmoid_div(eval(n.args[0]), eval(*y), divide_);
  std::vector<Value> a;
  for (const auto& x : n.args) a.push_back(eval(x));
  return op(n, a);
}

Value Evaluator::op(const Node& n, const std::vector<Value>& a) {
  const ScalarKind k = n.args.back().kind();  // the operands' kind (Select: its branches')
  const bool fast_f32 = fast_ && k == ScalarKind::F32;
  if (is_int_kind(k))
    if (Value v = int_op(n.op, k, a[0], a.size() > 1 ? a[1] : a[0]); v.valid()) return v;
  if (k == ScalarKind::F32)
    if (Value v = special_compare(n, a); v.valid()) return v;
  if (n.op == Op::Rem && is_float_kind(k)) return float_rem(a[0], a[1]);
  switch (n.op) {
    case Op::Neg: return -a[0];
    case Op::Abs: return abs(a[0]);
    case Op::Exp: return exp(a[0]);
    case Op::Exp2: return exp2(a[0]);
    case Op::Log: return log(a[0]);
    case Op::Log2: return log2(a[0]);
    case Op::Sqrt: return sqrt(a[0]);
    case Op::Rsqrt: return rsqrt(a[0]);
    case Op::Sin: return sin(a[0]);
    case Op::Cos: return cos(a[0]);
    // The CPU lines: polynomial forms (ops/common/fast_math.h), 6-20x faster
    // than the glibc-exact ones, within 1.4 ulp.
    case Op::Tanh: return fast_f32 ? fast_tanh(a[0]) : tanh(a[0]);
    case Op::Erf: return fast_f32 ? fast_erf(a[0]) : erf(a[0]);
    case Op::Floor: return floor(a[0]);
    case Op::Ceil: return ceil(a[0]);
    case Op::Round: return round(a[0]);
    case Op::Trunc: return trunc(a[0]);
    case Op::Add: return a[0] + a[1];
    case Op::Sub: return a[0] - a[1];
    case Op::Mul: return a[0] * a[1];
    case Op::Div: return a[0] / a[1];
    case Op::Min: return min(a[0], a[1]);
    case Op::Max: return max(a[0], a[1]);
    case Op::Pow: return pow(a[0], a[1]);
    case Op::Lt: return a[0] < a[1];
    case Op::Le: return a[0] <= a[1];
    case Op::Gt: return a[0] > a[1];
    case Op::Ge: return a[0] >= a[1];
    case Op::Eq: return a[0] == a[1];
    case Op::Ne: return a[0] != a[1];
    case Op::Fma: return fma(a[0], a[1], a[2]);
    case Op::Select: return select(a[0], a[1], a[2]);
    case Op::Not: return apply(Op::Not, a[0]);
    case Op::And: case Op::Or: case Op::Xor: return apply(n.op, a[0], a[1]);
    default: break;
  }
  throw std::invalid_argument("fusion: unsupported op " + std::string(ir::op_name(n.op)));
}

// The integer ops the IR leaves undefined or trapping on some operands
// (division by zero) or defines otherwise than expr_ops.h (shift amounts
// past the width, pow); invalid for the rest.
Value Evaluator::int_op(Op op, ScalarKind k, const Value& a, const Value& b) {
  switch (op) {
    case Op::Div:
    case Op::Rem: {
      Value zero = b == 0;
      Value safe = select(zero, 1, b);
      return select(zero, 0, op == Op::Div ? a / safe : a % safe);
    }
    case Op::Shl:
    case Op::Shr: return shift(op, k, a, b);
    case Op::Pow: return int_pow(k, a, b);
    default: return Value();
  }
}

Value Evaluator::shift(Op op, ScalarKind k, const Value& a, const Value& b) {
  const int bits = ir::Type(k).bits();
  const bool is_signed = ir::Type(k).is_signed();
  Value out_of_range = is_signed ? (b < 0) || (b >= bits) : b >= bits;
  if (op == Op::Shr && is_signed) return a >> select(out_of_range, bits - 1, b);  // the sign fills every bit
  return select(out_of_range, 0, op == Op::Shl ? a << b : a >> b);
}

// Square and multiply over every bit of the exponent (a fixed count: lanes
// take different exponents); a negative one truncates 1 / a^-b.
Value Evaluator::int_pow(ScalarKind k, const Value& a, const Value& b) {
  const int bits = ir::Type(k).bits();
  Value r = fill(k, 1), base = a, e = b;
  for (int s = 0; s < bits; ++s) {
    r = select((e & 1) != 0, r * base, r);
    if (s + 1 == bits) break;
    base = base * base;
    e = e >> 1;
  }
  if (!ir::Type(k).is_signed()) return r;
  Value minus_one_pow = select((b & 1) != 0, fill(k, -1), fill(k, 1));
  Value inverse = select(a == 1, fill(k, 1), select(a == -1, minus_one_pow, fill(k, 0)));
  return select(b < 0, inverse, r);
}

// f16/bf16 targets: rounded there, computing on in f32.
Value Evaluator::convert(ScalarKind from, ScalarKind to, const Value& v) const {
  if (to == ScalarKind::F16 || to == ScalarKind::BF16) return cast(type(ScalarKind::F32), cast(type(to), v));
  if (is_float_kind(from) && is_int_kind(to)) return float_to_int(to, v, false);
  return cast(type(to), v);
}

Value Evaluator::to_output(ScalarKind from, ScalarKind out, const Value& r) const {
  if (is_float_kind(from) && is_int_kind(out)) return float_to_int(out, r, false);
  return cast(r.lanes() == 1 ? ir::Type(out) : line(ir::Type(out), r.lanes()), r);
}

// Truncated (or rounded half to even), saturating, NaN -> 0. NaN is made 0
// by its bits before the IR's cast, since WGSL compilers may assume no NaN
// and drop the cast's own x != x test. f32 lines to a kind of at most 16
// bits skip the C++ dialect's lane-by-lane saturating conversion (scalar
// code, far below bandwidth): clamped in f32, then t + 1.5 * 2^23 holds the integer t
// in its mantissa bits, exactly.
Value Evaluator::float_to_int(ScalarKind to, Value v, bool round_even) const {
  const ir::Type t(to);
  v = select(is_nan(v), 0, v);
  if (v.lanes() > 1 && v.type().kind == ScalarKind::F32 && t.bits() <= 16) {
    const float lo = t.is_signed() ? -std::ldexp(1.0f, t.bits() - 1) : 0.0f;
    const float hi = std::ldexp(1.0f, t.bits() - (t.is_signed() ? 1 : 0)) - 1;
    v = min(max(v, lo), hi);
    v = round_even ? round(v) : trunc(v);
    Value i = bitcast(type(ScalarKind::I32), v + 12582912.0f) - 0x4b400000;
    return cast(type(to), i);
  }
  if (round_even) v = round(v);
  return cast(type(to), v);
}

// Floats: rounded half to even, then converted as cast() (saturating).
// Integers: clamped in the source kind to the part of the target's range it holds.
Value Evaluator::saturate(ScalarKind from, ScalarKind to, Value v) const {
  if (is_float_kind(from)) return float_to_int(to, v, true);
  const Range s = range_of(from), t = range_of(to);
  if (t.lo > s.lo) v = select(v < bound(t.lo), bound(t.lo), v);
  if (t.hi < s.hi) v = select(v > bound(t.hi), bound(t.hi), v);
  return cast(type(to), v);
}

// NaN and infinity tests of f32 values by their bits, exact where WGSL
// compilers may assume no NaN or infinity and fold x != x or x == inf; f64
// (never WGSL) compares plainly.
Value Evaluator::bits_of(const Value& v) const { return bitcast(type(ScalarKind::U32), v); }
Value Evaluator::is_nan(const Value& v) const {
  if (v.type().kind != ScalarKind::F32) return v != v;
  return (bits_of(v) & 0x7fffffffu) > 0x7f800000u;
}
Value Evaluator::is_inf(const Value& v) const {
  if (v.type().kind != ScalarKind::F32) return abs(v) == INFINITY;
  return (bits_of(v) & 0x7fffffffu) == 0x7f800000u;
}

// f32 x == x, x != x (isnan) and comparisons with an infinite constant
// (isinf) by the bits, which give the IEEE answers; invalid for the rest.
Value Evaluator::special_compare(const Node& n, const std::vector<Value>& a) const {
  if (n.op != Op::Eq && n.op != Op::Ne) return Value();
  const bool eq = n.op == Op::Eq;
  if (n.args[0].node == n.args[1].node) return eq ? !is_nan(a[0]) : is_nan(a[0]);
  for (int i = 0; i < 2; ++i) {
    const Node& k = *n.args[size_t(i)].node;
    if (k.kind != Node::Kind::Const || !std::isinf(k.value)) continue;
    Value x = bits_of(a[size_t(1 - i)]);
    const uint32_t inf = k.value > 0 ? 0x7f800000u : 0xff800000u;
    return eq ? x == inf : x != inf;
  }
  return Value();
}

// C fmod with the special operands settled here, since targets' fmod
// helpers mishandle them (GLSL: an infinite divisor gives NaN; WGSL: a NaN
// may never leave its loop): NaN for a NaN operand, an infinite dividend or
// a zero divisor; a for an infinite divisor; otherwise the target's fmod on
// finite operands.
Value Evaluator::float_rem(const Value& a, const Value& b) const {
  Value nan_result = is_nan(a) || is_nan(b) || is_inf(a) || b == 0;
  Value keep_a = is_inf(b);
  Value plain = !(nan_result || keep_a);
  Value r = select(plain, a, 0) % select(plain, b, 1);
  Value nan = a.type().kind == ScalarKind::F32 ? bitcast(type(ScalarKind::F32), fill(ScalarKind::U32, 0x7fc00000))
                                               : bitcast(type(ScalarKind::F64), fill(ScalarKind::U64, 0x7ff8000000000000));
  return select(nan_result, nan, select(keep_a, a, r));
}

}  // namespace kgen::ops::fusion
