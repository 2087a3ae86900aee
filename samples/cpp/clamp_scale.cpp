// y = clamp(x * scale, lo, hi): a kernel with no DSL twin, for running plain
// C++ with the default workload and chosen scalars:
//   kgen run-kernel samples/cpp/clamp_scale.cpp --scalar scale=4 --scalar hi=0.5
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void clamp_scale(const float* x, float* y, float scale, float lo, float hi, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = min(max(x[i] * scale, lo), hi);
}
