// The layout family's data-movement kernels (ops/layout/data_movement.h):
// strided_copy, concat, gather, pad and resize at their test problems on the
// CPU (every variant), the interpreter and the GPU devices present; fresh
// random problems of each on the CPU and the interpreter; resize against
// outputs of onnx.reference; and the builders' errors for malformed descriptions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
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

// Every candidate on the CPU (2 threads), with u64 indices too (sizes past
// 2^31 need them; resize has none), and through the interpreter where small.
void check_everywhere(const Problem& p, uint64_t problem_seed) {
  static auto dev = cpu(2);
  ops::register_all_ops();
  CAPTURE(problem_seed);
  CAPTURE(p.str());
  const ops::OpDef& d = ops::op_for(p);
  std::vector<ops::Variant> vs = d.candidates(p, dev->caps());
  if (p.op != "resize")
    for (size_t i = 0, n = vs.size(); i < n; ++i) vs.push_back(ops::Variant(vs[i]).set("wide", 1));
  for (const auto& v : vs) {
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
  const bool scales = rng() % 3 == 0;  // scales given (in thousandths), the output floor(in · scale)
  for (int a = 0; a < R; ++a) {
    const int64_t in = pick(rng, 1, 6);
    p.dims.push_back(in);
    if (scales) {
      const int64_t s = 500 * pick(rng, 1, 5);
      if (mode == 0 && in * s % 1000) return Problem{};  // Nearest on a fractional size (a tie may round either way): another
      p.attrs["s" + std::to_string(a)] = s;
      continue;
    }
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


namespace {

// The problem's output for input x, run on the CPU with variant v.
std::vector<float> run_on_cpu(const Problem& p, const ops::Variant& v, const std::vector<float>& x) {
  static auto dev = cpu(1);
  ops::PreparedPlan pp = ops::prepare(*dev, p, v);
  ops::HostTensors t;
  t.in.emplace_back(reinterpret_cast<const uint8_t*>(x.data()), reinterpret_cast<const uint8_t*>(x.data() + x.size()));
  t.out.emplace_back(pp.io.back().bytes, uint8_t(0xff));
  ops::DeviceTensors d = ops::upload(*dev, t);
  ops::execute(*dev, pp, d.io());
  dev->synchronize();
  ops::download(d, t, 1);
  std::vector<float> y(t.out[0].size() / 4);
  std::memcpy(y.data(), t.out[0].data(), t.out[0].size());
  return y;
}

}  // namespace

// Outputs of onnx.reference (onnx 1.23, Resize-19) for x = 1..12 as 1x1x3x4,
// the reference and every kernel variant against them.
TEST_CASE("resize matches onnx.reference's outputs") {
  ops::register_all_ops();
  struct Golden {
    std::map<std::string, int64_t> attrs;
    std::vector<float> y;
  };
  enum { Linear = 1, Cubic = 2 };
  enum { HalfPixel, Asymmetric, AlignCorners, Pytorch, TfNn, Symmetric };
  const std::vector<Golden> goldens = {
      {{{"mode", Linear}, {"o2", 5}, {"o3", 3}},
       {1.166667f, 2.5f, 3.833333f, 2.766667f, 4.1f, 5.433333f, 5.166667f, 6.5f, 7.833333f, 7.566667f, 8.9f, 10.23333f, 9.166667f,
        10.5f, 11.83333f}},
      {{{"mode", Cubic}, {"coord", AlignCorners}, {"o2", 4}, {"o3", 6}},
       {1, 1.504f, 2.248001f, 2.752001f, 3.495999f, 4, 3.296296f, 3.800294f, 4.544297f, 5.048296f, 5.792293f, 6.296295f,
        6.703701f, 7.207699f, 7.951705f, 8.455704f, 9.199697f, 9.703701f, 9, 9.503997f, 10.248f, 10.752f, 11.496f, 12}},
      {{{"mode", Cubic}, {"excl", 1}, {"a", -500}, {"o2", 2}, {"o3", 7}},
       {1.592206f, 1.935406f, 2.595547f, 3.171533f, 3.747519f, 4.40766f, 4.75086f, 8.24914f, 8.59234f, 9.252481f, 9.828467f,
        10.40445f, 11.06459f, 11.40779f}},
      {{{"coord", Asymmetric}, {"nearest", 1}, {"s2", 2500}, {"s3", 500}}, {1, 3, 1, 3, 5, 7, 5, 7, 9, 11, 9, 11, 9, 11}},
      {{{"mode", Linear}, {"coord", Pytorch}, {"o2", 1}, {"o3", 5}}, {1, 1.7f, 2.5f, 3.3f, 4}},
      {{{"mode", Linear}, {"coord", Symmetric}, {"s2", 1500}, {"s3", 1750}},
       {1, 1.357143f, 1.928571f, 2.5f, 3.071429f, 3.642857f, 4, 3.666667f, 4.023809f, 4.595238f, 5.166667f, 5.738095f,
        6.309524f, 6.666667f, 6.333333f, 6.690476f, 7.261905f, 7.833333f, 8.404762f, 8.976191f, 9.333333f, 9, 9.357142f,
        9.928572f, 10.5f, 11.07143f, 11.64286f, 12}},
  };
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 1.0f);
  for (const Golden& g : goldens) {
    const Problem p{"resize", {1, 1, 3, 4}, K::F32, g.attrs};
    CAPTURE(p.str());
    const ops::OpDef& d = ops::op_for(p);
    std::vector<float> ref(g.y.size(), -1.0f);
    d.reference(p, {x.data()}, {ref.data()});
    std::vector<std::pair<std::string, std::vector<float>>> results = {{"reference", ref}};
    for (const auto& v : d.candidates(p, codegen::cpu_caps())) results.push_back({v.str(), run_on_cpu(p, v, x)});
    for (const auto& [what, y] : results) {
      CAPTURE(what);
      REQUIRE(y.size() == g.y.size());
      for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(g.y[i]).epsilon(2e-6));
    }
  }
}
