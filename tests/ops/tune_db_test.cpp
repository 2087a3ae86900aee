// The tuning database: keys bucket the shape and checksum the candidate set,
// the last record for a key wins, stale candidate sets are ignored, garbled
// lines are skipped, and records persist across TuneDb instances (processes).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "ops/tune.h"

using namespace kgen;
namespace fs = std::filesystem;

TEST_CASE("shapes bucket to powers of two") {
  CHECK(ops::bucket_dims({1, 3, 1000, 1024, 1025}) == std::vector<int64_t>{1, 4, 1024, 1024, 2048});
}

TEST_CASE("the tuning database persists, last record wins, stale keys miss") {
  fs::path dir = fs::temp_directory_path() / ("kgen-tune-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string path = (dir / "tune.jsonl").string();
  ops::Problem p;
  p.op = "matmul";
  p.dims = {100, 200, 300};
  std::vector<ops::Variant> cands = {ops::Variant::parse("mr=8"), ops::Variant::parse("mr=14")};
  std::string key = ops::tune_key(p, "cpu/cpu", cands);
  {
    ops::TuneDb db(path);
    CHECK_FALSE(db.lookup(key));
    db.store(key, p, cands[0], 2.0);
    db.store(key, p, cands[1], 1.0);
    CHECK(db.lookup(key)->str() == "mr=14");
  }
  {
    std::ofstream(path, std::ios::app) << "{\"key\":\"garbage\n";  // a torn line
    ops::TuneDb db(path);  // a new "process"
    REQUIRE(db.lookup(key));
    CHECK(db.lookup(key)->str() == "mr=14");
    // Same bucket: 120x250x260 shares the key.
    ops::Problem q = p;
    q.dims = {120, 250, 260};
    CHECK(ops::tune_key(q, "cpu/cpu", cands) == key);
    // A changed candidate set: the stored result is stale.
    auto more = cands;
    more.push_back(ops::Variant::parse("mr=6"));
    CHECK_FALSE(db.lookup(ops::tune_key(p, "cpu/cpu", more)));
    CHECK_FALSE(db.lookup(ops::tune_key(p, "vulkan/x", cands)));
  }
  fs::remove_all(dir);
}
