// The elementwise family (ops/elementwise/): elementwise ops with numpy
// broadcasting and casts and fused chains, against the C++ references on the
// CPU (every candidate), the interpreter and the GPU devices present; the
// broadcast layout rules; the C++ dialect's line math against its scalar math;
// the fused sigmoids' special values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "codegen/target.h"
#include "dsl/dsl.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/fusion.h"
#include "runtimes/runtime.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
namespace fusion = kgen::ops::fusion;
KGEN_OP_FAMILY_TESTS("elementwise ops", "ew_unary", "ew_binary", "ew_ternary", "ew_chain")

TEST_CASE("broadcast layouts collapse axes that every input treats alike") {
  using fusion::Chain;
  auto layout = [](std::vector<std::vector<int64_t>> shapes, bool periodic = false) {
    Chain c;
    for (size_t i = 0; i < shapes.size(); ++i) c.inputs.push_back({"i" + std::to_string(i), ir::ScalarKind::F32, shapes[i]});
    c.out = fusion::in(0);
    c.shape = fusion::broadcast_shape(c);
    return fusion::layout_of(c, periodic);
  };
  // Equal shapes: one flat contiguous range.
  auto l = layout({{3, 5, 7}, {3, 5, 7}});
  CHECK(l.dims == std::vector<int64_t>{105});
  CHECK(l.strides[1] == std::vector<int64_t>{1});
  // Row vector + matrix (rank mismatch): rows x cols, the row's outer stride 0.
  l = layout({{4, 6}, {6}});
  CHECK(l.dims == std::vector<int64_t>{4, 6});
  CHECK(l.strides[1] == std::vector<int64_t>{0, 1});
  // Column: the inner axis broadcast.
  l = layout({{4, 6}, {4, 1}});
  CHECK(l.strides[1] == std::vector<int64_t>{1, 0});
  // Middle axis broadcast, size-1 axes dropped.
  l = layout({{2, 1, 3, 5}, {2, 1, 1, 5}});
  CHECK(l.dims == std::vector<int64_t>{2, 3, 5});
  CHECK(l.strides[1] == std::vector<int64_t>{5, 0, 1});
  // A short inner axis folds into the one outside it, the row vector periodic.
  l = layout({{4, 6}, {6}}, true);
  CHECK(l.dims == std::vector<int64_t>{24});
  CHECK(l.strides[1] == std::vector<int64_t>{1});
  CHECK(l.period_of(0) == 0);
  CHECK(l.period_of(1) == 6);
  l = layout({{2, 1, 3, 5}, {2, 1, 1, 5}}, true);
  CHECK(l.dims == std::vector<int64_t>{2, 15});
  CHECK(l.strides[1] == std::vector<int64_t>{5, 1});
  CHECK(l.period_of(1) == 5);
  // ... not with an input broadcast along the short axis (a column), nor from 16 values.
  l = layout({{4, 6}, {6}, {4, 1}}, true);
  CHECK(l.dims == std::vector<int64_t>{4, 6});
  CHECK(l.period.empty());
  l = layout({{4, 16}, {16}}, true);
  CHECK(l.dims == std::vector<int64_t>{4, 16});
  // Scalar.
  l = layout({{2, 3}, {1}});
  CHECK(l.dims == std::vector<int64_t>{6});
  CHECK(l.strides[1] == std::vector<int64_t>{0});
  // Shapes that do not broadcast are refused.
  Chain bad;
  bad.inputs = {{"a", ir::ScalarKind::F32, {3, 4}}, {"b", ir::ScalarKind::F32, {5}}};
  CHECK_THROWS_AS(fusion::broadcast_shape(bad), std::invalid_argument);
}

