#include "bench/vendor_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kgen::bench {

void ensure_fair_vendor_env(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || !__builtin_cpu_supports("avx512f")) return;
  ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  ::execv("/proc/self/exe", argv);
  std::perror("kgen bench: re-exec with OPENBLAS_CORETYPE=SkylakeX failed; OpenBLAS baselines may use slow kernels");
}

}  // namespace kgen::bench
