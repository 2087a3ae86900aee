// Golden-file comparison for emitted source, shared by every dialect's golden
// test. KGEN_UPDATE_GOLDEN=1 rewrites the files instead of comparing.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kgen::test {

// Compares `text` with tests/<dir>/<name>.
inline void check_golden(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = std::string(KGEN_SOURCE_DIR) + "/tests/" + dir + "/" + name;
  const char* upd = std::getenv("KGEN_UPDATE_GOLDEN");
  if (upd && std::string(upd) == "1") {
    std::ofstream(path) << text;
    MESSAGE("rewrote " << path);
    return;
  }
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "missing golden file " << path << " (run with KGEN_UPDATE_GOLDEN=1)");
  std::stringstream ss;
  ss << f.rdbuf();
  CHECK_MESSAGE(ss.str() == text, "emitted source differs from " << path << " (KGEN_UPDATE_GOLDEN=1 to accept):\n" << text);
}

}  // namespace kgen::test
