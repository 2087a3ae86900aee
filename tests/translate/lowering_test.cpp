// Each supported construct, translated and run through the interpreter
// against the value plain C++ computes for the same code.
#include <doctest/doctest.h>

#include "ir/printer.h"
#include "samples/kernels/kernels.h"
#include "translate_test_util.h"

using namespace kgen;
using namespace kgen::translate::testing;

namespace {
// Runs a kernel `k(int* out, int n)` over one work-item per element.
std::vector<int32_t> run_ints(const ir::Kernel& k, uint32_t n, int32_t arg) {
  std::vector<Words> out = run(k, grid_1d(n, n), {Words(n, 0)}, {ir::scalar_slot(arg)});
  return std::vector<int32_t>(out[0].begin(), out[0].end());
}
}  // namespace

TEST_CASE("loops: canonical for, general for with continue, while with break, do-while") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void loops(int* out, int n) {
  int i = int(global_id(0));
  int sum = 0;
  for (int j = 0; j < i; ++j) sum += j;            // an IR for
  for (int j = i; j > 0; j -= 2) {                  // a general loop, continue runs the step
    if (j == 3) continue;
    sum += 100;
  }
  int w = 0;
  while (true) {
    if (w >= n) break;
    ++w;
  }
  int d = 0;
  do { d += 7; } while (d < i);
  out[i] = sum * 1000 + w * 10 + d;
})");
  std::vector<int32_t> got = run_ints(k, 9, 5);
  for (int i = 0; i < 9; ++i) {
    int sum = 0;
    for (int j = 0; j < i; ++j) sum += j;
    for (int j = i; j > 0; j -= 2) {
      if (j == 3) continue;
      sum += 100;
    }
    int d = 0;
    do { d += 7; } while (d < i);
    CHECK(got[i] == sum * 1000 + 5 * 10 + d);
  }
  int fors = 0;
  ir::walk(k.body, [&](const ir::Instr& in) { fors += in.op == ir::Op::For; });
  CHECK(fors == 1);
}

TEST_CASE("helpers are inlined: early returns, reference parameters, constexpr values") {
  ir::Kernel k = translate_one(R"(
constexpr int kScale = 3;
constexpr int cube(int x) { return x * x * x; }
int sign(int x) {
  if (x < 0) return -1;
  if (x == 0) return 0;
  return 1;
}
void bump(int& v, int by) { v += by; }
KGEN_KERNEL void helpers(int* out, int n) {
  int i = int(global_id(0)) - n;
  int v = sign(i) * kScale;
  bump(v, cube(2));
  out[global_id(0)] = v;
})");
  std::vector<int32_t> got = run_ints(k, 8, 4);
  for (int g = 0; g < 8; ++g) {
    int i = g - 4;
    CHECK(got[g] == (i < 0 ? -1 : i == 0 ? 0 : 1) * 3 + 8);
  }
}

TEST_CASE("expressions: promotions, casts, shifts, ternaries, short-circuit guards, pointer offsets") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void exprs(const unsigned char* bytes, const float* f, int* out, unsigned n) {
  unsigned i = global_id(0);
  const unsigned char* row = bytes + 2 * i;
  int a = row[0] + row[1];                       // promoted to int: no u8 wrap
  unsigned s = (1u << (i % 8)) >> 1;
  int t = i % 2 == 0 ? a : -a;
  bool guarded = i + 1 < n && f[i + 1] > 0.0f;   // f[i+1] only read in bounds
  float x = f[i] * 2.5f;
  out[i] = a * 1000000 + int(s) * 1000 + (guarded ? 100 : 0) + int(x) + (t < 0 ? 10 : 0);
})");
  const uint32_t n = 16;
  Words bytes(n / 2, 0);  // 2 bytes per item, packed 4 per word
  std::vector<uint8_t> b(2 * n);
  for (uint32_t j = 0; j < 2 * n; ++j) b[j] = uint8_t(200 + j);
  std::memcpy(bytes.data(), b.data(), b.size());
  Words f = random_floats(n, 9, -4.0f, 4.0f);
  CHECK(k.buffers[0].elem == ir::types::U8);
  // The byte buffer holds 2n u8 elements: bytes.size() words of 4.
  std::vector<ir::InterpBuffer> ib;
  Words out(n, 0);
  ib.push_back({bytes.data(), 2 * n});
  ib.push_back({f.data(), n * 4});
  ib.push_back({out.data(), n * 4});
  ir::interpret(k, grid_1d(n, 4), ib, std::vector<uint64_t>{ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) {
    int a = b[2 * i] + b[2 * i + 1];
    unsigned s = (1u << (i % 8)) >> 1;
    int t = i % 2 == 0 ? a : -a;
    bool guarded = i + 1 < n && as_float(f[i + 1]) > 0.0f;
    float x = as_float(f[i]) * 2.5f;
    CHECK(int32_t(out[i]) == a * 1000000 + int(s) * 1000 + (guarded ? 100 : 0) + int(x) + (t < 0 ? 10 : 0));
  }
}

