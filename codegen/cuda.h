// CUDA C++ source for NVRTC: one __global__ function per kernel, SIMT
// builtins mapped to threadIdx/blockIdx/blockDim/gridDim (blockIdx covers
// LaunchDims.grid, blockDim is the workgroup).
//
// Entry ABI (C linkage, so the name is not mangled):
//   extern "C" __global__ void <entry>(T0* b0, ..., S0 p0, ...)
// buffers first (device pointers, in kernel order), then one parameter per
// scalar, each of its IR type. A launcher passes kernelParams[i] = the address
// of the 8-byte slot: the value sits in the slot's low bytes (little endian),
// which is exactly what a parameter of the scalar's own size reads.
#pragma once
#include <string>

#include "codegen/target.h"
#include "ir/ir.h"

namespace kgen::codegen {

struct CudaOptions {
  std::string entry;  // symbol name; empty: cuda_entry_symbol(kernel)
};

std::string cuda_entry_symbol(const ir::Kernel& k, const CudaOptions& opt = {});

// Capabilities every CUDA device we target (sm_75 and newer) has; the
// runtime refines the limits from the device's attributes.
TargetCaps cuda_caps();

// Throws ir::Error for kernels the CUDA target cannot express (capabilities).
std::string emit_cuda(const ir::Kernel& k, const CudaOptions& opt = {});

}  // namespace kgen::codegen
