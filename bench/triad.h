// The STREAM-style triad a[i] = b[i] + s*c[i], compiled ahead of time with the
// host compiler at -O3 -march=native: the bandwidth baseline that memory-bound
// kernels are compared against in the same run.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>

namespace kgen::bench {

// Runs the triad over n floats split over `threads` threads (contiguous
// static chunks, like OpenMP's static schedule) and returns elapsed seconds.
double run_triad(float* a, const float* b, const float* c, float s, size_t n, int threads);

// Bytes STREAM counts for one triad over n floats (2 reads + 1 write).
inline double triad_bytes(size_t n) { return 12.0 * double(n); }

// `run` (one run of ours, returning its seconds) interleaved with the triad
// over 2^26 floats: `rounds` runs of ours, a triad after every third, the run
// right after a triad and the triad each in their steady state (steady() in
// bench_util.h). Sets the counters GB_per_s (of the `bytes` one run of ours
// moves), triad_GB_per_s and their ratio.
void ratio_to_triad(benchmark::State& state, const std::function<double()>& run, double bytes, int threads, int rounds);

}  // namespace kgen::bench
