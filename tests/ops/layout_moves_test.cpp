// The layout family's data-movement kernels (ops/layout/data_movement.h):
// strided_copy, concat, gather, pad and resize at their test problems on the
// CPU (every variant), the interpreter and the GPU devices present; fresh
// random problems of each on the CPU and the interpreter; and the builders'
// errors for malformed descriptions.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/layout/data_movement.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
using ops::Problem;

KGEN_OP_FAMILY_TESTS("data movement", "strided_copy", "concat", "gather", "pad", "resize")

namespace {

using K = ir::ScalarKind;

// Every candidate on the CPU (2 threads), and through the interpreter where small.
void check_everywhere(const Problem& p, uint64_t problem_seed) {
  static auto dev = cpu(2);
  ops::register_all_ops();
  CAPTURE(problem_seed);
  CAPTURE(p.str());
  const ops::OpDef& d = ops::op_for(p);
  for (const auto& v : d.candidates(p, dev->caps())) {
    check(*dev, p, v);
    if (ops::fusion::numel(p.dims) <= 600) {
      CAPTURE(v.str());
      ops::OpCheck c = ops::check_op_interpreted(p, v, dev->caps(), fresh_seed());
      INFO(c.message);
      CHECK(c.ok);
    }
  }
}

// Tries `make` until the op accepts the problem (random pads may crop too much...).
template <class F>
Problem valid_problem(std::mt19937_64& rng, F make) {
  ops::register_all_ops();
  for (;;) {
    Problem p = make(rng);
    try {
      ops::op_for(p);
      return p;
    } catch (const std::invalid_argument&) {
    }
  }
}

int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); }
K any_kind(std::mt19937_64& rng) {
  const K kinds[] = {K::U8, K::F16, K::F32, K::F64};
  return kinds[rng() % 4];
}

Problem random_copy(std::mt19937_64& rng) {
  Problem p;
  p.op = "strided_copy";
  p.dtype = any_kind(rng);
  const int R = int(pick(rng, 0, 8));
  for (int a = 0; a < R; ++a) p.dims.push_back(pick(rng, 1, R > 5 ? 3 : 6));
  for (int a = 0; a < R; ++a) p.attrs["s" + std::to_string(a)] = pick(rng, -7, 7);
  if (R && rng() % 2) p.attrs["s" + std::to_string(R - 1)] = 1;  // the lines path
  if (R && rng() % 3 == 0) {  // the output in another (reversed) order
    std::vector<int> order(size_t(R), 0);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    int64_t s = 1;
    for (int a : order) {
      p.attrs["o" + std::to_string(a)] = rng() % 2 ? s : -s;
      s *= p.dims[size_t(a)];
    }
  }
  return p;
}

Problem random_pad(std::mt19937_64& rng) {
  Problem p;
  p.op = "pad";
  p.dtype = any_kind(rng);
  const int R = int(pick(rng, 1, 5));
  for (int a = 0; a < R; ++a) {
    p.dims.push_back(pick(rng, 1, 6));
    p.attrs["b" + std::to_string(a)] = pick(rng, -2, 6);
    p.attrs["e" + std::to_string(a)] = pick(rng, -2, 6);
  }
  p.attrs["mode"] = pick(rng, 0, 3);
  p.attrs["value"] = int64_t(rng() >> 2);
  return p;
}

Problem random_gather(std::mt19937_64& rng) {
  Problem p;
  p.op = "gather";
  p.dtype = any_kind(rng);
  p.dims = {pick(rng, 1, 3), pick(rng, 0, 8), pick(rng, 1, 40), pick(rng, 1, 10)};
  p.attrs = {{"i64", pick(rng, 0, 1)}, {"oob", pick(rng, 0, 1)}};
  return p;
}

// Nearest picks an element, so a coordinate on a rounding tie must come out
// the same in the kernel's f32 and the reference's f64: scales that are
// short binary fractions (the output 1/2, 1, 2 or 4 times the input).
// Linear and cubic are continuous in the coordinate: any sizes.
Problem random_resize(std::mt19937_64& rng) {
  Problem p;
  p.op = "resize";
  p.dtype = rng() % 3 ? K::F32 : K::F16;
  const int64_t mode = pick(rng, 0, 2);
  const int R = int(pick(rng, 1, 4));
  for (int a = 0; a < R; ++a) {
    const int64_t in = pick(rng, 1, 6);
    p.dims.push_back(in);
    int64_t out = pick(rng, 1, 12);
    if (mode == 0) {
      const int64_t f = pick(rng, 0, 3);
      out = f == 0 && in % 2 == 0 ? in / 2 : in << std::max<int64_t>(f - 1, 0);
    }
    p.attrs["o" + std::to_string(a)] = out;
  }
  p.attrs["mode"] = mode;
  p.attrs["coord"] = pick(rng, 0, 5);
  p.attrs["nearest"] = pick(rng, 0, 3);
  p.attrs["excl"] = pick(rng, 0, 1);
  return p;
}

