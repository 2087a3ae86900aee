// Cross-process behaviour through the kgen binary: a second process with the
// same KGEN_CACHE_DIR compiles nothing; concurrent processes never leave a
// broken entry; KGEN_CACHE=0 keeps the disk untouched.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/cache/temp_cache.h"

namespace {

struct Run {
  int status = -1;
  std::string out;
};

// Runs a shell command with the cache environment set in front of it.
Run sh(const std::string& env, const std::string& args) {
  std::string cmd = env + " '" KGEN_EXE "' " + args;
  Run r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.status = ::pclose(p);
  return r;
}

std::string env_for(const kgen::test::TempCacheDir& d) { return "KGEN_CACHE=1 KGEN_CACHE_DIR='" + d.path.string() + "'"; }

// `"name": 12.5` -> 12.5 (the CLI prints flat JSON objects).
double json_number(const std::string& json, const std::string& name) {
  size_t at = json.find("\"" + name + "\": ");
  REQUIRE_MESSAGE(at != std::string::npos, json);
  return std::strtod(json.c_str() + at + name.size() + 4, nullptr);
}

}  // namespace

TEST_CASE("cache process: a second process compiles nothing") {
  kgen::test::TempCacheDir d;
  const std::string env = env_for(d);
  for (std::string kernel : {"saxpy", "matmul_tiled_t16"}) {
    CAPTURE(kernel);
    std::string args = "run-kernel " + kernel + " --n 257 --threads 1 --json";
    Run first = sh(env, args);
    Run second = sh(env, args);
    REQUIRE(first.status == 0);
    REQUIRE(second.status == 0);
    CHECK(first.out.find("\"cache_hit\": false") != std::string::npos);
    CHECK(second.out.find("\"cache_hit\": true") != std::string::npos);
    CHECK(second.out.find("\"ok\": true") != std::string::npos);
    double cold = json_number(first.out, "compile_ms"), warm = json_number(second.out, "compile_ms");
    MESSAGE(kernel << ": cold compile " << cold << " ms, disk hit " << warm << " ms");
    CHECK(warm < cold);
  }
  Run stats = sh(env, "cache stats --json");
  REQUIRE(stats.status == 0);
  CHECK(json_number(stats.out, "entries") == 2);
  CHECK(json_number(stats.out, "misses") == 2);
  CHECK(json_number(stats.out, "disk_hits") == 2);
  CHECK(json_number(stats.out, "corrupt_rebuilt") == 0);
  Run ls = sh(env, "cache ls");
  CHECK(ls.status == 0);
  CHECK(ls.out.find("saxpy") != std::string::npos);
  CHECK(ls.out.find("matmul_tiled_t16") != std::string::npos);
  Run clear = sh(env, "cache clear");
  CHECK(clear.status == 0);
  CHECK(json_number(sh(env, "cache stats --json").out, "entries") == 0);
  CHECK(sh(env, "run-kernel saxpy --n 257 --json").out.find("\"cache_hit\": false") != std::string::npos);
}

TEST_CASE("cache process: concurrent processes share one directory safely") {
  kgen::test::TempCacheDir d;
  const std::string env = env_for(d);
  std::string one = env + " '" KGEN_EXE "' run-kernel matmul_tiled_t16 --n 67 --threads 1 --json >/dev/null";
  int rc = std::system(("(" + one + " & " + one + " & " + one + " & wait) 2>&1").c_str());
  CHECK(rc == 0);
  Run ls = sh(env, "cache ls");
  CHECK(ls.status == 0);  // non-zero when an entry is corrupt
  CHECK(ls.out.find("CORRUPT") == std::string::npos);
  Run again = sh(env, "run-kernel matmul_tiled_t16 --n 67 --threads 1 --json");
  CHECK(again.out.find("\"cache_hit\": true") != std::string::npos);
  Run stats = sh(env, "cache stats --json");
  CHECK(json_number(stats.out, "corrupt_rebuilt") == 0);
  CHECK(json_number(stats.out, "entries") == 1);
}

TEST_CASE("cache process: KGEN_CACHE=0 disables the disk layer") {
  kgen::test::TempCacheDir d;
  const std::string env = "KGEN_CACHE=0 KGEN_CACHE_DIR='" + d.path.string() + "'";
  for (int i = 0; i < 2; ++i)
    CHECK(sh(env, "run-kernel saxpy --n 257 --json").out.find("\"cache_hit\": false") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d.path / "v1"));
}
