// The op library's contract. An op (matmul, conv2d, flash_attention, ...) is
// data, not a class hierarchy: an OpDef names its tensors for a Problem, lists
// the Variants it can build on a target (its variant space), picks one without
// tuning (its heuristic), turns (Problem, Variant) into a Plan of DSL kernel
// launches, and carries a plain C++ reference that tests and the tuner check
// every variant against. Ops register themselves; the executor
// (ops/core/executor.h), the tuner (ops/core/tune.h), `kgen op|tune`, the op
// conformance suite and the op benchmarks iterate over the registry.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/target.h"
#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::ops {

using TargetCaps = codegen::TargetCaps;

// What to compute: the op's sizes in its own order (documented by
// OpDef::dims_help, e.g. matmul "M N K"), the main element type and options
// (transpose_b, causal, stride, ...: integers; absent = the op's default).
struct Problem {
  std::string op;
  std::vector<int64_t> dims;
  ir::ScalarKind dtype = ir::ScalarKind::F32;
  std::map<std::string, int64_t> attrs;

  int64_t dim(size_t i) const { return dims.at(i); }
  int64_t attr(const std::string& name, int64_t dflt = 0) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? dflt : it->second;
  }
  // "matmul 64x48x33 f32 trans_b=1": the form `kgen op`/`kgen tune` accept.
  std::string str() const;
};
// Parses "64x48x33" (or "64,48,33") into dims; "k=v,k=v" into attrs.
std::vector<int64_t> parse_dims(std::string_view s);
std::map<std::string, int64_t> parse_attrs(std::string_view s);

// One point of an op's variant space: named integer parameters. "impl"
// conventionally selects the algorithm (an index into the op's impl names).
struct Variant {
  std::map<std::string, int64_t> params;
  int64_t get(const std::string& name, int64_t dflt = 0) const {
    auto it = params.find(name);
    return it == params.end() ? dflt : it->second;
  }
  Variant& set(const std::string& name, int64_t v) {
    params[name] = v;
    return *this;
  }
  std::string str() const;                    // "kc=256 mr=14 nr=32" (sorted by name)
  static Variant parse(std::string_view s);   // inverse of str()
  bool operator==(const Variant& o) const { return params == o.params; }
};

// One declared key of an op's variant space. Variants store the short key
// (the tune DB's format); users may also write the full name.
struct VariantKey {
  std::string key;              // "kc"
  std::string name;             // "k_block": a full name, accepted as an alias
  std::vector<int64_t> values;  // the legal values; empty: any in [lo, hi]
  int64_t lo = 0, hi = 0;
  std::string meaning;          // one line

  bool legal(int64_t v) const;
  std::string legal_str() const;  // "0|1|2" or "1..4096"
};
// Declarations: a key with a set of legal values, or with a range.
VariantKey key_set(std::string key, std::string name, std::vector<int64_t> values, std::string meaning);
VariantKey key_range(std::string key, std::string name, int64_t lo, int64_t hi, std::string meaning);

// A tensor of a problem (flat, contiguous; `shape` is informational).
struct TensorSpec {
  std::string name;
  ir::Type elem;                 // scalar element type of the buffer as the host sees it
  size_t bytes = 0;              // buffer size (packed formats: the packed size)
  std::vector<int64_t> shape;
  double lo = -1.0, hi = 1.0;    // random init range for the default input generator
};

// One kernel launch. Buffer slots number the op's tensors first (inputs then
// outputs, in the order OpDef::inputs/outputs list them), then the plan's
// temporaries. Launches run in order; each sees the previous ones' writes.
struct Step {
  ir::Kernel kernel;
  ir::LaunchDims dims;
  std::vector<int> buffers;       // one slot per buffer parameter of `kernel`
  std::vector<uint64_t> scalars;  // one ir::scalar_slot per scalar parameter
};
struct Plan {
  std::vector<size_t> temp_bytes;  // temporaries, slots after the op's tensors
  std::vector<Step> steps;
  // Appends a temporary and returns its slot (n_io = inputs + outputs).
  int add_temp(size_t n_io, size_t bytes) {
    temp_bytes.push_back(bytes);
    return int(n_io + temp_bytes.size() - 1);
  }
  // Appends another op's plan (`sub`, over its sub_nio tensors) as steps of
  // this one: its tensor slots become io[slot], its temporaries new ones.
  void append(size_t n_io, const Plan& sub, size_t sub_nio, const std::vector<int>& io);
};

