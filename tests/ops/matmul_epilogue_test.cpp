// The matmul's fused epilogue (ops/matmul/epilogue.h): every form against
// plain C++ references on odd sizes and edge tiles, outputs poisoned, on the
// CPU (1 and 2 threads), through the interpreter and on the GPU devices;
// and which forms fuse (the product's launches and no more) and which run
// the epilogue as a chain after C.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "ir/half.h"
#include "ops/core/executor.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/line_tile_gemm.h"
#include "ops/matmul/matmul_plan.h"
#include "ops/matmul/plan.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
using ir::ScalarKind;
namespace fz = ops::fusion;

namespace {

ops::Problem ep(std::vector<int64_t> dims, int64_t epilogue, std::map<std::string, int64_t> attrs = {},
                ScalarKind dt = ScalarKind::F32) {
  attrs["epilogue"] = epilogue;
  return problem("matmul_epilogue", std::move(dims), std::move(attrs), dt);
}

// The plain product under an epilogue problem.
ops::Problem base_of(ops::Problem p) {
  p.op = "matmul";
  p.attrs.erase("epilogue");
  p.attrs.erase("out");
  p.attrs.erase("custom");
  return p;
}

// A custom epilogue, checked against loops written out below rather than
// the chain reference: y = clip(leaky_relu(C · s[b, 0, n] + r[m, 0], 0.1),
// -0.5, 0.75) as f16, s bf16 [batch, 1, N], r f32 [M, 1].
ops::MatmulEpilogue custom_epilogue(const ops::Problem& p) {
  const int64_t m = p.dim(0), n = p.dim(1), batch = p.attr("batch", 1);
  ops::MatmulEpilogue e;
  e.inputs = {{"s", ScalarKind::BF16, {batch, 1, n}}, {"r", ScalarKind::F32, {m, 1}}};
  e.expr = fz::clip(fz::leaky_relu(fz::in(0) * fz::in(1, ScalarKind::BF16) + fz::in(2), 0.1), fz::lit(-0.5), fz::lit(0.75));
  e.out_dtype = ScalarKind::F16;
  return e;
}

void custom_reference(const ops::Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const int64_t M = p.dim(0), N = p.dim(1), K = p.dim(2), B = p.attr("batch", 1);
  const bool tb = p.attr("trans_b", 0) != 0;
  const auto* a = static_cast<const float*>(in[0]);
  const auto* b = static_cast<const float*>(in[1]);
  const auto* s = static_cast<const uint16_t*>(in[2]);
  const auto* r = static_cast<const float*>(in[3]);
  auto* y = static_cast<uint16_t*>(out[0]);
  for (int64_t z = 0; z < B; ++z)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(a[(z * M + i) * K + k]) * double(tb ? b[(z * N + j) * K + k] : b[(z * K + k) * N + j]);
        float v = float(acc) * ir::bf16_to_f32(s[z * N + j]) + r[i];
        v = v < 0 ? 0.1f * v : v;
        y[(z * M + i) * N + j] = ir::f32_to_f16(std::min(std::max(v, -0.5f), 0.75f));
      }
}

// Registers "matmul_custom_epilogue_test" (f32 A, B; attrs trans_b, batch):
// plan_matmul with custom_epilogue, the matmul op's variants.
void register_custom_op() {
  ops::register_all_ops();
  if (ops::find_op("matmul_custom_epilogue_test")) return;
  const ops::OpDef& mm = *ops::find_op("matmul");
  ops::OpDef d;
  d.name = "matmul_custom_epilogue_test";
  d.dims_help = "M N K";
  d.inputs = [](const ops::Problem& p) {
    std::vector<ops::TensorSpec> in = ops::find_op("matmul")->inputs(base_of(p));
    for (const auto& i : custom_epilogue(p).inputs) in.push_back(ops::tensor(i.name, ir::Type(i.dtype), i.shape));
    return in;
  };
  d.outputs = [](const ops::Problem& p) {
    return std::vector<ops::TensorSpec>{
        ops::tensor("y", ir::Type(ScalarKind::F16), {p.attr("batch", 1), p.dim(0), p.dim(1)})};
  };
  d.candidates = [](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("matmul")->candidates(base_of(p), c); };
  d.heuristic = [](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("matmul")->heuristic(base_of(p), c); };
  d.variant_keys = mm.variant_keys;
  d.plan = [](const ops::Problem& p, const ops::Variant& v, const ops::TargetCaps& c) {
    const ops::MatmulEpilogue e = custom_epilogue(p);
    return ops::plan_matmul(base_of(p), v, c, &e);
  };
  d.reference = custom_reference;
  d.tolerance = [](const ops::Problem& p) { return ops::dot_tolerance(p.dim(2)) + 2e-3; };
  register_op(std::move(d));
}

