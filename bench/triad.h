// The STREAM-style triad a[i] = b[i] + s*c[i], compiled ahead of time with the
// host compiler at -O3 -march=native: the bandwidth baseline that memory-bound
// kernels are compared against in the same run.
#pragma once
#include <cstddef>

namespace kgen::bench {

// Runs the triad over n floats split over `threads` threads (contiguous
// static chunks, like OpenMP's static schedule) and returns elapsed seconds.
double run_triad(float* a, const float* b, const float* c, float s, size_t n, int threads);

// Bytes STREAM counts for one triad over n floats (2 reads + 1 write).
inline double triad_bytes(size_t n) { return 12.0 * double(n); }

}  // namespace kgen::bench
