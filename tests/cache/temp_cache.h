// A fresh cache directory per test, removed afterwards: tests never touch the
// user's real cache (the whole ctest run also points KGEN_CACHE_DIR at the
// build tree, see tests/CMakeLists.txt).
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace kgen::test {

struct TempCacheDir {
  std::filesystem::path path;
  TempCacheDir() {
    static std::atomic<int> n{0};
    path = std::filesystem::temp_directory_path() /
           ("kgen-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempCacheDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempCacheDir(const TempCacheDir&) = delete;
  TempCacheDir& operator=(const TempCacheDir&) = delete;
};

}  // namespace kgen::test
