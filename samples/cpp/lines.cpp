// Vector-line kernels, the plain C++ twins of samples/kernels/lines.cpp:
// buffers of f32x16 / f32x8 lines load and store whole lines, arithmetic is
// lane-wise and reduce_add sums a line's lanes. Sizes count lines.
//   kgen translate samples/cpp/lines.cpp --kernel dot_l8 --target cuda
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void saxpy_l16(const f32x16* x, f32x16* y, float a, unsigned n_lines) {
  unsigned i = global_id(0);
  f32x16 av = splat<f32x16>(a);
  if (i < n_lines) y[i] = av * x[i] + y[i];
}

KGEN_KERNEL void dot_l8(const f32x8* x, const f32x8* y, float* out, unsigned n_lines) {
  unsigned i = global_id(0);
  if (i < n_lines) out[i] = reduce_add(x[i] * y[i]);
}
