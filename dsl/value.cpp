#include "dsl/value.h"

#include "dsl/memory.h"

namespace kgen::dsl {

Operand::Operand(const Var& v, std::source_location loc) : Operand(v, to_loc(loc)) {}
Operand::Operand(const ElemRef& e, std::source_location loc) : Operand(e, to_loc(loc)) {}

Operand::Operand(const Var& v, ir::SourceLoc loc) : loc_(loc) {
  value_ = detail::make(loc_, ir::Op::VarLoad, {detail::use(v.handle(), loc_)});
}

Operand::Operand(const ElemRef& e, ir::SourceLoc loc) : loc_(loc) { value_ = e.load_at(loc); }

Value Value::lane(int i, std::source_location loc) const {
  ir::SourceLoc l = to_loc(loc);
  return detail::make(l, ir::Op::Extract, {detail::use(*this, l)}, i);
}

namespace detail {

ir::ValueId use(const Value& v, ir::SourceLoc loc) {
  KernelContext& c = context_at(loc, "value handle");
  if (!v.valid()) throw ir::Error(loc, "use of an empty value handle (default-constructed Value)");
  // A pending if_ chain ends here (its values go out of scope).
  c.builder.loc = loc;
  c.settle();
  if (v.kernel_serial() != c.serial)
    throw ir::Error(loc, "handle %" + std::to_string(v.id()) + " belongs to another kernel, not '" + c.kernel.name +
                             "' (handles cannot be shared between kernels)");
  if (!c.builder.info(v.id()).valid)
    throw ir::Error(loc, "value %" + std::to_string(v.id()) +
                             " is out of scope here: it was defined inside an if_/for_range/loop_ body that has "
                             "ended (use a var() to carry values out of control flow)");
  return v.id();
}

ir::ValueId resolve(const Operand& o, ir::Type t) {
  return o.is_literal() ? literal_for(t, o.literal(), o.loc()) : use(o.value(), o.loc());
}

ir::ValueId resolve(const Operand& o) { return resolve(o, o.type()); }

std::vector<ir::ValueId> resolve_together(std::initializer_list<const Operand*> ops) {
  ir::Type t = (*ops.begin())->type();
  for (const Operand* o : ops)
    if (!o->is_literal()) {
      t = o->type();
      break;
    }
  std::vector<ir::ValueId> ids;
  for (const Operand* o : ops) ids.push_back(resolve(*o, t));
  return ids;
}

Value wrap(ir::ValueId id, ir::SourceLoc loc) {
  KernelContext& c = context_at(loc);
  return Value(id, c.builder.type_of(id), c.serial);
}

Value make(ir::SourceLoc loc, ir::Op op, std::vector<ir::ValueId> args, int64_t attr, ir::Type type) {
  return wrap(record(loc, op, std::move(args), attr, type), loc);
}

Value unary(ir::Op op, const Operand& a) { return make(a.loc(), op, {resolve(a)}); }

Value binary(ir::Op op, const Operand& a, const Operand& b) {
  return make(a.loc(), op, resolve_together({&a, &b}));
}

}  // namespace detail
}  // namespace kgen::dsl