TEST_CASE("math builtins and -D defines") {
  translate::Options opt;
  opt.defines = {"BIAS=0.25f"};
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void math(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  if (i >= n) return;
  float v = x[i];
  y[i] = sqrt(fabs(v)) + max(v, 0.0f) + fma(v, v, BIAS) + rint(v * 4.0f);
})",
                               opt);
  const uint32_t n = 50;
  Words x = random_floats(n, 10, -3.0f, 3.0f);
  std::vector<Words> out = run(k, grid_1d(n, 16), {x, Words(n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) {
    float v = as_float(x[i]);
    float expect = __builtin_sqrtf(__builtin_fabsf(v)) + (v > 0 ? v : 0.0f) + __builtin_fmaf(v, v, 0.25f) +
                   __builtin_rintf(v * 4.0f);
    CHECK(as_float(out[1][i]) == doctest::Approx(expect).epsilon(1e-6));
  }
}

TEST_CASE("kernel templates: each explicit instantiation is a variant named by its arguments") {
  std::vector<ir::Kernel> ks = translate::translate_source(R"(#include "kgen_kernel.h"
using namespace kgen;
template <int K, class T>
KGEN_KERNEL void scale(const T* x, T* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = x[i] * T(K);
}
template void scale<3, float>(const float*, float*, unsigned);
template void scale<-2, int>(const int*, int*, unsigned);
)",
                                                           "variants.cpp");
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].name == "scale_3_f32");
  CHECK(ks[1].name == "scale_m2_i32");
  CHECK(ks[1].buffers[0].elem == ir::types::I32);
  const uint32_t n = 5;
  Words xi = {1, 2, 3, uint32_t(-4), 5};
  std::vector<Words> out = run(ks[1], grid_1d(n, n), {xi, Words(n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) CHECK(int32_t(out[1][i]) == int32_t(xi[i]) * -2);
}

TEST_CASE("f16 arithmetic rounds per operation, like the DSL's f16 saxpy") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void saxpy_f16(const f16* x, f16* y, f16 a, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
})");
  ir::Kernel dsl = samples::saxpy(ir::types::F16);
  CHECK(k.buffers[0].elem == ir::types::F16);
  CHECK(k.scalars[0].type == ir::types::F16);
  int casts = 0;
  ir::walk(k.body, [&](const ir::Instr& in) { casts += in.op == ir::Op::Cast; });
  CHECK(casts == 0);
  // Random halves in [-2, 2]: the bits of a few hundred f16 values.
  const uint32_t n = 200;
  std::vector<uint16_t> hx(n), hy(n);
  for (uint32_t i = 0; i < n; ++i) {
    hx[i] = uint16_t(0x3c00 ^ (i * 37 % 0x400) ^ (i & 1 ? 0x8000 : 0));
    hy[i] = uint16_t(0x3800 ^ (i * 91 % 0x400));
  }
  std::vector<uint16_t> a_out = hy, b_out = hy;
  uint64_t a = 0x3e00;  // 1.5
  std::vector<uint64_t> sc = {a, ir::scalar_slot(n)};
  std::vector<ir::InterpBuffer> ba = {{hx.data(), n * 2}, {a_out.data(), n * 2}};
  std::vector<ir::InterpBuffer> bb = {{hx.data(), n * 2}, {b_out.data(), n * 2}};
  ir::interpret(k, grid_1d(n, 64), ba, sc);
  ir::interpret(dsl, grid_1d(n, 64), bb, sc);
  CHECK(a_out == b_out);
}

TEST_CASE("local arrays: braces, constant and run-time indices, rows, helpers") {
  ir::Kernel k = translate_one(R"(
void accumulate(int* acc, int j, int v) { acc[j] += v; }
KGEN_KERNEL void local_arrays(int* out, int n) {
  int i = int(global_id(0));
  int acc[4] = {10, 20};
  int grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
  for (int j = 0; j < 4; ++j) accumulate(acc, j, i * j);
  acc[i % 4] += 1000;
  int r = grid[1][2] + grid[i % 2][(i + 1) % 3];
  out[i] = acc[0] + acc[1] * 10 + acc[2] * 100 + acc[3] * 1000 + r * 100000 + acc[(i + 3) % 4] * 10000000;
})");
  std::vector<int32_t> got = run_ints(k, 10, 0);
  for (int i = 0; i < 10; ++i) {
    int acc[4] = {10, 20};
    int grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
    for (int j = 0; j < 4; ++j) acc[j] += i * j;
    acc[i % 4] += 1000;
    int r = grid[1][2] + grid[i % 2][(i + 1) % 3];
    CHECK(got[i] == acc[0] + acc[1] * 10 + acc[2] * 100 + acc[3] * 1000 + r * 100000 + acc[(i + 3) % 4] * 10000000);
  }
}

