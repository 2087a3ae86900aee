// Maps a kernel onto a GLSL compute shader: SIMT builtins are gl_* variables,
// buffers are std430 storage blocks, scalars come from push constants, the
// workgroup size from specialization constants. Statements come from the
// shared CEmitter and the skeleton from GpuEmitter; this file only decides
// the shader's interface.
#include <set>

#include "codegen/gpu_emitter.h"
#include "codegen/glsl_dialect.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

uint32_t kind_bit(ScalarKind k) { return 1u << unsigned(k); }

uint32_t used_kinds(const ir::Kernel& k, const GlslOptions& opt) {
  uint32_t m = 0;
  // Exact f32 fmod and fma are computed in f64 when the device has it.
  if (opt.caps.f64)
    ir::walk(k.body, [&](const Instr& in) {
      if ((in.op == Op::Rem || in.op == Op::Fma) && in.type.is_float()) m |= kind_bit(ScalarKind::F64);
    });
  for (const auto& b : k.buffers) m |= kind_bit(b.elem.kind);
  for (const auto& s : k.scalars) m |= kind_bit(s.type.kind);
  ir::walk(k.body, [&](const Instr& in) {
    if (!in.type.is_void()) m |= kind_bit(in.type.kind);
  });
  return m;
}

bool is_transcendental(Op op) {
  switch (op) {
    case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Sin: case Op::Cos:
    case Op::Tanh: case Op::Erf: case Op::Pow: case Op::Rem: return true;
    default: return false;
  }
}

class GlslEmitter : public GpuEmitter {
 public:
  GlslEmitter(const ir::Kernel& k, const GlslDialect& d, const GlslOptions& opt, uint32_t kinds)
      : GpuEmitter(k, d), gd_(d), opt_(opt), kinds_(kinds) {}

 private:
  bool uses(ScalarKind k) const { return kinds_ & kind_bit(k); }

  void header() override {
    line("#version 450");
    line("// kernel '" + k_.name + "'");
    bool explicit_types = uses(ScalarKind::I8) || uses(ScalarKind::U8) || uses(ScalarKind::I16) ||
                          uses(ScalarKind::U16) || uses(ScalarKind::I64) || uses(ScalarKind::U64) || uses(ScalarKind::F16) ||
                          uses(ScalarKind::BF16);
    if (explicit_types) line("#extension GL_EXT_shader_explicit_arithmetic_types : require");
    bool storage8 = false, storage16 = false;
    for (const auto& b : k_.buffers) {
      storage8 |= b.elem.bits() == 8;  // bool is stored as u8
      storage16 |= b.elem.bits() == 16;
    }
    if (storage8) line("#extension GL_EXT_shader_8bit_storage : require");
    if (storage16) line("#extension GL_EXT_shader_16bit_storage : require");
    bool sg = false, sg_arith = false, sg_shuffle = false;
    ir::walk(k_.body, [&](const Instr& in) {
      ir::OpClass c = ir::op_class(in.op);
      sg |= c == ir::OpClass::Subgroup || c == ir::OpClass::SubgroupReduce || in.op == Op::SubgroupSize ||
            in.op == Op::SubgroupLane;
      sg_arith |= c == ir::OpClass::SubgroupReduce;
      sg_shuffle |= c == ir::OpClass::Subgroup;
    });
    if (sg) line("#extension GL_KHR_shader_subgroup_basic : require");
    if (sg_arith) line("#extension GL_KHR_shader_subgroup_arithmetic : require");
    if (sg_shuffle) line("#extension GL_KHR_shader_subgroup_shuffle : require");
    // The runtime sets the workgroup size through specialization constants 0..2.
    line("layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;");
    interface();
  }