TEST_CASE("a fused chain is one kernel; the unfused baseline one per op") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  ops::Problem p;
  p.op = "ew_chain";
  p.dims = {8, 64};
  p.attrs = {{"chain", 1}};
  const ops::OpDef& d = ops::op_for(p);
  CHECK(d.plan(p, ops::Variant{}.set("impl", 0), caps).steps.size() == 1);
  CHECK(d.plan(p, ops::Variant{}.set("impl", 1), caps).steps.size() == 3);  // add, mul, add
  p.attrs = {{"chain", 2}};
  CHECK(d.plan(p, ops::Variant{}.set("impl", 0), caps).steps.size() == 1);
}

TEST_CASE("C++ dialect: math on 16-lane lines equals the scalar math bit for bit") {
  using namespace kgen::dsl;
  // y_line = f(x) on f32x16 lines, y_scalar = f(x) lane by lane: the line form
  // is the prelude's scalar helper mapped over the lanes (vectorised), so the
  // two must agree exactly, NaN/inf/denormal inputs included.
  for (int f = 0; f < 9; ++f) {
    auto apply = [f](const Value& v, const Value& w) -> Value {
      switch (f) {
        case 0: return exp(v);
        case 1: return exp2(v);
        case 2: return log(v);
        case 3: return log2(v);
        case 4: return sin(v);
        case 5: return cos(v);
        case 6: return tanh(v);
        case 7: return erf(v);
        default: return pow(v, w);
      }
    };
    ir::Kernel k = kernel("line_math_" + std::to_string(f), [&](KernelBuilder& kb) {
      auto x = kb.input("x", line(f32, 16));
      auto w = kb.input("w", line(f32, 16));
      auto yl = kb.output("yl", line(f32, 16));
      auto ys = kb.output("ys", f32);
      auto i = global_id(0);
      Value xv = x[i], wv = w[i];
      yl[i] = apply(xv, wv);
      for (int l = 0; l < 16; ++l) ys[i * 16u + uint32_t(l)] = apply(extract(xv, l), extract(wv, l));
    });
    const size_t n = 4096;
    std::vector<float> xs(n * 16), ws(n * 16);
    std::mt19937 rng(1234 + f);
    std::uniform_real_distribution<float> u(-100.0f, 100.0f);
    for (size_t e = 0; e < xs.size(); ++e) {
      xs[e] = e % 97 == 0 ? std::ldexp(u(rng), -140) : u(rng) * (e % 3 == 0 ? 0.01f : 1.0f);
      ws[e] = u(rng) * 0.05f;
    }
    xs[1] = INFINITY;
    xs[2] = -INFINITY;
    xs[3] = NAN;
    xs[4] = 0.0f;
    xs[5] = -0.0f;
    auto dev = cpu(1);
    auto bx = dev->alloc(xs.size() * 4), bw = dev->alloc(ws.size() * 4), byl = dev->alloc(xs.size() * 4),
         bys = dev->alloc(xs.size() * 4);
    bx->upload(xs.data(), xs.size() * 4);
    bw->upload(ws.data(), ws.size() * 4);
    auto ck = dev->compile(k);
    ir::LaunchDims dims;
    dims.grid = {uint32_t(n / 64), 1, 1};
    dims.workgroup = {64, 1, 1};
    dev->launch(*ck, rt::LaunchArgs{dims, {bx.get(), bw.get(), byl.get(), bys.get()}, {}});
    dev->synchronize();
    std::vector<float> yl(xs.size()), ys(xs.size());
    byl->download(yl.data(), yl.size() * 4);
    bys->download(ys.data(), ys.size() * 4);
    size_t diff = 0;
    for (size_t e = 0; e < xs.size(); ++e)
      if (std::memcmp(&yl[e], &ys[e], 4) != 0 && !(std::isnan(yl[e]) && std::isnan(ys[e]))) ++diff;
    CAPTURE(f);
    CHECK(diff == 0);
  }
}

