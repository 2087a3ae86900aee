#include "bench/vendor_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kgen::bench {

void ensure_fair_vendor_env(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || !__builtin_cpu_supports("avx512f")) return;
  ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  // Interleaved rounds run ours right after a vendor call: vendor worker
  // threads that keep spinning after their call (OpenMP's active wait,
  // OpenBLAS's ~2^28-cycle thread timeout) would steal our second core.
  // Passive waiting makes every side start its round with idle cores.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  ::execv("/proc/self/exe", argv);
  std::perror("kgen bench: re-exec with OPENBLAS_CORETYPE=SkylakeX failed; OpenBLAS baselines may use slow kernels");
}

}  // namespace kgen::bench
