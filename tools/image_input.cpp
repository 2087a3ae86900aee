#include "tools/image_input.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "tools/image_ops.h"

namespace kgen::tools {

namespace {

std::string join(const std::vector<double>& v) {
  std::string r;
  char buf[32];
  for (double x : v) std::snprintf(buf, sizeof buf, "%s%g", r.empty() ? "" : ",", x), r += buf;
  return r;
}

// "N" or "HxW" from --size.
std::pair<int64_t, int64_t> parse_size(const std::string& s) {
  int64_t h = 0, w = 0;
  char x = 0, extra = 0;
  const int n = std::sscanf(s.c_str(), "%ld%c%ld%c", &h, &x, &w, &extra);
  if (n == 1) w = h;
  else if (n != 3 || (x != 'x' && x != 'X')) h = 0;
  if (h <= 0 || w <= 0 || h > 16384 || w > 16384) throw std::invalid_argument("--size '" + s + "': expected N or HxW");
  return {h, w};
}

bool is_channels(const graph::Dim& d) { return d.known() && (d.size == 1 || d.size == 3); }

bool guess_nhwc(const graph::Value& in, const ImageOptions& o) {
  if (!o.layout.empty()) {
    if (o.layout != "nchw" && o.layout != "nhwc") throw std::invalid_argument("--layout '" + o.layout + "': nchw or nhwc");
    return o.layout == "nhwc";
  }
  const auto& d = in.dims;  // NHWC when only the last dim looks like channels
  return is_channels(d.back()) && !is_channels(d[d.size() - 3]);
}

// One of H or W: declared, or from --size.
int64_t spatial(const graph::Value& in, const graph::Dim& d, int64_t from_size, bool have_size, const char* what) {
  if (!d.known() && !have_size)
    throw std::invalid_argument("input '" + in.name + "' has a symbolic " + what + " (" + d.symbol + "): give --size N or HxW");
  if (d.known() && have_size && d.size != from_size)
    throw std::invalid_argument("input '" + in.name + "' has " + what + " " + std::to_string(d.size) + ", --size asks for " +
                                std::to_string(from_size));
  return d.known() ? d.size : from_size;
}

}  // namespace

ImageShape image_input_shape(const graph::Value& in, const ImageOptions& o) {
  const size_t rank = in.dims.size();
  if (rank != 3 && rank != 4)
    throw std::invalid_argument("input '" + in.name + "' has rank " + std::to_string(rank) +
                                "; --image feeds a rank-4 NCHW or NHWC (or rank-3 CHW or HWC) input");
  const bool nhwc = guess_nhwc(in, o);
  const size_t b = rank - 3, ci = nhwc ? rank - 1 : b, hi = nhwc ? b : b + 1;
  auto [sh, sw] = o.size.empty() ? std::pair<int64_t, int64_t>{0, 0} : parse_size(o.size);
  graph::Shape s(rank, 1);
  if (rank == 4 && in.dims[0].known() && in.dims[0].size != 1)
    throw std::invalid_argument("input '" + in.name + "' has batch " + std::to_string(in.dims[0].size) + "; --image fills a batch of 1");
  const graph::Dim& c = in.dims[ci];
  if (c.known() && !is_channels(c))
    throw std::invalid_argument("input '" + in.name + "' has " + std::to_string(c.size) + " channels; --image gives 1 or 3");
  s[ci] = c.known() ? c.size : (o.gray ? 1 : 3);
  s[hi] = spatial(in, in.dims[hi], sh, !o.size.empty(), "height");
  s[hi + 1] = spatial(in, in.dims[hi + 1], sw, !o.size.empty(), "width");
  return {s, nhwc};
}

namespace {

// Resize (shorter side, or stretched) and centre crop to w×h.
Image fit_image(const Image& img, int w, int h, int resize, std::string& summary) {
  if (resize < 0) resize = std::min(w, h) >= 224 ? int(std::lround(std::min(w, h) * 256.0 / 224)) : 0;
  if (resize == 0) {
    if (img.w == w && img.h == h) return img;
    summary += ", resized to " + std::to_string(w) + "x" + std::to_string(h);
    return resize_bilinear(img, w, h);
  }
  const Image r = resize_shorter_side(img, resize);
  if (r.w < w || r.h < h)
    throw std::invalid_argument("--resize " + std::to_string(resize) + " makes the image " + std::to_string(r.w) + "x" +
                                std::to_string(r.h) + ", smaller than the " + std::to_string(w) + "x" + std::to_string(h) + " crop");
  summary += ", resized to " + std::to_string(r.w) + "x" + std::to_string(r.h) + ", centre " + std::to_string(w) + "x" +
             std::to_string(h);
  return center_crop(r, w, h);
}

double per_channel(const std::vector<double>& v, int c, int channels, const char* what) {
  if (v.size() == 1) return v[0];
  if (int(v.size()) != channels)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(v.size()) + " values for a " +
                                std::to_string(channels) + "-channel input (give 1 or one per channel)");
  return v[size_t(c)];
}

void check_options(const ImageOptions& o, int channels) {
  if (!(o.scale > 0)) throw std::invalid_argument("--scale must be positive");
  if (o.resize < -1) throw std::invalid_argument("--resize must be 0 (stretch) or a size");
  for (int c = 0; c < channels; ++c) {
    per_channel(o.mean, c, channels, "--mean");
    if (per_channel(o.std, c, channels, "--std") == 0) throw std::invalid_argument("--std has a zero");
  }
}

}  // namespace