TEST_CASE("modified parameters, nested helpers with early returns, guarded loads in ?: and while conditions") {
  ir::Kernel k = translate_one(R"(
int first_negative(const int* v, int n) {   // early return from a loop is refused; search with a flag
  int found = -1;
  for (int j = 0; j < n && found < 0; ++j)
    if (v[j] < 0) found = j;
  return found;
}
int clamp_index(int j, int n) {
  if (j < 0) return 0;
  if (j >= n) return n - 1;
  return j;
}
int pick(const int* v, int j, int n) { return v[clamp_index(j, n)]; }
KGEN_KERNEL void mixed(const int* v, int* out, int n) {
  int i = int(global_id(0));
  int tail = i < n ? v[i] : -1000;   // the load is only evaluated in bounds
  int steps = 0;
  int j = i;
  while ((j = j - 3) >= 0) ++steps;
  n -= 1;                            // a modified parameter
  out[i] = first_negative(v, n + 1) * 1000000 + pick(v, i - 2, n + 1) * 1000 + tail + steps * 100;
})");
  const int n = 6;
  std::vector<int32_t> v = {5, 7, -2, 9, -4, 1};
  Words vw(v.begin(), v.end());
  const uint32_t items = 8;  // two items past the end of v
  std::vector<Words> out = run(k, grid_1d(items, items), {vw, Words(items, 0)}, {ir::scalar_slot(int32_t(n))});
  for (int i = 0; i < int(items); ++i) {
    int tail = i < n ? v[i] : -1000;
    int steps = 0;
    for (int j = i - 3; j >= 0; j -= 3) ++steps;
    int c = i - 2 < 0 ? 0 : i - 2 >= n ? n - 1 : i - 2;
    CHECK(int32_t(out[1][i]) == 2 * 1000000 + v[c] * 1000 + tail + steps * 100);
  }
}

TEST_CASE("lvalue conditionals, const reference parameters and references to elements") {
  ir::Kernel k = translate_one(R"(
int larger(const int& a, const int& b) { return a > b ? a : b; }
KGEN_KERNEL void refs(int* out, int n) {
  int i = int(global_id(0));
  int a = i * 3, b = n - i;
  int& slot = out[i];
  slot = larger(a, b) * 100 + (i % 2 ? a : b);
})");
  std::vector<int32_t> got = run_ints(k, 9, 10);
  for (int i = 0; i < 9; ++i) {
    int a = i * 3, b = 10 - i;
    CHECK(got[i] == (a > b ? a : b) * 100 + (i % 2 ? a : b));
  }
}

