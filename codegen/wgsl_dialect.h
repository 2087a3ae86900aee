// WGSL compute shaders for WebGPU (validated/compiled by wgpu-native's naga).
//
// Interface a runtime binds (see wgsl_emitter.cpp):
//   * buffer parameter i  -> @group(0) @binding(i) var<storage, read|read_write>
//     (WGSL has no write-only storage); the host layout is always the natural
//     packed one, see "Storage forms" below;
//   * scalar parameters   -> @group(0) @binding(<number of buffers>) a uniform
//     struct of 8-byte slots packed as array<vec4<u32>, ceil(N/2)> (uniform
//     arrays need a 16-byte stride): slot i is .xy or .zw of element i/2, value
//     in the low word, the same bytes as LaunchArgs::scalars padded to 16;
//   * workgroup size      -> override constants kg_wg_x/y/z (defaults: the
//     kernel's fixed size, else 1), in @workgroup_size;
//   * grid                -> dispatchWorkgroups(grid).
//
// Legalisations (WGSL core has 32-bit numbers, bool and vectors of 2..4 only):
//   * values: i8/i16 live in i32, u8/u16 in u32, f16/bf16 in f32; every op on
//     them is computed in the container and wrapped (sign/zero extension) or
//     rounded (our own round-to-nearest-even, kg_rf16/kg_rbf16) back, which is
//     exactly the IR's semantics;
//   * lines of 8/16 lanes are array<T, N> values, computed lane by lane;
//   * storage forms of a buffer (WgslStorage): 8/16-bit elements are packed in
//     array<u32> words, extracted with shifts + sign extension; a written
//     packed buffer is array<atomic<u32>> and a store is atomicAnd + atomicOr
//     on its word, so neighbours stored by other work-items are not clobbered;
//     f16 buffers are array<f16> when the device has shader-f16 (`enable f16`;
//     values are still computed in f32); 3-lane lines are stored lane by lane
//     (vec3's 16-byte stride differs from the packed layout);
//   * workgroup arrays of narrow types use the 32-bit container (not visible to
//     the host, so no packing and no atomics);
//   * exp/exp2/log/log2/tanh/erf are our own helpers (wgsl_helpers.cpp), the
//     GLSL path's algorithms, so both GPU targets have the same tolerances.
// Refused with the reason (wgsl_unsupported): 64-bit types, subgroups, atomics
// on anything but 32-bit integers, bitcasts that change the lane count.
#pragma once
#include <map>
#include <string>

#include "codegen/dialect.h"
#include "codegen/target.h"

namespace kgen::codegen {

// WebGPU's guaranteed limits (no optional features): 16 KiB workgroup
// storage, 256 invocations, no 64-bit types, no subgroups; f16 and bf16 are
// emulated (see above).
TargetCaps wgsl_default_caps();

struct WgslOptions {
  TargetCaps caps = wgsl_default_caps();
  // The device has the shader-f16 feature: f16 buffers are array<f16>
  // (`enable f16`) instead of packed words.
  bool shader_f16 = false;
};

// Why `k` cannot be expressed in WGSL for `opt`, or "" when it can.
std::string wgsl_unsupported(const ir::Kernel& k, const WgslOptions& opt = {});

// Throws ir::Error with wgsl_unsupported's reason for kernels it cannot express.
std::string emit_wgsl(const ir::Kernel& k, const WgslOptions& opt = {});

// The helper functions (kg_fmod, kg_exp...) `body` calls, closed over their
// dependencies, as WGSL source ("" if none).
std::string wgsl_helpers(const std::string& body);

// How an array (buffer "b<i>" or workgroup array "v<id>") is declared and accessed.
enum class WgslForm {
  Direct,   // array<T> of the element's WGSL type
  PerLane,  // array<scalar T>: a line's lanes at index * lanes + lane (3-lane lines)
  Packed,   // array<u32> words holding 8/16-bit elements
  F16,      // array<f16> (shader-f16), lanes at index * lanes + lane
};
struct WgslStorage {
  WgslForm form = WgslForm::Direct;
  bool atomic = false;  // declared atomic<...> (atomic ops, or stores into a packed array)
};

class WgslDialect : public Dialect {
 public:
  // `arrays`: the storage of every buffer/workgroup array that is not Direct
  // and non-atomic.
  explicit WgslDialect(std::map<std::string, WgslStorage> arrays = {});
  std::string_view name() const override { return "wgsl"; }
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
  std::string load(ir::Type elem, const std::string& ptr, const std::string& idx) const override;
  std::string store(ir::Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const override;
  std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                     std::span<const std::string> args) const override;
  std::string barrier() const override;
  std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const override;
  bool vector_ops(ir::Type t) const override { return t.lanes <= 4; }
  std::string prelude() const override { return {}; }  // helpers are printed per kernel (wgsl_helpers)

  // True when the dialect has a rule for `op` on operands of type `t`.
  bool expresses(ir::Op op, ir::Type t) const;
  // The element type an array of `elem` is declared with in storage form `s`.
  std::string storage_elem(ir::Type elem, WgslStorage s) const;

 private:
  std::string float_to_int(ir::Type to, const std::string& x) const;
  std::string scalar_cast(ir::Type to, ir::Type from, const std::string& x) const;
  std::string scalar_bitcast(ir::Type to, ir::Type from, const std::string& x) const;
  // Brings a 32-bit container value back into `t`'s range/precision (identity for 32-bit types).
  std::string narrow(ir::Type t, const std::string& x) const;
  WgslStorage storage(const std::string& ptr) const;
  OpTable table_;
  std::map<std::string, WgslStorage> arrays_;
};

}  // namespace kgen::codegen
