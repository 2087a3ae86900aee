// The GGUF reader and the llama loader against hostile bytes. Deterministic
// mutations of the staged models and of writer-made files: truncations at
// and around every structural boundary, huge and odd values planted in every
// count, length, type, dimension and offset field, bad alignments, and
// random bit flips and byte runs. Each mutant is parsed from a buffer of
// exactly its size (so a sanitizer sees any read past it): it either loads,
// every tensor's bytes then read end to end and the llama loader run on it,
// or it is refused with a GgufError naming the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "graph/gguf/gguf.h"
#include "graph/llama/load_gguf.h"
#include "tests/graph/gguf_samples.h"

using namespace kgen::graph;
using gguf::GgufError;
using gguf::GgufFile;
using gguf::Value;
namespace samples = kgen::graph::gguf_samples;

namespace {

constexpr const char* kName = "mutant.gguf";

struct Tally {
  int loaded = 0, refused = 0, llama_loaded = 0, llama_refused = 0;
  int total() const { return loaded + refused; }
};

uint8_t touch(const uint8_t* p, uint64_t n) {
  uint8_t x = 0;
  for (uint64_t i = 0; i < n; ++i) x ^= p[i];
  return x;
}

void check_refusal(const GgufError& e) {
  const std::string msg = e.what();
  CHECK_MESSAGE(msg.rfind(std::string(kName) + ": ", 0) == 0, msg);
  CHECK_MESSAGE(msg.size() > std::strlen(kName) + 12, msg);
}

// Parses the `n` bytes at `data` (and, when they parse, loads them as a llama
// model); anything but a GgufError escapes and fails the test.
void try_mutant(const uint8_t* data, size_t n, Tally& tally) {
  std::optional<GgufFile> f;
  try {
    f = GgufFile::parse(data, n, kName);
  } catch (const GgufError& e) {
    check_refusal(e);
    ++tally.refused;
    return;
  }
  ++tally.loaded;
  uint8_t x = 0;
  for (const auto& t : f->tensors()) x ^= touch(t.data, t.bytes);
  try {
    const llama::Checkpoint ck = llama::checkpoint_from_gguf(*f);
    for (const auto& [name, w] : ck.weights) x ^= touch(w.data, w.bytes);
    ++tally.llama_loaded;
  } catch (const GgufError& e) {
    check_refusal(e);
    ++tally.llama_refused;
  }
  volatile uint8_t sink = x;
  (void)sink;
}

// The base file in a heap block of exactly its size (a sanitizer sees any
// read past the end), mutated in place and restored after each try.
class Mutant {
 public:
  explicit Mutant(const std::vector<uint8_t>& base)
      : base_(base), buf_(new uint8_t[base.size()]), tail_(new uint8_t[base.size()]) {
    std::memcpy(buf_.get(), base.data(), base.size());
  }
  size_t size() const { return base_.size(); }

  // The file with `x` written at `at`.
  template <class T> void try_value(uint64_t at, T x, Tally& tally) {
    if (at + sizeof(T) > size()) return;
    std::memcpy(buf_.get() + at, &x, sizeof(T));
    try_mutant(buf_.get(), size(), tally);
    restore(at, sizeof(T));
  }
  // The file's first `n` bytes, placed at the end of a block of the file's size.
  void try_prefix(uint64_t n, Tally& tally) {
    uint8_t* p = tail_.get() + (size() - n);
    std::memcpy(p, base_.data(), n);
    try_mutant(p, n, tally);
  }
  uint8_t* bytes() { return buf_.get(); }
  void restore(uint64_t at, uint64_t n) { std::memcpy(buf_.get() + at, base_.data() + at, n); }

 private:
  const std::vector<uint8_t>& base_;
  std::unique_ptr<uint8_t[]> buf_, tail_;
};

// Where the file's fields live: u32 fields (types, n_dims, the version),
// u64 fields (counts, lengths, dims, offsets), and every boundary between items.
struct Layout {
  std::set<uint64_t> u32_fields, u64_fields, boundaries;
};

uint64_t encoded_size(const Value& v) {
  return std::visit(
      [](const auto& x) -> uint64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return 8 + x.size();
        } else if constexpr (std::is_same_v<T, gguf::Array>) {
          uint64_t n = 12;
          for (const Value& item : x.items) n += encoded_size(item);
          return n;
        } else {
          return std::is_same_v<T, bool> ? 1 : sizeof(T);
        }
      },
      v.v);
}

