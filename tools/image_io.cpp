#include "tools/image_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

// stb is header-only here: the implementation is compiled into this file
// alone, static so that nothing else linking stb can collide with it.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_NO_STDIO  // the file is read here, so that open errors are ours
#include <stb/stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

namespace kgen::tools {

namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::runtime_error("image '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("image '" + path + "': not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("image '" + path + "': cannot open the file");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw std::runtime_error("image '" + path + "': the file is empty");
  return bytes;
}

}  // namespace

Image load_image(const std::string& path) {
  const std::string bytes = read_file(path);
  int w = 0, h = 0, n = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &n, 3), stbi_image_free);
  if (!pixels)
    throw std::runtime_error("image '" + path + "': cannot decode it as JPEG or PNG (" + stbi_failure_reason() + ")");
  Image img(w, h, 3);
  std::copy(pixels.get(), pixels.get() + img.px.size(), img.px.begin());
  return img;
}

void write_png(const std::string& path, const Image& img) {
  if (img.c != 1 && img.c != 3) throw std::invalid_argument("write_png: " + std::to_string(img.c) + " channels");
  std::vector<unsigned char> bytes(img.px.size());
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = (unsigned char)std::clamp(std::lround(img.px[i]), 0L, 255L);
  if (!stbi_write_png(path.c_str(), img.w, img.h, img.c, bytes.data(), img.w * img.c))
    throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace kgen::tools
