// The CUDA kernel printer: the shared C-like emitter with the CUDA dialect.
// A work-item is a CUDA thread, so unlike the CPU (cpu_simt.cpp) there is no
// region splitting: the body prints as written, barriers are __syncthreads()
// (the verifier keeps them in workgroup-uniform control flow) and `return`
// just ends the thread.
#include <cctype>

#include "codegen/c_emitter.h"
#include "codegen/cuda.h"
#include "codegen/cuda_dialect.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;

namespace {

class CudaEmitter : public CEmitter {
 public:
  CudaEmitter(const ir::Kernel& k, const CudaDialect& d, const CudaOptions& opt) : CEmitter(k, d), opt_(opt) {}

  std::string run() {
    out() += d_.prelude();
    line("");
    const bool fixed = k_.fixed_workgroup();
    line("// kernel '" + k_.name + "'" +
         (fixed ? ", workgroup " + std::to_string(k_.workgroup_size[0]) + "x" + std::to_string(k_.workgroup_size[1]) +
                      "x" + std::to_string(k_.workgroup_size[2])
                : ", workgroup size chosen at launch"));
    std::string sig = "extern \"C\" __global__ void ";
    if (fixed) sig += "__launch_bounds__(" + std::to_string(k_.workgroup_threads()) + ") ";
    sig += cuda_entry_symbol(k_, opt_) + "(";
    bool first = true;
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferParam& b = k_.buffers[i];
      // No __restrict__: the same buffer may legally be bound twice.
      sig += std::string(first ? "" : ", ") + (b.access == ir::Access::Read ? "const " : "") + tname(b.elem) + "* b" +
             std::to_string(i);
      first = false;
    }
    for (size_t i = 0; i < k_.scalars.size(); ++i) {
      sig += std::string(first ? "" : ", ") + "const " + tname(k_.scalars[i].type) + " p" + std::to_string(i);
      first = false;
    }
    open(sig + ")");
    ir::walk(k_.body, [&](const Instr& in) {
      if (in.op == Op::SharedAlloc) line(d_.shared_decl(in.type.element(), in.attr, vname(in.id)) + ";");
    });
    emit_block(k_.body);
    close();
    return std::move(out());
  }

 private:
  std::string group_size(int ax) const {
    if (k_.fixed_workgroup()) return std::to_string(k_.workgroup_size[ax]) + "u";
    return std::string("blockDim.") + "xyz"[ax];
  }
  std::string builtin(const Instr& in) const override {
    const int ax = int(in.attr);
    const std::string xyz(1, "xyz"[ax < 3 ? ax : 0]);
    const bool trivial = k_.fixed_workgroup() && k_.workgroup_size[ax < 3 ? ax : 0] == 1;
    switch (in.op) {
      case Op::LocalId: return trivial ? "0u" : "threadIdx." + xyz;
      case Op::GroupId: return "blockIdx." + xyz;
      case Op::NumGroups: return "gridDim." + xyz;
      case Op::GroupSize: return group_size(ax);
      case Op::GlobalId:
        return trivial ? "blockIdx." + xyz : "blockIdx." + xyz + " * " + group_size(ax) + " + threadIdx." + xyz;
      case Op::SubgroupSize: return "32u";
      case Op::SubgroupLane: return "kg_lane()";
      default: break;
    }
    throw ir::Error(in.loc, "cuda: builtin '" + std::string(ir::op_name(in.op)) + "' is not supported");
  }
  std::string param(const Instr& in) const override { return "p" + std::to_string(in.attr); }
  std::string buffer(const Instr& in) const override { return "b" + std::to_string(in.attr); }
  void emit_return(const Instr&) override { line("return;"); }

  const CudaOptions& opt_;
};

}  // namespace

std::string cuda_entry_symbol(const ir::Kernel& k, const CudaOptions& opt) {
  if (!opt.entry.empty()) return opt.entry;
  std::string s = "kgen_";
  for (char c : k.name) s += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
  return s;
}

TargetCaps cuda_caps() {
  TargetCaps c;
  c.name = "cuda";
  c.f16 = c.bf16 = c.f64 = c.i64 = true;
  c.subgroups = true;
  c.subgroup_size = 32;
  c.max_shared_bytes = 48 * 1024;  // static __shared__ limit on every architecture
  c.max_workgroup_threads = 1024;
  c.max_workgroup_size = {1024, 1024, 64};
  c.atomics_f32 = true;  // atomicAdd natively, min/max through CAS loops
  c.atomics_64 = true;
  return c;
}

std::string emit_cuda(const ir::Kernel& k, const CudaOptions& opt) {
  check_capabilities(k, cuda_caps());
  static const CudaDialect dialect;
  return CudaEmitter(k, dialect, opt).run();
}

}  // namespace kgen::codegen
