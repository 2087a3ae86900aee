// Maps a kernel onto a WGSL compute entry point: SIMT builtins are @builtin
// parameters, buffers are storage arrays (in the storage form their element
// type needs, see wgsl_dialect.h), scalars a uniform block, the workgroup size
// override constants. Statements come from the shared CEmitter and the shader
// skeleton from GpuEmitter; this file decides the interface and WGSL's
// declaration/loop forms.
#include "codegen/gpu_emitter.h"
#include "codegen/wgsl_dialect.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

bool sub_word(Type t) { return t.bits() < 32; }

// The storage form of every buffer and workgroup array that is not plain.
std::map<std::string, WgslStorage> storage_forms(const ir::Kernel& k, const WgslOptions& opt) {
  std::map<std::string, WgslStorage> m;
  std::set<int64_t> atomics = atomic_buffers(k), stored = stored_buffers(k);
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    Type e = k.buffers[i].elem;
    WgslStorage s;
    if (e.kind == ScalarKind::F16 && opt.shader_f16) s.form = WgslForm::F16;
    else if (sub_word(e)) s = {WgslForm::Packed, stored.count(int64_t(i)) > 0};
    else if (e.lanes == 3) s.form = WgslForm::PerLane;
    if (atomics.count(int64_t(i))) s.atomic = true;
    if (s.form != WgslForm::Direct || s.atomic) m["b" + std::to_string(i)] = s;
  }
  for (ir::ValueId v : atomic_shared_arrays(k)) m["v" + std::to_string(v)] = {WgslForm::Direct, true};
  return m;
}

class WgslEmitter : public GpuEmitter {
 public:
  WgslEmitter(const ir::Kernel& k, const WgslDialect& d, const WgslOptions& opt, std::map<std::string, WgslStorage> forms)
      : GpuEmitter(k, d), wd_(d), opt_(opt), forms_(std::move(forms)) {}

