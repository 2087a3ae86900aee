// The STREAM-style triad a[i] = b[i] + s*c[i], compiled ahead of time with the
// host compiler at -O3 -march=native: the bandwidth baseline that memory-bound
// kernels are compared against in the same run.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace kgen::bench {

// Runs the triad over n floats split over `threads` threads (contiguous
// static chunks, like OpenMP's static schedule) and returns elapsed seconds.
double run_triad(float* a, const float* b, const float* c, float s, size_t n, int threads);

// Bytes STREAM counts for one triad over n floats (2 reads + 1 write).
inline double triad_bytes(size_t n) { return 12.0 * double(n); }

// Copies of a memory-bound op's `bytes` of inputs for each run to stream
// from DRAM in the op's steady state (ratio_to_triad's evict runs cycle
// through them): together twice the last-level cache, at least 384 MiB.
int rotation_copies(double bytes, uint64_t llc_bytes);

// `run` (one run of ours, returning its seconds) interleaved with the triad
// over 2^26 floats: `rounds` runs of ours, a triad after every third, the
// triad and ours each in their steady state: the triad after an untimed run
// of itself (steady() in bench_util.h); ours after untimed runs of itself
// moving at least `evict_bytes` (the last-level cache; at least one run),
// so the triad's dirty lines are written back before ours is timed, not
// during it. (One run of a 9 MiB GEMV evicted 9 MiB of the ~LLC/3 of dirty
// lines a triad leaves, and its three timed runs paid for the rest: Q4_0 at
// 1 / 2 threads 0.72-0.83 / 0.55-0.68 of the triad, where `kgen tune` timed
// it from DRAM at 1.00 / 0.92.) Sets the counters GB_per_s (of the `bytes`
// one run of ours moves), triad_GB_per_s and their ratio.
void ratio_to_triad(benchmark::State& state, const std::function<double()>& run, double bytes, int threads, int rounds,
                    double evict_bytes = 0);

}  // namespace kgen::bench
