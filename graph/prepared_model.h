// A model prepared on a device: prepare once (specialise shapes, infer, fold,
// fuse, lower, compile every kernel through the composite cache, place every
// tensor in one pre-faulted arena, resolve every launch's buffers), then each
// run copies the inputs in, replays the launch list and copies the outputs
// out: no compilation, hashing, planning or allocation per run.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/lower.h"
#include "graph/memory_plan.h"
#include "graph/plan_cache.h"
#include "runtimes/runtime.h"

namespace kgen::graph {

struct PrepareOptions {
  std::map<std::string, Shape> input_shapes;  // symbolic dimensions: given here, else 1
  // Inputs fixed at prepare (shape-like inputs: a Reshape's shape, Slice's
  // starts): folded as constants. run() still takes them, and checks that
  // they hold these values.
  std::map<std::string, Tensor> input_values;
  rt::CompileOptions compile;
  // Debugging (KGEN_GRAPH_GUARD=1): a guard band after every arena slot,
  // checked after each launch; a kernel writing past its buffer is named.
  bool guard = false;
  // State values (Value::state) bound to these buffers, by value name: two
  // prepared models of one checkpoint (a prefill and a decode step) share a
  // KV cache.
  // Others are allocated and zeroed at prepare.
  std::map<std::string, std::shared_ptr<rt::Buffer>> state;
};

struct PrepareStats {
  int nodes = 0;              // live nodes after folding and dead-node removal
  int model_nodes = 0;        // nodes in the model as loaded
  int groups = 0;             // after fusion
  int launches = 0;           // per run
  int kernels = 0;            // distinct kernels (structurally identical ones compile once)
  int kernels_compiled = 0;   // compiled in this process (not cache hits)
  int cache_hits = 0;         // memory or disk hits of the composite cache
  int folded = 0, bn_folded = 0, upcast = 0, dead = 0;
  double prepare_ms = 0, compile_ms = 0;
  // Where prepare_ms goes: graph passes, lowering (kernels built), compiles or
  // cache loads (wall time), the memory plan and buffer placement.
  double passes_ms = 0, lower_ms = 0, kernels_ms = 0, place_ms = 0;
  // The plan cache (graph/plan_cache.h): a hit skips lowering and loads the
  // kernels by hash; plan_ms is the key, the read, and on a miss the write.
  bool plan_cached = false;
  double plan_ms = 0;
  size_t arena_bytes = 0, unshared_bytes = 0, constant_bytes = 0;
  int in_place = 0;  // elementwise outputs written over a dying input
};

class PreparedModel {
 public:
  PreparedModel(rt::Device& dev, Graph g, const PrepareOptions& opt = {});
  ~PreparedModel();
  PreparedModel(const PreparedModel&) = delete;
  PreparedModel& operator=(const PreparedModel&) = delete;

  const Graph& graph() const { return g_; }
  const Program& program() const { return prog_; }
  const PrepareStats& stats() const { return stats_; }
  rt::Device& device() const { return dev_; }
  // The graph's inputs and outputs with their specialised types.
  size_t n_inputs() const { return inputs_.size(); }
  const Value& input(size_t i) const { return g_.values[size_t(inputs_.at(i))]; }
  const Value& output(size_t i) const { return g_.values[size_t(g_.outputs.at(i))]; }

  // Inputs in the graph's order; dtype and shape must be the specialised ones.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  void set_inputs(const std::vector<Tensor>& inputs);
  void replay();  // the launches, then synchronize
  std::vector<Tensor> outputs() const;
  // Median ms of each launch over `reps` replays, launched and synchronized
  // one at a time (the profile: where a run spends its time).
  std::vector<double> time_launches(int reps);
  // The buffer of state value `name` (to share with another prepared model).
  std::shared_ptr<rt::Buffer> state_buffer(const std::string& name) const;

 private:
  void lower_and_compile(const std::optional<PlanCache>& plans, const std::optional<PlanKey>& key);
  void compile_kernels(std::vector<uint64_t>& hashes);
  bool use_plan(CachedPlan plan);
  void check_guards(size_t launch) const;
  void arm_guards(size_t launch);
  std::vector<size_t> guarded_slots(size_t launch) const;
  std::string slot_name(size_t s) const;
  void place_buffers();
  std::unique_ptr<rt::Buffer> state_view(const Slot& slot);

  rt::Device& dev_;
  Graph g_;
  rt::CompileOptions copt_;
  Program prog_;
  std::vector<std::unique_ptr<Tensor>> owned_;
  MemoryPlan plan_;
  std::unique_ptr<rt::Buffer> arena_;
  std::vector<std::unique_ptr<rt::Buffer>> buffers_;  // per slot (views and constants), null if unused
  std::map<std::string, std::shared_ptr<rt::Buffer>> state_;  // by value name
  std::vector<std::shared_ptr<rt::CompiledKernel>> kernels_;  // per launch
  std::vector<rt::LaunchArgs> args_;                          // per launch, resolved
  PrepareStats stats_;
  std::vector<int> inputs_;  // every graph input as loaded, fixed ones included
  size_t guard_ = 0;  // bytes of guard band per slot, 0: none
};

// A prepared model for these inputs (their shapes specialise the model). Where a
// node needs an input's values to know its output shape (a Reshape's shape
// given as a graph input), small integer inputs and short float vectors are
// fixed to the given values and the model prepared again; `fixed` names them.
std::unique_ptr<PreparedModel> prepare_for_inputs(rt::Device& dev, const Graph& g, const std::vector<Tensor>& inputs,
                                            PrepareOptions opt = {}, std::vector<std::string>* fixed = nullptr);

}  // namespace kgen::graph