 private:
  void header() override {
    bool f16 = false;
    for (const auto& [name, s] : forms_) f16 |= s.form == WgslForm::F16;
    if (f16) line("enable f16;");
    line("// kernel '" + k_.name + "'");
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferParam& b = k_.buffers[i];
      std::string name = "b" + std::to_string(i);
      auto it = forms_.find(name);
      WgslStorage s = it == forms_.end() ? WgslStorage{} : it->second;
      // No write-only storage in WGSL; atomics need read_write.
      std::string acc = b.access == ir::Access::Read && !s.atomic ? "read" : "read_write";
      line("@group(0) @binding(" + std::to_string(i) + ") var<storage, " + acc + "> " + name + ": array<" +
           wd_.storage_elem(b.elem, s) + ">;  // " + b.name + " (" + std::string(ir::access_name(b.access)) + ", " +
           b.elem.str() + ")");
    }
    if (!k_.scalars.empty()) {
      line("struct KgParams { s: array<vec4<u32>, " + std::to_string((k_.scalars.size() + 1) / 2) +
           ">, }  // 8-byte slots, two per element, value in the low word");
      line("@group(0) @binding(" + std::to_string(k_.buffers.size()) + ") var<uniform> kg_params: KgParams;");
    }
    // The loop-limit flag (TargetCaps::loop_iteration_limit), bound after the
    // scalars' uniform.
    if (opt_.caps.loop_iteration_limit)
      line("@group(0) @binding(" + std::to_string(k_.buffers.size() + 1) +
           ") var<storage, read_write> kg_loop_flag: array<u32>;  // set when a loop reaches the driver's iteration limit");
    const auto& wg = k_.workgroup_size;
    for (int a = 0; a < 3; ++a)
      line("override kg_wg_" + std::string(1, "xyz"[a]) + ": u32 = " + std::to_string(k_.fixed_workgroup() ? wg[a] : 1) + "u;");
  }

  // Iterations of every loop of the invocation, counted as llvmpipe's
  // limiter does (see GlslEmitter): a for loop's failing exit test too.
  void main_prologue() override {
    if (opt_.caps.loop_iteration_limit) line("var kg_iters: u32 = 0u;");
  }
  void loop_body_entry() override {
    if (opt_.caps.loop_iteration_limit)
      line("kg_iters += 1u; if (kg_iters >= " + std::to_string(opt_.caps.loop_iteration_limit) + "u) { kg_loop_flag[0] = 1u; }");
  }
  void for_exit() override {
    if (opt_.caps.loop_iteration_limit) line("kg_iters += 1u;");
  }

  std::string main_signature() const override {
    return "@compute @workgroup_size(kg_wg_x, kg_wg_y, kg_wg_z)\n"
           "fn main(@builtin(global_invocation_id) kg_gid: vec3<u32>, @builtin(local_invocation_id) kg_lid: vec3<u32>,\n"
           "        @builtin(workgroup_id) kg_wid: vec3<u32>, @builtin(num_workgroups) kg_nwg: vec3<u32>)";
  }

  // Decodes an 8-byte uniform slot; narrow types come in the low bits.
  std::string scalar_decl(size_t i) const override {
    Type t = k_.scalars[i].type;
    std::string w = "kg_params.s[" + std::to_string(i / 2) + "]." + (i % 2 ? "z" : "x"), v;
    switch (t.kind) {
      case ScalarKind::Bool: v = "(" + w + " & 0xffu) != 0u"; break;
      case ScalarKind::U32: v = w; break;
      case ScalarKind::U8: v = "(" + w + " & 0xffu)"; break;
      case ScalarKind::U16: v = "(" + w + " & 0xffffu)"; break;
      case ScalarKind::I8: v = "((bitcast<i32>(" + w + ") << 24u) >> 24u)"; break;
      case ScalarKind::I16: v = "((bitcast<i32>(" + w + ") << 16u) >> 16u)"; break;
      case ScalarKind::F16: v = "kg_h2f(" + w + " & 0xffffu)"; break;
      case ScalarKind::BF16: v = "bitcast<f32>(" + w + " << 16u)"; break;
      default: v = "bitcast<" + tname(t) + ">(" + w + ")"; break;
    }
    return "let p" + std::to_string(i) + ": " + tname(t) + " = " + v;
  }

  std::string helpers_for(const std::string& body) const override { return wgsl_helpers(body); }

  std::string builtin_vector(Op op) const override {
    switch (op) {
      case Op::GlobalId: return "kg_gid";
      case Op::LocalId: return "kg_lid";
      case Op::GroupId: return "kg_wid";
      case Op::NumGroups: return "kg_nwg";
      default: return "";
    }
  }
  std::string builtin_scalar(const Instr& in) const override {
    if (in.op == Op::GroupSize) return "kg_wg_" + std::string(1, "xyz"[in.attr & 3]);
    return GpuEmitter::builtin_scalar(in);
  }

  // Immutable SSA values are `let`; a Var and a line built by Insert (assigned
  // lane by lane afterwards) need a `var`.
  std::string def_lhs(const Instr& in) const override {
    bool mut = in.op == Op::Var || in.op == Op::Insert;
    return std::string(mut ? "var " : "let ") + vname(in.id) + ": " + tname(in.type);
  }
  std::string buffer(const Instr& in) const override { return "b" + std::to_string(in.attr); }

  // WGSL spellings of the loops; everything else is the shared C form.
  void emit_instr(const Instr& in) override {
    if (in.op == Op::For) {
      std::string iv = vname(in.id);
      open("for (var " + iv + ": " + tname(in.type) + " = " + ref(in.args[0]) + "; " + iv + " < " + ref(in.args[1]) + "; " +
           iv + " += " + ref(in.args[2]) + ")");
      loop_body_entry();
      emit_block(in.blocks[0]);
      close();
      for_exit();
      return;
    }
    if (in.op == Op::Loop) {
      open("loop");
      loop_body_entry();
      emit_block(in.blocks[0]);
      close();
      return;
    }
    if (keep_rounding(in)) return;
    CEmitter::emit_instr(in);
  }

  // WGSL has no `precise`, and Mesa (lavapipe) treats float ops as inexact:
  // it contracts a*b + c into one fma (rounding once, unlike the interpreter:
  // visible where the sum cancels) and reassociates `fma(x, c, M) - M`, the
  // rounding step of an exp written in the DSL (M = 1.5 * 2^23), into `x * c`,
  // which is silently wrong. So an add/sub operand that is a product, or an
  // add/sub/fma of a constant when the other operand is a constant, goes
  // through an identity the compiler cannot see through: xor with a bit of
  // num_workgroups that is always 0.
  bool keep_rounding(const Instr& in) {
    if ((in.op != Op::Sub && in.op != Op::Add) || !in.type.is_float()) return false;
    auto def = [&](ir::ValueId v) { return index_.def(v); };
    auto is_const = [&](ir::ValueId v) { const Instr* d = def(v); return d && d->op == Op::Const; };
    auto rounds = [&](ir::ValueId v) {
      const Instr* d = def(v);
      if (!d || (d->op != Op::Add && d->op != Op::Sub && d->op != Op::Fma)) return false;
      for (ir::ValueId a : d->args)
        if (is_const(a)) return true;
      return false;
    };
    bool keep[2];
    for (int i = 0; i < 2; ++i) {
      const Instr* d = def(in.args[i]);
      keep[i] = (d && d->op == Op::Mul) || (is_const(in.args[1 - i]) && rounds(in.args[i]));
    }
    if (!keep[0] && !keep[1]) return false;
    const Type t = index_.type(in.args[0]);
    auto opaque = [&](Type vt, const std::string& x) {
      std::string u = vt.lanes == 1 ? "u32" : "vec" + std::to_string(vt.lanes) + "<u32>";
      std::string z = vt.lanes == 1 ? "(kg_nwg.x >> 31u)" : u + "(kg_nwg.x >> 31u)";
      return "bitcast<" + tname(vt) + ">(bitcast<" + u + ">(" + x + ") ^ " + z + ")";
    };
    std::vector<std::string> lanes;
    const bool by_lane = t.lanes > 4;  // arrays: no vector operators
    for (int l = 0; l < (by_lane ? t.lanes : 1); ++l) {
      std::vector<std::string> a;
      for (int i = 0; i < 2; ++i) {
        Type ti = index_.type(in.args[i]);
        std::string x = by_lane ? d_.extract(ti, ref(in.args[i]), l) : ref(in.args[i]);
        Type vt = by_lane ? ti.scalar() : ti;
        a.push_back(keep[i] ? opaque(vt, x) : x);
      }
      lanes.push_back(by_lane ? math_expr(in.op, t.scalar(), in.type.scalar(), a) : math_expr(in.op, t, in.type, a));
    }
    line(def_lhs(in) + " = " + (by_lane ? d_.construct(in.type, lanes) : lanes[0]) + ";");
    return true;
  }

  const WgslDialect& wd_;
  const WgslOptions& opt_;
  std::map<std::string, WgslStorage> forms_;
};

}  // namespace

