#include "codegen/cpp.h"

#include "codegen/target.h"

namespace kgen::codegen {

namespace {

// Ops whose vector form has a long latency chain or a slow unit (division,
// roots, the transcendental functions' polynomials).
bool costly(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Div: case Op::Rem: case Op::Sqrt: case Op::Rsqrt: case Op::Exp: case Op::Exp2: case Op::Log:
    case Op::Log2: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Erf: case Op::Pow:
      return true;
    default:
      return false;
  }
}

// Whether k streams: cheap scalar arithmetic, no loops inside an item, and
// every access a plain load or store at the item's own x id, so the item
// loop walks each buffer contiguously (a strided or indexed walk, as a
// pooling window's, keeps the widest vectors).
bool streams(const ir::Kernel& k) {
  const ir::ValueIndex index(k);
  bool ok = true, accesses = false;
  ir::walk(k.body, [&](const ir::Instr& in) {
    const ir::OpClass c = ir::op_class(in.op);
    if (in.op == ir::Op::Load || in.op == ir::Op::Store) {
      accesses = true;
      ok = ok && is_global_x_id(index, in.args[1]);
    } else if (c == ir::OpClass::Memory || c == ir::OpClass::Atomic || in.op == ir::Op::For || in.op == ir::Op::Loop) {
      ok = false;
    }
    ok = ok && !costly(in.op) && !in.type.is_vector();
  });
  return ok && accesses;
}

}  // namespace

uint32_t auto_vector_bits(const ir::Kernel& k, const TargetCaps& caps) {
  const uint32_t widest = caps.vector_bits ? caps.vector_bits : 512;
  if (!caps.cpu.streaming_vector_bits || caps.cpu.streaming_vector_bits >= widest) return widest;
  return streams(k) ? caps.cpu.streaming_vector_bits : widest;
}

}  // namespace kgen::codegen