ops::Problem custom(std::vector<int64_t> dims, std::map<std::string, int64_t> attrs = {}) {
  return problem("matmul_custom_epilogue_test", std::move(dims), std::move(attrs));
}

// Launch counts of the epilogue problem's plan and of its plain product's.
std::pair<size_t, size_t> steps_of(const ops::Problem& p, const ops::Variant& v, const ops::TargetCaps& caps) {
  const auto& d = ops::op_for(p);
  return {d.plan(p, v, caps).steps.size(), ops::op_for(base_of(p)).plan(base_of(p), v, caps).steps.size()};
}

// Shared by the GPU-form checks: the tile variants the GPU devices run.
const std::vector<std::string> kTiles = {"impl=2 wg=16 tm=4 tn=4 tk=16", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=1",
                                         "impl=2 wg=16 tm=8 tn=4 tk=16 vec=2", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=3",
                                         "impl=2 wg=16 tm=8 tn=8 tk=8 vec=1 ks=3", "impl=2 wg=16 tm=8 tn=4 tk=16 vec=2 ks=2"};

}  // namespace

TEST_CASE("matmul_epilogue: the fusing forms add no launch; the others one chain after C") {
  ops::register_all_ops();
  std::vector<codegen::TargetCaps> targets = {codegen::cpu_caps(), cpu_caps_with(512, 32)};
  if (have_device("vulkan")) targets.push_back(rt::create_device("vulkan")->caps());
  const auto& d = *ops::find_op("matmul_epilogue");
  int fused = 0, chained = 0;
  for (const auto& caps : targets)
    for (const auto& p : d.test_problems)
      for (const auto& v : d.candidates(p, caps)) {
        CAPTURE(p.str());
        CAPTURE(v.str());
        const auto [with, plain] = steps_of(p, v, caps);
        const int64_t out = p.attr("out", 0);
        const ScalarKind kinds[] = {ScalarKind::F32, ScalarKind::F16, ScalarKind::BF16, ScalarKind::U8, ScalarKind::I8};
        const bool fuses = ops::epilogue_fuses(v, kinds[out]);
        CHECK(with == plain + (fuses ? 0 : 1));
        (fuses ? fused : chained) += 1;
        // Which forms fuse: GEMM (unless K slices meet a narrow C), GEMVs, K splits, GPU tiles and GEMV.
        const int64_t impl = v.get("impl", 0);
        if (impl == 1 || impl == 2 || impl == 3 || impl == 4) CHECK(fuses);
        if (impl == 5 || impl == 6 || impl == 7 || impl == 8) CHECK(!fuses);
      }
  MESSAGE(fused << " variants fuse the epilogue, " << chained << " run it as a chain after C");
}

TEST_CASE("matmul_epilogue: the heuristic's variant of every test problem on the CPU, 1 and 2 threads") {
  for (unsigned t : {1u, 2u}) {
    auto dev = cpu(t);
    CAPTURE(t);
    check_op_all(*dev, "matmul_epilogue", /*all_variants=*/false, false);
  }
}

TEST_CASE("matmul_epilogue: every candidate of edge shapes on the CPU (each form, K slices and splits, narrow and integer C)") {
  ops::register_all_ops();
  auto dev = cpu(1);
  const auto BF16 = ScalarKind::BF16;
  for (const auto& p : {ep({17, 33, 29}, 1),                                  // C through the tile scratch
                        ep({29, 45, 600}, 3),                                 // K slices, scratch C, residual
                        ep({29, 48, 600}, 4, {{"out", 1}}),                   // K slices with f16 C: the chain after C
                        ep({3, 48, 32}, 5, {{"batch", 2}}),                   // GEMV over K×N lines, K-split GEMV
                        ep({7, 77, 64}, 2, {{"trans_b", 1}}, BF16),           // Bᵀ GEMV (pairs), swapped product
                        ep({1, 37, 29}, 3, {{"trans_b", 1}, {"batch", 2}, {"out", 2}}),  // GEMV's masked K tail, bf16 C
                        ep({17, 33, 29}, 6, {{"out", 3}}),                    // requantized u8 C through the scratch
                        ep({29, 48, 600}, 6, {{"out", 4}}),                   // ... i8 C after K slices (the chain)
                        ep({3, 48, 32}, 6, {{"batch", 2}, {"out", 3}}),       // ... GEMVs
                        ep({1, 37, 29}, 6, {{"trans_b", 1}, {"batch", 2}, {"out", 4}})}) {
    CAPTURE(p.str());
    for (const auto& v : ops::op_for(p).candidates(p, dev->caps())) check(*dev, p, v);
  }
  // 2 threads: blocks split across the pool.
  auto dev2 = cpu(2);
  for (const auto& p : {ep({70, 96, 300}, 2, {{"trans_b", 1}}), ep({20, 30, 2100}, 4, {{"batch", 2}, {"out", 1}})})
    for (const auto& v : ops::op_for(p).candidates(p, dev2->caps())) check(*dev2, p, v);
}

