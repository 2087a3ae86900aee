// Row softmax, one workgroup of 256 per row, the plain C++ twin of
// samples/kernels/softmax.cpp: each work-item strides over the row; the row
// max and the sum of exponentials are tree-reduced in shared memory.
#include "kgen_kernel.h"

using namespace kgen;

constexpr unsigned kGroup = 256;

// Folds sh[0..kGroup) into sh[0] with max (sum: add); every work-item calls it.
inline void tree_reduce(float* sh, unsigned lid, bool sum) {
  barrier();
  for (unsigned s = kGroup / 2; s > 0; s /= 2) {
    if (lid < s) sh[lid] = sum ? sh[lid] + sh[lid + s] : max(sh[lid], sh[lid + s]);
    barrier();
  }
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup) void softmax_rows(const float* x, float* y, unsigned cols) {
  KGEN_SHARED float sh[kGroup];
  unsigned lid = local_id(0);
  const float* row = x + group_id(0) * cols;
  float* out = y + group_id(0) * cols;
  float m = -infinity;
  for (unsigned j = lid; j < cols; j += kGroup) m = max(m, row[j]);
  sh[lid] = m;
  tree_reduce(sh, lid, false);
  float row_max = sh[0];
  barrier();  // everyone has read sh[0] before it is reused
  float s = 0.0f;
  for (unsigned j = lid; j < cols; j += kGroup) s += exp(row[j] - row_max);
  sh[lid] = s;
  tree_reduce(sh, lid, true);
  float inv_sum = 1.0f / sh[0];
  for (unsigned j = lid; j < cols; j += kGroup) out[j] = exp(row[j] - row_max) * inv_sum;
}
