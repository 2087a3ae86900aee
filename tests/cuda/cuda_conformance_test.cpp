// The conformance loop of tests/conformance (every registered kernel, every
// elementwise op x dtype, against the interpreter on fresh random inputs,
// odd sizes, poisoned outputs) on the "cuda" device. Without a GPU it says
// "no CUDA device: <reason>" and checks nothing.
#include <doctest/doctest.h>

#include <random>

#include "dsl/registry.h"
#include "ops/elementwise.h"
#include "runtimes/check.h"
#include "runtimes/cuda_device.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"

using namespace kgen;

namespace {

bool have_gpu() {
  std::string why;
  if (rt::cuda_device_available(&why)) return true;
  MESSAGE("skipped: no CUDA device: " << why);
  return false;
}

}  // namespace

TEST_CASE("without a GPU, create_device(\"cuda\") says why") {
  std::string why;
  if (rt::cuda_device_available(&why)) return;
  CHECK_THROWS_WITH_AS(rt::create_device("cuda"), doctest::Contains("no CUDA device: "), std::runtime_error);
}

TEST_CASE("every registered kernel matches the interpreter on CUDA") {
  if (!have_gpu()) return;
  samples::register_all();
  auto dev = rt::create_device("cuda");
  MESSAGE(dev->description());
  std::random_device rd;
  int passed = 0, total = 0;
  for (const auto& e : dsl::registered_kernels()) {
    for (int64_t n : e.test_sizes) {
      uint64_t seed = (uint64_t(rd()) << 32) ^ rd();
      CAPTURE(e.name);
      CAPTURE(n);
      CAPTURE(seed);
      ir::Kernel k = e.build();
      ir::Workload w = e.workload(n);
      rt::CheckOptions co;
      co.seed = seed;
      co.time = false;
      rt::CheckResult r = rt::run_and_check(*dev, k, w, co);
      INFO(r.message);
      CHECK(r.ok);
      CHECK(r.cmp.max_rel_err <= w.tolerance);
      ++total;
      passed += r.ok;
    }
  }
  MESSAGE(passed << " of " << total << " (kernel, size) runs pass on CUDA");
}

TEST_CASE("every elementwise op x dtype matches the interpreter on CUDA") {
  if (!have_gpu()) return;
  auto dev = rt::create_device("cuda");
  std::random_device rd;
  auto cases = ops::all_elementwise_cases();
  int passed = 0;
  for (const auto& c : cases) {
    const int64_t n = 1031;
    uint64_t seed = (uint64_t(rd()) << 32) ^ rd();
    CAPTURE(std::string(ir::op_name(c.op)));
    CAPTURE(c.dtype.str());
    CAPTURE(seed);
    rt::CheckOptions co;
    co.seed = seed;
    co.time = false;
    rt::CheckResult r = rt::run_and_check(*dev, ops::elementwise_map(c.op, c.dtype),
                                          ops::elementwise_workload(c.op, c.dtype, n), co);
    INFO(r.message);
    CHECK(r.ok);
    passed += r.ok;
  }
  MESSAGE(passed << " of " << cases.size() << " (op, dtype) cases pass on CUDA");
}
