// The kernel registry: named, ready-to-run kernels with the workloads that
// launch and check them. The CLI (`kgen run-kernel`), conformance tests and
// benchmarks iterate over it. Variants of one parameterised C++ kernel
// function are separate entries with descriptive names (matmul_tiled_t16,
// saxpy_f16, ...).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::dsl {

struct KernelEntry {
  std::string name, description;
  std::function<ir::Kernel()> build;                // default variant
  std::function<ir::Workload(int64_t n)> workload;  // launch/buffers/scalars/bytes/flops/tolerance for size n
  int64_t default_n = 0;                            // size for timing runs
  std::vector<int64_t> test_sizes;                  // odd/edge sizes for conformance tests
  // Space-separated labels used to select kernels, e.g. "bandwidth": a
  // memory-bound kernel benchmarked against the STREAM triad.
  std::string tags;
};

// Adds an entry; throws std::invalid_argument on a duplicate or empty name.
// Registration is expected at start-up (not concurrently with lookups).
void register_kernel(KernelEntry e);
// In registration order.
const std::vector<KernelEntry>& registered_kernels();
const KernelEntry* find_kernel(std::string_view name);

}  // namespace kgen::dsl
