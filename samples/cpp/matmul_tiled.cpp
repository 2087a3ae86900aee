// Tiled matrix multiply C[M,N] = A[M,K] * B[K,N] (row-major f32), the plain
// C++ twin of samples/kernels/matmul.cpp: each TILE x TILE workgroup stages
// tiles of A and B in shared memory between barriers.
//   kgen translate samples/cpp/matmul_tiled.cpp -D TILE=8 --target wgsl
#include "kgen_kernel.h"

using namespace kgen;

#ifndef TILE
#define TILE 16
#endif
constexpr unsigned T = TILE;

KGEN_KERNEL KGEN_WORKGROUP(T, T) void matmul_tiled(const float* a, const float* b, float* c, unsigned m,
                                                   unsigned n, unsigned k) {
  KGEN_SHARED float as[T][T];
  KGEN_SHARED float bs[T][T];
  unsigned tx = local_id(0), ty = local_id(1);
  unsigned row = group_id(1) * T + ty;
  unsigned col = group_id(0) * T + tx;
  float acc = 0.0f;
  for (unsigned t = 0; t < (k + (T - 1)) / T; ++t) {
    unsigned ka = t * T + tx;  // the A column this work-item loads
    unsigned kb = t * T + ty;  // the B row this work-item loads
    as[ty][tx] = row < m && ka < k ? a[row * k + ka] : 0.0f;
    bs[ty][tx] = kb < k && col < n ? b[kb * n + col] : 0.0f;
    barrier();
    for (unsigned i = 0; i < T; ++i) acc += as[ty][i] * bs[i][tx];
    barrier();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}