template <class F>
void check_random(F make, int count) {
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    check_everywhere(valid_problem(rng, make), seed);
  }
}

}  // namespace

TEST_CASE("random strided copies (ranks 0..8, signed and zero strides, permuted outputs)") { check_random(random_copy, 30); }
TEST_CASE("random pads (every mode, crops, pads past the size)") { check_random(random_pad, 30); }
TEST_CASE("random gathers (i32/i64, negative and out-of-range indices)") { check_random(random_gather, 20); }
TEST_CASE("random resizes (every mode and coordinate transform)") { check_random(random_resize, 30); }

TEST_CASE("the CPU walks rows, GPUs take an element per work-item") {
  CHECK(ops::move_variant_for(codegen::cpu_caps()).rows);
  codegen::TargetCaps gpu;
  gpu.name = "vulkan";
  CHECK(!ops::move_variant_for(gpu).rows);
}

TEST_CASE("the data-movement builders reject malformed descriptions with a message") {
  ops::Plan pl;
  const ops::MoveVariant v;
  auto copy_error = [&](ops::StridedCopy c, const char* what) {
    CHECK_THROWS_WITH_AS(ops::plan_strided_copy(pl, c, 0, 1, v), doctest::Contains(what), std::invalid_argument);
  };
  ops::StridedCopy c;
  c.shape = {3, 4};
  c.in_strides = {4, 1};
  c.elem_bytes = 3;
  copy_error(c, "elem_bytes");
  c.elem_bytes = 4;
  c.in_strides = {4};
  copy_error(c, "in_strides has 1 entries for rank 2");
  c.in_strides = {4, -1};
  copy_error(c, "below element 0");
  c.in_strides = {4, 1};
  c.out_strides = {0, 1};
  copy_error(c, "out_strides[0] is 0");
  c.out_strides = {};
  c.shape = std::vector<int64_t>(9, 1);
  c.in_strides = std::vector<int64_t>(9, 1);
  copy_error(c, "rank 9 > 8");

  ops::Gather g;
  g.index_kind = K::F32;
  CHECK_THROWS_WITH_AS(ops::plan_gather(pl, g, 0, 1, 2, v), doctest::Contains("index_kind"), std::invalid_argument);
  g.index_kind = K::I32;
  g.inner = -1;
  CHECK_THROWS_WITH_AS(ops::plan_gather(pl, g, 0, 1, 2, v), doctest::Contains(">= 0"), std::invalid_argument);

  ops::Pad p;
  p.in_shape = {4, 5};
  p.pads_begin = {1};
  p.pads_end = {1, 1};
  CHECK_THROWS_WITH_AS(ops::plan_pad(pl, p, 0, 1, v), doctest::Contains("one entry per axis"), std::invalid_argument);
  p.pads_begin = {-3, 0};
  p.pads_end = {-2, 0};
  CHECK_THROWS_WITH_AS(ops::plan_pad(pl, p, 0, 1, v), doctest::Contains("axis 0: negative pads crop more"), std::invalid_argument);
  p.pads_begin = {-4, 0};
  p.pads_end = {1, 0};
  p.mode = ops::Pad::Reflect;
  CHECK_THROWS_WITH_AS(ops::plan_pad(pl, p, 0, 1, v), doctest::Contains("need an element to pad from"), std::invalid_argument);

  ops::Resize r;
  r.in_shape = {1, 3, 4, 4};
  r.out_shape = {1, 3, 8, 8};
  r.dtype = K::I32;
  CHECK_THROWS_WITH_AS(ops::plan_resize(pl, r, 0, 1, v), doctest::Contains("dtype"), std::invalid_argument);
  r.dtype = K::F32;
  r.scales = {1, 1, 3, 2};
  CHECK_THROWS_WITH_AS(ops::plan_resize(pl, r, 0, 1, v), doctest::Contains("axis 2: out_shape must be floor"), std::invalid_argument);
  r.scales = {};
  r.mode = ops::Resize::Cubic;
  r.in_shape = {2, 3, 4, 4};
  r.out_shape = {3, 4, 5, 6};
  CHECK_THROWS_WITH_AS(ops::plan_resize(pl, r, 0, 1, v), doctest::Contains("at most 3 axes"), std::invalid_argument);
  CHECK(pl.steps.empty());
}

