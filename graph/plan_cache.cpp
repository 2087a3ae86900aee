#include "graph/plan_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "graph/plan_codec.h"
#include "ir/debug.h"
#include "runtimes/kernel_cache.h"

namespace kgen::graph {

namespace fs = std::filesystem;

namespace {

bool disabled_by_env() {
  const char* v = std::getenv("KGEN_PLAN_CACHE");
  if (!v) return false;
  const std::string s(v);
  return s == "0" || s == "off" || s == "OFF" || s == "false" || s == "no";
}

// The whole file mapped (page aligned, so stored constants are used in place,
// straight from the page cache), or null when it cannot be read or is empty.
// Private and writable, as the heap tensors a lowering makes are: a write
// copies the page and never reaches the file. Plan files are replaced by
// rename, never rewritten in place, so the mapping stays valid while a
// prepared model uses it.
std::shared_ptr<const uint8_t> map_file(const fs::path& p, size_t& n) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  void* m = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    n = size_t(st.st_size);
    m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);
  if (m == MAP_FAILED) return nullptr;
  return std::shared_ptr<const uint8_t>(static_cast<const uint8_t*>(m), [n](const uint8_t* q) {
    ::munmap(const_cast<uint8_t*>(q), n);
  });
}

}  // namespace

std::optional<PlanCache> PlanCache::open(rt::Device& dev) {
  rt::KernelCache* cache = dev.kernel_cache();
  if (!cache || !cache->disk_enabled() || cache->dir().empty() || disabled_by_env()) return std::nullopt;
  return PlanCache(cache->dir() / "plans");
}

fs::path PlanCache::path(const PlanKey& key) const { return dir_ / (key.hex() + ".kgp"); }

std::optional<CachedPlan> PlanCache::load(const PlanKey& key, const Graph& g) const {
  const fs::path p = path(key);
  size_t n = 0;
  std::shared_ptr<const uint8_t> bytes = map_file(p, n);
  if (!bytes) {
    ir::debug_log(1, "plan", "miss " + key.hex());
    return std::nullopt;
  }
  try {
    CachedPlan plan = decode_plan(bytes.get(), n, bytes, key.text, g);
    ir::debug_log(1, "plan", "hit " + p.string());
    return plan;
  } catch (const PlanFormatError& e) {
    ir::debug_log(1, "plan", "unusable plan " + p.string() + " (" + e.what() + "): removed, lowering again");
    std::error_code ec;
    fs::remove(p, ec);
    return std::nullopt;
  }
}

void PlanCache::store(const PlanKey& key, const Graph& g, const Program& p, const std::vector<uint64_t>& kernel_hashes,
                      const LowerStats& stats) const {
  size_t constant_bytes = 0;  // a bound on the stored ones: the graph's are only named
  for (const Slot& s : p.slots)
    if (s.constant) constant_bytes += s.constant->bytes();
  if (constant_bytes > kPlanCacheMaxBytes) return;
  std::string err;
  if (!rt::write_file_atomically(path(key), encode_plan(key.text, g, p, kernel_hashes, stats), &err))
    ir::debug_log(1, "plan", "cannot store " + key.hex() + ": " + err);
}

}  // namespace kgen::graph
