// In-process CUDA C++ -> PTX / CUBIN with NVRTC. Optional at build time
// (CMake finds the CUDA toolkit and defines KGEN_HAVE_NVRTC); without it every
// entry point but nvrtc_available() throws. Needs no GPU: PTX for a virtual
// architecture compiles anywhere, which is what CI checks.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "jit/jit.h"  // CompileError, number_lines

namespace kgen::jit {

struct NvrtcOptions {
  // "compute_XY" produces PTX only; "sm_XY" produces PTX and a CUBIN for
  // that GPU. compute_80 (Ampere) is the CI default: every feature the CUDA
  // dialect uses (f64/bf16 atomics, shuffles) is there.
  std::string arch = "compute_80";
  std::vector<std::string> extra_args;
};

struct NvrtcResult {
  std::string ptx;
  std::string cubin;  // empty for virtual architectures
  std::string log;    // warnings (empty when quiet)
  double ms = 0;      // wall time of nvrtcCompileProgram + fetching the output
};

bool nvrtc_available();
std::string nvrtc_version();  // "13.0"; throws without NVRTC
// Throws CompileError (numbered source + NVRTC log) when the source does not
// compile, std::runtime_error when NVRTC is missing or fails otherwise.
NvrtcResult nvrtc_compile(std::string_view source, const NvrtcOptions& opt = {});

}  // namespace kgen::jit
