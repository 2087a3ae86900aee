#include "dsl/math.h"

namespace kgen::dsl {

using detail::binary;
using detail::make;
using detail::resolve;
using detail::unary;
using ir::Op;

Value abs(const Operand& x) { return unary(Op::Abs, x); }
Value floor(const Operand& x) { return unary(Op::Floor, x); }
Value ceil(const Operand& x) { return unary(Op::Ceil, x); }
Value round(const Operand& x) { return unary(Op::Round, x); }
Value trunc(const Operand& x) { return unary(Op::Trunc, x); }
Value sqrt(const Operand& x) { return unary(Op::Sqrt, x); }
Value rsqrt(const Operand& x) { return unary(Op::Rsqrt, x); }
Value exp(const Operand& x) { return unary(Op::Exp, x); }
Value exp2(const Operand& x) { return unary(Op::Exp2, x); }
Value log(const Operand& x) { return unary(Op::Log, x); }
Value log2(const Operand& x) { return unary(Op::Log2, x); }
Value sin(const Operand& x) { return unary(Op::Sin, x); }
Value cos(const Operand& x) { return unary(Op::Cos, x); }
Value tanh(const Operand& x) { return unary(Op::Tanh, x); }
Value erf(const Operand& x) { return unary(Op::Erf, x); }

Value min(const Operand& a, const Operand& b) { return binary(Op::Min, a, b); }
Value max(const Operand& a, const Operand& b) { return binary(Op::Max, a, b); }
Value pow(const Operand& a, const Operand& b) { return binary(Op::Pow, a, b); }

Value fma(const Operand& a, const Operand& b, const Operand& c) {
  return make(a.loc(), Op::Fma, detail::resolve_together({&a, &b, &c}));
}

Value dot4(const Operand& a, const Operand& b, const Operand& c) {
  ir::ValueId va = a.is_literal() && !b.is_literal() ? resolve(a, b.type()) : resolve(a);
  ir::ValueId vb = b.is_literal() ? resolve(b, a.type()) : resolve(b);
  ir::Type acc = ir::Type(ir::ScalarKind::I32, a.is_literal() ? b.type().lanes : a.type().lanes);
  return make(a.loc(), Op::Dot4, {va, vb, c.is_literal() ? resolve(c, acc) : resolve(c)});
}

Value dot2_i16(const Operand& a, const Operand& b, const Operand& c) {
  ir::ValueId va = a.is_literal() && !b.is_literal() ? resolve(a, b.type()) : resolve(a);
  ir::ValueId vb = b.is_literal() ? resolve(b, a.type()) : resolve(b);
  ir::Type acc = ir::Type(ir::ScalarKind::I32, a.is_literal() ? b.type().lanes : a.type().lanes);
  return make(a.loc(), Op::Dot2I16, {va, vb, c.is_literal() ? resolve(c, acc) : resolve(c)});
}

Value dot2_bf16(const Operand& a, const Operand& b, const Operand& c) {
  ir::ValueId va = a.is_literal() && !b.is_literal() ? resolve(a, b.type()) : resolve(a);
  ir::ValueId vb = b.is_literal() ? resolve(b, a.type()) : resolve(b);
  ir::Type acc = ir::Type(ir::ScalarKind::F32, a.is_literal() ? b.type().lanes : a.type().lanes);
  return make(a.loc(), Op::Dot2Bf16, {va, vb, c.is_literal() ? resolve(c, acc) : resolve(c)});
}

Value permute_bytes(const Operand& a, const Operand& b, const Operand& idx) {
  return make(a.loc(), Op::PermuteBytes, {resolve(a), resolve(b), resolve(idx)});
}

Value select(const Operand& c, const Operand& a, const Operand& b) {
  // Resolve the condition as bool (or its own line type) first: select(c, 1, 2)
  // gives i32, select(c, x, 0) gives x's type.
  ir::ValueId cond = c.is_literal() ? resolve(c, ir::types::Bool) : resolve(c);
  std::vector<ir::ValueId> ab = detail::resolve_together({&a, &b});
  return make(c.loc(), Op::Select, {cond, ab[0], ab[1]});
}

Value cast(ir::Type to, const Operand& x) {
  // A literal is converted from its natural type, as in C++: cast(i32, 2.5) is 2.
  return make(x.loc(), Op::Cast, {resolve(x)}, 0, to);
}

Value bitcast(ir::Type to, const Operand& x) { return make(x.loc(), Op::Bitcast, {resolve(x)}, 0, to); }

Value constant(ir::Type t, const Operand& lit) {
  if (!lit.is_literal()) throw ir::Error(lit.loc(), "constant() needs a C++ literal, got a kernel value (use cast)");
  return detail::wrap(resolve(lit, t), lit.loc());
}

}  // namespace kgen::dsl