struct OpDef {
  std::string name, description;
  std::string family;     // its folder ops/<family>/ (set at registration)
  std::string dims_help;  // "M N K", "B H S D Hkv", ...
  std::string attrs_help; // "trans_b=0|1 ...", may be empty
  // Attributes whose default is a constant, with that default: a problem
  // that spells one out at its default is the same problem, so tune keys
  // leave it out (`kgen tune ... --attrs format=2` then serves a program
  // that also passes xq=1). Defaults that depend on other values (pad_b =
  // pad_h, reduce's axis) are not listed and stay in the key as given.
  std::map<std::string, int64_t> attr_defaults;

  std::function<std::vector<TensorSpec>(const Problem&)> inputs, outputs;
  // Throws std::invalid_argument with a clear message when the problem is
  // malformed (wrong number of dims, unsupported dtype...). Optional.
  std::function<void(const Problem&)> validate;
  // Every variant valid for the problem on the target (the tuning space).
  std::function<std::vector<Variant>(const Problem&, const TargetCaps&)> candidates;
  // The untuned choice: cheap, no timing, good on the target.
  std::function<Variant(const Problem&, const TargetCaps&)> heuristic;
  std::function<Plan(const Problem&, const Variant&, const TargetCaps&)> plan;

  // Plain C++ reference: fills the outputs (host bytes in the outputs' element
  // types) from the inputs. The spec the tests and the tuner check against.
  std::function<void(const Problem&, const std::vector<const void*>& in, const std::vector<void*>& out)> reference;
  // Optional input generator (packed quantized blocks, indices...); by default
  // inputs are uniform in [lo, hi] of their TensorSpec.
  std::function<void(const Problem&, int input, std::vector<uint8_t>& bytes, uint64_t seed)> make_input;
  // Max relative error accepted: |got - want| / max(|want|, rms(want), error_scale).
  std::function<double(const Problem&)> tolerance;
  // Optional magnitude of the rounding error's source, from the inputs (host
  // bytes): for a sum, sqrt(Σx²), the size of a random-sign result. Keeps
  // the check sound where the result cancels to near zero (a single-output
  // sum of random signs can be arbitrarily small, its rounding error not).
  std::function<double(const Problem&, const std::vector<std::vector<uint8_t>>& in)> error_scale;
  // Work per run, for GFLOP/s and GB/s (bytes: compulsory traffic).
  std::function<double(const Problem&)> flops, bytes;

  // Every key its variants may hold (candidates, heuristic, tune DB, --variant).
  std::vector<VariantKey> variant_keys;

  std::vector<Problem> test_problems;   // odd, tiny and edge shapes (conformance)
  std::vector<Problem> bench_problems;  // the shapes `kgen bench` measures
  bool memory_bound = false;            // tuning rotates inputs larger than the LLC
};

// Registration: adds (throws std::invalid_argument on a duplicate name).
void register_op(OpDef def);
const OpDef* find_op(std::string_view name);
const std::vector<OpDef>& registered_ops();
// Registers every op of the library once (idempotent, thread-safe).
void register_all_ops();

// Looks the op up and validates the problem (throws std::invalid_argument
// naming the op and what is wrong).
const OpDef& op_for(const Problem& p);

// A variant checked against the op's declaration, full names turned into
// keys: throws std::invalid_argument naming the op, the key or value, and the
// legal keys with their values.
Variant resolve_variant(const OpDef& op, const Variant& v);
// `kgen ops NAME`: one line per declared key (key, name, legal values, meaning).
std::string describe_variant_keys(const OpDef& op);

// Helpers for op authors.
size_t elem_bytes(ir::Type t);
TensorSpec tensor(std::string name, ir::Type elem, std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0);
// Number of workgroups to cover n items in groups of `per_group`.
inline uint32_t groups_for(int64_t n, int64_t per_group) { return uint32_t((n + per_group - 1) / per_group); }
// A grid of `groups` workgroups (z layers of them) as x × y with x at most
// 65535, the per-axis size every GPU target guarantees; kernels number the
// groups group_id(0) + group_id(1)·grid[0] (ops/common/wrapped_group.h).
inline std::array<uint32_t, 3> wrapped_grid(int64_t groups, uint32_t z = 1) {
  const int64_t gx = std::max<int64_t>(1, std::min<int64_t>(groups, 65535));
  return {uint32_t(gx), uint32_t((groups + gx - 1) / gx), z};
}
// Is the target the in-process CPU (SIMT emulated by loops: one work-item per
// group and explicit lines are the fast shape) rather than a GPU?
inline bool is_cpu(const TargetCaps& caps) { return caps.name.rfind("cpu", 0) == 0; }

}  // namespace kgen::ops
