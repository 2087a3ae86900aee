// Value handles and operands.
//
// A Value is an immutable handle to one SSA value of the kernel being built:
// (kernel serial, value id, runtime ir::Type). Its type is runtime data, so
// one C++ function builds f32, f16 and i32 variants of a kernel. Rebinding a
// Value variable (`v = v + 1`) just names a new SSA value; mutable state that
// must survive control flow lives in a Var (memory.h).
//
// Operand is what every DSL operation takes: anything that can stand for a
// value (Value, Var, buffer element, C++ literal) plus the user's call site.
// Its converting constructors have a defaulted std::source_location argument,
// and default arguments are evaluated where the conversion happens, i.e. in
// the user's expression: `y[i] = a * x[i] + 1` stamps each recorded
// instruction with the file:line of that statement.
#pragma once
#include <initializer_list>
#include <source_location>

#include "dsl/context.h"
#include "dsl/literal.h"
#include "ir/ir.h"

namespace kgen::dsl {

class Var;
class ElemRef;

class Value {
 public:
  Value() = default;  // empty handle; using it is an error
  Value(ir::ValueId id, ir::Type type, uint64_t kernel_serial) : id_(id), type_(type), serial_(kernel_serial) {}

  bool valid() const { return id_ != ir::kNoValue; }
  ir::ValueId id() const { return id_; }
  ir::Type type() const { return type_; }
  int lanes() const { return type_.lanes; }
  uint64_t kernel_serial() const { return serial_; }

  // Lane `i` of a vector line (an Extract; `i` is a compile-time constant).
  Value lane(int i, std::source_location loc = std::source_location::current()) const;

 private:
  ir::ValueId id_ = ir::kNoValue;
  ir::Type type_;
  uint64_t serial_ = 0;
};

class Operand {
 public:
  Operand(const Value& v, std::source_location loc = std::source_location::current())
      : value_(v), loc_(to_loc(loc)) {}
  // The same at a location the DSL already knows (internal use).
  Operand(const Value& v, ir::SourceLoc loc) : value_(v), loc_(loc) {}
  Operand(const Var& v, ir::SourceLoc loc);
  Operand(const ElemRef& e, ir::SourceLoc loc);
  template <ArithmeticLiteral T>
  Operand(T lit, ir::SourceLoc loc) : literal_(Literal::of(lit)), is_literal_(true), loc_(loc) {}
  // Reading a Var or a buffer element records the load here, at the use.
  Operand(const Var& v, std::source_location loc = std::source_location::current());
  Operand(const ElemRef& e, std::source_location loc = std::source_location::current());
  template <ArithmeticLiteral T>
  Operand(T lit, std::source_location loc = std::source_location::current())
      : literal_(Literal::of(lit)), is_literal_(true), loc_(to_loc(loc)) {}

  bool is_literal() const { return is_literal_; }
  const Value& value() const { return value_; }
  const Literal& literal() const { return literal_; }
  ir::SourceLoc loc() const { return loc_; }
  // The operand's own type: the handle's, or the literal's natural type.
  ir::Type type() const { return is_literal_ ? literal_.natural : value_.type(); }

 private:
  Value value_;
  Literal literal_;
  bool is_literal_ = false;
  ir::SourceLoc loc_;
};

namespace detail {

// Checks that `v` may be used here (non-empty, from the kernel being built,
// in scope) and returns its id; errors point at `loc`.
ir::ValueId use(const Value& v, ir::SourceLoc loc);
// The operand as a value of type `t` (literals become constants of `t`).
ir::ValueId resolve(const Operand& o, ir::Type t);
// The operand as a value; a literal takes its natural type.
ir::ValueId resolve(const Operand& o);
// Operands that must share one type: the first handle's type, else the first
// literal's natural type. The builder rejects differing handle types.
std::vector<ir::ValueId> resolve_together(std::initializer_list<const Operand*> ops);
// A handle for a value just recorded in the current kernel.
Value wrap(ir::ValueId id, ir::SourceLoc loc);
// Records a value-producing op and wraps the result.
Value make(ir::SourceLoc loc, ir::Op op, std::vector<ir::ValueId> args, int64_t attr = 0, ir::Type type = {});

Value unary(ir::Op op, const Operand& a);
Value binary(ir::Op op, const Operand& a, const Operand& b);

}  // namespace detail
}  // namespace kgen::dsl
