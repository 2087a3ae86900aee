// The compile-cache flow every GPU device shares (vulkan, webgpu, cuda): the
// device-independent artifact (SPIR-V words, WGSL text, PTX/CUBIN) plus the
// generated source go through the composite KernelCache (memory layer, then
// disk entries written atomically with a checksum), keyed like the CPU's
// (structural IR hash + target + caps + options + toolchain + kgen build id).
// A second process finds the entry on disk and compiles nothing; an entry that
// decodes but cannot be used is discarded and rebuilt. Device objects built
// from an artifact (pipelines, modules) stay per device, since a process may
// hold several devices.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "ir/ir.h"
#include "runtimes/kernel_cache.h"

namespace kgen::rt {

struct GpuArtifact {
  ir::Kernel canonical;  // the optimised kernel (guards the memory layer against 64-bit key collisions)
  std::string source;    // generated target source
  std::string artifact;  // what the device loads
  std::string meta;      // "kernel=<name>\n..." (shown by `kgen cache ls`)
};

struct GpuArtifactLookup {
  std::shared_ptr<const GpuArtifact> art;
  bool hit = false;  // memory or disk
};

// `build` emits and compiles (a miss; it need not set `canonical`);
// `usable` says why a decoded disk entry cannot be loaded ("" when it can).
GpuArtifactLookup find_or_build_artifact(KernelCache& cache, const CacheKey& key, const ir::Kernel& optimized,
                                         const std::function<GpuArtifact()>& build,
                                         const std::function<std::string(const CacheEntry&)>& usable);

}  // namespace kgen::rt
