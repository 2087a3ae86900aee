// 256-bin histograms of u32 values with atomics, the plain C++ twins of
// samples/kernels/histogram.cpp: straight to global memory, and privatized
// per workgroup in shared memory, then flushed once.
#include "kgen_kernel.h"

using namespace kgen;

constexpr unsigned kBins = 256;
constexpr unsigned kGroup = 256;

// Clamps so that an out-of-range value cannot write out of bounds.
inline unsigned bin_of(unsigned v) { return min(v, kBins - 1); }

KGEN_KERNEL void histogram256(const unsigned* x, unsigned* hist, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) atomic_add(&hist[bin_of(x[i])], 1u);
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup) void histogram256_shared(const unsigned* x, unsigned* hist, unsigned n) {
  KGEN_SHARED unsigned sh[kBins];
  unsigned i = global_id(0);
  unsigned lid = local_id(0);
  for (unsigned b = lid; b < kBins; b += kGroup) sh[b] = 0;
  barrier();
  if (i < n) atomic_add(&sh[bin_of(x[i])], 1u);
  barrier();
  for (unsigned b = lid; b < kBins; b += kGroup) {
    unsigned c = sh[b];
    if (c != 0) atomic_add(&hist[b], c);
  }
}
