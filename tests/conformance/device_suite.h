// The conformance suite, written once and instantiated per device (CubeCL's
// runtime_tests, ggml's test-backend-ops): every registered kernel at its odd
// test sizes and every elementwise (op, dtype) case, against the reference
// interpreter on fresh random inputs with poisoned outputs. A device supplies
// only what differs: which kernels it cannot express (skipped, with the
// reason, and counted) and where its math is looser than the interpreter's.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "codegen/target.h"
#include "dsl/dsl.h"
#include "dsl/registry.h"
#include "ir/ir.h"
#include "ops/elementwise/elementwise.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

namespace kgen::conformance {

struct DeviceSuite {
  std::string name;
  // Why the device cannot run the kernel, or "" when it can.
  std::function<std::string(const ir::Kernel&)> unsupported = [](const ir::Kernel&) { return std::string(); };
  // Tolerance of one elementwise case, given the op's spec tolerance.
  std::function<double(ir::Op, ir::Type, double)> op_tolerance = [](ir::Op, ir::Type, double t) { return t; };
  // Tolerance of a registered kernel, given its workload's.
  std::function<double(const ir::Kernel&, double)> kernel_tolerance = [](const ir::Kernel&, double t) { return t; };
};

// Why the device's capabilities refuse k (codegen::check_capabilities: e.g.
// subgroups, byte permutes, 64-bit atomics), or "". Every device's suite
// skips such kernels with the reason, after its own `unsupported`.
inline std::string capability_refusal(const rt::Device& dev, const ir::Kernel& k) {
  try {
    codegen::check_capabilities(k, dev.caps());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Registered kernels whose output cancels a transcendental: gelu's 1 + erf(x)
// and 1 + tanh(x) for x near -4 are ~1e-4, so one ulp of erf/tanh near -1
// (6e-8) is ~1e-3 relative in y. A device whose erf/tanh are within a few ulp
// of the interpreter's but not equal to them (lavapipe splits fma; CUDA's
// erff/tanhf are libdevice's, 2 ulp) gets 2e-3 for such kernels.
inline double cancelling_math_tolerance(const ir::Kernel& k, double spec_tol) {
  bool cancels = false;
  ir::walk(k.body, [&](const ir::Instr& in) { cancels |= in.op == ir::Op::Erf || in.op == ir::Op::Tanh; });
  return cancels ? std::max(spec_tol, 2e-3) : spec_tol;
}

inline uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();  // printed on failure via CAPTURE
}

// Every kernel in the registry (the caller registers what it wants covered).
inline void check_registered_kernels(rt::Device& dev, const DeviceSuite& s) {
  int pass = 0, skip = 0;
  for (const auto& e : dsl::registered_kernels()) {
    std::string why = s.unsupported(e.build());
    if (why.empty()) why = capability_refusal(dev, e.build());
    if (!why.empty()) {
      ++skip;
      MESSAGE("skip " << e.name << ": " << why);
      continue;
    }
    bool ok = true;
    for (int64_t n : e.test_sizes) {
      uint64_t seed = fresh_seed();
      CAPTURE(e.name);
      CAPTURE(n);
      CAPTURE(seed);
      ir::Kernel k = e.build();
      ir::Workload w = e.workload(n);
      w.tolerance = s.kernel_tolerance(k, w.tolerance);
      rt::CheckOptions co;
      co.seed = seed;
      co.time = false;
      rt::CheckResult r = rt::run_and_check(dev, k, w, co);
      INFO(r.message);
      CHECK(r.ok);
      CHECK(r.cmp.max_rel_err <= w.tolerance);
      ok &= r.ok;
    }
    pass += ok;
  }
  MESSAGE(s.name << " registered kernels: " << pass << " pass, " << skip << " skipped of "
                 << dsl::registered_kernels().size());
}

// Every unary/binary/compare op x every dtype its domain accepts.
inline void check_elementwise_cases(rt::Device& dev, const DeviceSuite& s) {
  auto cases = ops::all_elementwise_cases();
  int pass = 0, skip = 0;
  std::map<std::string, int> reasons;
  for (const auto& c : cases) {
    ir::Kernel k = ops::elementwise_map(c.op, c.dtype);
    std::string why = s.unsupported(k);
    if (why.empty()) why = capability_refusal(dev, k);
    if (!why.empty()) {
      ++skip;
      ++reasons[why.substr(why.find("' ") == std::string::npos ? 0 : why.find("' ") + 2)];
      continue;
    }
    const int64_t n = 1031;  // four full groups of 256 and a partial one
    uint64_t seed = fresh_seed();
    CAPTURE(std::string(ir::op_name(c.op)));
    CAPTURE(c.dtype.str());
    CAPTURE(seed);
    ir::Workload w = ops::elementwise_workload(c.op, c.dtype, n);
    w.tolerance = s.op_tolerance(c.op, c.dtype, w.tolerance);
    rt::CheckOptions co;
    co.seed = seed;
    co.time = false;
    rt::CheckResult r = rt::run_and_check(dev, k, w, co);
    INFO(r.message);
    CHECK(r.ok);
    pass += r.ok;
  }
  MESSAGE(s.name << " elementwise cases: " << pass << " pass, " << skip << " skipped of " << cases.size());
  for (const auto& [r, n] : reasons) MESSAGE("  skipped x" << n << ": " << r);
}

// One work-item summing n ones in a loop: a device whose driver stops long
// loops (TargetCaps::loop_iteration_limit: Mesa's llvmpipe ends a shader's
// loops after 65535 iterations in all) must refuse the launch that reaches
// the limit with an error instead of returning the truncated sum, and run
// the next launch normally; elsewhere 100000 iterations sum exactly.
inline void check_long_loops(rt::Device& dev) {
  using namespace kgen::dsl;
  const ir::Kernel k = kernel("loop_sum_ones", [](KernelBuilder& kb) {
    auto x = kb.input("x", u32);
    auto y = kb.output("y", u32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    Var s = var(u32, 0u);
    for_range(0u, n, [&](Value i) { s += x[i]; });
    y[0u] = s.get();
  });
  auto ck = dev.compile(k);
  const uint32_t limit = dev.caps().loop_iteration_limit, most = 100000;
  std::vector<uint32_t> ones(most + 16, 1u);
  auto x = dev.alloc(ones.size() * 4), y = dev.alloc(4);
  x->upload(ones.data(), ones.size() * 4);
  auto sum = [&](uint32_t n) {
    const uint32_t poison = 0xdeadbeefu;
    y->upload(&poison, 4);
    rt::LaunchArgs a;
    a.buffers = {x.get(), y.get()};
    a.scalars = {ir::scalar_slot(n)};
    a.dims.grid = {1, 1, 1};
    dev.launch(*ck, a);
    dev.synchronize();
    uint32_t r = 0;
    y->download(&r, 4);
    return r;
  };
  if (!limit) {
    MESSAGE(dev.name() << ": no loop iteration limit; a 100000-iteration loop");
    CHECK(sum(most) == most);
    return;
  }
  MESSAGE(dev.name() << ": loops limited to " << limit << " iterations per invocation (" << dev.description() << ")");
  // n iterations and the failing exit test: n + 1 passes, all allowed here.
  CHECK(sum(limit - 1) == limit - 1);
  std::string error;
  try {
    sum(limit + 16);
  } catch (const std::exception& e) {
    error = e.what();
  }
  CHECK_MESSAGE(error.find("loop iterations") != std::string::npos, "no error, or another one: " << error);
  CHECK(sum(1000) == 1000);  // the flag was reset
}

}  // namespace kgen::conformance
