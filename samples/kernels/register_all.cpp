#include <mutex>

#include "samples/kernels/kernels.h"

namespace kgen::samples {

void register_all() {
  // The registry rejects duplicates, so registration must happen once even
  // when several front ends (CLI, tests, benchmarks) ask for it.
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise();
    register_reduce();
    register_histogram();
    register_matmul();
    register_softmax();
    register_lines();
    register_dot4();
    register_dot2_bf16();
    register_dot2_i16();
    register_permute();
  });
}

}  // namespace kgen::samples