TEST_CASE("vector lines: whole-line loads and stores, lanes, braces, splats, lane-wise math, reductions") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void lanes(const f32x4* x, f32x4* y, float* m, unsigned n) {
  unsigned i = global_id(0);
  if (i >= n) return;
  f32x4 v = x[i];
  f32x4 w = {v[3], v[2], 1.0f};     // the last lane is zero
  w[3] = reduce_max(v);
  w *= 2.0f;                        // a scalar splat across the lanes
  w += v - splat<f32x4>(0.5f);
  y[i] = -w;
  y[i][1] = reduce_min(v) + reduce_mul(v);
  m[i] = reduce_add(y[i]) + x[i][0];
})");
  CHECK(k.buffers[0].elem == ir::types::F32.with_lanes(4));
  CHECK(k.buffers[1].access == ir::Access::ReadWrite);
  const uint32_t n = 37;
  Words x = random_floats(4 * n, 15, -2.0f, 2.0f);
  std::vector<Words> out = run(k, grid_1d(n, 8), {x, Words(4 * n, 0), Words(n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) {
    float v[4], w[4], y[4];
    for (int l = 0; l < 4; ++l) v[l] = as_float(x[4 * i + l]);
    float mx = v[0], mn = v[0], prod = v[0];
    for (int l = 1; l < 4; ++l) mx = v[l] > mx ? v[l] : mx, mn = v[l] < mn ? v[l] : mn, prod *= v[l];
    w[0] = v[3], w[1] = v[2], w[2] = 1.0f, w[3] = mx;
    for (int l = 0; l < 4; ++l) y[l] = -(w[l] * 2.0f + (v[l] - 0.5f));
    y[1] = mn + prod;
    float sum = y[0];
    for (int l = 1; l < 4; ++l) sum += y[l];
    for (int l = 0; l < 4; ++l) CHECK(as_float(out[1][4 * i + l]) == y[l]);
    CHECK(as_float(out[2][i]) == sum + v[0]);
  }
}

TEST_CASE("switch: an if chain over the cases, grouped labels, default anywhere, return and continue in cases") {
  ir::Kernel k = translate_one(R"(
int classify(int v) {
  switch (v % 5) {
    case 0: return 10;
    case 1:
    case -1: return 20;
    default: break;
    case 3: { v += 100; break; }
  }
  return v;
}
KGEN_KERNEL void sw(int* out, int n) {
  int i = int(global_id(0)) - n;
  int acc = 0;
  for (int j = 0; j < 6; ++j) {
    switch (unsigned(i + j) % 3u) {
      case 0u: acc += 1; break;
      case 1u: if (j == 2) continue; acc += 10; break;
      case 2u: acc += 100;
    }
    acc *= 2;
  }
  out[global_id(0)] = classify(i) * 100000 + acc;
})");
  std::vector<int32_t> got = run_ints(k, 12, 6);
  for (int g = 0; g < 12; ++g) {
    int i = g - 6;
    int c = i % 5 == 0 ? 10 : (i % 5 == 1 || i % 5 == -1) ? 20 : i % 5 == 3 ? i + 100 : i;
    int acc = 0;
    for (int j = 0; j < 6; ++j) {
      unsigned r = unsigned(i + j) % 3u;
      if (r == 0) acc += 1;
      else if (r == 1) {
        if (j == 2) continue;
        acc += 10;
      } else {
        acc += 100;
      }
      acc *= 2;
    }
    CHECK(got[g] == c * 100000 + acc);
  }
}

TEST_CASE("structs of scalars: braces, default member initializers, member access, copies, helpers by reference") {
  ir::Kernel k = translate_one(R"(
struct Stats {
  float hi = -infinity;
  float sum;
  int count;
};
void add(Stats& s, float v) {
  s.hi = max(s.hi, v);
  s.sum += v;
  ++s.count;
}
float mean(const Stats& s) { return s.sum / float(s.count); }
float spread(Stats s) {           // a copy: changing it leaves the caller's alone
  s.sum -= s.hi * float(s.count);
  return s.sum;
}
KGEN_KERNEL void stats(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  if (i >= n) return;
  Stats s{};
  for (unsigned j = 0; j <= i % 4; ++j) add(s, x[(i + j) % n]);
  Stats t = {1.0f, 2.0f};          // count is zero
  Stats& r = t;
  r.count = 3;
  Stats u = s;
  u.sum = 0.0f;
  t = u;
  y[i] = mean(s) * 1000.0f + spread(s) + s.sum + float(t.count) * 0.5f + r.sum + Stats{}.sum;
})");
  const uint32_t n = 29;
  Words x = random_floats(n, 40, -3.0f, 3.0f);
  std::vector<Words> out = run(k, grid_1d(n, 8), {x, Words(n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) {
    float hi = -__builtin_huge_valf(), sum = 0.0f;
    int count = 0;
    for (uint32_t j = 0; j <= i % 4; ++j) {
      float v = as_float(x[(i + j) % n]);
      hi = v > hi ? v : hi;
      sum += v;
      ++count;
    }
    float expect = sum / float(count) * 1000.0f + (sum - hi * float(count)) + sum + float(count) * 0.5f + 0.0f;
    CHECK(as_float(out[1][i]) == doctest::Approx(expect).epsilon(1e-6));
  }
}

TEST_CASE("vector lines: math functions, min and max work lane by lane") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void line_math(const f32x4* x, f32x4* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = exp(x[i]) + max(x[i], splat<f32x4>(0.0f)) + sqrt(fabs(x[i])) + min(x[i], x[i] * 2.0f);
})");
  int line_ops = 0;
  ir::walk(k.body, [&](const ir::Instr& in) {
    line_ops += (in.op == ir::Op::Exp || in.op == ir::Op::Max || in.op == ir::Op::Min) && in.type.lanes == 4;
  });
  CHECK(line_ops == 3);
  const uint32_t n = 21;
  Words x = random_floats(4 * n, 41, -3.0f, 3.0f);
  std::vector<Words> out = run(k, grid_1d(n, 8), {x, Words(4 * n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t e = 0; e < 4 * n; ++e) {
    float v = as_float(x[e]);
    float expect = __builtin_expf(v) + (v > 0.0f ? v : 0.0f) + __builtin_sqrtf(__builtin_fabsf(v)) + (v < 2 * v ? v : 2 * v);
    CHECK(as_float(out[1][e]) == doctest::Approx(expect).epsilon(1e-6));
  }
}
