// Resize's reference: onnx/reference/ops/op_resize.py (the non-antialiased
// path without roi) in C++, in f64, written from the Python and not from the
// kernels, so the two check each other: every axis interpolated (an
// unresized one too), neighbours chosen as _get_neighbor does, over the
// input padded with its edges.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "ops/elementwise/fusion.h"
#include "ops/layout/data_movement.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

namespace {

// The input coordinate of output coordinate x (_interpolate_1d_with_x).
double original_coord(const Resize& r, double x, double scale, int64_t in, int64_t out) {
  const double out_w = scale * double(in);
  switch (r.coord) {
    case Resize::AlignCorners: return out_w == 1 ? 0.0 : x * double(in - 1) / (out_w - 1);
    case Resize::Asymmetric: return x / scale;
    case Resize::PytorchHalfPixel: return out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case Resize::HalfPixel: return (x + 0.5) / scale - 0.5;
    case Resize::TfHalfPixelForNn: return (x + 0.5) / scale;  // the operator's spec (opset 11-12)
    case Resize::HalfPixelSymmetric: {
      const double adjustment = double(out) / out_w, center = double(in) / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
  }
  throw std::invalid_argument("Resize: unknown coord");
}

std::vector<double> coefficients(const Resize& r, double ratio) {
  if (r.mode == Resize::Nearest) {
    if (ratio == 1) return {0, 1};
    switch (r.nearest) {
      case Resize::RoundPreferFloor: return {double(ratio <= 0.5), double(ratio > 0.5)};
      case Resize::RoundPreferCeil: return {double(ratio < 0.5), double(ratio >= 0.5)};
      case Resize::Floor: return {1, 0};
      case Resize::Ceil: return {0, 1};
    }
  }
  if (r.mode == Resize::Linear) return {1 - ratio, ratio};
  const double A = r.cubic_coeff_a, t = ratio, s = 1 - ratio;
  return {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A, ((A + 2) * t - (A + 3)) * t * t + 1,
          ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

// The n indices of the edge-padded axis nearest to x, ties to the smaller
// (_get_neighbor_idxes), in the unpadded axis's numbering (may be outside it).
std::vector<int64_t> neighbours(double x, int n, int64_t in) {
  const int64_t pad = (n + 1) / 2, limit = in + 2 * pad;
  const double xp = x + double(pad);
  std::vector<int64_t> cand;
  for (int64_t k = int64_t(std::floor(xp)) - n - 1; k <= int64_t(std::floor(xp)) + n + 1; ++k)
    if (k >= 0 && k < limit) cand.push_back(k);
  std::sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) {
    const double da = std::abs(xp - double(a)), db = std::abs(xp - double(b));
    return da != db ? da < db : a < b;
  });
  cand.resize(size_t(n));
  std::sort(cand.begin(), cand.end());
  for (auto& k : cand) k -= pad;
  return cand;
}

// One axis's interpolation at output coordinate x of values f(i), i an input index.
double interpolate_1d(const Resize& r, size_t axis, int64_t x, const std::function<double(int64_t)>& f) {
  const int64_t in = r.in_shape[axis], out = r.out_shape[axis];
  const double scale = r.scales.empty() ? double(out) / double(in) : r.scales[axis];
  const double xo = original_coord(r, double(x), scale, in, out);
  const double ratio = xo == std::floor(xo) ? 1.0 : xo - std::floor(xo);
  std::vector<double> c = coefficients(r, ratio);
  const std::vector<int64_t> idx = neighbours(xo, int(c.size()), in);
  if (r.exclude_outside) {  // all weights outside (Nearest's pick): 0, not 0 / 0
    double sum = 0;
    for (size_t k = 0; k < c.size(); ++k) sum += (c[k] = idx[k] < 0 || idx[k] >= in ? 0.0 : c[k]);
    for (double& v : c) v /= sum == 0 ? 1.0 : sum;
  }
  double acc = 0;
  for (size_t k = 0; k < c.size(); ++k)
    if (c[k] != 0) acc += c[k] * f(std::clamp<int64_t>(idx[k], 0, in - 1));
  return acc;
}

}  // namespace

void reference_resize(const Resize& r, const void* in, void* out) {
  check_resize(r);
  const size_t R = r.in_shape.size();
  const std::vector<int64_t> is = move::contiguous_strides(r.in_shape);
  const int64_t n = fusion::numel(r.out_shape);
  const std::vector<float> x = fusion::load_all_as_f32(r.dtype, in, fusion::numel(r.in_shape));
  std::vector<int64_t> c(R, 0);
  // _interpolate_nd_with_x: the outermost axis over the inner axes' results.
  std::function<double(size_t, int64_t)> value = [&](size_t axis, int64_t base) -> double {
    if (axis == R) return double(x[size_t(base)]);
    return interpolate_1d(r, axis, c[axis], [&](int64_t i) { return value(axis + 1, base + i * is[axis]); });
  };
  for (int64_t e = 0; e < n; ++e) {
    fusion::store_from_f32(r.dtype, out, e, float(value(0, 0)));
    for (size_t a = R; a-- > 0;) {
      if (++c[a] < r.out_shape[a]) break;
      c[a] = 0;
    }
  }
}

}  // namespace kgen::ops
