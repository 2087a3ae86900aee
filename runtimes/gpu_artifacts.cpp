#include "runtimes/gpu_artifacts.h"

#include "ir/debug.h"
#include "ir/hash.h"

namespace kgen::rt {

GpuArtifactLookup find_or_build_artifact(KernelCache& cache, const CacheKey& key, const ir::Kernel& optimized,
                                         const std::function<GpuArtifact()>& build,
                                         const std::function<std::string(const CacheEntry&)>& usable) {
  auto fresh = [&] {
    auto a = std::make_shared<GpuArtifact>(build());
    a->canonical = optimized;
    return a;
  };
  if (auto mem = cache.find_loaded<GpuArtifact>(key)) {
    if (ir::structurally_equal(mem->canonical, optimized)) return {mem, true};
    // Another kernel owns this key: build this one privately, cache nothing.
    ir::debug_log(1, "cache", "structural hash collision on " + key.hex() + " for '" + optimized.name + "': compiling uncached");
    return {fresh(), false};
  }
  if (std::optional<CacheEntry> e = cache.load(key)) {
    std::string why = usable(*e);
    if (why.empty()) {
      auto a = std::make_shared<GpuArtifact>();
      a->canonical = optimized;
      a->source = std::move(e->source);
      a->artifact = std::move(e->artifact);
      a->meta = std::move(e->meta);
      ir::debug_log(1, "cache", "hit (disk) " + key.hex() + " for '" + optimized.name + "'");
      return {cache.keep_loaded<GpuArtifact>(key, std::move(a)), true};
    }
    cache.discard(key, why);
  }
  std::shared_ptr<const GpuArtifact> a = fresh();
  cache.store(key, {"", a->meta, a->source, a->artifact});
  return {cache.keep_loaded(key, std::move(a)), false};
}

}  // namespace kgen::rt
