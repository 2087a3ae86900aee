// Every registered kernel on the CPU device against the reference
// interpreter: fresh random inputs per size and seed, outputs poisoned before
// the run, odd sizes that leave partial workgroups and edge tiles.
// Written once over rt::Device so that other runtimes instantiate it too.
#include <doctest/doctest.h>

#include <random>

#include "dsl/registry.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"
#include "ops/rowwise.h"
#include "samples/kernels/kernels.h"

using namespace kgen;

namespace {

void check_all_kernels_on(const std::string& device, int threads) {
  samples::register_all();
  ops::register_all();  // the op library's row kernels (softmax, norms)
  rt::DeviceOptions opt;
  opt.threads = threads;
  auto dev = rt::create_device(device, opt);
  std::random_device rd;
  for (const auto& e : dsl::registered_kernels()) {
    for (int64_t n : e.test_sizes) {
      uint64_t seed = (uint64_t(rd()) << 32) ^ rd();  // fresh inputs every run; the seed is printed on failure
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
    }
  }
}

}  // namespace

TEST_CASE("every registered kernel matches the interpreter on the CPU (1 thread)") { check_all_kernels_on("cpu", 1); }
TEST_CASE("every registered kernel matches the interpreter on the CPU (2 threads)") { check_all_kernels_on("cpu", 2); }
