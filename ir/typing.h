// Type rules of the IR, in one place. The builder (and so the DSL and the text
// parser) and the verifier both call infer_type, so an instruction that can be
// built is exactly one that verifies.
#pragma once
#include <functional>

#include "ir/ir.h"

namespace kgen::ir {

// What the type rules need to know about an operand.
struct ValueInfo {
  Type type;
  Op op = Op::Const;  // defining op
  int64_t attr = 0;   // defining instruction's attribute (buffer index...)
  bool valid = false;
};
using ValueLookup = std::function<ValueInfo(ValueId)>;

// Returns the result type of `in` (void for statements). For ops whose result
// type is chosen by the producer (Const, Cast, Bitcast, Splat, SharedAlloc)
// in.type must already hold it. Throws Error at in.loc when the instruction is
// ill-typed, naming the op and what is wrong.
Type infer_type(const Instr& in, const Kernel& k, const ValueLookup& lookup);

// True when an op of domain `d` accepts operands of type `t` (ints and
// floats for Numeric, floats for Float, ...; pointers and void never).
bool domain_accepts(Domain d, Type t);

// True when the immediate is exactly representable in the scalar type `t`.
bool imm_fits(Type t, const Imm& v);

}  // namespace kgen::ir
