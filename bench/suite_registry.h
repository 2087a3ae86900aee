// Registration functions of the individual suites (one file each).
#pragma once

namespace kgen::bench {
void register_compile_benchmarks();    // bench_compile.cpp: cold JIT compile latency per kernel
void register_launch_benchmarks();     // bench_launch.cpp: launch overhead
void register_bandwidth_benchmarks();  // bench_bandwidth.cpp: saxpy/elementwise vs STREAM triad
void register_attention_benchmarks();  // bench_attention.cpp: flash vs naive attention
void register_scan_benchmarks();       // bench_scan.cpp: scan vs STREAM triad, selective scan
void register_matmul_benchmarks();     // bench_matmul.cpp: sgemm/gemv vs OpenBLAS, oneDNN, triad; gated_mlp
void register_memory_bound_benchmarks(); // bench_memory_bound.cpp: elementwise, fusion, row ops, reduce, transpose, rope vs triad
void register_conv_benchmarks();       // bench_conv.cpp: conv2d vs im2col + OpenBLAS/oneDNN SGEMM; pooling
void register_quant_benchmarks();      // bench_quant.cpp: quantized GEMV/dequantize vs STREAM triad
}  // namespace kgen::bench
