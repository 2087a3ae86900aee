// How to launch a kernel on concrete data: grid, buffer sizes, scalar
// arguments and what to check. Shared by the interpreter, the runtimes'
// checker, the CLI, tests and benchmarks.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kgen::ir {

struct LaunchDims {
  std::array<uint32_t, 3> grid{1, 1, 1};       // number of workgroups per axis
  std::array<uint32_t, 3> workgroup{1, 1, 1};  // work-items per group (must equal the kernel's if fixed)
  uint64_t total_groups() const { return uint64_t(grid[0]) * grid[1] * grid[2]; }
  uint64_t group_threads() const { return uint64_t(workgroup[0]) * workgroup[1] * workgroup[2]; }
};

// Scalar arguments travel as 8-byte slots holding the value's bit pattern in
// the low bytes (little endian): f32 in bytes 0..3, i64 in all 8, ...
template <class T>
inline uint64_t scalar_slot(T v) {
  static_assert(sizeof(T) <= 8);
  uint64_t s = 0;
  std::memcpy(&s, &v, sizeof(T));
  return s;
}

struct BufferSpec {
  size_t elems = 0;               // in elements of the buffer's element type (a line counts once)
  double lo = -1.0, hi = 1.0;     // uniform random init range (integers: inclusive ints)
  bool init = true;               // false: output-only (poisoned before the run)
  bool check = false;             // compared against the interpreter after the run
};

struct Workload {
  LaunchDims dims;
  std::vector<BufferSpec> buffers;  // one per buffer parameter, in order
  std::vector<uint64_t> scalars;    // one slot per scalar parameter, in order
  double bytes = 0;                 // bytes moved per launch (for GB/s), 0 if n/a
  double flops = 0;                 // flops per launch (for GFLOP/s), 0 if n/a
  double tolerance = 1e-5;          // max relative error accepted vs the interpreter
  // Elements smaller than floor × the largest |expected| of their buffer are
  // judged against that magnitude instead of their own: where outputs come
  // from cancellation (x - mean), their error is an ulp of the terms, not of
  // the small result.
  double floor = 1e-6;
};

}  // namespace kgen::ir
