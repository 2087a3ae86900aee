// conv2d's fused epilogue (plan_conv2d, ops/conv/conv.h): a requantization
// to u8 (per-channel scale, residual, ReLU, zero point), a cast to f16 with
// an f16 residual, and an i8 one with a per-image operand, against the conv
// reference and the epilogue written out as loops; every form the CPU picks
// (forced by impl) on odd sizes, groups, depthwise, stride 2, 1×1, batch 2,
// outputs poisoned (check_op). Inputs are small integers and the scales
// powers of two, so every form's result is exact and a rounding tie lands
// where round half to even decides it.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <set>

#include "ir/half.h"
#include "ops/conv/conv.h"
#include "ops/core/executor.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
using ir::ScalarKind;
namespace fz = ops::fusion;

namespace {

constexpr const char* kOp = "conv2d_epilogue_test";

// The conv2d problem under a test problem (attribute "ep": the epilogue).
ops::Problem base_of(ops::Problem p) {
  p.op = "conv2d";
  p.attrs.erase("ep");
  return p;
}

// 1: u8 = sat(round(relu(y·s[oc] + r[n, oc, p])·0.5) + zp)
// 2: f16 = y·s[oc] + r16[n, oc, p]
// 3: i8 = sat(round(y·0.25 + t[n]))
// 4: i32 = y (ConvInteger's)
ops::ConvEpilogue epilogue_of(const ops::Problem& p) {
  const ops::ConvShape s = ops::conv_shape(base_of(p));
  const int64_t P = s.oh() * s.ow();
  ops::ConvEpilogue e;
  switch (p.attr("ep", 1)) {
    case 1:
      e.inputs = {{"s", ScalarKind::F32, {s.oc, 1}}, {"r", ScalarKind::F32, {s.n, s.oc, P}}, {"zp", ScalarKind::U8, {1}}};
      e.expr = fz::saturate_cast(ScalarKind::U8, fz::round(fz::relu(fz::in(0) * fz::in(1) + fz::in(2)) * fz::lit(0.5)) +
                                                     fz::cast(ScalarKind::F32, fz::in(3, ScalarKind::U8)));
      e.out_dtype = ScalarKind::U8;
      break;
    case 2:
      e.inputs = {{"s", ScalarKind::F32, {s.oc, 1}}, {"r", ScalarKind::F16, {s.n, s.oc, P}}};
      e.expr = fz::in(0) * fz::in(1) + fz::in(2, ScalarKind::F16);
      e.out_dtype = ScalarKind::F16;
      break;
    case 4:
      e.expr = fz::cast(ScalarKind::I32, fz::in(0));
      e.out_dtype = ScalarKind::I32;
      break;
    default:
      e.inputs = {{"t", ScalarKind::F32, {s.n, 1, 1}}};
      e.expr = fz::saturate_cast(ScalarKind::I8, fz::round(fz::in(0) * fz::lit(0.25) + fz::in(1)));
      e.out_dtype = ScalarKind::I8;
      break;
  }
  return e;
}

float ref_f32(ScalarKind k, const void* base, int64_t i) {
  return k == ScalarKind::F16 ? ir::f16_to_f32(static_cast<const uint16_t*>(base)[i]) : static_cast<const float*>(base)[i];
}

void reference(const ops::Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const ops::Problem q = base_of(p);
  const ops::ConvShape s = ops::conv_shape(q);
  const int64_t P = s.oh() * s.ow();
  std::vector<float> y(size_t(s.n * s.oc * P));
  ops::conv2d_reference(s, static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                        s.bias ? static_cast<const float*>(in[2]) : nullptr, y.data());
  const size_t e0 = s.bias ? 3 : 2;  // the epilogue's first input
  const int64_t kind = p.attr("ep", 1);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.oc; ++oc)
      for (int64_t j = 0; j < P; ++j) {
        const int64_t i = (n * s.oc + oc) * P + j;
        if (kind == 1) {
          const float v = std::max(y[size_t(i)] * ref_f32(ScalarKind::F32, in[e0], oc) + ref_f32(ScalarKind::F32, in[e0 + 1], i), 0.0f);
          const double qv = std::nearbyint(double(v * 0.5f)) + static_cast<const uint8_t*>(in[e0 + 2])[0];
          static_cast<uint8_t*>(out[0])[i] = uint8_t(std::clamp(qv, 0.0, 255.0));
        } else if (kind == 4) {
          static_cast<int32_t*>(out[0])[i] = int32_t(y[size_t(i)]);
        } else if (kind == 2) {
          const float v = y[size_t(i)] * ref_f32(ScalarKind::F32, in[e0], oc) + ref_f32(ScalarKind::F16, in[e0 + 1], i);
          static_cast<uint16_t*>(out[0])[i] = ir::f32_to_f16(v);
        } else {
          const double qv = std::nearbyint(double(y[size_t(i)] * 0.25f + ref_f32(ScalarKind::F32, in[e0], n)));
          static_cast<int8_t*>(out[0])[i] = int8_t(std::clamp(qv, -128.0, 127.0));
        }
      }
}

