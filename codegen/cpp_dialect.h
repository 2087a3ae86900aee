// The C++ dialect for the in-process CPU JIT: clang ext_vector_type lines,
// __builtin_* math (LLVM intrinsics under -fno-math-errno, vectorised to
// libmvec by -fveclib), _Float16/__bf16 storage computed in float.
#pragma once
#include "codegen/dialect.h"

namespace kgen::codegen {

class CppDialect : public Dialect {
 public:
  CppDialect();
  std::string_view name() const override { return "c++"; }
  std::string type_name(ir::Type t) const override;
  ir::Type compute_type(ir::Type t) const override;
  const OpTable& ops() const override { return table_; }
  std::string literal(ir::Type t, const ir::Imm& v) const override;
  std::string cast(ir::Type to, ir::Type from, const std::string& x) const override;
  std::string bitcast(ir::Type to, ir::Type from, const std::string& x) const override;
  std::string splat(ir::Type to, const std::string& x) const override;
  std::string construct(ir::Type to, std::span<const std::string> lanes) const override;
  std::string shuffle(ir::Type to, const std::string& a, const std::string& b,
                      std::span<const int> pattern) const override;
  std::string extract(ir::Type vec, const std::string& x, int lane) const override;
  std::string insert_lane(const std::string& target, int lane, const std::string& x) const override;
  std::string select(ir::Type cond, ir::Type val, const std::string& c, const std::string& a,
                     const std::string& b) const override;
  std::string reduce(ir::Op op, ir::Type vec, const std::string& x) const override;
  std::string load(ir::Type elem, const std::string& ptr, const std::string& idx) const override;
  std::string store(ir::Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const override;
  bool has_line_access() const override { return true; }
  std::string load_line(ir::Type line, const std::string& ptr, const std::string& idx) const override;
  std::string store_line_nontemporal(ir::Type line, const std::string& ptr, const std::string& idx,
                                     const std::string& v) const override;
  std::string store_line(ir::Type line, const std::string& ptr, const std::string& idx,
                         const std::string& v) const override;
  std::string store_nontemporal(ir::Type elem, const std::string& ptr, const std::string& idx,
                                const std::string& v) const override;
  std::string prefetch(const std::string& ptr, const std::string& idx, int64_t hint) const override;
  std::string tile_mma_bf16(std::span<const std::string> args, bool acc) const override;
  std::string atomic_in(ir::AddrSpace space, ir::Op op, ir::Type elem, const std::string& ptr,
                        const std::string& idx, std::span<const std::string> args) const override;
  std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                     std::span<const std::string> args) const override;
  std::string barrier() const override;
  std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const override;
  bool pointer_offsets() const override { return true; }
  std::string dot4(ir::Type a, ir::Type b, std::span<const std::string> args, Dot4Form form) const override;
  std::string dot4_pair(ir::Type a, ir::Type b, std::span<const std::string> args) const override;
  std::string dot2_bf16(ir::Type a, std::span<const std::string> args) const override;
  std::string dot2_i16(ir::Type a, std::span<const std::string> args) const override;
  std::string permute_bytes(ir::Type table, ir::Type result, std::span<const std::string> args,
                            std::span<const int> pattern) const override;
  std::string unroll_hint(int factor) const override;
  std::string prelude() const override;
  // `src` (prelude + kernel) with the helpers the kernel uses (line types,
  // conversions, atomics, f32 math...) inserted at the end of the prelude.
  std::string with_helpers(std::string src) const;

 private:
  OpTable table_;
};

}  // namespace kgen::codegen
