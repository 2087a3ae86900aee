// y = a*x + y, the plain C++ twin of samples/kernels/elementwise.cpp's saxpy.
//   kgen translate samples/cpp/saxpy.cpp --target cuda
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void saxpy(const float* x, float* y, float a, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
