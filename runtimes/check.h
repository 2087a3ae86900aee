// Runs a kernel on a device and checks it against the reference interpreter:
// fresh random inputs, outputs poisoned before the run, relative-error
// comparison, and timing. Used by `kgen run-kernel`, the sample runner, the
// conformance tests and the benchmarks.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/workload.h"
#include "runtimes/runtime.h"

namespace kgen::rt {

// Host copies of a workload's buffers, filled with random data (inputs) or
// the poison pattern (outputs).
struct HostData {
  std::vector<std::vector<uint8_t>> buffers;
};
HostData make_inputs(const ir::Kernel& k, const ir::Workload& w, uint64_t seed);

// Fills `out` with spec.elems elements of `elem` drawn uniformly from
// [spec.lo, spec.hi] (integers: clamped to the type's range).
void fill_random(const ir::Type& elem, const ir::BufferSpec& spec, std::vector<uint8_t>& out, std::mt19937_64& rng);
// The value of one scalar element at `p`, as a double.
double scalar_value(const ir::Type& t, const uint8_t* p);

// Checked runs follow every buffer with kGuardBytes of a known byte: a
// kernel that stores past a buffer's end changes them (the devices round
// allocations up, so such a store would otherwise go unseen, or corrupt
// whatever follows).
constexpr size_t kGuardBytes = 4096;
// A device buffer holding `data`, then `bytes - data.size()` more and the
// guard, all `fill`.
std::unique_ptr<Buffer> guarded_buffer(Device& dev, const std::vector<uint8_t>& data, size_t bytes, uint8_t fill);
// "" while the guard after the first `bytes` of `b` still holds `fill`, else
// "N bytes written past the end of <what>".
std::string guard_overrun(const Buffer& b, size_t bytes, uint8_t fill, const std::string& what);

struct CompareResult {
  double max_rel_err = 0;
  size_t mismatches = 0;        // elements over tolerance
  size_t never_written = 0;     // output elements whose value depends on their poisoned initial contents
  std::string worst;            // "buffer 'y' element 17: got 1.5, expected 1.25"
};
// Compares `got` with the reference `want` for every buffer the workload checks.
CompareResult compare_outputs(const ir::Kernel& k, const ir::Workload& w, const HostData& got, const HostData& want);

struct CheckOptions {
  uint64_t seed = 0x5eed;
  int min_repeats = 3;          // timed launches (median reported)
  double min_time_s = 0.2;      // keep timing until this much has elapsed (max 1000 launches)
  bool check = true;            // run the interpreter and compare
  bool time = true;
};

struct CheckResult {
  std::string kernel, device;
  double compile_ms = 0;
  bool cache_hit = false;
  double run_ms = 0;            // median of timed launches
  double gb_per_s = 0, gflop_per_s = 0;
  double interp_ms = 0;
  CompareResult cmp;
  bool ok = true;
  std::string message;          // why not ok
};

CheckResult run_and_check(Device& dev, const ir::Kernel& k, const ir::Workload& w, const CheckOptions& opt = {});

}  // namespace kgen::rt
