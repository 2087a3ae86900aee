#include "codegen/gpu_emitter.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;

namespace {

// The buffer index (or -1) and the SharedAlloc (or null) an access's pointer names.
const Instr* pointer_def(const ir::ValueIndex& idx, const Instr& in) { return idx.def(in.args[0]); }

}  // namespace

std::set<int64_t> atomic_buffers(const ir::Kernel& k) {
  ir::ValueIndex idx(k);
  std::set<int64_t> s;
  ir::walk(k.body, [&](const Instr& in) {
    if (ir::op_class(in.op) != ir::OpClass::Atomic) return;
    const Instr* p = pointer_def(idx, in);
    if (p && p->op == Op::Buffer) s.insert(p->attr);
  });
  return s;
}

std::set<int64_t> stored_buffers(const ir::Kernel& k) {
  ir::ValueIndex idx(k);
  std::set<int64_t> s;
  ir::walk(k.body, [&](const Instr& in) {
    if (in.op != Op::Store) return;
    const Instr* p = pointer_def(idx, in);
    if (p && p->op == Op::Buffer) s.insert(p->attr);
  });
  return s;
}

std::set<ir::ValueId> atomic_shared_arrays(const ir::Kernel& k) {
  ir::ValueIndex idx(k);
  std::set<ir::ValueId> s;
  ir::walk(k.body, [&](const Instr& in) {
    if (ir::op_class(in.op) != ir::OpClass::Atomic) return;
    const Instr* p = pointer_def(idx, in);
    if (p && p->op == Op::SharedAlloc) s.insert(p->id);
  });
  return s;
}

std::string GpuEmitter::run() {
  header();
  ir::walk(k_.body, [&](const Instr& in) {
    if (in.op == Op::SharedAlloc) line(d_.shared_decl(in.type.element(), in.attr, vname(in.id)) + ";");
  });
  // main() is printed first so only the helpers it calls go before it.
  const size_t at = out().size();
  open(main_signature());
  main_prologue();
  for (size_t i = 0; i < k_.scalars.size(); ++i) line(scalar_decl(i) + ";  // " + k_.scalars[i].name);
  emit_block(k_.body);
  close();
  std::string body = out().substr(at);
  out().resize(at);
  return std::move(out()) + helpers_for(body) + body;
}

std::string GpuEmitter::builtin_scalar(const Instr& in) const {
  throw ir::Error(in.loc, std::string(d_.name()) + ": builtin '" + std::string(ir::op_name(in.op)) + "' is not supported");
}

std::string GpuEmitter::builtin(const Instr& in) const {
  std::string v = builtin_vector(in.op);
  if (v.empty()) return builtin_scalar(in);
  return v + "." + "xyz"[in.attr & 3];
}

}  // namespace kgen::codegen
