// The prepared-model (plan) cache: a Program lowered in one process, saved
// beside the compile cache, so that a later process preparing the same model
// skips lowering. The key hashes the graph after the passes (nodes,
// attributes, value types and the bytes of the constants lowering may read),
// the device (name, description, capabilities), the compile options, the
// tuning database lowering consults and the kgen binary itself, so a rebuilt
// kgen or a retuned op never reads an older plan. A plan names each launch's
// kernel by its structural hash and signature (name, parameters, workgroup),
// and the device loads the code from its compile cache (Device::load_cached).
// Files live in <compile cache dir>/plans; KGEN_PLAN_CACHE=0 turns the cache
// off (so does the compile cache's own KGEN_CACHE=0). A file that is
// truncated, corrupt or of another format is removed and the model lowered
// again.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/lower.h"
#include "graph/program.h"
#include "runtimes/runtime.h"

namespace kgen::graph {

// What identifies a plan: every input of lowering, one per line.
struct PlanKey {
  std::string text;   // stored in the plan, compared on load
  uint64_t hash = 0;  // names the file: of the lines that say what the plan is for, not of the
                      // versions of the code and data (a rebuild overwrites its older plans)
  std::string hex() const;
};

// Models whose constants (hashed into the key) or whose lowered constants
// (stored in the plan) pass this size are not cached: hashing and writing
// them would cost more than lowering saves.
inline constexpr size_t kPlanCacheMaxBytes = size_t(256) << 20;

// The key of lowering `g` (after the passes) for `dev` with `opt`; none when
// the graph's constants pass kPlanCacheMaxBytes.
std::optional<PlanKey> plan_key(const Graph& g, rt::Device& dev, const rt::CompileOptions& opt);

// A plan read back: the program (its kernels are signatures without bodies),
// the constants it made (packed weights and the like), and per launch the
// structural hash of the kernel it was lowered with.
struct CachedPlan {
  Program program;
  std::vector<std::unique_ptr<Tensor>> owned;
  std::vector<uint64_t> kernel_hashes;
  LowerStats lower_stats;
};

class PlanCache {
 public:
  // The plan cache of the device's compile cache, or none (disabled, or a
  // device without a disk cache).
  static std::optional<PlanCache> open(rt::Device& dev);

  // The plan stored under `key`, or none: absent, unreadable or corrupt (then
  // removed). Slots that hold graph constants point into `g`.
  std::optional<CachedPlan> load(const PlanKey& key, const Graph& g) const;
  // Writes the plan atomically; a failure only costs the next process time.
  // Constants that are not `g`'s own are stored as bytes (none is written
  // when they pass kPlanCacheMaxBytes).
  void store(const PlanKey& key, const Graph& g, const Program& p, const std::vector<uint64_t>& kernel_hashes,
             const LowerStats& stats) const;
  std::filesystem::path path(const PlanKey& key) const;

 private:
  explicit PlanCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace kgen::graph
