// GLSL 4.50 compute shaders for Vulkan (compiled to SPIR-V by shaderc).
//
// Interface a runtime binds (see glsl_emitter.cpp):
//   * buffer parameter i  -> std430 storage buffer, set 0, binding i
//     (`readonly`/`writeonly` from its access);
//   * scalar parameters   -> one push-constant block of 8-byte slots
//     (`uvec2 s[N]`, value in the low bytes, like LaunchArgs::scalars);
//   * workgroup size      -> specialization constants 0, 1, 2 (x, y, z);
//   * grid                -> vkCmdDispatch(grid).
// Lines are vecN/ivecN/uvecN... (2..4 lanes); 8- and 16-lane lines are arrays
// (float[8]) computed lane by lane. f16 is storage only and computed in f32 like
// the interpreter; narrow/wide types need their Vulkan features (GlslOptions).
#pragma once
#include <string>

#include "codegen/dialect.h"
#include "codegen/target.h"

namespace kgen::codegen {

// A Vulkan 1.2 device with every optional type GLSL can use (lavapipe's set):
// f16 (storage, computed in f32), f64, i64, subgroups of 8, 32 KiB shared.
TargetCaps glsl_default_caps();

struct GlslOptions {
  // What the device can do; runtimes pass their physical device's caps.
  TargetCaps caps = glsl_default_caps();
  bool int8 = true;   // shaderInt8 + storageBuffer8BitAccess (also bool buffers)
  bool int16 = true;  // shaderInt16 + storageBuffer16BitAccess
};

// Why `k` cannot be expressed in GLSL for `opt` (capabilities, f64
// transcendentals, 3-lane buffers...), or "" when it can.
std::string glsl_unsupported(const ir::Kernel& k, const GlslOptions& opt = {});

// Throws ir::Error with glsl_unsupported's reason for kernels it cannot express.
std::string emit_glsl(const ir::Kernel& k, const GlslOptions& opt = {});

class GlslDialect : public Dialect {
 public:
  // `used_kinds`: bit (1 << ScalarKind) per lane type the kernel uses; the
  // prelude declares helper overloads only for those (a double overload alone
  // would make the module require Float64).
  explicit GlslDialect(uint32_t used_kinds = 0);
  std::string_view name() const override { return "glsl"; }
  std::string type_name(ir::Type t) const override;
  ir::Type compute_type(ir::Type t) const override;
  const OpTable& ops() const override { return table_; }
  std::string literal(ir::Type t, const ir::Imm& v) const override;
  std::string cast(ir::Type to, ir::Type from, const std::string& x) const override;
  std::string bitcast(ir::Type to, ir::Type from, const std::string& x) const override;
  std::string splat(ir::Type to, const std::string& x) const override;
  std::string construct(ir::Type to, std::span<const std::string> lanes) const override;
  std::string extract(ir::Type vec, const std::string& x, int lane) const override;
  std::string insert_lane(const std::string& target, int lane, const std::string& x) const override;
  std::string select(ir::Type cond, ir::Type val, const std::string& c, const std::string& a,
                     const std::string& b) const override;
  std::string reduce(ir::Op op, ir::Type vec, const std::string& x) const override;
  std::string index(ir::Type t, const std::string& idx) const override;
  std::string load(ir::Type elem, const std::string& ptr, const std::string& idx) const override;
  std::string store(ir::Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const override;
  std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                     std::span<const std::string> args) const override;
  std::string barrier() const override;
  std::string subgroup(ir::Op op, ir::Type t, std::span<const std::string> args) const override;
  std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const override;
  // Every helper (for reading); emitters use prelude_for.
  std::string prelude() const override;
  bool vector_ops(ir::Type t) const override { return t.lanes <= 4; }
  // The helpers `body` calls (and what they call), with overloads for the
  // kernel's types only.
  std::string prelude_for(const std::string& body) const;

  // Storage type of an element in a buffer/shared array (bool is stored as u8).
  std::string storage_type(ir::Type elem) const;

 private:
  std::string float_to_int(ir::Type to, ir::Type from, const std::string& x) const;
  OpTable table_;
  uint32_t used_;
};

}  // namespace kgen::codegen