  void interface() {
    const std::set<int64_t> atomics = atomic_buffers(k_);
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferParam& b = k_.buffers[i];
      std::string q = b.access == ir::Access::Read ? "readonly " : b.access == ir::Access::Write ? "writeonly " : "";
      if (atomics.count(int64_t(i))) q = "";  // atomics need a read-write block
      line("layout(std430, set = 0, binding = " + std::to_string(i) + ") " + q + "buffer B" + std::to_string(i) + " { " +
           gd_.storage_type(b.elem) + " d[]; } b" + std::to_string(i) + ";  // " + b.name + " (" +
           std::string(ir::access_name(b.access)) + ")");
    }
    // The loop-limit flag (TargetCaps::loop_iteration_limit), bound after
    // the kernel's buffers.
    if (opt_.caps.loop_iteration_limit)
      line("layout(std430, set = 0, binding = " + std::to_string(k_.buffers.size()) +
           ") buffer KgLoopFlag { uint d[]; } kg_loop_flag;  // set when a loop reaches the driver's iteration limit");
    if (!k_.scalars.empty())
      line("layout(push_constant) uniform KgPush { uvec2 s[" + std::to_string(k_.scalars.size()) +
           "]; } kg_push;  // 8-byte slots, value in the low bytes");
  }

  std::string main_signature() const override { return "void main()"; }
  void main_prologue() override {
    if (opt_.caps.loop_iteration_limit) line("uint kg_iters = 0u;  // loop iterations run by this invocation, all loops");
  }
  // llvmpipe's limiter counts a pass through any loop of the invocation,
  // the failing exit test of a for loop included; this counts the same.
  void loop_body_entry() override {
    if (opt_.caps.loop_iteration_limit)
      line("if (++kg_iters >= " + std::to_string(opt_.caps.loop_iteration_limit) + "u) kg_loop_flag.d[0] = 1u;");
  }
  void for_exit() override {
    if (opt_.caps.loop_iteration_limit) line("++kg_iters;");
  }
  std::string scalar_decl(size_t i) const override {
    return "const " + tname(k_.scalars[i].type) + " p" + std::to_string(i) + " = " +
           slot(k_.scalars[i].type, "kg_push.s[" + std::to_string(i) + "]");
  }
  std::string helpers_for(const std::string& body) const override { return gd_.prelude_for(body) + "\n"; }

  // Decodes an 8-byte push-constant slot (uvec2, low word first).
  std::string slot(Type t, const std::string& s) const {
    const std::string lo = s + ".x";
    switch (t.kind) {
      case ScalarKind::Bool: return "(" + lo + " & 0xffu) != 0u";
      case ScalarKind::U32: return lo;
      case ScalarKind::I32: return "int(" + lo + ")";
      case ScalarKind::F32: return "uintBitsToFloat(" + lo + ")";
      case ScalarKind::U64: return "pack64(" + s + ")";
      case ScalarKind::I64: return "int64_t(pack64(" + s + "))";
      case ScalarKind::F64: return "packDouble2x32(" + s + ")";
      case ScalarKind::F16: return "uint16BitsToFloat16(uint16_t(" + lo + "))";
      default: return tname(t) + "(" + lo + ")";  // 8/16-bit ints: truncating conversion
    }
  }

  std::string def_lhs(const Instr& in) const override {
    // `precise` keeps the driver from contracting a*b+c or reassociating, so
    // floats round like the interpreter.
    std::string p = in.type.is_float() ? "precise " : "";
    return p + tname(in.type) + " " + vname(in.id);
  }
  std::string builtin_vector(Op op) const override {
    switch (op) {
      case Op::GlobalId: return "gl_GlobalInvocationID";
      case Op::LocalId: return "gl_LocalInvocationID";
      case Op::GroupId: return "gl_WorkGroupID";
      case Op::NumGroups: return "gl_NumWorkGroups";
      case Op::GroupSize: return "gl_WorkGroupSize";
      default: return "";
    }
  }
  std::string builtin_scalar(const Instr& in) const override {
    if (in.op == Op::SubgroupSize) return "gl_SubgroupSize";
    if (in.op == Op::SubgroupLane) return "gl_SubgroupInvocationID";
    return GpuEmitter::builtin_scalar(in);
  }
  std::string buffer(const Instr& in) const override { return "b" + std::to_string(in.attr) + ".d"; }

  const GlslDialect& gd_;
  const GlslOptions& opt_;
  uint32_t kinds_;
};

}  // namespace

std::string glsl_unsupported(const ir::Kernel& k, const GlslOptions& opt) {
  try {
    check_capabilities(k, opt.caps);
  } catch (const ir::Error& e) {
    return e.message;
  }
  const std::string kn = "kernel '" + k.name + "'";
  uint32_t kinds = used_kinds(k, opt);
  auto has = [&](ScalarKind s) { return kinds & kind_bit(s); };
  if ((has(ScalarKind::I8) || has(ScalarKind::U8) || has(ScalarKind::Bool)) && !opt.int8)
    return kn + " uses 8-bit integers (or bool buffers) but the device lacks shaderInt8/8-bit storage";
  if ((has(ScalarKind::I16) || has(ScalarKind::U16) || has(ScalarKind::BF16)) && !opt.int16)
    return kn + " uses 16-bit integers (or bf16, kept in 16-bit ints) but the device lacks shaderInt16/16-bit storage";
  for (const auto& b : k.buffers)
    if (b.elem.is_bool() && b.elem.lanes > 4)
      return kn + ": buffer '" + b.name + "' holds bool lines of more than 4 lanes (not supported in GLSL)";
  for (const auto& b : k.buffers)
    if (b.elem.lanes == 3)
      return kn + ": buffer '" + b.name + "' holds 3-lane lines, whose std430 array stride (16 bytes) differs from the packed layout";
  std::string why;
  ir::ValueIndex idx(k);
  ir::walk(k.body, [&](const Instr& in) {
    if (!why.empty()) return;
    std::string at = in.loc.known() ? " at " + in.loc.str() : "";
    Type t0 = in.args.empty() ? in.type : idx.type(in.args[0]);
    if (is_transcendental(in.op) && t0.kind == ScalarKind::F64)
      why = kn + " uses '" + std::string(ir::op_name(in.op)) + "' on f64" + at + ", which GLSL only has for 32-bit floats";
    if ((ir::op_class(in.op) == ir::OpClass::Subgroup || ir::op_class(in.op) == ir::OpClass::SubgroupReduce) &&
        (t0.bits() != 32 || t0.is_vector()))
      why = kn + " uses '" + std::string(ir::op_name(in.op)) + "' on " + t0.str() + at +
            ", but subgroup operations are emitted for 32-bit scalars only";
    if (in.op == Op::Bitcast && (t0.lanes != in.type.lanes))
      why = kn + " bitcasts " + t0.str() + " to " + in.type.str() + at + ", which changes the lane count (not supported in GLSL)";
    if (ir::op_class(in.op) == ir::OpClass::Atomic && in.type.bits() != 32)
      why = kn + " uses a " + in.type.str() + " atomic" + at + "; GLSL atomics are emitted for 32-bit integers only";
  });
  return why;
}

std::string emit_glsl(const ir::Kernel& k, const GlslOptions& opt) {
  std::string why = glsl_unsupported(k, opt);
  if (!why.empty()) throw ir::Error({}, why);
  uint32_t kinds = used_kinds(k, opt);
  GlslDialect d(kinds);
  return GlslEmitter(k, d, opt, kinds).run();
}

}  // namespace kgen::codegen
