// The samples compiled as plain host C++ (kgen_kernel.h's serial meaning)
// compute what their translations compute in the interpreter.
#include <doctest/doctest.h>

#include <cmath>

#include "translate_test_util.h"

// The kernels themselves, compiled natively into this test.
#include "samples/cpp/dot2_bf16.cpp"
#include "samples/cpp/dot2_i16.cpp"
#include "samples/cpp/dot4.cpp"
#include "samples/cpp/histogram.cpp"
#include "samples/cpp/lines.cpp"
#include "samples/cpp/saxpy.cpp"
#include "samples/cpp/permute.cpp"
#include "samples/cpp/rowwise.cpp"
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

namespace {
// Copies raw words into elements of T (over-aligned lines included) and back.
template <class T> std::vector<T> typed(const Words& w) {
  std::vector<T> v(w.size() * 4 / sizeof(T));
  std::memcpy(v.data(), w.data(), w.size() * 4);
  return v;
}
template <class T> Words raw(const std::vector<T>& v) {
  Words w(v.size() * sizeof(T) / 4);
  std::memcpy(w.data(), v.data(), w.size() * 4);
  return w;
}

// Packed operands at the edges (bytes -128 / 127 / 255, halves -2^15), then random.
Words packed_words(size_t n, uint32_t seed) {
  const uint32_t edges[] = {0x80808080u, 0x7f7f7f7fu, 0xffffffffu, 0u, 0x80008000u, 0x7fff8000u};
  Words w = random_words(n, seed, 0, 0xffffffffu);
  for (size_t i = 0; i < n && i < std::size(edges); ++i) w[i] = edges[i];
  return w;
}

// Runs kernel(a, b, c, y, n) of `file` on the host and translated through the
// interpreter; a and b hold `per_a` elements per work-item, c one, y `per_y`.
template <class A, class C, class Y>
void check_packed(void (*kernel)(const A*, const A*, const C*, Y*, unsigned), const char* file, const char* name,
                  unsigned per_a, unsigned per_y, bool floats) {
  CAPTURE(std::string(name));
  const unsigned n = 77, groups[3] = {(n + 31) / 32, 1, 1}, size[3] = {32, 1, 1};
  auto input = [&](size_t elems, size_t bytes, uint32_t seed) {
    size_t words = elems * bytes / 4;
    return floats ? random_floats(words, seed) : packed_words(words, seed);
  };
  Words a = input(per_a * n, sizeof(A), 50), b = input(per_a * n, sizeof(A), 51), c = input(n, sizeof(C), 52);
  Words y(per_y * n * sizeof(Y) / 4, 0);
  std::vector<A> ha = typed<A>(a), hb = typed<A>(b);
  std::vector<C> hc = typed<C>(c);
  std::vector<Y> hy = typed<Y>(y);
  kgen::host::launch(groups, size, kernel, ha.data(), hb.data(), hc.data(), hy.data(), n);
  ir::Kernel k = kgen::translate::translate_kernel(sample_path(file), name);
  std::vector<Words> out = run(k, grid_1d(n, 32), {a, b, c, y}, {ir::scalar_slot(n)});
  CHECK(out[3] == raw(hy));
}
}  // namespace

TEST_CASE("dot4, dot2_i16, dot2_bf16: host C++ and the translated kernels agree bit for bit") {
  check_packed(dot4_l1, "dot4.cpp", "dot4_l1", 1, 4, false);
  check_packed(dot4_l16, "dot4.cpp", "dot4_l16", 1, 4, false);
  check_packed(dot4_pair_l8, "dot4.cpp", "dot4_pair_l8", 1, 2, false);
  check_packed(dot4_small_l1, "dot4.cpp", "dot4_small_l1", 1, 6, false);
  check_packed(dot4_small_l4, "dot4.cpp", "dot4_small_l4", 1, 6, false);
  check_packed(dot4_small_l16, "dot4.cpp", "dot4_small_l16", 1, 6, false);
  check_packed(dot2_i16_l1, "dot2_i16.cpp", "dot2_i16_l1", 1, 2, false);
  check_packed(dot2_i16_l8, "dot2_i16.cpp", "dot2_i16_l8", 1, 2, false);
  check_packed(dot2_bf16_l1, "dot2_bf16.cpp", "dot2_bf16_l1", 2, 2, true);
  check_packed(dot2_bf16_l16, "dot2_bf16.cpp", "dot2_bf16_l16", 2, 2, true);
}

TEST_CASE("dot4: the host meaning of the signedness pairs matches known values") {
  // Bytes (lowest first) a = 255, 128, 1, 0 and b = 255, 127, 2, 128.
  const unsigned a = 0x000180ffu, b = 0x80027fffu;
  CHECK(kgen::dot4(a, b, 10) == 10 + 255 * 255 + 128 * 127 + 1 * 2 + 0);
  CHECK(kgen::dot4(a, kgen::bitcast<int>(b), 10) == 10 + 255 * -1 + 128 * 127 + 1 * 2 + 0);
  CHECK(kgen::dot4(kgen::bitcast<int>(a), b, 10) == 10 + -1 * 255 + -128 * 127 + 1 * 2 + 0);
  CHECK(kgen::dot4(kgen::bitcast<int>(a), kgen::bitcast<int>(b), 10) == 10 + -1 * -1 + -128 * 127 + 1 * 2 + 0);
  // dot2_i16 of -2^15 halves: 2^31 wraps to -2^31.
  CHECK(kgen::dot2_i16(int(0x80008000u), int(0x80008000u), 0) == int(0x80000000u));
  // dot2_bf16: 1.5·2 + (-1)·0.5 + 0.25 (bf16 bits 0x3fc0, 0x4000, 0xbf80, 0x3f00).
  CHECK(kgen::dot2_bf16(0xbf803fc0u, 0x3f004000u, 0.25f) == 2.75f);
}

