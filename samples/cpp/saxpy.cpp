// y = a*x + y, the plain C++ twin of samples/kernels/elementwise.cpp's saxpy.
//   kgen translate samples/cpp/saxpy.cpp --target cuda
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void saxpy(const float* x, float* y, float a, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

// The f16 form: _Float16 arithmetic rounds after each operation, as the
// DSL's f16 values do.
KGEN_KERNEL void saxpy_f16(const f16* x, f16* y, f16 a, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
