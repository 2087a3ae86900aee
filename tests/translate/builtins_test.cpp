// The builtins for masks, lines at element offsets, memory hints and
// subgroups, translated and run through the interpreter against the values
// plain C++ computes for the same inputs.
#include <doctest/doctest.h>

#include <cmath>

#include "translate_test_util.h"

using namespace kgen;
using namespace kgen::translate::testing;

namespace {
int count_ops(const ir::Kernel& k, ir::Op op, int64_t attr = -1) {
  int n = 0;
  ir::walk(k.body, [&](const ir::Instr& in) { n += in.op == op && (attr < 0 || in.attr == attr); });
  return n;
}
}  // namespace

TEST_CASE("line comparisons are all-ones masks; select takes them, integer lines and bools") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void masks(const f32x4* a, const f32x4* b, const i32x4* q, f32x4* lo, f32x4* relu, i32x4* m,
                       f32x4* picked, float* s, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    i32x4 lt = a[i] < b[i];
    m[i] = lt;
    lo[i] = select(lt, a[i], b[i]);
    relu[i] = select(a[i] > 0.0f, a[i], splat<f32x4>(0.0f));
    picked[i] = select(q[i], a[i], b[i]);
    s[i] = select(a[i][0] > b[i][0], 1.0f, -1.0f) + float(lt[3]);
  }
})");
  // A select on a comparison takes the comparison's bool line, not the
  // all-ones mask; an integer line is tested against zero.
  ir::ValueIndex values(k);
  int from_compare = 0, from_ne = 0;
  ir::walk(k.body, [&](const ir::Instr& in) {
    if (in.op != ir::Op::Select || !in.type.is_vector() || !in.type.is_float()) return;
    ir::Op c = values.def(in.args[0])->op;
    from_compare += c == ir::Op::Lt || c == ir::Op::Gt;
    from_ne += c == ir::Op::Ne;
  });
  CHECK(from_compare == 2);
  CHECK(from_ne == 1);
  const uint32_t n = 37;
  Words a = random_floats(4 * n, 1), b = random_floats(4 * n, 2), q = random_words(4 * n, 3, 0, 2);
  for (int l = 0; l < 4; ++l) b[l] = a[l];  // equal lanes: not less
  std::vector<Words> out =
      run(k, grid_1d(n, 8), {a, b, q, Words(4 * n), Words(4 * n), Words(4 * n), Words(4 * n), Words(n)}, {ir::scalar_slot(n)});
  for (uint32_t e = 0; e < 4 * n; ++e) {
    CAPTURE(e);
    float x = as_float(a[e]), y = as_float(b[e]);
    CHECK(int32_t(out[5][e]) == (x < y ? -1 : 0));
    CHECK(as_float(out[3][e]) == (x < y ? x : y));
    CHECK(as_float(out[4][e]) == (x > 0 ? x : 0.0f));
    CHECK(as_float(out[6][e]) == (q[e] != 0 ? x : y));
  }
  for (uint32_t i = 0; i < n; ++i) {
    float sel = as_float(a[4 * i]) > as_float(b[4 * i]) ? 1.0f : -1.0f;
    CHECK(as_float(out[7][i]) == sel + (as_float(a[4 * i + 3]) < as_float(b[4 * i + 3]) ? -1.0f : 0.0f));
  }
}

TEST_CASE("fma on lines rounds once per lane") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void fmas(const f32x8* a, const f32x8* b, f32x8* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) y[i] = fma(a[i], b[i], y[i]);
})");
  CHECK(count_ops(k, ir::Op::Fma) == 1);
  const uint32_t n = 9;
  Words a = random_floats(8 * n, 4, -1e4f, 1e4f), b = random_floats(8 * n, 5), c = random_floats(8 * n, 6, -1e4f, 1e4f);
  std::vector<Words> out = run(k, grid_1d(n, 4), {a, b, c}, {ir::scalar_slot(n)});
  for (uint32_t e = 0; e < 8 * n; ++e)
    CHECK(as_float(out[2][e]) == std::fma(as_float(a[e]), as_float(b[e]), as_float(c[e])));
}

