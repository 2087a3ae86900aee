// The host's fused multiply-add peak, measured in the same run as a
// compute-bound kernel it is compared with: independent FMA chains on the
// widest vectors the host compiler targets (-O3 -march=native), compiled
// ahead of time like the triad (bench/triad.h).
#pragma once

namespace kgen::bench {

// GFLOP/s (2 per lane per FMA) of `threads` threads each running enough
// independent FMA chains to hide the latency, best of a few rounds.
double fma_peak_gflops(int threads);

}  // namespace kgen::bench
