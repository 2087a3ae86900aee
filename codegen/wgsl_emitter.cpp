// Maps a kernel onto a WGSL compute entry point: SIMT builtins are @builtin
// parameters, buffers are storage arrays, scalars a uniform block, the
// workgroup size override constants. Statements come from the shared
// CEmitter; this file decides the interface and WGSL's declaration/loop forms.
#include <set>

#include "codegen/c_emitter.h"
#include "codegen/wgsl_dialect.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

bool is_atomic(Op op) { return ir::op_class(op) == ir::OpClass::Atomic; }

// Names ("b<i>" for buffers, "v<id>" for workgroup arrays) of arrays some
// atomic touches: WGSL atomics only act on atomic<T>, so these are declared so.
std::set<std::string> atomic_arrays(const ir::Kernel& k) {
  ir::ValueIndex idx(k);
  std::set<std::string> s;
  ir::walk(k.body, [&](const Instr& in) {
    if (!is_atomic(in.op)) return;
    const Instr* p = idx.def(in.args[0]);
    if (p && p->op == Op::Buffer) s.insert("b" + std::to_string(p->attr));
    else if (p) s.insert("v" + std::to_string(p->id));
  });
  return s;
}

class WgslEmitter : public CEmitter {
 public:
  WgslEmitter(const ir::Kernel& k, const WgslDialect& d, const std::set<std::string>& atomics)
      : CEmitter(k, d), atomics_(atomics) {}

  std::string run() {
    line("// kernel '" + k_.name + "'");
    interface();
    // main() is printed first so only the helpers it calls go before it.
    const size_t at = out().size();
    line("@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)");
    open("fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,\n"
         "        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>)");
    for (size_t i = 0; i < k_.scalars.size(); ++i)
      line("let p" + std::to_string(i) + ": " + tname(k_.scalars[i].type) + " = " + slot(k_.scalars[i].type, i) + ";  // " +
           k_.scalars[i].name);
    emit_block(k_.body);
    close();
    std::string body = out().substr(at);
    out().resize(at);
    return std::move(out()) + wgsl_helpers(body) + body;
  }

 private:
  void interface() {
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferParam& b = k_.buffers[i];
      std::string name = "b" + std::to_string(i);
      bool at = atomics_.count(name);
      // No write-only storage in WGSL; atomics need read_write.
      std::string acc = b.access == ir::Access::Read && !at ? "read" : "read_write";
      std::string elem = at ? "atomic<" + tname(b.elem) + ">" : tname(b.elem);
      line("@group(0) @binding(" + std::to_string(i) + ") var<storage, " + acc + "> " + name + ": array<" + elem + ">;  // " +
           b.name + " (" + std::string(ir::access_name(b.access)) + ")");
    }
    if (!k_.scalars.empty()) {
      line("struct KgParams { s: array<vec4<u32>, " + std::to_string((k_.scalars.size() + 1) / 2) +
           ">, }  // 8-byte slots, two per element, value in the low word");
      line("@group(0) @binding(" + std::to_string(k_.buffers.size()) + ") var<uniform> kg_params: KgParams;");
    }
    const auto& wg = k_.workgroup_size;
    for (int a = 0; a < 3; ++a)
      line("override kg_wg_" + std::string(1, "xyz"[a]) + ": u32 = " + std::to_string(k_.fixed_workgroup() ? wg[a] : 1) + "u;");
    ir::walk(k_.body, [&](const Instr& in) {
      if (in.op == Op::SharedAlloc) line(d_.shared_decl(in.type.element(), in.attr, vname(in.id)) + ";");
    });
  }

  std::string slot(Type t, size_t i) const {
    std::string w = "kg_params.s[" + std::to_string(i / 2) + "]." + (i % 2 ? "z" : "x");
    switch (t.kind) {
      case ScalarKind::Bool: return "(" + w + " & 0xffu) != 0u";
      case ScalarKind::U32: return w;
      default: return "bitcast<" + tname(t) + ">(" + w + ")";
    }
  }

  // Immutable SSA values are `let`; a Var and a line built by Insert (assigned
  // lane by lane afterwards) need a `var`.
  std::string def_lhs(const Instr& in) const override {
    bool mut = in.op == Op::Var || in.op == Op::Insert;
    return std::string(mut ? "var " : "let ") + vname(in.id) + ": " + tname(in.type);
  }
  std::string builtin(const Instr& in) const override {
    const std::string ax = std::string(".") + "xyz"[in.attr & 3];
    switch (in.op) {
      case Op::GlobalId: return "kg_gid" + ax;
      case Op::LocalId: return "kg_lid" + ax;
      case Op::GroupId: return "kg_wid" + ax;
      case Op::NumGroups: return "kg_nwg" + ax;
      case Op::GroupSize: return "kg_wg_" + std::string(1, "xyz"[in.attr & 3]);
      default: break;
    }
    throw ir::Error(in.loc, "wgsl: builtin '" + std::string(ir::op_name(in.op)) + "' is not supported");
  }
  std::string param(const Instr& in) const override { return "p" + std::to_string(in.attr); }
  std::string buffer(const Instr& in) const override { return "b" + std::to_string(in.attr); }
  void emit_return(const Instr&) override { line("return;"); }

  // WGSL spellings of the loops; everything else is the shared C form.
  void emit_instr(const Instr& in) override {
    if (in.op == Op::For) {
      std::string iv = vname(in.id);
      open("for (var " + iv + ": " + tname(in.type) + " = " + ref(in.args[0]) + "; " + iv + " < " + ref(in.args[1]) + "; " +
           iv + " += " + ref(in.args[2]) + ")");
      emit_block(in.blocks[0]);
      close();
      return;
    }
    if (in.op == Op::Loop) {
      open("loop");
      emit_block(in.blocks[0]);
      close();
      return;
    }
    CEmitter::emit_instr(in);
  }

  const std::set<std::string>& atomics_;
};

}  // namespace

