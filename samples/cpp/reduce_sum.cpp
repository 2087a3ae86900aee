// Per-workgroup partial sums with a shared-memory tree, the plain C++ twin
// of samples/kernels/reduce.cpp (256 work-items, ITEMS elements each).
#include "kgen_kernel.h"

using namespace kgen;

#ifndef ITEMS
#define ITEMS 4
#endif
constexpr unsigned kGroup = 256;

KGEN_KERNEL KGEN_WORKGROUP(kGroup) void reduce_sum(const float* x, float* partial, unsigned n) {
  KGEN_SHARED float sh[kGroup];
  unsigned lid = local_id(0);
  unsigned base = group_id(0) * (kGroup * ITEMS) + lid;
  float acc = 0.0f;
  for (unsigned k = 0; k < ITEMS; ++k) {
    unsigned idx = base + k * kGroup;  // coalesced: item k of all work-items is one run
    if (idx < n) acc += x[idx];
  }
  sh[lid] = acc;
  barrier();
  for (unsigned stride = kGroup / 2; stride > 0; stride /= 2) {
    if (lid < stride) sh[lid] += sh[lid + stride];
    barrier();
  }
  if (lid == 0) partial[group_id(0)] = sh[0];
}
