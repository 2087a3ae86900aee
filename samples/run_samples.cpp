// The main job: JIT-compile every sample kernel for the CPU, run it on random
// inputs, check it against the reference interpreter, and print a table of
// results and timings. Exit code 1 if any kernel fails its check.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "dsl/registry.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"

int main(int argc, char** argv) {
  using namespace kgen;
  int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  samples::register_all();
  rt::DeviceOptions opt;
  opt.threads = threads;
  auto dev = rt::create_device("cpu", opt);
  std::printf("kgen sample kernels on %s\n\n", dev->description().c_str());
  std::printf("%-24s %10s %11s %11s %9s %10s %10s  %s\n", "kernel", "n", "compile ms", "run ms", "GB/s", "GFLOP/s",
              "max relerr", "check vs interpreter");
  int failures = 0;
  double total_compile = 0;
  int hits = 0;  // kernels served by the compile cache (KGEN_CACHE=0 forces cold compiles)
  for (const auto& e : dsl::registered_kernels()) {
    try {
      ir::Kernel k = e.build();
      ir::Workload w = e.workload(e.default_n);
      rt::CheckResult r = rt::run_and_check(*dev, k, w);
      total_compile += r.compile_ms;
      hits += r.cache_hit;
      std::printf("%-24s %10lld %9.2f%s %11.4f %9.2f %10.2f %10.2e  %s\n", e.name.c_str(), (long long)e.default_n,
                  r.compile_ms, r.cache_hit ? " c" : "  ", r.run_ms, r.gb_per_s, r.gflop_per_s, r.cmp.max_rel_err,
                  r.ok ? "OK" : ("FAIL: " + r.message).c_str());
      failures += !r.ok;
    } catch (const std::exception& ex) {
      std::printf("%-24s FAIL: %s\n", e.name.c_str(), ex.what());
      ++failures;
    }
  }
  std::printf("\n%zu kernels, %d failed; total compile %.1f ms (%d from the compile cache, marked c)\n",
              dsl::registered_kernels().size(), failures, total_compile, hits);
  return failures ? 1 : 0;
}
