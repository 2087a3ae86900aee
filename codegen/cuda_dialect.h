// The CUDA C++ dialect for NVRTC. Differences from the C++ (CPU) dialect:
//   * lines are `kg_line<T, N>` structs (CUDA has no ext_vector_type); the op
//     table has scalar formats only, so the shared emitter computes lines
//     lane by lane;
//   * f16/bf16 are cuda_fp16.h's __half / cuda_bf16.h's __nv_bfloat16,
//     computed in f32 and rounded back after every op like the interpreter;
//   * signed integer arithmetic goes through unsigned helpers (NVRTC has no
//     -fwrapv, and NVVM exploits signed overflow);
//   * atomics, barriers and subgroups are CUDA intrinsics (prelude helpers).
#pragma once
#include "codegen/dialect.h"

namespace kgen::codegen {

class CudaDialect : public Dialect {
 public:
  CudaDialect();
  std::string_view name() const override { return "cuda"; }
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
  std::string store_nontemporal(ir::Type elem, const std::string& ptr, const std::string& idx,
                                const std::string& v) const override;
  std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                     std::span<const std::string> args) const override;
  std::string barrier() const override { return "__syncthreads()"; }
  std::string subgroup(ir::Op op, ir::Type t, std::span<const std::string> args) const override;
  std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const override;
  std::string unroll_hint(int factor) const override;
  std::string prelude() const override;

 private:
  std::string scalar_cast(ir::Type to, ir::Type from, const std::string& x) const;
  OpTable table_;
};

}  // namespace kgen::codegen
