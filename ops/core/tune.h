// Variant tuning: time every candidate of an op on a device (warm-up, median,
// rotating inputs beyond the cache for memory-bound ops), check each against
// the reference, keep the winner in a human-readable JSON-lines database.
// A record's key is bucketed shape + dtype + attrs + device + a checksum of
// the candidate set, so results go stale (and are ignored) when an op's
// variant space changes. Dispatch (ops::choose_variant) reads it.
#pragma once
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ops/core/op.h"
#include "runtimes/runtime.h"

namespace kgen::ops {

// Each dim rounded up to a power of two: problems in one bucket share a tuned choice.
std::vector<int64_t> bucket_dims(const std::vector<int64_t>& dims);
// Checksum of a candidate list (hex).
std::string candidates_checksum(const std::vector<Variant>& c);
// The database key: "matmul|1024x1024x1024|f32|trans_b=1|cpu/2t|<checksum>".
std::string tune_key(const Problem& p, const std::string& device_key, const std::vector<Variant>& candidates);
// A device's identity for tuning: target caps name + device description (model; CPU: thread count).
std::string device_key(rt::Device& dev);

// The database file: $KGEN_TUNE_DB, else <XDG cache>/kgen/tune.jsonl.
class TuneDb {
 public:
  explicit TuneDb(std::string path);
  static TuneDb& global();
  const std::string& path() const { return path_; }
  std::optional<Variant> lookup(const std::string& key);
  // Appends a record (last record for a key wins); atomic line append.
  void store(const std::string& key, const Problem& p, const Variant& v, double ms, const std::string& extra_json = "");

 private:
  void load();  // with mu_ held
  std::mutex mu_;
  std::string path_;
  bool loaded_ = false;
  std::vector<std::pair<std::string, std::string>> records_;  // key, variant str
};

struct TuneEntry {
  Variant variant;
  double ms = 0;          // median; +inf when it failed
  bool ok = false;
  std::string message;    // failure reason
};
struct TuneResult {
  std::vector<TuneEntry> entries;
  Variant best;
  double best_ms = 0, heuristic_ms = 0;
  std::string key;
};
struct TuneOptions {
  bool store = true;
  bool check = true;       // check each candidate against the reference before timing
  double min_s = 0.1;      // per candidate
  // Progress: (index, count, entry) after each candidate.
  std::function<void(size_t, size_t, const TuneEntry&)> progress;
};
TuneResult tune(rt::Device& dev, const Problem& p, const TuneOptions& opt = {}, TuneDb* db = nullptr);

}  // namespace kgen::ops