std::string wgsl_unsupported(const ir::Kernel& k, const WgslOptions& opt) {
  try {
    check_capabilities(k, opt.caps);
  } catch (const ir::Error& e) {
    return e.message;
  }
  const std::string kn = "kernel '" + k.name + "'";
  auto type_ok = [](Type t) {
    return t.kind == ScalarKind::Bool || t.kind == ScalarKind::I32 || t.kind == ScalarKind::U32 || t.kind == ScalarKind::F32;
  };
  auto why_type = [&](Type t) {
    return t.bits() == 64 ? kn + " uses " + t.str() + ": WGSL has no 64-bit types"
                          : kn + " uses " + t.str() + ": WGSL has no 8/16-bit types without extensions";
  };
  for (const auto& b : k.buffers) {
    if (!type_ok(b.elem)) return why_type(b.elem);
    if (b.elem.is_bool()) return kn + ": buffer '" + b.name + "' holds bool (stored as u8): WGSL has no 8-bit storage";
    if (b.elem.lanes == 3)
      return kn + ": buffer '" + b.name + "' holds 3-lane lines, whose WGSL array stride (16 bytes) differs from the packed layout";
  }
  for (const auto& s : k.scalars)
    if (!type_ok(s.type)) return why_type(s.type);
  WgslDialect d;
  std::string why;
  ir::ValueIndex idx(k);
  ir::walk(k.body, [&](const Instr& in) {
    if (!why.empty()) return;
    std::string at = in.loc.known() ? " at " + in.loc.str() : "";
    Type t0 = in.args.empty() ? in.type : idx.type(in.args[0]);
    if (!in.type.is_void() && !type_ok(in.type)) why = why_type(in.type);
    else if (!type_ok(t0) && !t0.is_void()) why = why_type(t0);
    else if (in.type.lanes > 4 || t0.lanes > 4) why = kn + " uses " + std::to_string(std::max(in.type.lanes, t0.lanes)) + "-lane lines; WGSL vectors stop at 4";
    else {
      ir::OpClass c = ir::op_class(in.op);
      bool math = c == ir::OpClass::Unary || c == ir::OpClass::Binary || c == ir::OpClass::Compare || c == ir::OpClass::Fma;
      if (math && !d.expresses(in.op, t0))
        why = kn + " uses '" + std::string(ir::op_name(in.op)) + "' on " + t0.str() + at + ", which has no WGSL builtin";
      if (c == ir::OpClass::Atomic && !in.type.is_int())
        why = kn + " uses a " + in.type.str() + " atomic" + at + "; WGSL atomics are atomic<u32|i32> only";
      if (in.op == Op::Bitcast && t0.lanes != in.type.lanes)
        why = kn + " bitcasts " + t0.str() + " to " + in.type.str() + at + ", which changes the lane count";
    }
  });
  return why;
}

std::string emit_wgsl(const ir::Kernel& k, const WgslOptions& opt) {
  std::string why = wgsl_unsupported(k, opt);
  if (!why.empty()) throw ir::Error({}, why);
  std::set<std::string> atomics = atomic_arrays(k);
  WgslDialect d(atomics);
  return WgslEmitter(k, d, atomics).run();
}

}  // namespace kgen::codegen
