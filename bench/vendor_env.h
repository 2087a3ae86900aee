// Fair vendor baselines. Debian's OpenBLAS 0.3.21 does not know this CPU
// model (Sapphire Rapids, family 6 model 207) and falls back to its
// "Prescott" SSE3 kernels (~25 GFLOP/s instead of ~170). It reads
// OPENBLAS_CORETYPE once, when the library loads, before main() — so a
// benchmark process re-executes itself once (marker KGEN_BENCH_VENDOR_ENV)
// with passive waiting for the vendors' worker threads on every machine and
// OPENBLAS_CORETYPE=SkylakeX (its AVX-512 kernels) on AVX-512 ones (see the .cpp).
#pragma once

namespace kgen::bench {

// Returns normally when nothing is to be done; otherwise does not return
// (execv), or returns if the re-exec failed (the baseline is then slow).
void ensure_fair_vendor_env(char** argv);

}  // namespace kgen::bench
