#include "ops/core/tune.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>

#include "ops/core/executor.h"
#include "runtimes/kernel_cache.h"

namespace kgen::ops {

namespace fs = std::filesystem;

std::vector<int64_t> bucket_dims(const std::vector<int64_t>& dims) {
  std::vector<int64_t> b;
  for (int64_t d : dims) {
    int64_t p = 1;
    while (p < d) p <<= 1;
    b.push_back(d <= 0 ? d : p);
  }
  return b;
}

std::string candidates_checksum(const std::vector<Variant>& c) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the candidates' text forms
  for (const auto& v : c) {
    for (char ch : v.str() + ";") h = (h ^ uint8_t(ch)) * 0x100000001b3ull;
  }
  std::ostringstream s;
  s << std::hex << h;
  return s.str();
}

std::string tune_key(const Problem& p, const std::string& dev, const std::vector<Variant>& candidates) {
  Problem b = p;
  b.dims = bucket_dims(p.dims);
  std::string shape;
  for (size_t i = 0; i < b.dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(b.dims[i]);
  std::string attrs;
  const OpDef* d = find_op(p.op);
  for (const auto& [k, v] : p.attrs) {
    if (d) {
      auto dflt = d->attr_defaults.find(k);
      if (dflt != d->attr_defaults.end() && dflt->second == v) continue;  // the same problem without it
    }
    attrs += (attrs.empty() ? "" : ",") + k + "=" + std::to_string(v);
  }
  return p.op + "|" + shape + "|" + std::string(ir::scalar_name(p.dtype)) + "|" + attrs + "|" + dev + "|" +
         candidates_checksum(candidates);
}

std::string device_key(rt::Device& dev) {
  // The description names the model and, on the CPU, the thread count: a
  // choice tuned for 2 threads is not the 1-thread choice.
  std::string k = dev.caps().name + "/" + dev.description();
  for (char& c : k)
    if (c == '"' || c == '|' || c == '\\' || (unsigned char)c < 0x20) c = '_';
  return k;
}

namespace {

// The value of a string field "name":"..." in one of our own JSON lines (we
// write no escapes: keys and variants are plain ASCII without quotes).
std::string json_field(const std::string& line, const std::string& name) {
  std::string pat = "\"" + name + "\":\"";
  size_t i = line.find(pat);
  if (i == std::string::npos) return {};
  i += pat.size();
  size_t j = line.find('"', i);
  return j == std::string::npos ? std::string() : line.substr(i, j - i);
}

std::string default_db_path() {
  if (const char* p = std::getenv("KGEN_TUNE_DB"); p && *p) return p;
  auto c = rt::CacheConfig::from_env();
  if (c.dir.empty()) return {};
  return (c.dir / "tune.jsonl").string();
}

}  // namespace

TuneDb::TuneDb(std::string path) : path_(std::move(path)) {}

TuneDb& TuneDb::global() {
  static TuneDb db(default_db_path());
  return db;
}

void TuneDb::load() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::string k = json_field(line, "key"), v = json_field(line, "variant");
    if (!k.empty() && line.find("\"variant\":\"") != std::string::npos) records_.emplace_back(k, v);  // ignore torn/garbled lines
  }
}

std::optional<Variant> TuneDb::lookup(const std::string& key) {
  std::lock_guard lock(mu_);
  load();
  for (auto it = records_.rbegin(); it != records_.rend(); ++it)
    if (it->first == key) {
      try {
        return Variant::parse(it->second);
      } catch (const std::exception&) {
        return std::nullopt;  // a hand-edited, malformed record: fall back to the heuristic
      }
    }
  return std::nullopt;
}

void TuneDb::store(const std::string& key, const Problem& p, const Variant& v, double ms, const std::string& extra_json) {
  std::lock_guard lock(mu_);
  load();
  records_.emplace_back(key, v.str());
  if (path_.empty()) return;
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  std::ostringstream line;
  line << "{\"key\":\"" << key << "\",\"problem\":\"" << p.str() << "\",\"variant\":\"" << v.str() << "\",\"ms\":" << ms
       << ",\"time\":" << std::time(nullptr) << extra_json << "}\n";
  // One write(2) with O_APPEND: concurrent tuners never interleave within a line.
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) throw std::runtime_error("cannot open tuning database " + path_);
  std::string s = line.str();
  ssize_t w = ::write(fd, s.data(), s.size());
  ::close(fd);
  if (w != ssize_t(s.size())) throw std::runtime_error("short write to tuning database " + path_);
}

