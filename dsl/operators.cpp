#include "dsl/operators.h"

namespace kgen::dsl {

using detail::binary;
using detail::unary;
using ir::Op;

Value operator+(const Operand& a, const Operand& b) { return binary(Op::Add, a, b); }
Value operator-(const Operand& a, const Operand& b) { return binary(Op::Sub, a, b); }
Value operator*(const Operand& a, const Operand& b) { return binary(Op::Mul, a, b); }
Value operator/(const Operand& a, const Operand& b) { return binary(Op::Div, a, b); }
Value operator%(const Operand& a, const Operand& b) { return binary(Op::Rem, a, b); }
Value operator&(const Operand& a, const Operand& b) { return binary(Op::And, a, b); }
Value operator|(const Operand& a, const Operand& b) { return binary(Op::Or, a, b); }
Value operator^(const Operand& a, const Operand& b) { return binary(Op::Xor, a, b); }
Value operator<<(const Operand& a, const Operand& b) { return binary(Op::Shl, a, b); }
Value operator>>(const Operand& a, const Operand& b) { return binary(Op::Shr, a, b); }

Value operator<(const Operand& a, const Operand& b) { return binary(Op::Lt, a, b); }
Value operator<=(const Operand& a, const Operand& b) { return binary(Op::Le, a, b); }
Value operator>(const Operand& a, const Operand& b) { return binary(Op::Gt, a, b); }
Value operator>=(const Operand& a, const Operand& b) { return binary(Op::Ge, a, b); }
Value operator==(const Operand& a, const Operand& b) { return binary(Op::Eq, a, b); }
Value operator!=(const Operand& a, const Operand& b) { return binary(Op::Ne, a, b); }
Value eq(const Operand& a, const Operand& b) { return binary(Op::Eq, a, b); }
Value ne(const Operand& a, const Operand& b) { return binary(Op::Ne, a, b); }

namespace {
// The IR's and/or/not are bitwise on integers too; the logical spellings
// accept only bools so that `i && j` on integers is not silently bitwise.
void need_bool(const char* what, const Operand& o) {
  if (!o.type().is_bool())
    throw ir::Error(o.loc(), std::string(what) + " needs bool operands, got " + o.type().str() +
                                 " (compare first, or use & | ~ for bitwise operations)");
}
}  // namespace

Value operator&&(const Operand& a, const Operand& b) {
  need_bool("&&", a);
  need_bool("&&", b);
  return binary(Op::And, a, b);
}
Value operator||(const Operand& a, const Operand& b) {
  need_bool("||", a);
  need_bool("||", b);
  return binary(Op::Or, a, b);
}
Value operator!(const Operand& a) {
  need_bool("!", a);
  return unary(Op::Not, a);
}
Value operator~(const Operand& a) {
  if (a.type().is_bool()) throw ir::Error(a.loc(), "~ needs an integer operand, got bool (use ! for bools)");
  return unary(Op::Not, a);
}
Value operator-(const Operand& a) { return unary(Op::Neg, a); }

Value apply(ir::Op op, const Operand& a) { return unary(op, a); }
Value apply(ir::Op op, const Operand& a, const Operand& b) { return binary(op, a, b); }

}  // namespace kgen::dsl
