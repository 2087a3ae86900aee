// Running ops on a device: prepare (plan + compile every step through the
// device's compile cache + allocate temporaries) once, execute many times.
// Also the host side of checking: random inputs, the C++ reference, and a
// comparison by relative error; and the interpreter as a second reference
// for a plan's kernels.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ops/core/op.h"
#include "runtimes/runtime.h"

namespace kgen::ops {

struct PreparedPlan {
  Problem problem;
  Variant variant;
  Plan plan;
  std::vector<std::shared_ptr<rt::CompiledKernel>> kernels;  // one per step
  std::vector<std::unique_ptr<rt::Buffer>> temps;
  double compile_ms = 0;  // sum over steps (cache lookups on hits)
  int cache_hits = 0;
  // The op's tensors (inputs then outputs), resolved once so execute()
  // checks buffer sizes without rebuilding them.
  std::vector<TensorSpec> io;
};

// Validates the problem, builds the plan for `v` and compiles its kernels.
PreparedPlan prepare(rt::Device& dev, const Problem& p, const Variant& v, const rt::CompileOptions& opt = {});
// io: the op's buffers, inputs then outputs (OpDef order). Checks sizes.
void execute(rt::Device& dev, PreparedPlan& pp, const std::vector<rt::Buffer*>& io);

// The variant dispatch uses: the tuned choice for (problem bucket, device,
// candidate set) from the tuning database (ops/core/tune.h), else the heuristic.
Variant choose_variant(rt::Device& dev, const Problem& p, std::string* source = nullptr /* "tuned" | "heuristic" */);

// Host tensors of a problem: inputs generated (OpDef::make_input or uniform
// random in [lo, hi]), outputs sized and filled with `poison_byte`.
struct HostTensors {
  std::vector<std::vector<uint8_t>> in, out;
};
HostTensors make_host_tensors(const Problem& p, uint64_t seed, uint8_t poison_byte = 0xff);
// Runs OpDef::reference into `t.out`.
void run_reference(const Problem& p, HostTensors& t);

struct Comparison {
  double max_rel_err = 0;
  size_t mismatches = 0;
  std::string worst;  // "output 'c' element 17: got 1.5, expected 1.25"
};
// |got - want| / max(|want|, rms(want)) per element of every output; NaN or
// Inf where the reference is finite is a mismatch.
// `floor`: least scale of the relative error (OpDef::error_scale), 0 for none.
Comparison compare_outputs(const Problem& p, const HostTensors& got, const HostTensors& want, double tolerance,
                           double floor = 0);

struct OpCheck {
  bool ok = false;
  std::string message;  // why not ok
  Comparison cmp;
  double tolerance = 0;
  double compile_ms = 0;
};
// Runs (p, v) on the device on fresh random inputs with poisoned outputs
// (twice, with two poisons, so an output element the plan never writes is
// caught) and compares with the C++ reference.
OpCheck check_op(rt::Device& dev, const Problem& p, const Variant& v, uint64_t seed = 1);
// Runs the plan's kernels in the reference interpreter (the IR's meaning)
// and compares with the C++ reference: checks the kernels independently of
// any backend. For small problems.
OpCheck check_op_interpreted(const Problem& p, const Variant& v, const TargetCaps& caps, uint64_t seed = 1);

// Device buffers for a problem with host data uploaded (inputs) / poisoned.
struct DeviceTensors {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  std::vector<rt::Buffer*> io() const;
};
DeviceTensors upload(rt::Device& dev, const HostTensors& t);
void download(const DeviceTensors& d, HostTensors& t, size_t n_in);

// Median wall time (ms) of `pp` over at least `min_reps` runs and `min_s`
// seconds, after one warm-up. With rotate > 1 the inputs rotate through that
// many copies (memory-bound ops: inputs beyond the last-level cache).
double time_op(rt::Device& dev, PreparedPlan& pp, int rotate = 1, int min_reps = 5, double min_s = 0.2);
// The same over given input sets (`rotating_inputs`), which do not depend on
// the variant: a tuner makes them once for all candidates.
std::vector<DeviceTensors> rotating_inputs(rt::Device& dev, const Problem& p, int rotate);
double time_op(rt::Device& dev, PreparedPlan& pp, std::vector<DeviceTensors>& sets, int min_reps, double min_s);
// Median milliseconds of each step of the plan, launched and synchronized one
// at a time (so a step's time includes no overlap with its neighbours): where
// a multi-kernel op spends its time (`kgen op --profile`).
std::vector<double> time_steps(rt::Device& dev, PreparedPlan& pp, int reps = 5);

}  // namespace kgen::ops
