// `kgen run --image`: an image file made into a model's first input. The
// input's declared dims give the size, channel count and layout (symbolic
// dims come from --size); the image is resized, centre-cropped, put in RGB,
// BGR or luma order, scaled and normalised, then laid out NCHW or NHWC.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"
#include "tools/image_io.h"

namespace kgen::tools {

struct ImageOptions {
  std::string path;
  std::string size;            // "N" or "HxW": fills symbolic H and W
  int resize = -1;             // shorter side before the crop; -1: default; 0: stretch to H×W, no crop
  std::vector<double> mean{0}, std{1};  // 1 value or one per channel
  double scale = 1;            // pixel values 0..255 are divided by this first
  bool bgr = false, gray = false;
  std::string layout;          // "nchw" or "nhwc"; empty: guessed from the dims
};

// The input that was fed, and what an image-like output needs to become a
// picture again (tools/image_output.h).
struct ImageInput {
  std::string name;          // the graph input it feeds
  graph::Tensor tensor;
  Image pixels;              // RGB after resize and crop: what the tensor holds
  int channels = 3;          // 1: luma (Y of YCbCr), 3: RGB or BGR
  bool nhwc = false;
  std::string summary;       // how it was made, for the report
};

struct ImageShape {
  graph::Shape shape;
  bool nhwc = false;
};
// The tensor shape for a graph input, from its declared dims and the options.
ImageShape image_input_shape(const graph::Value& input, const ImageOptions& o);
// Decodes o.path and fills a tensor of `dtype` and shape `s`.
ImageInput make_image_input(const ImageOptions& o, graph::ScalarKind dtype, const ImageShape& s);

// The image for graph input 0 (the model must take exactly one input).
ImageInput image_for_graph(const graph::Graph& g, const ImageOptions& o);

// A model value of channel c back to 0..255 (undoes --scale, --mean, --std).
float image_pixel_value(const ImageOptions& o, int c, int channels, double v);

}  // namespace kgen::tools
