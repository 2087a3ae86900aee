// The op conformance suite (ggml's test-backend-ops for the op library):
// every registered op at every one of its test problems, with the variant
// dispatch would choose, on every available device (cpu with 1 and 2
// threads, vulkan, webgpu, cuda), against the op's C++ reference on fresh
// random inputs with poisoned outputs; and each op's smallest test problem
// through the reference interpreter. A GPU target that cannot express a
// kernel (capability refused at compile time) is skipped with the reason and
// counted; without a CUDA device the cuda pass says so.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "tests/ops/op_test_util.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

using namespace kgen;
using namespace kgen::test;

namespace {

void check_all_ops(rt::Device& dev, bool gpu) {
  ops::register_all_ops();
  int pass = 0, skip = 0, total = 0;
  std::map<std::string, int> reasons;
  for (const auto& d : ops::registered_ops()) {
    for (const auto& p : d.test_problems) {
      ++total;
      uint64_t seed = fresh_seed();
      CAPTURE(p.str());
      CAPTURE(seed);
      ops::Variant v = d.heuristic(p, dev.caps());
      CAPTURE(v.str());
      ops::OpCheck c;
      try {
        c = ops::check_op(dev, p, v, seed);
      } catch (const ir::Error& e) {
        if (!gpu) throw;
        ++skip;  // the target refused a kernel of the plan (capability)
        ++reasons[d.name + ": " + std::string(e.what()).substr(0, 160)];
        continue;
      }
      INFO(c.message);
      CHECK(c.ok);
      pass += c.ok;
    }
  }
  MESSAGE(dev.name() << " ops: " << pass << " pass, " << skip << " skipped of " << total << " (op, problem) pairs");
  for (const auto& [r, n] : reasons) MESSAGE("  skipped x" << n << ": " << r);
}

}  // namespace

TEST_CASE("every op matches its reference on the CPU (1 thread)") {
  auto dev = cpu(1);
  check_all_ops(*dev, false);
}

TEST_CASE("every op matches its reference on the CPU (2 threads)") {
  auto dev = cpu(2);
  check_all_ops(*dev, false);
}

TEST_CASE("every op's kernels match its reference in the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  for (const auto& d : ops::registered_ops()) {
    if (d.test_problems.empty()) continue;
    // The smallest test problem: the interpreter is ~100x slower than JIT code.
    const ops::Problem* small = &d.test_problems[0];
    auto size = [](const ops::Problem& p) {
      double n = 1;
      for (auto x : p.dims) n *= double(x);
      return n;
    };
    for (const auto& p : d.test_problems)
      if (size(p) < size(*small)) small = &p;
    CAPTURE(small->str());
    ops::OpCheck c = ops::check_op_interpreted(*small, d.heuristic(*small, caps), caps, fresh_seed());
    INFO(c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("every op matches its reference on the GPU targets") {
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      std::string why = name == "cuda" ? std::string("no CUDA device") : "no " + name + " device";
      MESSAGE(why << ": op conformance on '" << name << "' skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    check_all_ops(*dev, true);
  }
}

// More workgroups than a GPU grid axis holds (65535): the kernels number
// them over two axes (ops/common/wrapped_group.h), and the groups of the second
// layer must land on the rows past 65535. One problem per kernel family that
// does so (the heuristic's variant): column and row reductions, rowwise
// softmax/rmsnorm, the f32 and bf16 (widened first) GEMVs, the quantized
// GEMV, dequantize.
TEST_CASE("ops on grids past 65535 workgroups per axis, on the GPU targets") {
  ops::register_all_ops();
  const std::vector<ops::Problem> problems = {
      problem("reduce", {2, 4300000}, {{"axis", 0}}),
      problem("softmax", {70001, 4}),
      problem("rmsnorm", {70001, 4}),
      problem("matmul", {1, 70001, 16}, {{"trans_b", 1}}),
      problem("matmul", {1, 70001, 256}, {{"trans_b", 1}}, ir::ScalarKind::BF16),
      problem("qmatmul", {1, 70001, 32}, {{"format", 8}}),
      problem("dequantize", {4300, 1024}, {{"format", 8}})};
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE((name == "cuda" ? std::string("no CUDA device") : "no " + name + " device") << ": wrapped grids on '" << name << "' skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    for (const auto& p : problems) check(*dev, p, ops::op_for(p).heuristic(p, dev->caps()));
  }
}

TEST_CASE("ops reject malformed problems with a message naming the op") {
  ops::register_all_ops();
  ops::Problem p;
  p.op = "no_such_op";
  CHECK_THROWS_WITH_AS(ops::op_for(p), doctest::Contains("unknown op 'no_such_op'"), std::invalid_argument);
  CHECK_THROWS_AS(ops::parse_dims("12xx"), std::invalid_argument);
  CHECK_THROWS_AS(ops::parse_dims("12xq"), std::invalid_argument);
  CHECK_THROWS_AS(ops::parse_attrs("trans_b"), std::invalid_argument);
  CHECK(ops::parse_dims("3x5x7") == std::vector<int64_t>{3, 5, 7});
  CHECK(ops::Variant::parse("mr=8 nr=32").get("nr") == 32);
  CHECK(ops::Variant::parse(ops::Variant::parse("b=2 a=1").str()) == ops::Variant::parse("a=1 b=2"));
  // Base 10 always: transpose's perm=0213 is the digits 0 2 1 3, and 210 is 2 1 0.
  CHECK(ops::parse_attrs("perm=0213").at("perm") == 213);
  CHECK_THROWS_AS(ops::parse_attrs("n=0x10"), std::invalid_argument);
  ops::Problem t{"transpose", {3, 5, 7}, ir::ScalarKind::F32, ops::parse_attrs("perm=210")};
  CHECK(ops::op_for(t).outputs(t)[0].shape == std::vector<int64_t>{7, 5, 3});
  t.attrs = ops::parse_attrs("perm=0213");
  t.dims = {3, 5, 7, 11};
  CHECK(ops::op_for(t).outputs(t)[0].shape == std::vector<int64_t>{3, 7, 5, 11});
  t.attrs["perm"] = 211;
  CHECK_THROWS_WITH_AS(ops::op_for(t), doctest::Contains("not a permutation"), std::invalid_argument);
}
