#include "tools/image_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kgen::tools {

namespace {

// Per output index along one axis: the first input index and its weights.
struct Taps {
  std::vector<int> first;
  std::vector<std::vector<float>> w;
};

// A triangle filter of half-width `support` input pixels (1 when growing,
// the scale factor when shrinking), normalised so that weights sum to 1.
Taps triangle_taps(int in, int out) {
  const double scale = double(in) / out, support = std::max(1.0, scale);
  Taps t;
  for (int o = 0; o < out; ++o) {
    const double centre = (o + 0.5) * scale;
    const int lo = std::max(0, int(std::floor(centre - support))), hi = std::min(in, int(std::ceil(centre + support)));
    std::vector<float> w;
    double sum = 0;
    for (int i = lo; i < hi; ++i) {
      const double d = std::max(0.0, 1.0 - std::fabs((i + 0.5 - centre) / support));
      w.push_back(float(d));
      sum += d;
    }
    for (float& x : w) x = float(x / sum);
    t.first.push_back(lo);
    t.w.push_back(std::move(w));
  }
  return t;
}

}  // namespace

Image resize_bilinear(const Image& in, int w, int h) {
  if (w <= 0 || h <= 0) throw std::invalid_argument("resize to " + std::to_string(w) + "x" + std::to_string(h));
  const Taps tx = triangle_taps(in.w, w), ty = triangle_taps(in.h, h);
  Image rows(w, in.h, in.c);  // horizontal pass, then vertical
  for (int y = 0; y < in.h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < in.c; ++k) {
        float s = 0;
        for (size_t j = 0; j < tx.w[size_t(x)].size(); ++j) s += tx.w[size_t(x)][j] * in.at(tx.first[size_t(x)] + int(j), y, k);
        rows.at(x, y, k) = s;
      }
  Image out(w, h, in.c);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < in.c; ++k) {
        float s = 0;
        for (size_t j = 0; j < ty.w[size_t(y)].size(); ++j) s += ty.w[size_t(y)][j] * rows.at(x, ty.first[size_t(y)] + int(j), k);
        out.at(x, y, k) = s;
      }
  return out;
}

Image resize_shorter_side(const Image& in, int side) {
  // torchvision's Resize(int): the longer side is truncated, not rounded.
  if (in.w <= in.h) return resize_bilinear(in, side, int(int64_t(side) * in.h / in.w));
  return resize_bilinear(in, int(int64_t(side) * in.w / in.h), side);
}

Image center_crop(const Image& in, int w, int h) {
  if (w > in.w || h > in.h)
    throw std::invalid_argument("cannot crop " + std::to_string(w) + "x" + std::to_string(h) + " out of a " +
                                std::to_string(in.w) + "x" + std::to_string(in.h) + " image");
  const int x0 = int(std::lround((in.w - w) / 2.0)), y0 = int(std::lround((in.h - h) / 2.0));
  Image out(w, h, in.c);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < in.c; ++k) out.at(x, y, k) = in.at(x0 + x, y0 + y, k);
  return out;
}

Image rgb_to_ycbcr(const Image& rgb) {
  Image o(rgb.w, rgb.h, 3);
  for (size_t i = 0; i < rgb.px.size(); i += 3) {
    const float r = rgb.px[i], g = rgb.px[i + 1], b = rgb.px[i + 2];
    o.px[i] = 0.299f * r + 0.587f * g + 0.114f * b;
    o.px[i + 1] = 128 - 0.168736f * r - 0.331264f * g + 0.5f * b;
    o.px[i + 2] = 128 + 0.5f * r - 0.418688f * g - 0.081312f * b;
  }
  return o;
}

Image ycbcr_to_rgb(const Image& ycc) {
  Image o(ycc.w, ycc.h, 3);
  for (size_t i = 0; i < ycc.px.size(); i += 3) {
    const float y = ycc.px[i], cb = ycc.px[i + 1] - 128, cr = ycc.px[i + 2] - 128;
    o.px[i] = y + 1.402f * cr;
    o.px[i + 1] = y - 0.344136f * cb - 0.714136f * cr;
    o.px[i + 2] = y + 1.772f * cb;
  }
  return o;
}

}  // namespace kgen::tools
