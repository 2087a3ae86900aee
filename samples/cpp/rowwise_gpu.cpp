// The row ops in their GPU form, the plain C++ twins of ops/rowwise/gpu.cpp:
// a workgroup of 64 per row, its work-items striding the row (a subgroup's
// loads are contiguous); the statistics in one read of the row (softmax: an
// online max and rescaled sum), combined across the group by subgroup
// reductions and shared memory (SG) or a shared-memory tree; then the output
// pass. Rows past the grid's x size continue in grid y.
//   kgen translate samples/cpp/rowwise_gpu.cpp --kernel softmax_rows_gpu_sg_f32_wg64 --target cuda
#include "kgen_kernel.h"

using namespace kgen;

constexpr unsigned kGroup = 64;

enum class Combine { Sum, Max };

template <Combine C> float combine(float a, float b) {
  if constexpr (C == Combine::Max) return max(a, b);
  else return a + b;
}
template <Combine C> float subgroup_combine(float v) {
  if constexpr (C == Combine::Max) return subgroup_max(v);
  else return subgroup_add(v);
}

// Folds sh[0 .. 2·S) into sh[0], halving per level; one instantiation per
// level, so the tree is unrolled as the DSL's is.
template <unsigned S, Combine C> void tree_fold(float* sh, unsigned t) {
  if (t < S) sh[t] = combine<C>(sh[t], sh[t + S]);
  barrier();
  if constexpr (S > 1) tree_fold<S / 2, C>(sh, t);
}

// The group's sum or max of v, returned to every work-item. SG: one
// subgroup reduction, each subgroup's result through sh, and every
// work-item folds those few itself; else a tree over sh. The closing
// barrier lets the next reduction reuse sh. Every work-item must call it.
template <bool SG, Combine C> float group_reduce(float v, float* sh) {
  unsigned t = local_id(0);
  if constexpr (SG) {
    float r = subgroup_combine<C>(v);
    unsigned sg = subgroup_size();
    if (subgroup_lane() == 0u) sh[t / sg] = r;
    barrier();
    float acc = sh[0u];
    for (unsigned i = 1; i < kGroup / sg; ++i) acc = combine<C>(acc, sh[i]);
    barrier();
    return acc;
  } else {
    sh[t] = v;
    barrier();
    tree_fold<kGroup / 2, C>(sh, t);
    float out = sh[0u];
    barrier();
    return out;
  }
}

// The row this group takes: group_id(0) + group_id(1) * num_groups(0).
inline unsigned wrapped_row() { return group_id(0) + group_id(1) * num_groups(0); }

// Softmax (LOG: log-softmax) with online statistics: a max per work-item and
// a sum rescaled to it; the group's max M, then the sums rescaled to M. The
// max starts at the lowest finite float, so an idle work-item's exp(m - M) is 0.
template <bool SG, bool LOG> void softmax_gpu(const float* x, float* y, unsigned ncols, unsigned nrows, float* sh) {
  unsigned r = wrapped_row(), t = local_id(0);
  if (r < nrows) {
    unsigned base = r * ncols;
    float m = -3.40282347e38f, s = 0.0f;
    for (unsigned j = t; j < ncols; j += kGroup) {
      float v = x[base + j];
      float mn = max(m, v);
      s = s * exp(m - mn) + exp(v - mn);
      m = mn;
    }
    float M = group_reduce<SG, Combine::Max>(m, sh);
    float S = group_reduce<SG, Combine::Sum>(s * exp(m - M), sh);
    if constexpr (LOG) {
      float c = log(S);
      for (unsigned j = t; j < ncols; j += kGroup) y[base + j] = (x[base + j] - M) - c;
    } else {
      float inv = 1.0f / S;
      for (unsigned j = t; j < ncols; j += kGroup) y[base + j] = exp(x[base + j] - M) * inv;
    }
  }
}

template <bool SG>
void rmsnorm_gpu(const float* x, const float* w, float* y, float eps, unsigned ncols, unsigned nrows, float* sh) {
  unsigned r = wrapped_row(), t = local_id(0);
  if (r < nrows) {
    unsigned base = r * ncols;
    float ss = 0.0f;
    for (unsigned j = t; j < ncols; j += kGroup) {
      float v = x[base + j];
      ss = fma(v, v, ss);
    }
    float rs = rsqrt(group_reduce<SG, Combine::Sum>(ss, sh) / float(ncols) + eps);
    for (unsigned j = t; j < ncols; j += kGroup) y[base + j] = x[base + j] * rs * w[j];
  }
}

// One statistics read of d = x - k, k the row's first element: Σd and Σd²,
// then Σ(x - mean)² = Σd² - (Σd)²/n (the shift keeps the cancellation small).
template <bool SG>
void layernorm_gpu(const float* x, const float* w, const float* b, float* y, float eps, unsigned ncols,
                   unsigned nrows, float* sh) {
  unsigned r = wrapped_row(), t = local_id(0);
  if (r < nrows) {
    unsigned base = r * ncols;
    float cols = float(ncols);
    float k = x[base];
    float s = 0.0f, sq = 0.0f;
    for (unsigned j = t; j < ncols; j += kGroup) {
      float d = x[base + j] - k;
      s += d;
      sq = fma(d, d, sq);
    }
    float S = group_reduce<SG, Combine::Sum>(s, sh);
    float SQ = group_reduce<SG, Combine::Sum>(sq, sh);
    float c = S / cols;
    float rstd = rsqrt(max(SQ - S * c, 0.0f) / cols + eps);
    for (unsigned j = t; j < ncols; j += kGroup) {
      float d = (x[base + j] - k) - c;
      y[base + j] = fma(d * rstd, w[j], b[j]);
    }
  }
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup)
void softmax_rows_gpu_sg_f32_wg64(const float* x, float* y, unsigned ncols, unsigned nrows) {
  KGEN_SHARED float sh[kGroup];
  softmax_gpu<true, false>(x, y, ncols, nrows, sh);
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup)
void softmax_rows_gpu_f32_wg64(const float* x, float* y, unsigned ncols, unsigned nrows) {
  KGEN_SHARED float sh[kGroup];
  softmax_gpu<false, false>(x, y, ncols, nrows, sh);
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup)
void log_softmax_rows_gpu_sg_f32_wg64(const float* x, float* y, unsigned ncols, unsigned nrows) {
  KGEN_SHARED float sh[kGroup];
  softmax_gpu<true, true>(x, y, ncols, nrows, sh);
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup)
void rmsnorm_rows_gpu_f32_wg64(const float* x, const float* w, float* y, float eps, unsigned ncols, unsigned nrows) {
  KGEN_SHARED float sh[kGroup];
  rmsnorm_gpu<false>(x, w, y, eps, ncols, nrows, sh);
}

KGEN_KERNEL KGEN_WORKGROUP(kGroup)
void layernorm_rows_gpu_sg_f32_wg64(const float* x, const float* w, const float* b, float* y, float eps,
                                    unsigned ncols, unsigned nrows) {
  KGEN_SHARED float sh[kGroup];
  layernorm_gpu<true>(x, w, b, y, eps, ncols, nrows, sh);
}