// Records the fields of the value at `pos`: of an array, its header and its
// first three and last items (a 32000-token array would swamp the rest).
void add_value_layout(const Value& v, uint64_t pos, Layout& l) {
  l.boundaries.insert(pos);
  if (v.get_if<std::string>()) l.u64_fields.insert(pos);
  const auto* a = v.get_if<gguf::Array>();
  if (!a) return;
  l.u32_fields.insert(pos);
  l.u64_fields.insert(pos + 4);
  pos += 12;
  for (size_t i = 0; i < a->items.size(); ++i) {
    if (i < 3 || i + 1 == a->items.size()) add_value_layout(a->items[i], pos, l);
    pos += encoded_size(a->items[i]);
  }
  l.boundaries.insert(pos);
}

Layout layout_of(const GgufFile& f) {
  Layout l;
  l.u32_fields = {4};
  l.u64_fields = {8, 16};
  for (uint64_t p = 0; p <= 24; ++p) l.boundaries.insert(p);
  for (const auto& kv : f.metadata()) {
    l.boundaries.insert(kv.offset);
    l.u64_fields.insert(kv.offset);
    uint64_t pos = kv.offset + 8 + kv.key.size();
    l.u32_fields.insert(pos);
    l.boundaries.insert(pos);
    add_value_layout(kv.value, pos + 4, l);
  }
  for (const auto& t : f.tensors()) {
    uint64_t pos = t.info_offset;
    l.u64_fields.insert(pos);
    pos += 8 + t.name.size();
    l.u32_fields.insert(pos);  // n_dims
    pos += 4;
    for (size_t d = 0; d < t.ne.size(); ++d, pos += 8) l.u64_fields.insert(pos);
    l.u32_fields.insert(pos);  // type
    l.u64_fields.insert(pos + 4);  // offset
    for (uint64_t b : {t.info_offset, t.info_offset + 8 + t.name.size(), pos, pos + 4, pos + 12}) l.boundaries.insert(b);
    l.boundaries.insert(t.file_offset);
    l.boundaries.insert(t.file_offset + t.bytes / 2);
    l.boundaries.insert(t.file_offset + t.bytes);
  }
  l.boundaries.insert(f.data_offset());
  l.boundaries.insert(f.file_size());
  return l;
}

std::vector<uint64_t> interesting_u64(uint64_t file_size, std::mt19937_64& rng) {
  return {0, 1, 2, 31, 32, 33, 255, 0x7fffffff, 0x80000000, 0xffffffff, uint64_t(1) << 32,
          (uint64_t(1) << 61) + 1, uint64_t(1) << 62, 0x7fffffffffffffff, 0x8000000000000000, ~uint64_t(0),
          ~uint64_t(0) - 31, file_size, file_size - 1, file_size + 1, file_size / 8, rng()};
}

std::vector<uint32_t> interesting_u32(std::mt19937_64& rng) {
  return {0, 1, 3, 4, 5, 7, 8, 9, 12, 13, 15, 29, 31, 40, 255, 0x7fffffff, 0x80000000, 0xffffffff, uint32_t(rng())};
}

