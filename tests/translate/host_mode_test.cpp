// The samples compiled as plain host C++ (kgen_kernel.h's serial meaning)
// compute what their translations compute in the interpreter.
#include <doctest/doctest.h>

#include "translate_test_util.h"

// The kernels themselves, compiled natively into this test.
#include "samples/cpp/histogram.cpp"
#include "samples/cpp/lines.cpp"
#include "samples/cpp/saxpy.cpp"
#include "samples/cpp/vec_add.cpp"

using namespace kgen::translate::testing;

namespace {
std::vector<float> floats(const Words& w) {
  std::vector<float> f(w.size());
  std::memcpy(f.data(), w.data(), w.size() * 4);
  return f;
}
}  // namespace

TEST_CASE("saxpy and vec_add: host C++ and the translated kernels agree bit for bit") {
  const unsigned n = 300, groups[3] = {(n + 63) / 64, 1, 1}, size[3] = {64, 1, 1};
  Words x = random_floats(n, 11), y = random_floats(n, 12);
  std::vector<float> hx = floats(x), hy = floats(y), hz(n, 0.0f);
  kgen::host::launch(groups, size, saxpy, hx.data(), hy.data(), 0.75f, n);
  ir::Kernel k = kgen::translate::translate_kernel(sample_path("saxpy.cpp"), "saxpy");
  std::vector<Words> out = run(k, grid_1d(n, 64), {x, y}, {ir::scalar_slot(0.75f), ir::scalar_slot(n)});
  CHECK(floats(out[1]) == hy);

  std::vector<float> hy0 = floats(y);
  kgen::host::launch(groups, size, vec_add, hx.data(), hy0.data(), hz.data(), n);
  k = kgen::translate::translate_kernel(sample_path("vec_add.cpp"), "vec_add");
  out = run(k, grid_1d(n, 64), {x, y, Words(n, 0)}, {ir::scalar_slot(n)});
  CHECK(floats(out[2]) == hz);
}

TEST_CASE("histogram256: host C++ and the translated kernel agree") {
  const unsigned n = 1000, groups[3] = {4, 1, 1}, size[3] = {256, 1, 1};
  Words x = random_words(n, 13, 0, 400);
  std::vector<unsigned> hist(256, 0);
  kgen::host::launch(groups, size, histogram256, x.data(), hist.data(), n);
  ir::Kernel k = kgen::translate::translate_kernel(sample_path("histogram.cpp"), "histogram256");
  std::vector<Words> out = run(k, grid_1d(n, 256), {x, Words(256, 0)}, {ir::scalar_slot(n)});
  CHECK(out[1] == Words(hist.begin(), hist.end()));
}

TEST_CASE("lines: host C++ and the translated kernels agree on f32x16 saxpy and the f32x8 dot") {
  const unsigned lines = 21, groups[3] = {3, 1, 1}, size[3] = {8, 1, 1};
  Words x = random_floats(16 * lines, 16), y = random_floats(16 * lines, 17);
  std::vector<kgen::f32x16> hx(lines), hy(lines);
  std::memcpy(hx.data(), x.data(), x.size() * 4);
  std::memcpy(hy.data(), y.data(), y.size() * 4);
  kgen::host::launch(groups, size, saxpy_l16, hx.data(), hy.data(), 0.75f, lines);
  ir::Kernel k = kgen::translate::translate_kernel(sample_path("lines.cpp"), "saxpy_l16");
  std::vector<Words> out = run(k, grid_1d(lines, 8), {x, y}, {ir::scalar_slot(0.75f), ir::scalar_slot(lines)});
  CHECK(std::memcmp(out[1].data(), hy.data(), out[1].size() * 4) == 0);

  // 2 * lines f32x8 lines from the same words; the interpreter sums lane 0 first, as reduce_add does.
  std::vector<kgen::f32x8> dx(2 * lines), dy(2 * lines);
  std::memcpy(dx.data(), x.data(), x.size() * 4);
  std::memcpy(dy.data(), y.data(), y.size() * 4);
  std::vector<float> dots(2 * lines, 0.0f);
  const unsigned dgroups[3] = {6, 1, 1};
  kgen::host::launch(dgroups, size, dot_l8, dx.data(), dy.data(), dots.data(), 2 * lines);
  k = kgen::translate::translate_kernel(sample_path("lines.cpp"), "dot_l8");
  out = run(k, grid_1d(2 * lines, 8), {x, y, Words(2 * lines, 0)}, {ir::scalar_slot(2 * lines)});
  CHECK(floats(out[2]) == dots);
}
