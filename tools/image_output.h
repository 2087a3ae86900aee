// What `kgen run --image` makes of the first output: a classifier's top 5
// (with --labels, named), or an image-like output (super-resolution, style
// transfer) written as a PNG.
#pragma once
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "tools/image_input.h"

namespace kgen::tools {

// One label per line, index = class id.
std::vector<std::string> load_labels(const std::string& path);

// A classifier output has one dim above 1 ([K], [1,K], [1,K,1,1]).
bool is_classifier(const graph::Tensor& t);
int64_t top_class(const graph::Tensor& t);
// "  #1  457  bow tie, bow-tie, bowtie  14.41 logit  p=0.83", 5 lines; the
// softmax is shown next to logits, probabilities are shown as they are.
void print_top5(const std::string& output, const graph::Tensor& t, const std::vector<std::string>& labels);

// An output laid out like the input with 1 or 3 channels and H, W > 1.
bool is_image_like(const graph::Tensor& t, const ImageInput& in);
// As a PNG: a luma output gets its colour from the input's Cb and Cr,
// resized to the output's size (the PyTorch super-resolution recipe).
void write_output_image(const std::string& path, const graph::Tensor& t, const ImageInput& in, const ImageOptions& o);

// After a run: the classifier's top 5 or the output image (DIR/output.png
// with --out DIR) from the first output; `in` is null without --image.
// Returns the top class, -1 when the output is no classifier.
struct ImageReport {
  const ImageInput* in = nullptr;
  const ImageOptions* opt = nullptr;
  std::vector<std::string> labels;  // load_labels, empty: indices only
  std::string out_dir;
  bool print = true;
};
int64_t report_first_output(const std::string& name, const graph::Tensor& t, const ImageReport& r);

}  // namespace kgen::tools
