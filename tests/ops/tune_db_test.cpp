// The tuning database: keys bucket the shape and checksum the candidate set,
// the last record for a key wins, stale candidate sets are ignored, garbled
// lines are skipped, and records persist across TuneDb instances (processes).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "ops/core/op.h"
#include "ops/core/tune.h"

using namespace kgen;
namespace fs = std::filesystem;

TEST_CASE("shapes bucket to powers of two") {
  CHECK(ops::bucket_dims({1, 3, 1000, 1024, 1025}) == std::vector<int64_t>{1, 4, 1024, 1024, 2048});
}

TEST_CASE("an attribute spelled out at its default is the same tuning key") {
  ops::register_all_ops();
  std::vector<ops::Variant> cands = {ops::Variant::parse("impl=3")};
  auto key = [&](std::map<std::string, int64_t> attrs) {
    ops::Problem p;
    p.op = "qmatmul";
    p.dims = {1, 4096, 4096};
    p.attrs = std::move(attrs);
    return ops::tune_key(p, "cpu/cpu", cands);
  };
  CHECK(key({{"format", 2}}) == key({{"format", 2}, {"xq", 1}, {"layout", 0}}));
  CHECK(key({{"format", 2}}) != key({{"format", 2}, {"xq", 0}}));
  CHECK(key({{"format", 2}}) != key({{"format", 8}}));
  CHECK(key({}) == key({{"format", 8}}));  // Q8_0, the format's default
  ops::Problem c;
  c.op = "conv2d";
  c.dims = {1, 64, 56, 56, 64, 3, 3};
  c.attrs = {{"pad_h", 1}, {"pad_w", 1}};
  const std::string ck = ops::tune_key(c, "cpu/cpu", cands);
  c.attrs["stride_h"] = 1;
  c.attrs["groups"] = 1;
  CHECK(ops::tune_key(c, "cpu/cpu", cands) == ck);
  c.attrs["pad_b"] = 1;  // a default that depends on pad_h: kept as given
  CHECK(ops::tune_key(c, "cpu/cpu", cands) != ck);
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
