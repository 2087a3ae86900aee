// `kgen cache ls|stats|clear`: the on-disk compile cache (runtimes/kernel_cache.h)
// of KGEN_CACHE_DIR (default $XDG_CACHE_HOME/kgen or ~/.cache/kgen).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "runtimes/kernel_cache.h"
#include "tools/commands.h"
#include "tools/json_writer.h"

namespace kgen::tools {

namespace {

// "kernel=saxpy\n..." -> "saxpy"; the key line "target cpu-c++-orc" -> "cpu-c++-orc".
std::string field(const std::string& text, const std::string& name, char sep) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + sep, 0) == 0) return line.substr(name.size() + 1);
  return "";
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "Inspect or clear the on-disk compile cache (KGEN_CACHE_DIR)");
  cmd->require_subcommand(1);
  static bool json = false, keys = false;

  auto* ls = cmd->add_subcommand("ls", "List the cached entries");
  ls->add_flag("--keys", keys, "Print each entry's full key");
  ls->callback([] {
    auto& c = rt::KernelCache::global();
    size_t bad = 0;
    for (const rt::CacheEntryInfo& e : c.list()) {
      std::string name = e.path.stem().string();
      if (!e.error.empty()) {
        std::printf("%s  %8llu B  CORRUPT (%s)\n", name.c_str(), (unsigned long long)e.bytes, e.error.c_str());
        ++bad;
        continue;
      }
      std::printf("%s  %8llu B  %-24s %s  %s\n", name.c_str(), (unsigned long long)e.bytes,
                  field(e.meta, "kernel", '=').c_str(), field(e.key_text, "target", ' ').c_str(),
                  field(e.key_text, "options", ' ').c_str());
      if (keys) std::printf("%s\n", e.key_text.c_str());
    }
    if (bad) set_exit_code(1);
  });

  auto* stats = cmd->add_subcommand("stats", "Entries, bytes and the hit/miss counters of every process so far");
  stats->add_flag("--json", json, "Print one JSON object");
  stats->callback([] {
    auto& c = rt::KernelCache::global();
    rt::CacheStats s = c.persisted_stats();
    uint64_t entries = 0, bytes = 0, corrupt_now = 0;
    for (const rt::CacheEntryInfo& e : c.list()) {
      ++entries;
      bytes += e.bytes;
      corrupt_now += !e.error.empty();
    }
    if (json) {
      JsonObject o;
      o.add("dir", c.dir().string()).add("enabled", c.disk_enabled()).add("entries", int64_t(entries))
          .add("bytes", int64_t(bytes)).add("memory_hits", int64_t(s.memory_hits)).add("disk_hits", int64_t(s.disk_hits))
          .add("misses", int64_t(s.misses)).add("corrupt_rebuilt", int64_t(s.corrupt)).add("stores", int64_t(s.stores))
          .add("store_failures", int64_t(s.store_failures)).add("corrupt_entries", int64_t(corrupt_now))
          .add("build_id", std::string(rt::kgen_build_id()));
      std::cout << o.str() << "\n";
      return;
    }
    std::printf("dir              %s%s\n", c.dir().string().c_str(), c.disk_enabled() ? "" : " (disabled by KGEN_CACHE)");
    std::printf("entries          %llu (%llu bytes%s)\n", (unsigned long long)entries, (unsigned long long)bytes,
                corrupt_now ? (", " + std::to_string(corrupt_now) + " corrupt").c_str() : "");
    std::printf("memory hits      %llu\n", (unsigned long long)s.memory_hits);
    std::printf("disk hits        %llu\n", (unsigned long long)s.disk_hits);
    std::printf("misses           %llu\n", (unsigned long long)s.misses);
    std::printf("corrupt rebuilt  %llu\n", (unsigned long long)s.corrupt);
    std::printf("stores           %llu (%llu failed)\n", (unsigned long long)s.stores, (unsigned long long)s.store_failures);
    std::printf("kgen build id    %s\n", rt::kgen_build_id());
  });

  auto* clear = cmd->add_subcommand("clear", "Remove every entry and reset the counters");
  clear->callback([] {
    auto& c = rt::KernelCache::global();
    size_t n = c.clear();
    std::printf("removed %zu files from %s\n", n, c.dir().string().c_str());
  });
}

}  // namespace kgen::tools
