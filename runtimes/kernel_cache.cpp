#include "runtimes/kernel_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "ir/debug.h"
#include "ir/hash.h"
#include "kgen_build_id.h"

namespace kgen::rt {

namespace fs = std::filesystem;

namespace {

// Bumped when the key layout or the entry format changes meaning.
constexpr const char* kFormat = "kgen-cache-v1";

bool env_off(const char* v) {
  if (!v) return false;
  std::string s(v);
  return s == "0" || s == "off" || s == "OFF" || s == "false" || s == "no";
}

const std::pair<const char*, uint64_t CacheStats::*> kCounters[] = {
    {"memory_hits", &CacheStats::memory_hits}, {"disk_hits", &CacheStats::disk_hits},
    {"misses", &CacheStats::misses},           {"corrupt", &CacheStats::corrupt},
    {"stores", &CacheStats::stores},           {"store_failures", &CacheStats::store_failures}};

CacheStats parse_stats(const std::string& text) {
  CacheStats s;
  std::istringstream in(text);
  std::string name;
  uint64_t v;
  while (in >> name >> v)
    for (auto& [n, f] : kCounters)
      if (name == n) s.*f = v;
  return s;
}

std::string format_stats(const CacheStats& s) {
  std::string out;
  for (auto& [n, f] : kCounters) out += std::string(n) + " " + std::to_string(s.*f) + "\n";
  return out;
}

}  // namespace

const char* kgen_build_id() { return KGEN_BUILD_ID; }

std::string hex16(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", (unsigned long long)v);
  return b;
}

std::string CacheKey::hex() const { return hex16(hash); }

CacheKey make_cache_key(const CacheKeyParts& p) {
  CacheKey k;
  k.text = std::string("format ") + kFormat + "\nir " + hex16(p.ir_hash) + "\ntarget " + p.target + "\ncaps " + p.caps +
           "\noptions " + p.options + "\ntoolchain " + p.toolchain + "\nkgen " + kgen_build_id() + "\n";
  return cache_key_from_text(std::move(k.text));
}

CacheKey cache_key_from_text(std::string text) {
  CacheKey k;
  k.text = std::move(text);
  ir::Hasher h(0x6b67656e6b6579ull);
  h.add(k.text);
  k.hash = h.finish();
  return k;
}

std::string caps_key(const codegen::TargetCaps& c) {
  return c.name + " f16=" + std::to_string(c.f16) + " bf16=" + std::to_string(c.bf16) + " f64=" + std::to_string(c.f64) +
         " i64=" + std::to_string(c.i64) + " sg=" + std::to_string(c.subgroups) + "/" + std::to_string(c.subgroup_size) +
         " shared=" + std::to_string(c.max_shared_bytes) + " wg=" + std::to_string(c.max_workgroup_threads) + "/" +
         std::to_string(c.max_workgroup_size[0]) + "x" + std::to_string(c.max_workgroup_size[1]) + "x" +
         std::to_string(c.max_workgroup_size[2]) + " af32=" + std::to_string(c.atomics_f32) +
         " a64=" + std::to_string(c.atomics_64) + " loops=" + std::to_string(c.loop_iteration_limit) + " lanes=" + std::to_string(c.max_vector_lanes) +
         " vec=" + std::to_string(c.vector_bits) + "x" + std::to_string(c.vector_registers) +
         " bdot=" + std::to_string(c.byte_dot) + " bperm=" + std::to_string(c.byte_permute) + " blut=" + std::to_string(c.byte_lookup);
}

CacheStats& CacheStats::operator+=(const CacheStats& o) {
  for (auto& [n, f] : kCounters) this->*f += o.*f;
  return *this;
}

CacheConfig CacheConfig::from_env() {
  CacheConfig c;
  c.disk = !env_off(std::getenv("KGEN_CACHE"));
  if (const char* d = std::getenv("KGEN_CACHE_DIR"); d && *d) {
    c.dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    c.dir = fs::path(x) / "kgen";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    c.dir = fs::path(h) / ".cache" / "kgen";
  } else {
    c.disk = false;  // nowhere sensible to write
  }
  return c;
}

KernelCache::KernelCache(CacheConfig config) : config_(std::move(config)) {}

KernelCache& KernelCache::global() {
  static KernelCache* g = [] {
    auto* c = new KernelCache(CacheConfig::from_env());
    std::atexit([] { global().flush_stats(); });
    ir::debug_log(1, "cache", c->disk_enabled() ? "disk cache at " + c->dir().string() : std::string("disk cache off"));
    return c;
  }();
  return *g;
}

void KernelCache::count(uint64_t CacheStats::*field) {
  std::lock_guard lock(mu_);
  ++(stats_.*field);
}

std::shared_ptr<const void> KernelCache::find_loaded_erased(const CacheKey& key) {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(key.text);
  if (it == loaded_.end()) return nullptr;
  ++stats_.memory_hits;
  return it->second;
}

std::shared_ptr<const void> KernelCache::keep_loaded_erased(const CacheKey& key, std::shared_ptr<const void> code) {
  std::lock_guard lock(mu_);
  return loaded_.emplace(key.text, std::move(code)).first->second;
}

fs::path KernelCache::entry_path(const CacheKey& key) const {
  std::string h = key.hex();
  return config_.dir / "v1" / h.substr(0, 2) / (h + ".kgc");
}

std::optional<CacheEntry> KernelCache::load(const CacheKey& key) {
  if (!config_.disk) {
    count(&CacheStats::misses);
    return std::nullopt;
  }
  fs::path p = entry_path(key);
  std::optional<std::string> bytes = read_file_bytes(p);
  if (!bytes) {
    count(&CacheStats::misses);
    ir::debug_log(1, "cache", "miss " + key.hex());
    return std::nullopt;
  }
  DecodeResult r = decode_cache_entry(*bytes);
  if (!r.entry) {
    discard(key, r.error);
    count(&CacheStats::misses);
    return std::nullopt;
  }
  if (r.entry->key_text != key.text) {
    // Two keys with one 64-bit name: not corrupt, just someone else's entry;
    // the store after this miss replaces it.
    ir::debug_log(1, "cache", "miss " + key.hex() + " (file holds another key)");
    count(&CacheStats::misses);
    return std::nullopt;
  }
  count(&CacheStats::disk_hits);
  return std::move(r.entry);
}

void KernelCache::discard(const CacheKey& key, const std::string& why) {
  fs::path p = entry_path(key);
  ir::debug_log(1, "cache", "corrupt entry " + p.string() + " (" + why + "): removed, rebuilding");
  std::error_code ec;
  fs::remove(p, ec);
  count(&CacheStats::corrupt);
}

void KernelCache::store(const CacheKey& key, CacheEntry entry) {
  if (!config_.disk) return;
  entry.key_text = key.text;
  std::string err;
  if (write_file_atomically(entry_path(key), encode_cache_entry(entry), &err)) {
    count(&CacheStats::stores);
  } else {
    count(&CacheStats::store_failures);
    ir::debug_log(1, "cache", "cannot store " + key.hex() + ": " + err);
  }
}

namespace {
fs::path alias_path(const fs::path& entry) { return fs::path(entry).replace_extension(".kga"); }
}  // namespace

std::optional<CacheKey> KernelCache::load_alias(const CacheKey& from) {
  if (!config_.disk) return std::nullopt;
  const fs::path p = alias_path(entry_path(from));
  std::optional<std::string> bytes = read_file_bytes(p);
  if (!bytes) return std::nullopt;
  DecodeResult r = decode_cache_entry(*bytes);
  std::error_code ec;
  if (!r.entry || r.entry->meta != "alias\n") {
    ir::debug_log(1, "cache", "unreadable alias " + p.string() + ": removed");
    fs::remove(p, ec);
    return std::nullopt;
  }
  if (r.entry->key_text != from.text) return std::nullopt;
  return cache_key_from_text(std::move(r.entry->source));
}

void KernelCache::store_alias(const CacheKey& from, const CacheKey& to) {
  if (!config_.disk) return;
  std::string err;
  if (!write_file_atomically(alias_path(entry_path(from)), encode_cache_entry({from.text, "alias\n", to.text, ""}), &err))
    ir::debug_log(1, "cache", "cannot store alias " + from.hex() + ": " + err);
}

CacheStats KernelCache::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void KernelCache::flush_stats() {
  CacheStats delta;
  {
    std::lock_guard lock(mu_);
    for (auto& [n, f] : kCounters) delta.*f = stats_.*f - flushed_.*f;
    flushed_ = stats_;
  }
  ir::debug_log(1, "cache", "this process: " + std::to_string(delta.memory_hits) + " memory hits, " +
                                std::to_string(delta.disk_hits) + " disk hits, " + std::to_string(delta.misses) +
                                " misses, " + std::to_string(delta.corrupt) + " corrupt rebuilt");
  bool any = false;
  for (auto& [n, f] : kCounters) any |= delta.*f != 0;
  if (!config_.disk || !any) return;
  std::error_code ec;
  fs::create_directories(config_.dir, ec);
  // Read-modify-write under an exclusive lock, so concurrent processes add up.
  int fd = ::open((config_.dir / "stats.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (::flock(fd, LOCK_EX) == 0) {
    CacheStats total = persisted_stats();
    total += delta;
    write_file_atomically(config_.dir / "stats", format_stats(total));
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
}

CacheStats KernelCache::persisted_stats() const {
  std::optional<std::string> s = read_file_bytes(config_.dir / "stats");
  return s ? parse_stats(*s) : CacheStats{};
}

std::vector<CacheEntryInfo> KernelCache::list() const {
  std::vector<CacheEntryInfo> out;
  std::error_code ec;
  fs::path root = config_.dir / "v1";
  if (!fs::is_directory(root, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".kgc" || is_cache_temp_file(it->path())) continue;
    CacheEntryInfo info;
    info.path = it->path();
    std::optional<std::string> bytes = read_file_bytes(info.path);
    info.bytes = bytes ? bytes->size() : 0;
    DecodeResult r = bytes ? decode_cache_entry(*bytes) : DecodeResult{std::nullopt, "unreadable"};
    if (r.entry) {
      info.key_text = std::move(r.entry->key_text);
      info.meta = std::move(r.entry->meta);
    } else {
      info.error = r.error;
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

size_t KernelCache::clear() {
  size_t n = 0;
  std::error_code ec;
  fs::path root = config_.dir / "v1";
  if (fs::is_directory(root, ec)) {
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file()) files.push_back(it->path());
    for (const fs::path& f : files) n += fs::remove(f, ec) ? 1 : 0;
    fs::remove_all(root, ec);
  }
  // Prepared-model plans (graph/plan_cache.h) live beside the entries and
  // name kernels by their entries: they go with them.
  const fs::path plans = config_.dir / "plans";
  if (fs::is_directory(plans, ec)) {
    for (const auto& e : fs::directory_iterator(plans, ec))
      if (e.is_regular_file()) n += fs::remove(e.path(), ec) ? 1 : 0;
    fs::remove_all(plans, ec);
  }
  n += fs::remove(config_.dir / "stats", ec) ? 1 : 0;
  std::lock_guard lock(mu_);
  flushed_ = stats_;  // counters restart from the clear
  return n;
}

}  // namespace kgen::rt
