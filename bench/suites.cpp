#include "bench/suites.h"

#include <benchmark/benchmark.h>

#include <mutex>

#include "bench/suite_registry.h"

namespace kgen::bench {

void register_all_benchmarks() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_compile_benchmarks();
    register_launch_benchmarks();
    register_bandwidth_benchmarks();
    register_matmul_benchmarks();
    register_attention_benchmarks();
    register_scan_benchmarks();
    register_memory_bound_benchmarks();
    register_conv_benchmarks();
    register_quant_benchmarks();
  });
}

int run_benchmarks(const std::vector<std::string>& args) {
  register_all_benchmarks();
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = int(storage.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace kgen::bench
