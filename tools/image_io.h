// Images on the host for `kgen run --image`: decoded pixels as floats in
// 0..255, row-major, channels interleaved; read from JPEG or PNG, written as
// PNG. Errors name the file and what is wrong with it.
#pragma once
#include <string>
#include <vector>

namespace kgen::tools {

struct Image {
  int w = 0, h = 0, c = 0;
  std::vector<float> px;  // (y * w + x) * c + channel

  Image() = default;
  Image(int w, int h, int c) : w(w), h(h), c(c), px(size_t(w) * size_t(h) * size_t(c)) {}
  float& at(int x, int y, int k) { return px[(size_t(y) * size_t(w) + size_t(x)) * size_t(c) + size_t(k)]; }
  float at(int x, int y, int k) const { return px[(size_t(y) * size_t(w) + size_t(x)) * size_t(c) + size_t(k)]; }
};

// A JPEG or PNG file as RGB (gray and alpha images are expanded or dropped).
Image load_image(const std::string& path);
// Values are rounded and clamped to 0..255; 1 or 3 channels.
void write_png(const std::string& path, const Image& img);

}  // namespace kgen::tools
