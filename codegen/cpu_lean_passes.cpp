#include "codegen/cpp.h"

namespace kgen::codegen {

namespace {

// Ops a straight-line scalar item may hold: values, arithmetic, conversions,
// plain loads and stores, local variables, branches and early returns.
bool straight_line_op(const ir::Instr& in) {
  using ir::Op;
  switch (ir::op_class(in.op)) {
    case ir::OpClass::Leaf: case ir::OpClass::Builtin: case ir::OpClass::Unary: case ir::OpClass::Binary:
    case ir::OpClass::Compare: case ir::OpClass::Select: case ir::OpClass::Fma: case ir::OpClass::Convert:
    case ir::OpClass::Local:
      return true;
    case ir::OpClass::Memory:
      return in.op == Op::Load || in.op == Op::Store;
    case ir::OpClass::Control:
      return in.op == Op::If || in.op == Op::Return;
    default:
      return false;
  }
}

}  // namespace

bool lean_passes_suffice(const ir::Kernel& k) {
  bool ok = true;
  ir::walk(k.body, [&](const ir::Instr& in) { ok = ok && straight_line_op(in) && !in.type.is_vector(); });
  return ok;
}

}  // namespace kgen::codegen