// Small integers (x, w, b, residuals), scales of 2^-2 .. 2, zero points 100..140.
void make_input(const ops::Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
  std::mt19937_64 rng(seed * 31 + uint64_t(input));
  const ops::ConvShape s = ops::conv_shape(base_of(p));
  const int e0 = s.bias ? 3 : 2, e = input - e0;
  const int64_t kind = p.attr("ep", 1);
  auto pick = [&](int lo, int hi) { return float(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  if (e >= 0 && (kind == 1 || kind == 2) && e == 0) {  // per-channel scale
    for (size_t i = 0; i < bytes.size() / 4; ++i) reinterpret_cast<float*>(bytes.data())[i] = std::ldexp(1.0f, int(pick(-2, 1)));
  } else if (kind == 1 && e == 2) {
    bytes[0] = uint8_t(pick(100, 140));
  } else if (kind == 2 && e == 1) {
    for (size_t i = 0; i < bytes.size() / 2; ++i) reinterpret_cast<uint16_t*>(bytes.data())[i] = ir::f32_to_f16(pick(-40, 40));
  } else {
    const int span = input == 1 ? 2 : input == 0 ? 3 : 40;
    for (size_t i = 0; i < bytes.size() / 4; ++i) reinterpret_cast<float*>(bytes.data())[i] = pick(-span, span);
  }
}

void register_test_op() {
  ops::register_all_ops();
  if (ops::find_op(kOp)) return;
  const ops::OpDef& conv = *ops::find_op("conv2d");
  ops::OpDef d;
  d.name = kOp;
  d.dims_help = conv.dims_help;
  d.inputs = [](const ops::Problem& p) {
    std::vector<ops::TensorSpec> in = ops::find_op("conv2d")->inputs(base_of(p));
    for (const auto& i : epilogue_of(p).inputs) in.push_back(ops::tensor(i.name, ir::Type(i.dtype), i.shape));
    return in;
  };
  d.outputs = [](const ops::Problem& p) {
    const ops::ConvShape s = ops::conv_shape(base_of(p));
    return std::vector<ops::TensorSpec>{ops::tensor("y", ir::Type(epilogue_of(p).out_dtype), {s.n, s.oc, s.oh(), s.ow()})};
  };
  d.candidates = [](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("conv2d")->candidates(base_of(p), c); };
  d.heuristic = [](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("conv2d")->heuristic(base_of(p), c); };
  d.variant_keys = conv.variant_keys;
  d.plan = [](const ops::Problem& p, const ops::Variant& v, const ops::TargetCaps& c) {
    const ops::ConvEpilogue e = epilogue_of(p);
    return ops::plan_conv2d(base_of(p), v, c, &e);
  };
  d.reference = reference;
  d.make_input = make_input;
  d.tolerance = [](const ops::Problem&) { return 1e-6; };  // exact (see the top)
  register_op(std::move(d));
}

ops::Problem conv(std::vector<int64_t> dims, int64_t ep, std::map<std::string, int64_t> attrs = {}) {
  attrs["ep"] = ep;
  return problem(kOp, std::move(dims), std::move(attrs));
}

std::vector<ops::Problem> problems() {
  const std::map<std::string, int64_t> pad1{{"pad_h", 1}, {"pad_w", 1}};
  auto with = [&](std::map<std::string, int64_t> a) { return a.insert(pad1.begin(), pad1.end()), a; };
  return {
      conv({2, 5, 11, 13, 7, 3, 3}, 1, with({{"bias", 1}})),                                  // direct, im2col, Winograd
      conv({1, 6, 9, 9, 20, 3, 3}, 2, with({{"stride_h", 2}, {"stride_w", 2}, {"relu", 1}})),  // stride 2
      conv({1, 20, 9, 9, 40, 3, 3}, 3, with({{"bias", 1}, {"relu", 1}})),                     // along channels
      conv({2, 16, 7, 9, 20, 1, 1}, 1),                                                       // 1×1: the macro-kernel
      conv({2, 16, 7, 9, 20, 1, 1}, 4),                                                       // ... i32 y
      conv({2, 16, 5, 7, 33, 1, 1}, 3, {{"bias", 1}}),                                        // 1×1 with bias: compacting launch
      conv({1, 5, 11, 13, 7, 3, 3}, 4, with({{"stride_w", 2}})),
      conv({2, 8, 5, 7, 6, 1, 1}, 3, {{"groups", 2}}),                                        // grouped 1×1
      conv({2, 8, 9, 11, 6, 3, 3}, 1, with({{"groups", 2}})),                                 // groups
      conv({2, 12, 15, 13, 12, 3, 3}, 1, with({{"groups", 12}, {"bias", 1}})),                // depthwise, small planes
      conv({2, 4, 9, 40, 4, 3, 3}, 2, with({{"groups", 4}, {"stride_h", 2}, {"stride_w", 2}, {"relu", 1}})),  // depthwise from x
  };
}

// The heuristic's variant and one of each form the problem runs on the CPU;
// with `all`, also im2col's edge panels and the GPU forms (plain SIMT code).
std::vector<ops::Variant> forms(const ops::Problem& p, const ops::TargetCaps& caps, bool all) {
  const ops::OpDef& d = ops::op_for(p);
  std::vector<ops::Variant> out = {d.heuristic(p, caps)};
  std::set<int64_t> seen;
  for (const auto& v : d.candidates(p, caps))
    if (seen.insert(v.get("impl", 0)).second && v.str() != out[0].str()) out.push_back(v);
  if (all)
    for (const char* v : {"impl=1 mr=6 nl=1 kc=0 mc=2 nc=2", "impl=4 wg=64 ocb=4", "impl=5 tn=4"}) out.push_back(ops::Variant::parse(v));
  return out;
}

}  // namespace

TEST_CASE("conv2d epilogue: every CPU form on odd shapes, groups, depthwise, stride 2, 1x1, batch 2 (u8, f16, i8 y)") {
  register_test_op();
  auto dev = cpu(2);
  std::set<int64_t> impls;
  const std::vector<ops::Problem> ps = problems();
  for (size_t i = 0; i < ps.size(); ++i)
    for (const auto& v : forms(ps[i], dev->caps(), i < 2 || (ps[i].attr("groups", 1) > 1 && ps[i].dim(5) == 3))) {
      const ops::Problem& p = ps[i];
      impls.insert(v.get("impl", 0));
      check(*dev, p, v);
    }
  for (int64_t impl = 0; impl <= 9; ++impl) {
    CAPTURE(impl);
    CHECK(impls.count(impl));
  }
}

TEST_CASE("conv2d epilogue: the CPU forms models run store y themselves; the others add one chain") {
  register_test_op();
  const auto caps = codegen::cpu_caps();
  using namespace ops::conv_impl;
  for (const auto& p : problems()) {
    const ops::ConvShape s = ops::conv_shape(base_of(p));
    const ops::ConvEpilogue e = epilogue_of(p);
    for (const auto& v : forms(p, caps, true)) {
      CAPTURE(p.str());
      CAPTURE(v.str());
      const size_t with = ops::plan_conv2d(base_of(p), v, caps, &e).steps.size();
      const size_t plain = ops::plan_conv2d(base_of(p), v, caps, nullptr).steps.size();
      const int64_t impl = v.get("impl", 0);
      const bool fuses = ops::conv_epilogue_fuses(v, caps);
      CHECK(fuses == (impl == kDirect || impl == kDirectOc || impl == kDepthwiseDirect || impl == kDepthwiseSmall ||
                      impl == kIm2col || impl == kGemm1x1));
      if (impl == kGemm1x1) {
        // The macro-kernel stores y (one group, no bias), else the launch that adds the bias.
        const bool macro = s.groups == 1 && !s.bias && !s.relu;
        CHECK(with == plain + (macro || s.bias ? 0 : 1));
      } else {
        CHECK(with == plain + (fuses ? 0 : 1));
      }
    }
  }
}

TEST_CASE("conv2d epilogue: a shape that does not broadcast against [N, OC, OH*OW] is refused") {
  register_test_op();
  const ops::Problem p = base_of(conv({1, 4, 6, 6, 8, 3, 3}, 1));
  ops::ConvEpilogue e;
  e.inputs = {{"r", ScalarKind::F32, {1, 8, 6, 6}}};  // 4-D: not the [N, OC, P] view
  e.expr = fz::in(0) + fz::in(1);
  CHECK_THROWS_AS(ops::plan_conv2d(p, ops::Variant::parse("impl=0"), codegen::cpu_caps(), &e), std::invalid_argument);
  e.inputs = {{"r", ScalarKind::F32, {7, 1}}};  // 7 channels of 8
  CHECK_THROWS_AS(ops::plan_conv2d(p, ops::Variant::parse("impl=0"), codegen::cpu_caps(), &e), std::invalid_argument);
}

TEST_CASE("conv2d epilogue: the heuristic's variant on the GPU devices present") {
  register_test_op();
  int ran = 0;
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) continue;
    auto dev = rt::create_device(name);
    for (const auto& p : problems()) {
      if (p.attr("ep") == 2 && !dev->caps().f16) continue;
      try {
        check(*dev, p, ops::op_for(p).heuristic(p, dev->caps()));
        ++ran;
      } catch (const ir::Error& e) {  // a type the target cannot store (8-bit buffers)
        MESSAGE(name << ": skipped " << p.str() << ": " << std::string(e.what()).substr(0, 160));
      }
    }
  }
  if (!ran) MESSAGE("no GPU device: the GPU forms ran on the CPU only (first test case)");
}
