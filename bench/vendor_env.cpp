#include "bench/vendor_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kgen::bench {

void ensure_fair_vendor_env(char** argv) {
  // The vendors read these once, when they load (before main), hence one
  // re-exec with them set; the marker stops a second.
  if (std::getenv("KGEN_BENCH_VENDOR_ENV")) return;
  ::setenv("KGEN_BENCH_VENDOR_ENV", "1", 1);
  // Debian's OpenBLAS does not know Sapphire Rapids: give it its AVX-512
  // kernels. On other CPUs (AVX2 EPYC: Zen kernels) its own choice stands.
  if (__builtin_cpu_supports("avx512f")) ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  // Interleaved rounds run ours right after a vendor call: vendor worker
  // threads that keep spinning after their call (OpenMP's active wait,
  // OpenBLAS's ~2^28-cycle thread timeout) would steal our second core
  // (measured on the AVX2 EPYC without this: our 2-thread SGEMM and conv2d
  // at 0.3-0.5x of their own `kgen tune` timings). Passive waiting makes every
  // side start its round with idle cores.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  ::execv("/proc/self/exe", argv);
  std::perror("kgen bench: re-exec with the vendors' environment failed; 2-thread ratios may suffer from spinning vendor threads");
}

}  // namespace kgen::bench
