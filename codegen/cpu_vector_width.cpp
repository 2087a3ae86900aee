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

}  // namespace

uint32_t auto_vector_bits(const ir::Kernel& k, const TargetCaps& caps) {
  const uint32_t widest = caps.vector_bits ? caps.vector_bits : 512;
  if (!caps.cpu.streaming_vector_bits || caps.cpu.streaming_vector_bits >= widest) return widest;
  bool cheap = true;
  ir::walk(k.body, [&](const ir::Instr& in) { cheap = cheap && !costly(in.op) && !in.type.is_vector(); });
  return cheap ? caps.cpu.streaming_vector_bits : widest;
}

}  // namespace kgen::codegen