TEST_CASE("empty moves plan nothing") {
  ops::Plan pl;
  const ops::MoveVariant v;
  ops::StridedCopy c;
  c.shape = {3, 0, 4};
  c.in_strides = {0, 0, 1};
  ops::plan_strided_copy(pl, c, 0, 1, v);
  ops::Gather g;
  g.n_indices = 0;
  ops::plan_gather(pl, g, 0, 1, 2, v);
  ops::Pad p;
  p.in_shape = {3, 2};
  p.pads_begin = {0, -1};
  p.pads_end = {0, -1};
  ops::plan_pad(pl, p, 0, 1, v);
  CHECK(pl.steps.empty());
}

// TEMPORARY: dumps reference_resize outputs for /tmp/rz_cases.txt (cross-check with onnx).
#include <cmath>
#include <fstream>
#include <sstream>
TEST_CASE("tmp resize dump" * doctest::skip(std::getenv("RZ_DUMP") == nullptr)) {
  ops::register_all_ops();
  std::ifstream in("/tmp/rz_cases.txt");
  std::ofstream out("/tmp/rz_cpp.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string dims, attrs;
    ss >> dims >> attrs;
    Problem p;
    p.op = "resize";
    p.dims = ops::parse_dims(dims);
    p.attrs = ops::parse_attrs(attrs);
    const ops::OpDef& d = ops::op_for(p);
    const int64_t n = ops::fusion::numel(p.dims);
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(std::sin(0.7 * double(i) + 0.3));
    const auto os = d.outputs(p)[0].shape;
    std::vector<float> y(static_cast<size_t>(ops::fusion::numel(os)));
    d.reference(p, {x.data()}, {y.data()});
    for (float v : y) out << v << " ";
    out << "\n";
  }
}

// TEMPORARY: timings of the bench problems.
TEST_CASE("tmp bench" * doctest::skip(std::getenv("RZ_BENCH") == nullptr)) {
  ops::register_all_ops();
  auto dev = cpu(1);
  std::vector<Problem> ps;
  if (std::getenv("RZ_ONLY")) {
    for (auto dims : std::vector<std::vector<int64_t>>{{64, 1000, 1, 4096}, {1, 1000, 1, 262144}, {64, 1000, 16, 4096}, {64, 1000, 2, 4096}})
      ps.push_back(Problem{"gather", dims, K::F32, {{"i64", 1}}});
    ps.push_back(Problem{"strided_copy", {262144, 3}, K::F32, {{"s0", 5}, {"s1", 1}}});
    ps.push_back(Problem{"strided_copy", {262144, 1}, K::F32, {{"s0", 5}, {"s1", 1}}});
    ps.push_back(Problem{"strided_copy", {4096, 64}, K::F32, {{"s0", 65}, {"s1", 1}}});
  } else
  for (const char* n : {"strided_copy", "concat", "gather", "pad", "resize", "transpose"})
    for (const auto& p : ops::find_op(n)->bench_problems) ps.push_back(p);
  for (const auto& p : ps) {
    const ops::OpDef& d = ops::op_for(p);
    for (const auto& v : d.candidates(p, dev->caps())) {
      if (p.op == "transpose" && v.get("impl") != 0) continue;
      ops::PreparedPlan pp = ops::prepare(*dev, p, v);
      double ms = ops::time_op(*dev, pp, 2, 5, 0.3);
      MESSAGE(p.str() << " [" << v.str() << "] " << ms << " ms, " << d.bytes(p) / ms / 1e6 << " GB/s");
    }
  }
}
#include "codegen/cpp.h"
TEST_CASE("tmp src" * doctest::skip(std::getenv("RZ_SRC") == nullptr)) {
  ops::Resize r;
  r.in_shape = {8, 64, 80, 80}; r.out_shape = {8, 64, 160, 160};
  ops::Plan pl;
  ops::MoveVariant v; v.rows = true;
  ops::plan_resize(pl, r, 0, 1, v);
  MESSAGE(codegen::emit_cpp(pl.steps[0].kernel));
}
