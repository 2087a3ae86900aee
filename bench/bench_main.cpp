// Standalone entry point; `kgen bench` runs the same suites in process.
#include <string>
#include <vector>

#include "bench/suites.h"
#include "bench/vendor_env.h"

int main(int argc, char** argv) {
  kgen::bench::ensure_fair_vendor_env(argv);
  return kgen::bench::run_benchmarks(std::vector<std::string>(argv, argv + argc));
}