TEST_CASE("load_line and store_line: lines at any element offset of a scalar buffer") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void shift(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  const float* row = x + i * n;
  f32x4 v = load_line<f32x4>(row, 1u);
  store_line(y + i * n, 2u, v * 2.0f);
})");
  // Each lane is its own element access, at a 64-bit index.
  CHECK(count_ops(k, ir::Op::Load) == 4);
  ir::ValueIndex values(k);
  ir::walk(k.body, [&](const ir::Instr& in) {
    if (in.op == ir::Op::Load || in.op == ir::Op::Store) CHECK(values.type(in.args[1]) == ir::types::U64);
  });
  const uint32_t rows = 5, n = 7;  // rows at odd offsets
  Words x = random_floats(rows * n, 7), poison(rows * n, 0xffc00001u);
  std::vector<Words> out = run(k, grid_1d(rows, 1), {x, poison}, {ir::scalar_slot(n)});
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t j = 0; j < n; ++j) {
      CAPTURE(r);
      CAPTURE(j);
      if (j >= 2 && j < 6) CHECK(as_float(out[1][r * n + j]) == 2.0f * as_float(x[r * n + j - 1]));
      else CHECK(out[1][r * n + j] == 0xffc00001u);  // untouched
    }
}

TEST_CASE("stream, prefetch and prefetch_write: hints that keep the plain meaning") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL void hinted(const f32x4* x, f32x4* y, float* z, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    prefetch(&x[i + 1000u]);  // past the end: never faults
    prefetch_write(y + i + 1u);
    stream(&y[i], x[i] * 3.0f);
    stream(&z[i], x[i][1]);
  }
})");
  CHECK(count_ops(k, ir::Op::Store, ir::kStoreNonTemporal) == 2);
  CHECK(count_ops(k, ir::Op::Prefetch, ir::kPrefetchL1) == 1);
  CHECK(count_ops(k, ir::Op::Prefetch, ir::kPrefetchWrite) == 1);
  CHECK(k.buffers[1].access == ir::Access::Write);  // streamed only
  const uint32_t n = 21;
  Words x = random_floats(4 * n, 8);
  std::vector<Words> out = run(k, grid_1d(n, 4), {x, Words(4 * n, 0), Words(n, 0)}, {ir::scalar_slot(n)});
  for (uint32_t e = 0; e < 4 * n; ++e) CHECK(as_float(out[1][e]) == as_float(x[e]) * 3.0f);
  for (uint32_t i = 0; i < n; ++i) CHECK(out[2][i] == x[4 * i + 1]);
}

TEST_CASE("subgroup reductions, size and lane (the interpreter's subgroups of 32)") {
  ir::Kernel k = translate_one(R"(
KGEN_KERNEL KGEN_WORKGROUP(64) void sg(const float* x, const int* v, float* sum, float* mx, int* mn, unsigned* info) {
  unsigned i = global_id(0);
  sum[i] = subgroup_add(x[i]);
  mx[i] = subgroup_max(x[i]);
  mn[i] = subgroup_min(v[i]);
  info[i] = subgroup_lane() + 1000u * subgroup_size();
})");
  CHECK(count_ops(k, ir::Op::SubgroupAdd) == 1);
  const uint32_t n = 128;
  // Small integers as floats: every summation order gives the same sum.
  Words x(n), v = random_words(n, 9, 0, 1000);
  Words ints = random_words(n, 10, 0, 50);
  for (uint32_t i = 0; i < n; ++i) {
    float f = float(ints[i]) - 25.0f;
    std::memcpy(&x[i], &f, 4);
  }
  std::vector<Words> out = run(k, grid_1d(n, 64), {x, v, Words(n), Words(n), Words(n), Words(n)}, {});
  for (uint32_t i = 0; i < n; ++i) {
    CAPTURE(i);
    uint32_t first = i / 32 * 32;
    float s = 0, m = -INFINITY;
    int32_t lo = INT32_MAX;
    for (uint32_t j = first; j < first + 32; ++j) {
      s += as_float(x[j]);
      m = std::max(m, as_float(x[j]));
      lo = std::min(lo, int32_t(v[j]));
    }
    CHECK(as_float(out[2][i]) == s);
    CHECK(as_float(out[3][i]) == m);
    CHECK(int32_t(out[4][i]) == lo);
    CHECK(out[5][i] == i % 32 + 32000u);
  }
}
