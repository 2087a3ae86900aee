#include "ir/debug.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace kgen::ir {

int debug_level() {
  static const int level = [] {
    const char* s = std::getenv("KGEN_DEBUG");
    if (!s || !*s) return 0;
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end == s) return 1;
    return v < 0 ? 0 : int(v);
  }();
  return level;
}

void debug_log(int level, std::string_view tag, const std::string& msg) {
  if (debug_level() < level) return;
  static std::mutex mu;
  std::string line = "[kgen:" + std::string(tag) + "] " + msg;
  if (line.empty() || line.back() != '\n') line += '\n';
  std::lock_guard lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace kgen::ir
