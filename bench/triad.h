// The STREAM-style triad a[i] = b[i] + s*c[i], compiled ahead of time with the
// host compiler at -O3 -march=native: the bandwidth baseline that memory-bound
// kernels are compared against in the same run.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kgen::bench {

// Runs the triad over n floats split over `threads` threads (contiguous
// static chunks, like OpenMP's static schedule) and returns elapsed seconds.
double run_triad(float* a, const float* b, const float* c, float s, size_t n, int threads);

// Writes back the dirty lines a triad leaves in the caches: reads (untimed)
// a buffer of twice `llc_bytes` (at least 64 MiB). A triad ends with the LLC
// full of its output's dirty lines; a read-only op timed right after it
// (a GEMV of a few MiB of weights) would pay their write-back and look slower
// than it is, and the smaller its weights the more of its runs would (Q4_0
// 4096x4096, 9 MiB: every run between two triads; GEMV f32, 64 MiB: the first).
void evict_dirty_lines(uint64_t llc_bytes);

// Bytes STREAM counts for one triad over n floats (2 reads + 1 write).
inline double triad_bytes(size_t n) { return 12.0 * double(n); }

}  // namespace kgen::bench
