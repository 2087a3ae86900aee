// Registration functions of the individual suites (one file each).
#pragma once

namespace kgen::bench {
void register_compile_benchmarks();    // bench_compile.cpp: cold JIT compile latency per kernel
void register_launch_benchmarks();     // bench_launch.cpp: launch overhead
void register_bandwidth_benchmarks();  // bench_bandwidth.cpp: saxpy/elementwise vs STREAM triad
}  // namespace kgen::bench
