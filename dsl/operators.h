// C++ operators on kernel values. Each records one instruction at the user's
// expression (see Operand). A literal operand takes the other operand's type
// (literal.h); two handles must already agree, there are no implicit
// conversions between handles (`cast` converts).
//
// Comparisons produce bool (or bool line) values. `&&`, `||` and `!` work on
// bools only and, being overloaded operators, do NOT short-circuit: both
// sides are recorded and evaluated (use if_ for guarded evaluation, e.g. a
// bounds check before a load). `==`/`!=` are also available as eq/ne.
#pragma once
#include "dsl/value.h"

namespace kgen::dsl {

Value operator+(const Operand& a, const Operand& b);
Value operator-(const Operand& a, const Operand& b);
Value operator*(const Operand& a, const Operand& b);
Value operator/(const Operand& a, const Operand& b);
Value operator%(const Operand& a, const Operand& b);
Value operator&(const Operand& a, const Operand& b);
Value operator|(const Operand& a, const Operand& b);
Value operator^(const Operand& a, const Operand& b);
Value operator<<(const Operand& a, const Operand& b);
Value operator>>(const Operand& a, const Operand& b);

Value operator<(const Operand& a, const Operand& b);
Value operator<=(const Operand& a, const Operand& b);
Value operator>(const Operand& a, const Operand& b);
Value operator>=(const Operand& a, const Operand& b);
Value operator==(const Operand& a, const Operand& b);
Value operator!=(const Operand& a, const Operand& b);
Value eq(const Operand& a, const Operand& b);
Value ne(const Operand& a, const Operand& b);

Value operator&&(const Operand& a, const Operand& b);  // non-short-circuit
Value operator||(const Operand& a, const Operand& b);  // non-short-circuit
Value operator!(const Operand& a);                     // bool only
Value operator~(const Operand& a);                     // integers only
Value operator-(const Operand& a);

// Any unary or binary/compare IR op by its enum: for op tables that generate
// kernels (ops/), where spelling each operator out would duplicate the op list.
Value apply(ir::Op op, const Operand& a);
Value apply(ir::Op op, const Operand& a, const Operand& b);

}  // namespace kgen::dsl