TEST_CASE("permute_bytes: host C++ and the translated kernels agree for 4- and 64-byte tables") {
  const unsigned n = 45, groups[3] = {(n + 15) / 16, 1, 1}, size[3] = {16, 1, 1};
  Words idx = random_words(16 * n, 60, 0, 0xffffffffu);
  std::vector<kgen::u32x16> hidx = typed<kgen::u32x16>(idx), hy(2 * n);
  std::vector<kgen::u32x4> hz(n);
  {
    Words a = random_words(n, 61, 0, 0xffffffffu), b = random_words(n, 62, 0, 0xffffffffu);
    std::vector<unsigned> ha(a.begin(), a.end()), hb(b.begin(), b.end());
    kgen::host::launch(groups, size, permute_bytes_t4, ha.data(), hb.data(), hidx.data(), hy.data(), hz.data(), n);
    ir::Kernel k = kgen::translate::translate_kernel(sample_path("permute.cpp"), "permute_bytes_t4");
    std::vector<Words> out = run(k, grid_1d(n, 16), {a, b, idx, Words(32 * n, 0), Words(4 * n, 0)}, {ir::scalar_slot(n)});
    CHECK(out[3] == raw(hy));
    CHECK(out[4] == raw(hz));
    // Byte 0 of the run-time result is byte idx.byte(0) mod 8 of a ++ b.
    unsigned k0 = idx[0] & 0xffu & 7u;
    CHECK((out[3][0] & 0xffu) == ((k0 < 4 ? a[0] >> (8 * k0) : b[0] >> (8 * (k0 - 4))) & 0xffu));
  }
  {
    Words a = random_words(16 * n, 63, 0, 0xffffffffu), b = random_words(16 * n, 64, 0, 0xffffffffu);
    std::vector<kgen::u32x16> ha = typed<kgen::u32x16>(a), hb = typed<kgen::u32x16>(b);
    kgen::host::launch(groups, size, permute_bytes_t64, ha.data(), hb.data(), hidx.data(), hy.data(), hz.data(), n);
    ir::Kernel k = kgen::translate::translate_kernel(sample_path("permute.cpp"), "permute_bytes_t64");
    std::vector<Words> out = run(k, grid_1d(n, 16), {a, b, idx, Words(32 * n, 0), Words(4 * n, 0)}, {ir::scalar_slot(n)});
    CHECK(out[3] == raw(hy));
    CHECK(out[4] == raw(hz));
  }
}

TEST_CASE("row kernels: host C++ and the translated kernels agree bit for bit (masked tails, streams, fast exp)") {
  // 3 rows of 37 columns: two whole lines and a masked one per row, rows at unaligned offsets.
  const unsigned rows = 3, cols = 37, groups[3] = {rows, 1, 1}, one[3] = {1, 1, 1};
  const float eps = 1e-5f;
  Words x = random_floats(rows * cols, 70, -8.0f, 8.0f), w = random_floats(cols, 71, 0.5f, 1.5f);
  Words poison(rows * cols, 0xffc00001u);
  std::vector<float> hx = floats(x), hw = floats(w), hy = floats(poison);
  kgen::host::launch(groups, one, rmsnorm_rows_f32_l16_tail, hx.data(), hw.data(), hy.data(), eps, cols);
  ir::Kernel k = kgen::translate::translate_kernel(sample_path("rowwise.cpp"), "rmsnorm_rows_f32_l16_tail");
  std::vector<Words> out = run(k, grid_1d(rows, 1), {x, w, poison}, {ir::scalar_slot(eps), ir::scalar_slot(cols)});
  CHECK(raw(hy) == out[2]);
  CHECK(hy[0] == doctest::Approx(hx[0] * hw[0] / std::sqrt([&] {
          float ss = 0;
          for (unsigned j = 0; j < cols; ++j) ss += hx[j] * hx[j];
          return ss / cols + eps;
        }())).epsilon(1e-4));

  // Softmax rows (one group of up to 64 rows): the two-pass tail form and the streaming form.
  const unsigned sgroups[3] = {1, 1, 1};
  hy = floats(poison);
  kgen::host::launch(sgroups, one, softmax_rows_pf_f32_l16_tail, hx.data(), hy.data(), cols, rows);
  k = kgen::translate::translate_kernel(sample_path("rowwise.cpp"), "softmax_rows_pf_f32_l16_tail");
  out = run(k, grid_1d(1, 1), {x, poison}, {ir::scalar_slot(cols), ir::scalar_slot(rows)});
  CHECK(raw(hy) == out[1]);
  float sum = 0;
  for (unsigned j = 0; j < cols; ++j) sum += hy[cols + j];
  CHECK(sum == doctest::Approx(1.0f).epsilon(1e-5));

  const unsigned lines = 3;
  Words xl = random_floats(rows * lines * 16, 72, -8.0f, 8.0f), pl(rows * lines * 16, 0xffc00001u);
  std::vector<kgen::f32x16> lx = typed<kgen::f32x16>(xl), ly = typed<kgen::f32x16>(pl), ls = typed<kgen::f32x16>(pl);
  kgen::host::launch(sgroups, one, softmax_rows_pf_stream_f32_l16, lx.data(), ly.data(), ls.data(), lines, rows);
  k = kgen::translate::translate_kernel(sample_path("rowwise.cpp"), "softmax_rows_pf_stream_f32_l16");
  out = run(k, grid_1d(1, 1), {xl, pl, pl}, {ir::scalar_slot(lines), ir::scalar_slot(rows)});
  CHECK(raw(ly) == out[1]);
}