TEST_CASE("fused sigmoid chains (silu, gelu) keep NaN and the limits at +-inf and huge inputs, every CPU variant") {
  // The CPU form clamps the sigmoid's exponent with NaN-passing selects and
  // drops the final NaN test (divide and Newton forms alike): a NaN input
  // must still give NaN, +inf must give +inf, and huge inputs their limits.
  ops::register_all_ops();
  auto dev = cpu(1);
  const float special[] = {NAN, INFINITY, 1e30f, -1e30f, 100.0f, -100.0f, 88.5f, -88.5f, 0.0f, -0.0f, 3.0f, -3.0f};
  const size_t ns = sizeof(special) / sizeof(special[0]);
  for (int chain : {0, 2}) {
    ops::Problem p;
    p.op = "ew_chain";
    p.dims = {4, 48};
    p.attrs = {{"chain", chain}};
    const ops::OpDef& d = ops::op_for(p);
    for (const auto& v : d.candidates(p, dev->caps())) {
      if (v.get("impl") != 0) continue;
      CAPTURE(chain);
      CAPTURE(v.str());
      ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
      float* x = reinterpret_cast<float*>(t.in[0].data());
      for (size_t i = 0; i < ns; ++i) x[7 * i] = special[i];  // spread over rows and lines
      ops::HostTensors want = t;
      ops::run_reference(p, want);
      ops::PreparedPlan pp = ops::prepare(*dev, p, v);
      ops::DeviceTensors dt = ops::upload(*dev, t);
      ops::execute(*dev, pp, dt.io());
      ops::download(dt, t, t.in.size());
      const float* got = reinterpret_cast<const float*>(t.out[0].data());
      const float* ref = reinterpret_cast<const float*>(want.out[0].data());
      for (size_t i = 0; i < ns; ++i) {
        const size_t e = 7 * i;
        CAPTURE(special[i]);
        CAPTURE(got[e]);
        CAPTURE(ref[e]);
        if (std::isnan(ref[e])) CHECK(std::isnan(got[e]));
        else if (std::isinf(ref[e])) CHECK(got[e] == ref[e]);
        else CHECK(std::fabs(got[e] - ref[e]) <= 1e-5 * std::max(1.0f, std::fabs(ref[e])));
      }
    }
  }
}

TEST_CASE("a fused sigmoid of NaN is NaN in the CPU form, divide and Newton alike") {
  // x * sigmoid(a) = x * (1 / (1 + exp(-a))): the quotient's numerator (1)
  // stays finite, so only the NaN-passing clamps carry a NaN a through.
  fusion::Chain c;
  c.name = "nan_sigmoid";
  c.inputs = {{"a", ir::ScalarKind::F32, {64}}, {"x", ir::ScalarKind::F32, {64}}};
  c.out = fusion::in(1) * fusion::sigmoid(fusion::in(0));
  c.shape = fusion::broadcast_shape(c);
  REQUIRE(fusion::chain_has_sigmoid(c));
  std::vector<float> a(64), x(64, 2.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.25f - 8.0f;
  a[3] = NAN;
  a[17] = INFINITY;
  a[18] = -INFINITY;
  a[40] = -NAN;
  auto dev = cpu(1);
  for (bool divide : {false, true}) {
    CAPTURE(divide);
    fusion::ChainVariant v;
    v.divide = divide;
    ops::Plan pl;
    fusion::plan_chain(pl, c, {0, 1}, 2, v);
    REQUIRE(pl.steps.size() == 1);
    auto ba = dev->alloc(256), bx = dev->alloc(256), by = dev->alloc(256);
    ba->upload(a.data(), 256);
    bx->upload(x.data(), 256);
    auto ck = dev->compile(pl.steps[0].kernel);
    dev->launch(*ck, rt::LaunchArgs{pl.steps[0].dims, {ba.get(), bx.get(), by.get()}, pl.steps[0].scalars});
    dev->synchronize();
    std::vector<float> y(64);
    by->download(y.data(), 256);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(a[i]);
      CAPTURE(y[i]);
      if (std::isnan(a[i])) CHECK(std::isnan(y[i]));
      else CHECK(std::fabs(y[i] - 2.0 / (1.0 + std::exp(-double(a[i])))) <= 1e-6);
    }
  }
}
