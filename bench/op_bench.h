// Helpers for benchmarks of the op library: a CPU device by thread count,
// one timed run of a prepared op, and the shared "op against the STREAM
// triad" benchmark body used by every memory-bound family.
#pragma once
#include <benchmark/benchmark.h>

#include <memory>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "runtimes/runtime.h"

namespace kgen::bench {

std::unique_ptr<rt::Device> cpu_device(int threads);
// Seconds of one execute + synchronize.
double run_once_s(rt::Device& dev, ops::PreparedPlan& pp, const ops::DeviceTensors& t);
// Elements of the op's largest tensor: the triad runs over as many floats.
size_t largest_tensor_elems(const ops::Problem& p);
// The dispatched variant of `p` (state.range(0) threads) against the triad
// over largest_tensor_elems(p) floats, interleaved round by round: counters
// GB_per_s, triad_GB_per_s, ratio (= ours / triad).
void op_vs_triad(benchmark::State& state, ops::Problem p);

}  // namespace kgen::bench