std::string wgsl_unsupported(const ir::Kernel& k, const WgslOptions& opt) {
  try {
    check_capabilities(k, opt.caps);
  } catch (const ir::Error& e) {
    return e.message;
  }
  const std::string kn = "kernel '" + k.name + "'";
  auto why_type = [&](Type t) { return kn + " uses " + t.str() + ": WGSL has no 64-bit types"; };
  for (const auto& b : k.buffers)
    if (b.elem.bits() == 64) return why_type(b.elem);
  for (const auto& s : k.scalars)
    if (s.type.bits() == 64) return why_type(s.type);
  WgslDialect d;
  std::string why;
  ir::ValueIndex idx(k);
  ir::walk(k.body, [&](const Instr& in) {
    if (!why.empty()) return;
    std::string at = in.loc.known() ? " at " + in.loc.str() : "";
    Type t0 = in.args.empty() ? in.type : idx.type(in.args[0]);
    if (!in.type.is_void() && !in.type.is_pointer() && in.type.bits() == 64) why = why_type(in.type);
    else if (!t0.is_void() && !t0.is_pointer() && t0.bits() == 64) why = why_type(t0);
    else {
      ir::OpClass c = ir::op_class(in.op);
      bool math = c == ir::OpClass::Unary || c == ir::OpClass::Binary || c == ir::OpClass::Compare || c == ir::OpClass::Fma;
      if (math && !d.expresses(in.op, t0))
        why = kn + " uses '" + std::string(ir::op_name(in.op)) + "' on " + t0.str() + at + ", which has no WGSL builtin";
      if (c == ir::OpClass::Atomic && (!in.type.is_int() || in.type.bits() != 32))
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
  auto forms = storage_forms(k, opt);
  WgslDialect d(forms);
  return WgslEmitter(k, d, opt, std::move(forms)).run();
}

}  // namespace kgen::codegen
