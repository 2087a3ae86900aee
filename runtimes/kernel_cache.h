// The composite compile cache shared by every backend: a memory layer of
// already-loaded code in front of a disk layer of artifacts (object file,
// SPIR-V, PTX, ...) plus the generated source.
//
// A key is everything that changes the binary: the structural hash of the
// kernel after the pass pipeline (names and value numbering excluded, so equal
// kernels under different names share one entry), the target, the device
// capabilities, the compile options, the toolchain id and the kgen build id.
// Entries live in KGEN_CACHE_DIR (default $XDG_CACHE_HOME/kgen, else
// ~/.cache/kgen); KGEN_CACHE=0/off disables the disk layer. Disk writes are
// atomic and checksummed (cache_file.h); a corrupt entry is logged, removed
// and rebuilt. Counters go to KGEN_DEBUG=1 logs and are added to
// <dir>/stats at process exit for `kgen cache stats`.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/target.h"
#include "runtimes/cache_file.h"

namespace kgen::rt {

// A 64-bit hash as 16 hex digits (cache and plan file names).
std::string hex16(uint64_t v);

struct CacheKey {
  std::string text;   // every component, one per line (stored in the entry, compared on load)
  uint64_t hash = 0;  // of `text`; names the entry
  std::string hex() const;
};

struct CacheKeyParts {
  uint64_t ir_hash = 0;   // ir::structural_hash of the kernel after the pipeline
  std::string target;     // "cpu-c++-orc", ...
  std::string caps;       // caps_key(device caps)
  std::string options;    // CompileOptions::key()
  std::string toolchain;  // jit::jit_toolchain_id(), nvcc/driver version, ...
};
// Adds kgen_build_id() and the entry format version.
CacheKey make_cache_key(const CacheKeyParts& parts);
// The key whose text is `text` (an alias entry stores the key it points to).
CacheKey cache_key_from_text(std::string text);
std::string caps_key(const codegen::TargetCaps& caps);

struct CacheStats {
  uint64_t memory_hits = 0, disk_hits = 0, misses = 0, corrupt = 0, stores = 0, store_failures = 0;
  CacheStats& operator+=(const CacheStats& o);
};

struct CacheConfig {
  bool disk = true;
  std::filesystem::path dir;
  // KGEN_CACHE / KGEN_CACHE_DIR / XDG_CACHE_HOME / HOME, as described above.
  static CacheConfig from_env();
};

struct CacheEntryInfo {
  std::filesystem::path path;
  uint64_t bytes = 0;
  std::string key_text, meta;  // empty with `error` set for unreadable entries
  std::string error;
};

class KernelCache {
 public:
  explicit KernelCache(CacheConfig config);
  // The process-wide cache (configured from the environment on first use;
  // never destroyed, so loaded modules outlive every static; its counters are
  // added to <dir>/stats at exit).
  static KernelCache& global();

  bool disk_enabled() const { return config_.disk; }
  const std::filesystem::path& dir() const { return config_.dir; }

  // Memory layer: the backend's loaded code for a key, shared by every
  // compile of that key in this process. Counts a memory hit when found.
  template <class T> std::shared_ptr<const T> find_loaded(const CacheKey& key) {
    return std::static_pointer_cast<const T>(find_loaded_erased(key));
  }
  // Keeps `code` unless another thread got there first; returns the kept one.
  template <class T> std::shared_ptr<const T> keep_loaded(const CacheKey& key, std::shared_ptr<const T> code) {
    return std::static_pointer_cast<const T>(keep_loaded_erased(key, std::move(code)));
  }

  // Disk layer. load() counts a disk hit, or a miss (also when the disk layer
  // is off); a corrupt entry is logged, counted, removed and reported as a miss.
  std::optional<CacheEntry> load(const CacheKey& key);
  void store(const CacheKey& key, CacheEntry entry);
  // For entries that decoded but the backend could not load: remove, count corrupt.
  void discard(const CacheKey& key, const std::string& why);
  std::filesystem::path entry_path(const CacheKey& key) const;
  // Alias files (<hash>.kga beside the entries): `from` names the entry `to`.
  // Not entries: they count in no statistic and `list` skips them; an
  // unreadable one is removed and reads as absent.
  std::optional<CacheKey> load_alias(const CacheKey& from);
  void store_alias(const CacheKey& from, const CacheKey& to);

  CacheStats stats() const;  // this process, this cache
  // Adds the counters not yet flushed to <dir>/stats (under a lock file).
  void flush_stats();

  // For `kgen cache`: entries on disk, the persisted counters, removal.
  std::vector<CacheEntryInfo> list() const;
  CacheStats persisted_stats() const;
  size_t clear();  // entries, stale temporaries, prepared-model plans and counters; returns files removed

 private:
  std::shared_ptr<const void> find_loaded_erased(const CacheKey& key);
  std::shared_ptr<const void> keep_loaded_erased(const CacheKey& key, std::shared_ptr<const void> code);
  void count(uint64_t CacheStats::*field);

  CacheConfig config_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const void>> loaded_;  // by key text
  CacheStats stats_, flushed_;
};

// Identifies the kgen sources that generate code (ir, codegen, jit,
// runtimes): a hash computed at build time, see build_id.cmake.
const char* kgen_build_id();

}  // namespace kgen::rt