TuneResult tune(rt::Device& dev, const Problem& p, const TuneOptions& opt, TuneDb* db) {
  const OpDef& d = op_for(p);
  TuneResult res;
  auto cands = d.candidates(p, dev.caps());
  if (cands.empty()) throw std::invalid_argument("op '" + p.op + "' has no candidates for " + p.str() + " on " + dev.name());
  res.key = tune_key(p, device_key(dev), cands);
  // Memory-bound ops rotate through input copies that together exceed twice
  // the last-level cache (and 512 MiB), so each run streams from DRAM (with
  // a 480 MiB LLC, 16 copies of a 9 MiB GEMV's weights ran from the LLC, and
  // favoured another variant than DRAM does). So do
  // problems of ops that are not always memory-bound but are here: under 8
  // flops per byte (a CPU core's balance is ~250 GFLOP/s over ~40 GB/s),
  // such as matmul's GEMVs. Timed from the cache, the bf16 GEMV's best
  // variant ran 1.6x faster than from DRAM, where another one was best.
  int rotate = 1;
  const bool low_intensity = d.flops && d.bytes && d.flops(p) < 8.0 * d.bytes(p);
  if (d.memory_bound || low_intensity) {
    // Whole sets (inputs and outputs) rotate: what evicts a set is the
    // others' traffic, and counting inputs alone made ~100 copies of a
    // dequantize's 9 MiB input with its 64 MiB output each (7 GiB).
    double bytes = 0;
    for (const auto& t : d.inputs(p)) bytes += double(t.bytes);
    for (const auto& t : d.outputs(p)) bytes += double(t.bytes);
    const double beyond = std::max(512.0 * (1 << 20), 2.0 * double(dev.caps().llc_bytes));
    rotate = int(std::clamp(std::ceil(beyond / std::max(bytes, 1.0)), 1.0, 256.0));
  }
  // The heuristic's variant is timed too, where the op's candidates omit
  // it, so the result says how far it is from the best. (The key stays
  // that of the op's candidates, which dispatch computes; a winning
  // heuristic not among them is what dispatch runs untuned anyway.)
  Variant heur = d.heuristic(p, dev.caps());
  if (std::find(cands.begin(), cands.end(), heur) == cands.end()) cands.push_back(heur);
  double best = std::numeric_limits<double>::infinity();
  // The inputs (random data, and the rotating copies) are the same for every
  // candidate: made once, on first use. Remaking them per candidate took
  // most of a quantized GEMV's tuning (16 copies of 9-12 MB of packed blocks).
  std::vector<DeviceTensors> sets;
  for (size_t i = 0; i < cands.size(); ++i) {
    TuneEntry e;
    e.variant = cands[i];
    e.ms = std::numeric_limits<double>::infinity();
    try {
      bool ok = true;
      if (opt.check) {
        // Correctness on a reduced copy would miss edge tiles of this shape:
        // check the real problem (once per candidate).
        OpCheck c = check_op(dev, p, cands[i], 7);
        if (!c.ok) {
          ok = false;
          e.message = c.message;
        }
      }
      if (ok) {
        PreparedPlan pp = prepare(dev, p, cands[i]);
        if (sets.empty()) sets = rotating_inputs(dev, p, rotate);
        e.ms = time_op(dev, pp, sets, 3, opt.min_s);
        e.ok = true;
      }
    } catch (const std::exception& ex) {
      e.message = ex.what();
    }
    if (e.ok && e.ms < best) {
      best = e.ms;
      res.best = e.variant;
    }
    if (e.ok && e.variant == heur) res.heuristic_ms = e.ms;
    res.entries.push_back(e);
    if (opt.progress) opt.progress(i, cands.size(), res.entries.back());
  }
  if (!std::isfinite(best)) throw std::runtime_error("tuning " + p.str() + ": no candidate ran correctly");
  res.best_ms = best;
  if (opt.store) {
    std::ostringstream extra;
    extra << ",\"candidates\":" << cands.size() << ",\"heuristic_ms\":" << res.heuristic_ms;
    (db ? *db : TuneDb::global()).store(res.key, p, res.best, best, extra.str());
  }
  return res;
}

}  // namespace kgen::ops
