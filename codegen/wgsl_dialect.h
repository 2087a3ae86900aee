// WGSL compute shaders for WebGPU (validated/compiled by wgpu-native's naga).
//
// Interface a runtime binds (see wgsl_emitter.cpp):
//   * buffer parameter i  -> @group(0) @binding(i) var<storage, read|read_write>
//     array<T> (WGSL has no write-only storage; buffers used atomically are
//     array<atomic<T>>);
//   * scalar parameters   -> @group(0) @binding(<number of buffers>) a uniform
//     struct of 8-byte slots packed as array<vec4<u32>, ceil(N/2)> (uniform
//     arrays need a 16-byte stride): slot i is .xy or .zw of element i/2, value
//     in the low word, the same bytes as LaunchArgs::scalars padded to 16;
//   * workgroup size      -> override constants kg_wg_x/y/z (defaults: the
//     kernel's fixed size, else 1), in @workgroup_size;
//   * grid                -> dispatchWorkgroups(grid).
// Types: bool, i32, u32, f32 and their 2..4-lane vectors. WGSL core has no 8/16-
// bit storage and no 64-bit types; kernels using them are refused with the reason
// (wgsl_unsupported), as are 3-lane buffers (vec3 stride is 16 bytes).
#pragma once
#include <set>
#include <string>

#include "codegen/dialect.h"
#include "codegen/target.h"

namespace kgen::codegen {

// WebGPU's guaranteed limits (no optional features): 16 KiB workgroup
// storage, 256 invocations, 32-bit types only, no subgroups.
TargetCaps wgsl_default_caps();

struct WgslOptions {
  TargetCaps caps = wgsl_default_caps();
};

// Why `k` cannot be expressed in WGSL for `opt`, or "" when it can.
std::string wgsl_unsupported(const ir::Kernel& k, const WgslOptions& opt = {});

// Throws ir::Error with wgsl_unsupported's reason for kernels it cannot express.
std::string emit_wgsl(const ir::Kernel& k, const WgslOptions& opt = {});

// The helper functions (kg_fmod...) `body` calls, as WGSL source ("" if none).
std::string wgsl_helpers(const std::string& body);

class WgslDialect : public Dialect {
 public:
  // `atomic_arrays`: names of the arrays (buffers, workgroup arrays) declared
  // as array<atomic<T>>; plain loads/stores on them become atomicLoad/Store.
  explicit WgslDialect(std::set<std::string> atomic_arrays = {});
  std::string_view name() const override { return "wgsl"; }
  std::string type_name(ir::Type t) const override;
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
  std::string load(ir::Type elem, const std::string& ptr, const std::string& idx) const override;
  std::string store(ir::Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const override;
  std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                     std::span<const std::string> args) const override;
  std::string barrier() const override;
  std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const override;
  std::string prelude() const override { return {}; }  // everything is inline

  // True when the dialect has a rule for `op` on operands of type `t`.
  bool expresses(ir::Op op, ir::Type t) const;

 private:
  std::string float_to_int(ir::Type to, ir::Type from, const std::string& x) const;
  OpTable table_;
  std::set<std::string> atomic_;
};

}  // namespace kgen::codegen
