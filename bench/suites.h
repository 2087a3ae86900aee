// Google Benchmark suites of kgen: the kgen_bench executable, which `kgen
// bench` runs. A benchmark that compares against a
// baseline measures the baseline in the same run and reports a `ratio`
// counter: ours / baseline as speed, so > 1 means kgen is faster.
#pragma once
#include <string>
#include <vector>

namespace kgen::bench {

// Registers every suite once (idempotent).
void register_all_benchmarks();
// Registers the suites, runs Google Benchmark with argv-style args
// (args[0] is the program name) and returns the process exit code.
int run_benchmarks(const std::vector<std::string>& args);

}  // namespace kgen::bench
