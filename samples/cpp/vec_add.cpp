// z = x + y, the plain C++ twin of samples/kernels/elementwise.cpp's vec_add.
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void vec_add(const float* x, const float* y, float* z, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) z[i] = x[i] + y[i];
}

KGEN_KERNEL void vec_add_i32(const int* x, const int* y, int* z, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) z[i] = x[i] + y[i];
}