float image_pixel_value(const ImageOptions& o, int c, int channels, double v) {
  return float((v * per_channel(o.std, c, channels, "--std") + per_channel(o.mean, c, channels, "--mean")) * o.scale);
}

ImageInput make_image_input(const ImageOptions& o, graph::ScalarKind dtype, const ImageShape& s) {
  using K = graph::ScalarKind;
  if (dtype != K::F32 && dtype != K::F16 && dtype != K::BF16 && dtype != K::F64 && dtype != K::U8)
    throw std::invalid_argument("--image: the input is " + std::string(ir::scalar_name(dtype)) + "; f32, f16, bf16, f64 or u8 expected");
  ImageInput r;
  const graph::Shape& shape = s.shape;
  const size_t rank = shape.size();
  r.nhwc = s.nhwc;
  r.channels = int(r.nhwc ? shape[rank - 1] : shape[rank - 3]);
  check_options(o, r.channels);  // before the decoding: options are the cheaper mistake to report
  const int h = int(r.nhwc ? shape[rank - 3] : shape[rank - 2]), w = int(r.nhwc ? shape[rank - 2] : shape[rank - 1]);
  const Image img = load_image(o.path);
  r.summary = std::filesystem::path(o.path).filename().string() + " " + std::to_string(img.w) + "x" + std::to_string(img.h);
  r.pixels = fit_image(img, w, h, o.resize, r.summary);
  const bool luma = r.channels == 1 || o.gray;
  const Image ycc = luma ? rgb_to_ycbcr(r.pixels) : Image();
  r.tensor = graph::Tensor(dtype, shape);
  for (int c = 0; c < r.channels; ++c) {
    const double mean = per_channel(o.mean, c, r.channels, "--mean"), sd = per_channel(o.std, c, r.channels, "--std");
    const int src = o.bgr ? 2 - c : c;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const double v = (luma ? ycc.at(x, y, 0) : r.pixels.at(x, y, src)) / o.scale;
        const double t = (v - mean) / sd;
        const int64_t i = r.nhwc ? (int64_t(y) * w + x) * r.channels + c : (int64_t(c) * h + y) * w + x;
        r.tensor.set(i, dtype == K::U8 ? std::clamp(std::round(t), 0.0, 255.0) : t);
      }
  }
  r.summary += std::string(luma ? (r.channels == 1 ? ", luma (Y)" : ", gray") : o.bgr ? ", BGR" : ", RGB") + ", /" + join({o.scale}) +
               ", mean " + join(o.mean) + ", std " + join(o.std) + (r.nhwc ? ", NHWC" : ", NCHW");
  return r;
}

ImageInput image_for_graph(const graph::Graph& g, const ImageOptions& o) {
  if (g.inputs.size() != 1)
    throw std::invalid_argument("--image: the model takes " + std::to_string(g.inputs.size()) + " inputs; --image feeds a model of one");
  const graph::Value& in = g.values[size_t(g.inputs[0])];
  ImageInput r = make_image_input(o, in.dtype, image_input_shape(in, o));
  r.name = in.name;
  return r;
}

}  // namespace kgen::tools
