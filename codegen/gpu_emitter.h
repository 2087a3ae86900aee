// The part of a GPU compute emitter that GLSL and WGSL share: the shape of the
// shader (interface first, then main with the scalar parameters decoded from
// their 8-byte slots, then the body; the helpers main calls are printed
// between interface and main), the SIMT builtins as axes of a few builtin
// vectors, p<i>/b<i> names, workgroup-array declarations, and which arrays
// atomics or stores touch. A dialect's emitter supplies only its spellings.
#pragma once
#include <set>
#include <string>

#include "codegen/c_emitter.h"

namespace kgen::codegen {

// Buffer parameters (by index) that an atomic op / a store targets.
std::set<int64_t> atomic_buffers(const ir::Kernel& k);
std::set<int64_t> stored_buffers(const ir::Kernel& k);
// Workgroup arrays (SharedAlloc value ids) that an atomic op targets.
std::set<ir::ValueId> atomic_shared_arrays(const ir::Kernel& k);

class GpuEmitter : public CEmitter {
 public:
  using CEmitter::CEmitter;

  // The whole shader: header(), workgroup arrays, then helpers_for(main) and main.
  std::string run();

 protected:
  // Directives and the buffer/scalar interface.
  virtual void header() = 0;
  // "void main()" / "@compute ... fn main(...)".
  virtual std::string main_signature() const = 0;
  // Statements opening main, before the scalars (the loop counter).
  virtual void main_prologue() {}
  // The declaration of scalar parameter i, decoded from its slot.
  virtual std::string scalar_decl(size_t i) const = 0;
  // The helper functions `body` calls (prelude), printed before main.
  virtual std::string helpers_for(const std::string& body) const = 0;
  // Spelling of a builtin vector (global id, local id, group id, number of
  // groups, group size) whose axis is appended as .x/.y/.z; "" for none.
  virtual std::string builtin_vector(ir::Op op) const = 0;
  // Builtins that are not vectors (subgroup size/lane); default: unsupported.
  virtual std::string builtin_scalar(const ir::Instr& in) const;

  std::string builtin(const ir::Instr& in) const final;
  std::string param(const ir::Instr& in) const override { return "p" + std::to_string(in.attr); }
  void emit_return(const ir::Instr&) override { line("return;"); }
};

}  // namespace kgen::codegen
