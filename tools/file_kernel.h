// Kernels from plain C++ files for `kgen run-kernel FILE.cpp`: translation,
// and the workload to run them with (a registered sample's when the kernel
// is one of the samples, else a default 1-D one).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::tools {

// True when `arg` names a C++ source (.cpp, .cc, .cxx, .c++) rather than a
// registered kernel or an IR file.
bool is_cpp_source(const std::string& arg);

// A kernel to run and the workload chosen for it; `workload_from`
// says where the workload came from, for the user.
struct FileKernel {
  ir::Kernel kernel;
  ir::Workload workload;
  std::string workload_from;
  int64_t n = 0;  // the problem size the workload is for
};

// How to run a kernel from a file.
struct FileKernelOptions {
  std::string kernel;                      // --kernel (empty: the file's only kernel)
  std::vector<std::string> include_dirs;   // -I
  std::vector<std::string> defines;        // -D
  std::vector<std::string> scalars;        // --scalar NAME=VALUE (default workload only)
  int64_t n = 0;                           // --n (0: the registered default, else 4096)
};

// Translates the kernel and picks its workload: the registered sample
// kernel of the same name (or NAME_variant) with the same parameters and
// workgroup, else default_workload.
FileKernel load_file_kernel(const std::string& path, const FileKernelOptions& opt);

// A 1-D grid of n work-items in the kernel's fixed workgroup (else 256);
// every buffer n elements, random where read (floats in [-1, 1], integers in
// [0, 15]), poisoned where only written; scalars named n, N or count are n,
// other float scalars 1.5, integers and bools 1, unless `overrides`
// ("NAME=VALUE") says otherwise. Throws naming the kernel's scalars for an
// unknown name.
ir::Workload default_workload(const ir::Kernel& k, int64_t n, const std::vector<std::string>& overrides);

// "name = value" of each scalar argument of `w`, comma-separated.
std::string describe_scalars(const ir::Kernel& k, const ir::Workload& w);

}  // namespace kgen::tools
