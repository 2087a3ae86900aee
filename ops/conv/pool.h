// The pooling ops' geometry and the forms' limits, shared by their kernels
// (ops/conv/pool.cpp) and their strategy (ops/conv/strategy.cpp).
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops {

// A maxpool2d / avgpool2d problem's geometry (dims N C H W and the attrs).
struct PoolShape {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int64_t pb, pr;  // bottom and right padding (default: ph, pw)
  bool include_pad;
  int64_t oh() const { return (h + ph + pb - kh) / sh + 1; }
  int64_t ow() const { return (w + pw + pr - kw) / sw + 1; }
};
PoolShape pool_shape(const Problem& p);

// The CPU rows kernel (impl 1) takes windows of up to 64 taps, column
// strides up to 4 and symmetric padding.
bool pool_rows_kernel_fits(const PoolShape& s);

// global_avgpool's 16-planes kernel (impl 2) takes planes of 16 to 256 values.
bool global_avgpool_small_planes(const Problem& p);

}  // namespace kgen::ops
