// Standalone entry point; `kgen bench` runs the same suites in process.
#include <string>
#include <vector>

#include "bench/suites.h"

int main(int argc, char** argv) { return kgen::bench::run_benchmarks(std::vector<std::string>(argv, argv + argc)); }