// Mutates `base`: truncations at and around every boundary, `per_field` of
// the odd values planted in each field (0: all of them), and `n_random`
// random mutations.
Tally fuzz(const std::vector<uint8_t>& base, uint64_t seed, int n_random, size_t per_field = 0) {
  Tally tally;
  const GgufFile f = GgufFile::parse(base.data(), base.size(), "base");
  const Layout l = layout_of(f);
  Mutant m(base);
  std::mt19937_64 rng(seed);
  for (uint64_t b : l.boundaries)
    for (int64_t d : {-1, 0, 1})
      if (int64_t(b) + d >= 0 && uint64_t(int64_t(b) + d) < base.size()) m.try_prefix(uint64_t(int64_t(b) + d), tally);
  auto some = [&](auto values) {
    std::shuffle(values.begin(), values.end(), rng);
    if (per_field && per_field < values.size()) values.resize(per_field);
    return values;
  };
  for (uint64_t at : l.u64_fields)
    for (uint64_t v : some(interesting_u64(base.size(), rng))) m.try_value(at, v, tally);
  for (uint64_t at : l.u32_fields)
    for (uint32_t v : some(interesting_u32(rng))) m.try_value(at, v, tally);
  // Random damage, mostly in the header, metadata and tensor infos.
  const uint64_t head = std::max<uint64_t>(f.data_offset(), 1);
  for (int i = 0; i < n_random; ++i) {
    const uint64_t at = rng() % 8 != 0 ? rng() % head : rng() % base.size();
    switch (rng() % 4) {
      case 0: {  // one bit
        m.bytes()[at] ^= uint8_t(1u << (rng() % 8));
        try_mutant(m.bytes(), m.size(), tally);
        m.restore(at, 1);
        break;
      }
      case 1: {  // a few bits near each other
        const uint64_t n = std::min<uint64_t>(base.size() - at, 64);
        for (int k = 0; k < 1 + int(rng() % 8); ++k) m.bytes()[at + rng() % n] ^= uint8_t(1u << (rng() % 8));
        try_mutant(m.bytes(), m.size(), tally);
        m.restore(at, n);
        break;
      }
      case 2: {  // a run of random bytes
        const uint64_t n = std::min<uint64_t>(base.size() - at, 1 + rng() % 16);
        for (uint64_t k = 0; k < n; ++k) m.bytes()[at + k] = uint8_t(rng());
        try_mutant(m.bytes(), m.size(), tally);
        m.restore(at, n);
        break;
      }
      default:  // a random-magnitude u64
        m.try_value(at, uint64_t(rng()) >> (rng() % 64), tally);
    }
  }
  return tally;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

void report(const std::string& what, const Tally& t) {
  MESSAGE(what << ": " << t.total() << " mutants, " << t.loaded << " parsed (" << t.llama_loaded
               << " loaded as llama, " << t.llama_refused << " refused as llama), " << t.refused << " refused");
  CHECK(t.refused > 0);
  CHECK(t.loaded > 0);
}

}  // namespace

TEST_CASE("mutants of the staged GGUF models load or are refused") {
  const auto start = std::chrono::steady_clock::now();
  int files = 0;
  // The 32000-token vocabulary makes each parse of the second file costly:
  // fewer mutants there.
  struct Plan {
    std::string name;
    int n_random;
    size_t per_field;
  };
  for (const Plan& p : {Plan{"stories260K.gguf", 3000, 0}, Plan{"llama-2-tiny-random.gguf", 300, 6}}) {
    const std::string& name = p.name;
    const std::string path = std::string(KGEN_SHARED_DIR) + "/models/gguf/" + name;
    if (!std::filesystem::exists(path)) {
      MESSAGE("skipped: " << path << " is absent");
      continue;
    }
    ++files;
    const Tally t = fuzz(read_file(path), 7 + uint64_t(files), p.n_random, p.per_field);
    report(name, t);
    CHECK(t.llama_loaded > 0);
  }
  MESSAGE("staged models: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
}

TEST_CASE("mutants of writer-made files load or are refused") {
  {
    const Tally t = fuzz(samples::every_type_writer().bytes(), 101, 3000);
    report("every metadata type", t);
  }
  samples::LlamaSpec s;
  s.matrix_type = 2;  // q4_0
  s.n_layers = 1;
  s.tied = false;
  {
    const Tally t = fuzz(samples::llama_writer(s).bytes(), 102, 3000);
    report("llama q4_0", t);
    CHECK(t.llama_loaded > 0);
  }
  {
    gguf::GgufWriter w = samples::llama_writer(s);
    w.set("general.alignment", Value::of(uint32_t(64)));
    const std::vector<uint8_t> base = w.bytes();
    const GgufFile f = GgufFile::parse(base.data(), base.size(), "base");
    const uint64_t value_at = f.find("general.alignment")->offset + 8 + 17 + 4;
    Mutant m(base);
    Tally t;
    for (uint32_t a : {0u, 1u, 2u, 3u, 16u, 48u, 64u, 128u, 1u << 20, 1u << 31, 0xffffffffu, 0x80000001u})
      m.try_value(value_at, a, t);
    for (uint32_t type = 0; type < 16; ++type) m.try_value(value_at - 4, type, t);
    report("alignment values and types", t);
  }
}
