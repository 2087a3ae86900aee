#include "tools/image_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "tools/image_ops.h"

namespace kgen::tools {

std::vector<std::string> load_labels(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("labels '" + path + "': cannot open the file");
  std::vector<std::string> r;
  for (std::string line; std::getline(f, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // "n02883205 bow tie, ..." (ImageNet synset files): the WordNet id is noise here.
    if (line.size() > 10 && line[0] == 'n' && line[9] == ' ' &&
        std::all_of(line.begin() + 1, line.begin() + 9, [](char c) { return c >= '0' && c <= '9'; }))
      line = line.substr(10);
    r.push_back(line);
  }
  return r;
}

bool is_classifier(const graph::Tensor& t) {
  return t.numel() >= 2 && std::count_if(t.shape.begin(), t.shape.end(), [](int64_t d) { return d > 1; }) == 1;
}

int64_t top_class(const graph::Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.get(i) > t.get(best)) best = i;
  return best;
}

namespace {

// Probabilities already (a softmax output) or logits?
bool is_distribution(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) {
    if (!(x >= 0 && x <= 1)) return false;
    sum += x;
  }
  return std::fabs(sum - 1) < 0.02;  // f16 softmax outputs sum to 1 only roughly
}

std::vector<double> softmax(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  std::vector<double> p(v.size());
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) sum += p[i] = std::exp(v[i] - m);
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace

void print_top5(const std::string& output, const graph::Tensor& t, const std::vector<std::string>& labels) {
  const std::vector<double> v = t.doubles();
  const bool probs = is_distribution(v);
  const std::vector<double> p = probs ? v : softmax(v);
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), size_t(0));
  const size_t k = std::min<size_t>(5, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + long(k), idx.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  if (!labels.empty() && labels.size() != v.size())
    std::printf("warning: %zu labels for %zu classes\n", labels.size(), v.size());
  std::printf("top-%zu of '%s' (%s):\n", k, output.c_str(), probs ? "probabilities" : "logits, softmax p");
  for (size_t i = 0; i < k; ++i) {
    const std::string label = idx[i] < labels.size() ? "  " + labels[idx[i]] : "";
    if (probs) std::printf("  #%zu %5zu%s  p=%.4f\n", i + 1, idx[i], label.c_str(), v[idx[i]]);
    else std::printf("  #%zu %5zu%s  %.4g  p=%.4f\n", i + 1, idx[i], label.c_str(), v[idx[i]], p[idx[i]]);
  }
}

bool is_image_like(const graph::Tensor& t, const ImageInput& in) {
  const size_t rank = t.shape.size();
  if (rank != in.tensor.shape.size() || rank < 3) return false;
  const int64_t c = in.nhwc ? t.shape[rank - 1] : t.shape[rank - 3];
  const int64_t h = in.nhwc ? t.shape[rank - 3] : t.shape[rank - 2], w = in.nhwc ? t.shape[rank - 2] : t.shape[rank - 1];
  return (c == 1 || c == 3) && h > 1 && w > 1 && t.numel() == c * h * w;
}

void write_output_image(const std::string& path, const graph::Tensor& t, const ImageInput& in, const ImageOptions& o) {
  const size_t rank = t.shape.size();
  const int c = int(in.nhwc ? t.shape[rank - 1] : t.shape[rank - 3]);
  const int h = int(in.nhwc ? t.shape[rank - 3] : t.shape[rank - 2]), w = int(in.nhwc ? t.shape[rank - 2] : t.shape[rank - 1]);
  Image img(w, h, c);
  for (int k = 0; k < c; ++k)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int64_t i = in.nhwc ? (int64_t(y) * w + x) * c + k : (int64_t(k) * h + y) * w + x;
        img.at(x, y, c == 3 && o.bgr ? 2 - k : k) = image_pixel_value(o, k, c, t.get(i));
      }
  if (c == 1 && in.channels == 1) {  // Y only: Cb and Cr from the input
    Image ycc = resize_bilinear(rgb_to_ycbcr(in.pixels), w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) ycc.at(x, y, 0) = std::clamp(img.at(x, y, 0), 0.0f, 255.0f);
    img = ycbcr_to_rgb(ycc);
  }
  write_png(path, img);
}

int64_t report_first_output(const std::string& name, const graph::Tensor& t, const ImageReport& r) {
  if (r.in && r.print)
    std::printf("image: %s -> input '%s' %s%s\n", r.in->summary.c_str(), r.in->name.c_str(), std::string(ir::scalar_name(r.in->tensor.dtype)).c_str(),
                graph::shape_str(r.in->tensor.shape).c_str());
  if (is_classifier(t)) {
    if (r.print) print_top5(name, t, r.labels);
    return top_class(t);
  }
  if (r.in && is_image_like(t, *r.in)) {
    if (r.out_dir.empty()) {
      if (r.print) std::printf("output '%s' is an image: --out DIR writes it as DIR/output.png\n", name.c_str());
    } else {
      write_output_image(r.out_dir + "/output.png", t, *r.in, *r.opt);
      if (r.print) std::printf("wrote %s/output.png\n", r.out_dir.c_str());
    }
  }
  return -1;
}

}  // namespace kgen::tools