TEST_CASE("matmul_epilogue: a custom epilogue against loops (f16 C, bf16 [batch, 1, N] and f32 [M, 1] operands)") {
  register_custom_op();
  auto dev = cpu(2);
  for (const auto& p : {custom({17, 33, 29}), custom({1, 40, 48}, {{"trans_b", 1}, {"batch", 2}}), custom({3, 32, 48}, {{"batch", 2}}),
                        custom({40, 64, 300}, {{"batch", 3}})}) {
    CAPTURE(p.str());
    for (const auto& v : ops::op_for(p).candidates(p, dev->caps())) check(*dev, p, v);
  }
  const auto caps = codegen::cpu_caps();
  for (const auto& p : {custom({5, 19, 17}), custom({2, 32, 16}, {{"batch", 2}})})
    for (const auto& v : ops::op_for(p).candidates(p, caps)) {
      CAPTURE(p.str());
      CAPTURE(v.str());
      ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
      INFO(c.message);
      CHECK(c.ok);
    }
}

TEST_CASE("matmul_epilogue: the smallest problems through the interpreter, every variant") {
  check_ops_interpreted({"matmul_epilogue"});
}

TEST_CASE("matmul_epilogue: the GPU forms (tiles, K splits, swapped tiles, GEMV) on the CPU and the GPU devices") {
  register_custom_op();
  std::vector<std::unique_ptr<rt::Device>> devs;
  if (have_device("cpu")) devs.push_back(cpu(2));
  for (const std::string& name : gpu_device_names())
    if (have_device(name)) devs.push_back(rt::create_device(name));
  struct Case {
    ops::Problem p;
    std::vector<std::string> variants;
  };
  const std::vector<Case> cases = {
      {ep({130, 70, 70}, 2), kTiles},
      {ep({37, 150, 33}, 3, {{"trans_b", 1}, {"batch", 2}, {"out", 1}}),
       {"impl=2 wg=16 tm=8 tn=4 tk=16 vec=2 sw=1", "impl=2 wg=16 tm=8 tn=8 tk=16 vec=2 sw=1 ks=4", "impl=2 wg=16 tm=4 tn=4 tk=16"}},
      {ep({129, 131, 20}, 4, {{"trans_b", 1}}, ScalarKind::BF16), {"impl=2 wg=16 tm=8 tn=8 tk=16 vec=2"}},
      {ep({3, 100, 64}, 5, {{"trans_b", 1}, {"batch", 2}}), {"impl=3 wg=64", "impl=3 wg=128"}},
      {ep({1, 70, 40}, 1, {{"trans_b", 1}, {"out", 2}}), {"impl=3 wg=64"}},
      {custom({70, 45, 37}, {{"batch", 2}}), {"impl=2 wg=16 tm=4 tn=4 tk=16", "impl=2 wg=16 tm=8 tn=8 tk=8 vec=1 ks=3"}},
      {custom({2, 45, 37}, {{"trans_b", 1}}), {"impl=3 wg=64"}},
  };
  for (auto& dev : devs)
    for (const auto& c : cases) {
      if (c.p.dtype == ScalarKind::BF16 && !dev->caps().bf16) continue;
      for (const auto& s : c.variants) {
        const auto v = ops::Variant::parse(s);
        if (v.get("vec", 0) && !ops::line_tile_fits(dev->caps().max_shared_bytes, uint32_t(v.get("tk")), uint32_t(v.get("tn")),
                                                    v.get("vec") == 3))
          continue;  // (WebGPU's 16 KiB of shared memory)
        try {
          check(*dev, c.p, v);
        } catch (const ir::Error& e) {
          MESSAGE(dev->name() << ": skipped " << c.p.str() << " " << s << ": " << std::string(e.what()).substr(0, 120));
        }
      }
    }
  for (const std::string& name : gpu_device_names())
    if (have_device(name)) {
      auto dev = rt::create_device(name);
      check_op_all(*dev, "matmul_epilogue", /*all_variants=*/false, true);
    }
}

