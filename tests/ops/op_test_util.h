// Shared helpers of the op tests: fresh seeds (printed on failure), CPU
// devices by thread count, which devices this machine has, and one checked
// run of (problem, variant) on a device against the op's C++ reference.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/elementwise/fusion.h"

namespace kgen::test {

// A fresh seed per check; KGEN_TEST_SEED=S gives every check the seed S, to
// rerun a failure that printed it.
inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("KGEN_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

inline std::unique_ptr<rt::Device> cpu(unsigned threads) {
  rt::DeviceOptions o;
  o.threads = threads;
  return rt::create_device("cpu", o);
}

// The CPU target's capabilities with another register file, for checking
// heuristics for AVX-512 (512 bits x 32) and AVX2 (256 x 16) on any host. The
// last-level cache is pinned too (32 MiB, a Zen 5 CCD's), since the blocking
// follows it and hosts report anything from 16 MiB to a whole socket's 480;
// and without matrix tiles (AMX), which take the bf16 products where present.
inline codegen::TargetCaps cpu_caps_with(uint32_t vector_bits, uint32_t vector_registers) {
  codegen::TargetCaps c = codegen::cpu_caps();
  c.vector_bits = vector_bits;
  c.vector_registers = vector_registers;
  c.llc_bytes = uint64_t(32) << 20;
  c.matrix_tiles = false;
  // Zen 5's traits at this width, the family the matmul heuristics were first
  // measured on (Zen 4's and Intel's rules are checked where they apply).
  c.cpu = codegen::cpu_traits_for(codegen::CpuFamily::zen5, vector_bits);
  return c;
}

// The GPU devices every op family is checked on where present (CI has vulkan
// and webgpu on lavapipe; cuda only on a machine with an NVIDIA GPU).
inline const std::vector<std::string>& gpu_device_names() {
  static const std::vector<std::string> names = {"vulkan", "webgpu", "cuda"};
  return names;
}

inline bool have_device(const std::string& name) {
  for (const auto& d : rt::available_devices())
    if (d == name) return true;
  return false;
}

inline ops::Problem problem(std::string op, std::vector<int64_t> dims, std::map<std::string, int64_t> attrs = {},
                            ir::ScalarKind dt = ir::ScalarKind::F32) {
  ops::Problem p;
  p.op = std::move(op);
  p.dims = std::move(dims);
  p.attrs = std::move(attrs);
  p.dtype = dt;
  return p;
}

inline void check(rt::Device& dev, const ops::Problem& p, const ops::Variant& v) {
  uint64_t seed = fresh_seed();
  CAPTURE(p.str());
  CAPTURE(v.str());
  CAPTURE(seed);
  ops::OpCheck c = ops::check_op(dev, p, v, seed);
  INFO(c.message);
  CHECK(c.ok);
}

// Every test problem of `op` with every candidate (all_variants) or the heuristic's.
inline void check_op_all(rt::Device& dev, const std::string& op, bool all_variants, bool gpu) {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op(op);
  REQUIRE(d != nullptr);
  int pass = 0, skip = 0, total = 0;
  for (const auto& p : d->test_problems) {
    std::vector<ops::Variant> vs =
        all_variants ? d->candidates(p, dev.caps()) : std::vector<ops::Variant>{d->heuristic(p, dev.caps())};
    for (const auto& v : vs) {
      ++total;
      uint64_t seed = fresh_seed();
      CAPTURE(p.str());
      CAPTURE(v.str());
      CAPTURE(seed);
      ops::OpCheck c;
      try {
        c = ops::check_op(dev, p, v, seed);
      } catch (const ir::Error& e) {
        if (!gpu) throw;
        ++skip;  // the target cannot express a kernel (f16 on WGSL, ...)
        if (skip == 1) MESSAGE(dev.name() << " " << op << ": skipped " << p.str() << ": " << std::string(e.what()).substr(0, 160));
        continue;
      }
      INFO(c.message);
      CHECK(c.ok);
      pass += c.ok;
    }
  }
  MESSAGE(dev.name() << " " << op << ": " << pass << " pass, " << skip << " skipped of " << total);
}

// Every test problem of each op of a family: every candidate on the CPU at 1
// and 2 threads, the smallest problems through the interpreter, and the
// heuristic's variant on the GPU devices present.
inline void check_ops_on_cpu(const std::vector<std::string>& op_names) {
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    for (const auto& op : op_names) {
      CAPTURE(threads);
      check_op_all(*dev, op, /*all_variants=*/true, false);
    }
  }
}

inline void check_ops_interpreted(const std::vector<std::string>& op_names) {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  for (const auto& op : op_names) {
    const ops::OpDef* d = ops::find_op(op);
    REQUIRE(d != nullptr);
    const ops::Problem* small = &d->test_problems[0];
    for (const auto& p : d->test_problems)
      if (ops::fusion::numel(p.dims) < ops::fusion::numel(small->dims)) small = &p;
    // The smallest problem and the first one (small, but with whole lines,
    // so the line paths run too).
    std::vector<ops::Problem> ps = {*small};
    if (d->test_problems[0].str() != small->str()) ps.push_back(d->test_problems[0]);
    for (const auto& p : ps)
      for (const auto& v : d->candidates(p, caps)) {
        CAPTURE(p.str());
        CAPTURE(v.str());
        ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
        INFO(c.message);
        CHECK(c.ok);
      }
  }
}

inline void check_ops_on_gpus(const std::vector<std::string>& op_names) {
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    for (const auto& op : op_names) check_op_all(*dev, op, /*all_variants=*/false, true);
  }
}

}  // namespace kgen::test

// A family's three checks over its ops (each a quoted op name): every problem
// and candidate on the CPU at 1 and 2 threads, the smallest problems through
// the interpreter, the heuristic's variant on the GPU devices present.
#define KGEN_OP_FAMILY_TESTS(label, ...)                                                            \
  TEST_CASE(label ": every problem and variant on the CPU, 1 and 2 threads") {                    \
    kgen::test::check_ops_on_cpu({__VA_ARGS__});                                                  \
  }                                                                                               \
  TEST_CASE(label ": the smallest problems of each op through the interpreter, every variant") { \
    kgen::test::check_ops_interpreted({__VA_ARGS__});                                             \
  }                                                                                               \
  TEST_CASE(label " on the GPU devices where present") { kgen::test::check_ops_on_gpus({__VA_ARGS__}); }

