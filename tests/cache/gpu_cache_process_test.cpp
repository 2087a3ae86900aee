// The GPU devices on the shared compile cache, across processes through the
// kgen binary: a second `run-kernel --device vulkan|webgpu` with the same
// KGEN_CACHE_DIR compiles nothing (disk hit, counters say so), and a corrupt
// entry is detected, counted and rebuilt. Skipped (with the reason) where the
// device is not available.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cache/temp_cache.h"

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

double json_number(const std::string& json, const std::string& name) {
  size_t at = json.find("\"" + name + "\": ");
  REQUIRE_MESSAGE(at != std::string::npos, json);
  return std::strtod(json.c_str() + at + name.size() + 4, nullptr);
}

bool has_device(const std::string& dev) {
  std::string out = run("'" KGEN_EXE "' devices 2>/dev/null");
  return out.find("\n" + dev) != std::string::npos || out.rfind(dev, 0) == 0;
}

void second_process_compiles_nothing(const std::string& device) {
  if (!has_device(device)) {
    MESSAGE("SKIPPED: no " << device << " device (`kgen devices`)");
    return;
  }
  kgen::test::TempCacheDir d;
  const std::string env = "KGEN_CACHE=1 KGEN_CACHE_DIR='" + d.path.string() + "' '" KGEN_EXE "' ";
  const std::string args = "run-kernel matmul_tiled_t16 --n 67 --device " + device + " --json 2>&1";
  std::string first = run(env + args), second = run(env + args);
  CHECK_MESSAGE(first.find("\"cache_hit\": false") != std::string::npos, first);
  CHECK_MESSAGE(second.find("\"cache_hit\": true") != std::string::npos, second);
  CHECK_MESSAGE(second.find("\"ok\": true") != std::string::npos, second);
  MESSAGE(device << ": cold compile " << json_number(first, "compile_ms") << " ms, disk hit "
                 << json_number(second, "compile_ms") << " ms");
  std::string stats = run(env + "cache stats --json");
  CHECK(json_number(stats, "entries") == 1);
  CHECK(json_number(stats, "misses") == 1);
  CHECK(json_number(stats, "disk_hits") == 1);

  // Flip a byte in the middle of the entry: the checksum catches it, the
  // entry is rebuilt and the run is still correct.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(d.path / "v1")) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    auto size = f.tellg();
    f.seekp(size / 2);
    char c = 0;
    f.seekg(size / 2);
    f.get(c);
    f.seekp(size / 2);
    f.put(char(c ^ 0x5a));
  }
  CHECK(files == 1);
  std::string third = run(env + args);
  CHECK_MESSAGE(third.find("\"cache_hit\": false") != std::string::npos, third);
  CHECK_MESSAGE(third.find("\"ok\": true") != std::string::npos, third);
  stats = run(env + "cache stats --json");
  CHECK(json_number(stats, "corrupt_rebuilt") == 1);
  CHECK_MESSAGE(run(env + args).find("\"cache_hit\": true") != std::string::npos, "the rebuilt entry is used");
}

}  // namespace

TEST_CASE("gpu cache process: a second vulkan process compiles nothing; a corrupt entry is rebuilt") {
  second_process_compiles_nothing("vulkan");
}

TEST_CASE("gpu cache process: a second webgpu process compiles nothing; a corrupt entry is rebuilt") {
  second_process_compiles_nothing("webgpu");
}