namespace {

// "matmul_bias_relu_test" (M N K, f32): relu(A·B + bias) with the
// epilogue fused (split=0) or as the product into a temporary and a chain
// after it (split=1), the matmul op's variants: the fusion's timing.
void register_bias_relu_op() {
  ops::register_all_ops();
  if (ops::find_op("matmul_bias_relu_test")) return;
  auto epilogue = [](const ops::Problem& p) {
    ops::MatmulEpilogue e;
    e.inputs = {{"bias", ScalarKind::F32, {p.dim(1)}}};
    e.expr = fz::relu(fz::in(0) + fz::in(1));
    return e;
  };
  auto base = [](ops::Problem p) {
    p.attrs.erase("split");
    return base_of(p);
  };
  ops::OpDef d;
  d.name = "matmul_bias_relu_test";
  d.dims_help = "M N K";
  d.inputs = [=](const ops::Problem& p) {
    auto in = ops::find_op("matmul")->inputs(base(p));
    in.push_back(ops::tensor("bias", ir::Type(ScalarKind::F32), {p.dim(1)}));
    return in;
  };
  d.outputs = [=](const ops::Problem& p) { return ops::find_op("matmul")->outputs(base(p)); };
  d.candidates = [=](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("matmul")->candidates(base(p), c); };
  d.heuristic = [=](const ops::Problem& p, const ops::TargetCaps& c) { return ops::find_op("matmul")->heuristic(base(p), c); };
  d.variant_keys = ops::find_op("matmul")->variant_keys;
  d.plan = [=](const ops::Problem& p, const ops::Variant& v, const ops::TargetCaps& c) {
    const ops::MatmulEpilogue e = epilogue(p);
    if (!p.attr("split", 0)) return ops::plan_matmul(base(p), v, c, &e);
    ops::Plan pl;
    const int tmp = pl.add_temp(4, size_t(p.dim(0) * p.dim(1)) * 4);
    ops::plan_matmul_into(pl, base(p), v, c, ops::MatmulOut{tmp, 4});
    const fz::Chain ch = ops::epilogue_chain(base(p), e);
    fz::plan_chain(pl, ch, {tmp, 2}, 3, fz::chain_variant_for(ch, c));
    return pl;
  };
  d.reference = [=](const ops::Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    std::vector<float> c(size_t(p.dim(0) * p.dim(1)));
    ops::find_op("matmul")->reference(base(p), {in[0], in[1]}, {c.data()});
    fz::reference_chain(ops::epilogue_chain(base(p), epilogue(p)), {c.data(), in[2]}, out[0]);
  };
  d.tolerance = [](const ops::Problem& p) { return ops::dot_tolerance(p.dim(2)) + 2e-5; };
  register_op(std::move(d));
}

}  // namespace

TEST_CASE("matmul_epilogue: fused bias + relu against the product and a chain after it (timings)" * doctest::skip()) {
  register_bias_relu_op();
  // One thread, the least of interleaved runs: the host is shared.
  auto dev = cpu(1);
  for (int64_t n : {512, 1024}) {
    const ops::Problem fused = problem("matmul_bias_relu_test", {n, n, n}), split = problem("matmul_bias_relu_test", {n, n, n}, {{"split", 1}});
    const ops::Variant v = ops::op_for(fused).heuristic(fused, dev->caps());
    check(*dev, fused, v);
    check(*dev, split, v);
    auto pf = ops::prepare(*dev, fused, v), ps = ops::prepare(*dev, split, v);
    std::vector<double> tf, ts;
    for (int r = 0; r < 9; ++r) tf.push_back(ops::time_op(*dev, pf, 1, 5, 0.2)), ts.push_back(ops::time_op(*dev, ps, 1, 5, 0.2));
    std::sort(tf.begin(), tf.end());
    std::sort(ts.begin(), ts.end());
    MESSAGE(n << "^3 " << v.str() << ": fused " << tf[0] << " ms (" << pf.plan.steps.size() << " launches), product + chain "
              << ts[0] << " ms (" << ps.plan.steps.size() << " launches)");
  }
}
