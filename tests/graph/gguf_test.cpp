// The GGUF reader and writer and the llama checkpoint loader: the staged
// models against facts from shared/models/SOURCES.md (2.1, 2.2) and from an
// independent reader (gguf-py 0.19: key offsets, first values, float64 sums);
// writer -> reader round trips of every metadata type and several tensor
// types; malformed files refused with the file, the offset and the reason;
// llama configs and weights checked against each other.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <unistd.h>

#include "graph/gguf/gguf.h"
#include "graph/llama/load_gguf.h"
#include "ops/quant/formats.h"
#include "tests/graph/gguf_samples.h"

using namespace kgen::graph;
using gguf::GgufError;
using gguf::GgufFile;
using gguf::Value;
using gguf::ValueType;
namespace samples = kgen::graph::gguf_samples;
namespace fs = std::filesystem;

namespace {

// The staged model `name`, or "" (with a message saying the test is skipped).
std::string shared_model(const std::string& name) {
  const std::string path = std::string(KGEN_SHARED_DIR) + "/models/gguf/" + name;
  if (!fs::exists(path)) {
    MESSAGE("skipped: " << path << " is absent");
    return "";
  }
  return path;
}

template <class T> void poke(std::vector<uint8_t>& b, uint64_t at, T x) {
  REQUIRE(at + sizeof(T) <= b.size());
  std::memcpy(b.data() + at, &x, sizeof(T));
}

GgufFile parse(const std::vector<uint8_t>& b) { return GgufFile::parse(b.data(), b.size(), "mem.gguf"); }

// Parsing `b` throws a GgufError at byte `at` whose message holds every part.
void expect_error(const std::vector<uint8_t>& b, uint64_t at, std::initializer_list<std::string> parts) {
  try {
    parse(b);
    FAIL("parsed; expected an error containing " << *parts.begin());
  } catch (const GgufError& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(e.offset() == at, msg);
    CHECK(msg.rfind("mem.gguf: ", 0) == 0);
    for (const auto& p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, msg << "  (missing '" << p << "')");
  }
}

// Loading `b` as a llama checkpoint throws a GgufError whose message holds every part.
void expect_llama_error(const std::vector<uint8_t>& b, std::initializer_list<std::string> parts) {
  try {
    llama::checkpoint_from_gguf(parse(b));
    FAIL("loaded; expected an error containing " << *parts.begin());
  } catch (const GgufError& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, msg << "  (missing '" << p << "')");
  }
}

// Float64 sum of a tensor's values (f32 or f16), the reference's way of checking bytes.
double sum_of(const gguf::TensorInfo& t) {
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.type == 0) {
      float x;
      std::memcpy(&x, t.data + 4 * i, 4);
      s += x;
    } else {
      uint16_t h;
      std::memcpy(&h, t.data + 2 * i, 2);
      s += kgen::ops::quant::half_to_float(h);
    }
  }
  return s;
}

float f32_at(const uint8_t* p, int64_t i) {
  float x;
  std::memcpy(&x, p + 4 * i, 4);
  return x;
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Bit-exact equality of two values (NaN equals NaN, -0 differs from +0).
bool same(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  if (const auto* x = a.get_if<gguf::Array>()) {
    const auto* y = b.get_if<gguf::Array>();
    if (x->type != y->type || x->items.size() != y->items.size()) return false;
    for (size_t i = 0; i < x->items.size(); ++i)
      if (!same(x->items[i], y->items[i])) return false;
    return true;
  }
  if (const auto* x = a.get_if<float>()) return bits(*x) == bits(*b.get_if<float>());
  if (const auto* x = a.get_if<double>()) return std::memcmp(x, b.get_if<double>(), 8) == 0;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, gguf::Array>) return false;  // handled above
        else return x == *b.get_if<T>();
      },
      a.v);
}

// Where the fields of tensor info `name` live in the file.
struct InfoFields {
  uint64_t n_dims, ne0, type, offset;
};
InfoFields info_fields(const GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  REQUIRE(t);
  const uint64_t n_dims = t->info_offset + 8 + t->name.size();
  return {n_dims, n_dims + 4, n_dims + 4 + 8 * t->ne.size(), n_dims + 8 + 8 * t->ne.size()};
}

// Where the value type and the value of `key` live in the file.
std::pair<uint64_t, uint64_t> kv_fields(const GgufFile& f, const std::string& key) {
  const gguf::KeyValue* kv = f.find(key);
  REQUIRE(kv);
  const uint64_t type_at = kv->offset + 8 + key.size();
  return {type_at, type_at + 4};
}

}  // namespace

TEST_CASE("stories260K.gguf: header, metadata and tensors (SOURCES 2.1, gguf-py)") {
  const std::string path = shared_model("stories260K.gguf");
  if (path.empty()) return;
  const GgufFile f = GgufFile::open(path);
  CHECK(f.version() == 3);
  CHECK(f.file_size() == 1185376);
  CHECK(f.metadata().size() == 19);
  CHECK(f.tensors().size() == 48);
  CHECK(f.alignment() == 32);
  CHECK(f.data_offset() == 14176);
  CHECK(f.find("general.file_type") == nullptr);
  CHECK(f.get_string("general.architecture") == "llama");
  CHECK(f.find("general.architecture")->offset == 10705);
  CHECK(f.find("tokenizer.ggml.scores")->offset == 6470);
  CHECK(f.get_u32("llama.embedding_length") == 64);
  CHECK(f.get_u32("llama.feed_forward_length") == 172);
  CHECK(f.get_f32("llama.attention.layer_norm_rms_epsilon") == 1e-5f);
  CHECK(f.get_u32("tokenizer.ggml.padding_token_id") == 0xFFFFFFFFu);
  CHECK(f.get_array("tokenizer.ggml.tokens").items.size() == 512);

  int64_t params = 0;
  for (const auto& t : f.tensors()) {
    CHECK(t.type == 0);
    CHECK(t.file_offset % 32 == 0);
    CHECK(t.data == f.data() + t.file_offset);
    params += t.numel();
  }
  CHECK(params == 292800);
  const auto& embd = *f.find_tensor("token_embd.weight");
  CHECK(embd.ne == std::vector<int64_t>{64, 512});
  CHECK(embd.file_offset == 14176);
  CHECK(bits(f32_at(embd.data, 0)) == 0xbe96e950u);
  CHECK(bits(f32_at(embd.data, 1)) == 0x3f0fd864u);
  CHECK(sum_of(embd) == doctest::Approx(-752.3677446640068).epsilon(1e-12));
  CHECK(sum_of(*f.find_tensor("output_norm.weight")) == doctest::Approx(115.95276230573654).epsilon(1e-12));
  const auto& last = f.tensors().back();
  CHECK(last.name == "blk.4.ffn_norm.weight");
  CHECK(last.file_offset + last.bytes == f.file_size());
  CHECK(sum_of(last) == doctest::Approx(66.58364748954773).epsilon(1e-12));
  // output.weight is a copy of the embedding (SOURCES: the model ties them).
  const auto& out = *f.find_tensor("output.weight");
  REQUIRE(out.bytes == embd.bytes);
  CHECK(std::memcmp(out.data, embd.data, embd.bytes) == 0);
}

TEST_CASE("stories260K.gguf as a llama checkpoint") {
  const std::string path = shared_model("stories260K.gguf");
  if (path.empty()) return;
  const llama::Checkpoint ck = llama::load_gguf_checkpoint(path);
  CHECK(ck.format == "gguf v3");
  CHECK(ck.name == "llama");
  const auto& c = ck.config;
  CHECK(c.dim == 64);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.head_dim == 8);
  CHECK(c.rope_dims == 8);
  CHECK(c.ffn_dim == 172);
  CHECK(c.context == 2048);
  CHECK(c.vocab == 512);
  CHECK(c.rms_eps == 1e-5f);
  CHECK(c.rope_base == 10000.f);
  CHECK(c.rope_scale == 1.f);
  CHECK(c.n_experts == 0);
  const auto& v = ck.vocab;
  REQUIRE(v.tokens.size() == 512);
  CHECK(v.bos == 1);
  CHECK(v.eos == 2);
  CHECK(v.unk == 0);
  CHECK(v.pad == -1);  // 0xFFFFFFFF in the file
  CHECK(v.add_bos);
  CHECK(v.add_space_prefix);
  CHECK(v.tokens[0] == "<unk>");
  CHECK(v.tokens[3] == "<0x00>");
  CHECK(v.tokens[259] == "\xe2\x96\x81t");
  CHECK(v.tokens[260] == "he");
  CHECK(v.tokens[511] == "\xe2\x80\x8a");
  CHECK(v.scores[260] == -1.f);
  CHECK(v.scores[511] == -252.f);
  CHECK(v.kinds[0] == llama::TokenKind::Unknown);
  CHECK(v.kinds[1] == llama::TokenKind::Control);
  CHECK(v.kinds[3] == llama::TokenKind::Byte);
  CHECK(v.kinds[259] == llama::TokenKind::Normal);
  int n_byte = 0;
  for (auto k : v.kinds) n_byte += k == llama::TokenKind::Byte;
  CHECK(n_byte == 256);
  CHECK(ck.weights.size() == 48);
  REQUIRE(ck.find("output.weight") != nullptr);
  const auto& q = ck.weight("blk.0.attn_q.weight");
  CHECK(q.type == llama::GgmlType::F32);
  CHECK(q.ne == std::vector<int64_t>{64, 64});
  CHECK(q.bytes == 16384);
  CHECK(q.numel() == 4096);
  CHECK(bits(f32_at(q.data, 0)) == 0x3d35d536u);
  CHECK(ck.weight("blk.4.ffn_down.weight").ne == std::vector<int64_t>{172, 64});
  CHECK(ck.owner != nullptr);
  CHECK_THROWS_WITH_AS(ck.weight("blk.5.attn_q.weight"), doctest::Contains("blk.5.attn_q.weight"), std::runtime_error);
}

TEST_CASE("llama-2-tiny-random.gguf: F16 weights and the 32000-token vocabulary (SOURCES 2.2, gguf-py)") {
  const std::string path = shared_model("llama-2-tiny-random.gguf");
  if (path.empty()) return;
  const GgufFile f = GgufFile::open(path);
  CHECK(f.version() == 3);
  CHECK(f.metadata().size() == 18);
  CHECK(f.tensors().size() == 12);
  CHECK(f.data_offset() == 724416);
  CHECK(f.get_u32("general.file_type") == 1);
  CHECK(f.find("tokenizer.ggml.bos_token_id")->offset == 723576);
  int64_t params = 0;
  for (const auto& t : f.tensors()) {
    params += t.numel();
    CHECK(t.type == (t.ne.size() == 1 ? 0u : 1u));  // norms f32, matrices f16
  }
  CHECK(params == 513048);
  CHECK(sum_of(*f.find_tensor("token_embd.weight")) == doctest::Approx(-6.394698202610016).epsilon(1e-12));
  CHECK(sum_of(*f.find_tensor("blk.0.attn_q.weight")) == doctest::Approx(-0.1371760368347168).epsilon(1e-12));
  const auto& out = *f.find_tensor("output.weight");
  CHECK(out.file_offset == 1238560);
  CHECK(sum_of(out) == doctest::Approx(-0.9195126891136169).epsilon(1e-12));

  const llama::Checkpoint ck = llama::checkpoint_from_gguf(f);
  CHECK(ck.name == "LLaMA v2");
  CHECK(ck.config.dim == 8);
  CHECK(ck.config.n_layers == 1);
  CHECK(ck.config.n_heads == 2);
  CHECK(ck.config.n_kv_heads == 2);
  CHECK(ck.config.head_dim == 4);
  CHECK(ck.config.rope_dims == 4);
  CHECK(ck.config.ffn_dim == 32);
  CHECK(ck.config.context == 4096);
  CHECK(ck.config.vocab == 32000);
  CHECK(ck.vocab.tokens.size() == 32000);
  CHECK(ck.vocab.tokens[259] == "\xe2\x96\x81\xe2\x96\x81");
  CHECK(ck.vocab.scores[259] == -1e9f);
  CHECK(ck.vocab.tokens[31999] == "\xe7\xbb\x99");
  CHECK(ck.vocab.scores[31999] == -31740.f);
  CHECK(ck.vocab.kinds[3 + 0x41] == llama::TokenKind::Byte);
  CHECK(ck.vocab.pad == -1);
  CHECK(ck.weight("token_embd.weight").type == llama::GgmlType::F16);
  CHECK(ck.weight("output_norm.weight").type == llama::GgmlType::F32);
  CHECK(ck.weight("output.weight").data == f.data() + 1238560);
}

TEST_CASE("writer -> reader: every metadata type, bit for bit") {
  const std::vector<uint8_t> b = samples::every_type_writer().bytes();
  const GgufFile f = parse(b);
  const auto values = samples::every_value();
  REQUIRE(f.metadata().size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CAPTURE(values[i].first);
    CHECK(f.metadata()[i].key == values[i].first);
    CHECK(same(f.metadata()[i].value, values[i].second));
  }
  CHECK(f.get<uint8_t>("t.u8") == 255);
  CHECK(f.get<int16_t>("t.i16") == -32768);
  CHECK(f.get_u64("t.u64") == std::numeric_limits<uint64_t>::max());
  CHECK(f.get_i64("t.i64") == std::numeric_limits<int64_t>::min());
  CHECK(std::isnan(f.get_f32("t.f32_nan")));
  CHECK(f.get_string("t.string_nul") == std::string("a\0b\xff", 4));
  CHECK(f.get_array("t.array_nested3").items[0].get_if<gguf::Array>()->items[0].get_if<gguf::Array>()->items.size() == 2);
  // A second writer fed from the reader reproduces the file byte for byte.
  gguf::GgufWriter again;
  for (const auto& kv : f.metadata()) again.set(kv.key, kv.value);
  for (const auto& t : f.tensors()) again.add_tensor(t.name, t.type, t.ne, t.data, t.bytes);
  CHECK(again.bytes() == b);
}

TEST_CASE("writer -> reader: tensors of several types, default and custom alignment") {
  for (uint32_t align : {32u, 64u, 1u, 4096u}) {
    CAPTURE(align);
    gguf::GgufWriter w = samples::every_type_writer();
    if (align != 32) w.set("general.alignment", Value::of(align));
    const std::vector<uint8_t> b = w.bytes();
    const GgufFile f = parse(b);
    CHECK(f.alignment() == align);
    CHECK(f.data_offset() % align == 0);
    const std::vector<std::pair<std::string, uint32_t>> expected = {
        {"f32", 0}, {"f16", 1}, {"bf16", 30}, {"q4_0", 2}, {"q8_0", 8}, {"q4_K", 12}, {"q6_K", 14}, {"empty", 0}};
    REQUIRE(f.tensors().size() == expected.size());
    uint64_t seed = 11;
    for (size_t i = 0; i < expected.size(); ++i) {
      const auto& t = f.tensors()[i];
      CAPTURE(t.name);
      CHECK(t.name == expected[i].first);
      CHECK(t.type == expected[i].second);
      CHECK(t.offset % align == 0);
      CHECK(t.bytes == *gguf::tensor_bytes(t.type, t.ne));
      // The bytes are the writer's input (f32 ones were made finite from the same stream).
      if (t.type != 0) {
        const auto want = samples::random_bytes(size_t(t.bytes), seed);
        CHECK(std::memcmp(t.data, want.data(), t.bytes) == 0);
      }
      ++seed;
    }
    CHECK(f.find_tensor("q4_K")->bytes == 144);
    CHECK(f.find_tensor("q6_K")->bytes == 420);
    CHECK(f.find_tensor("q4_0")->bytes == 72);
    CHECK(f.find_tensor("bf16")->ne == std::vector<int64_t>{2, 2, 2, 2});
    CHECK(f.find_tensor("empty")->bytes == 0);
  }
}

TEST_CASE("typed accessors name the key, its type and the type wanted") {
  const std::vector<uint8_t> b = samples::every_type_writer().bytes();
  const GgufFile f = parse(b);
  CHECK_THROWS_WITH_AS(f.get_u32("t.u64"), doctest::Contains("key 't.u64': is u64, expected u32"), GgufError);
  CHECK_THROWS_WITH_AS(f.get_string("t.array_string"), doctest::Contains("is array of string, expected string"),
                       GgufError);
  CHECK_THROWS_WITH_AS(f.get_f32("nope"), doctest::Contains("key 'nope': absent"), GgufError);
  CHECK_THROWS_WITH_AS(f.opt_u32("t.i32"), doctest::Contains("is i32, expected u32"), GgufError);
  CHECK_THROWS_WITH_AS(f.get_int("t.u64"), doctest::Contains("does not fit an int64"), GgufError);
  CHECK_THROWS_WITH_AS(f.get_int("t.f32"), doctest::Contains("expected an integer"), GgufError);
  CHECK_THROWS_WITH_AS(f.get_int("t.bool_true"), doctest::Contains("expected an integer"), GgufError);
  CHECK_THROWS_WITH_AS(f.get_float("t.i8"), doctest::Contains("expected f32 or f64"), GgufError);
  CHECK(!f.opt_u32("nope").has_value());
  CHECK(!f.opt_int("nope").has_value());
  CHECK(f.opt_bool("t.bool_true") == true);
  CHECK(f.get_int("t.u32") == 4000000000);
  CHECK(f.get_int("t.i8") == -128);
  CHECK(f.get_int("t.i64") == std::numeric_limits<int64_t>::min());
  CHECK(f.get_float("t.f64") == 1e300);
  CHECK(f.get_float("t.f32") == 0.0);
  try {
    f.get_u32("t.u64");
  } catch (const GgufError& e) {
    CHECK(e.offset() == f.find("t.u64")->offset);
    CHECK(e.file() == "mem.gguf");
  }
}

TEST_CASE("the writer refuses what a reader would refuse") {
  gguf::GgufWriter w;
  const std::vector<uint8_t> four(4);
  w.add_tensor("a", 0, {1}, four.data(), 4);
  CHECK_THROWS_WITH_AS(w.add_tensor("a", 0, {1}, four.data(), 4), doctest::Contains("added twice"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(w.add_tensor("b", 0, {2}, four.data(), 4), doctest::Contains("8"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(w.add_tensor("c", 99, {1}, four.data(), 4), doctest::Contains("unknown GGML type id 99"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(w.add_tensor("d", 2, {16}, four.data(), 4), doctest::Contains("not a multiple"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(w.add_tensor("e", 0, {1, 1, 1, 1, 1}, four.data(), 4), doctest::Contains("4 dims"),
                       std::invalid_argument);
  gguf::Array mixed;
  mixed.type = ValueType::U8;
  mixed.items = {Value::of(uint8_t(1)), Value::of(int8_t(1))};
  CHECK_THROWS_WITH_AS(w.set("m", Value::of(mixed)), doctest::Contains("holds a i8"), std::invalid_argument);
  w.set("general.alignment", Value::of(uint32_t(48)));
  CHECK_THROWS_WITH_AS(w.bytes(), doctest::Contains("power of two"), std::invalid_argument);
  w.set("general.alignment", Value::of(uint64_t(64)));
  CHECK_THROWS_AS(w.bytes(), std::invalid_argument);
}

TEST_CASE("malformed headers and metadata are refused with the offset and the reason") {
  const std::vector<uint8_t> good = samples::every_type_writer().bytes();
  const GgufFile f = parse(good);
  auto b = good;
  b[0] = 'X';
  expect_error(b, 0, {"not a GGUF file", "'XGUF'"});
  b = good;
  poke<uint32_t>(b, 4, 1);
  expect_error(b, 4, {"version 1 is not supported"});
  poke<uint32_t>(b, 4, 0x03000000);
  expect_error(b, 4, {"big-endian"});
  poke<uint32_t>(b, 4, 4);
  expect_error(b, 4, {"unsupported GGUF version 4"});
  poke<uint32_t>(b, 4, 0);
  expect_error(b, 4, {"unsupported GGUF version 0"});
  b = good;
  poke<uint32_t>(b, 4, 2);  // v2 has v3's layout
  CHECK(parse(b).version() == 2);
  b = good;
  poke<uint64_t>(b, 16, uint64_t(1) << 61);
  expect_error(b, 16, {"metadata count", "cannot fit"});
  b = good;
  poke<uint64_t>(b, 8, ~uint64_t(0));
  expect_error(b, 8, {"tensor count", "cannot fit"});
  b = std::vector<uint8_t>(good.begin(), good.begin() + 10);
  expect_error(b, 8, {"the file ends inside the tensor count"});

  const auto [type_at, value_at] = kv_fields(f, "t.u32");
  b = good;
  poke<uint32_t>(b, type_at, 13);
  expect_error(b, type_at, {"key 't.u32'", "unknown value type 13"});
  const auto [btype_at, bvalue_at] = kv_fields(f, "t.bool_true");
  b = good;
  b[bvalue_at] = 2;
  expect_error(b, bvalue_at, {"key 't.bool_true'", "a bool is 2"});
  const auto [stype_at, svalue_at] = kv_fields(f, "t.string");
  b = good;
  poke<uint64_t>(b, svalue_at, ~uint64_t(0) - 3);
  expect_error(b, svalue_at, {"key 't.string'", "a string claims", "bytes; only"});
  const auto [atype_at, avalue_at] = kv_fields(f, "t.array_u64");
  b = good;
  poke<uint64_t>(b, avalue_at + 4, uint64_t(1) << 60);
  expect_error(b, avalue_at, {"key 't.array_u64'", "an array of", "cannot fit"});
  // Rename key "t.i8" to "t.u8": a duplicate.
  b = good;
  b[f.find("t.i8")->offset + 8 + 2] = 'u';
  expect_error(b, f.find("t.i8")->offset, {"key 't.u8'", "duplicate key"});
}

TEST_CASE("general.alignment must be a u32 power of two") {
  gguf::GgufWriter w = samples::every_type_writer();
  w.set("general.alignment", Value::of(uint32_t(64)));
  const std::vector<uint8_t> good = w.bytes();
  const GgufFile f = parse(good);
  const auto [type_at, value_at] = kv_fields(f, "general.alignment");
  auto b = good;
  poke<uint32_t>(b, value_at, 48);
  expect_error(b, f.find("general.alignment")->offset, {"'general.alignment'", "48 is not a power of two"});
  poke<uint32_t>(b, value_at, 0);
  expect_error(b, f.find("general.alignment")->offset, {"0 is not a power of two"});
  poke<uint32_t>(b, type_at, uint32_t(ValueType::I32));
  poke<int32_t>(b, value_at, 64);
  expect_error(b, f.find("general.alignment")->offset, {"is i32, expected u32"});
}

TEST_CASE("nested arrays deeper than the limit are refused") {
  gguf::Array a;
  a.type = ValueType::U8;
  for (int d = 1; d < gguf::kMaxArrayDepth; ++d) {
    gguf::Array outer;
    outer.type = ValueType::Array;
    outer.items.push_back(Value::of(a));
    a = outer;
  }
  gguf::GgufWriter w;
  w.set("deep", Value::of(a));  // exactly the limit
  std::vector<uint8_t> b = w.bytes();
  CHECK(parse(b).get_array("deep").type == ValueType::Array);
  gguf::Array deeper;
  deeper.type = ValueType::Array;
  deeper.items.push_back(Value::of(a));
  CHECK_THROWS_WITH_AS(w.set("deep", Value::of(deeper)), doctest::Contains("nested too deep"), std::invalid_argument);
  // The same file one level deeper, by hand: the innermost "array of u8, 0
  // items" (after the header, the key, the value type and 7 outer array
  // headers) becomes "array of array, 1 item" followed by "array of u8, 0 items".
  const uint64_t inner = 24 + 12 + 4 + 7 * 12;
  REQUIRE(b[inner] == uint8_t(ValueType::U8));
  poke<uint32_t>(b, inner, uint32_t(ValueType::Array));
  poke<uint64_t>(b, inner + 4, 1);
  b.insert(b.begin() + int64_t(inner + 12), {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_error(b, inner + 12, {"key 'deep'", "nested more than 8 deep"});
}

TEST_CASE("malformed tensor infos are refused with the tensor, the offset and the reason") {
  const std::vector<uint8_t> good = samples::every_type_writer().bytes();
  const GgufFile f = parse(good);
  const InfoFields q4 = info_fields(f, "q4_0");
  auto b = good;
  poke<uint32_t>(b, q4.type, 99);
  expect_error(b, q4.type, {"tensor 'q4_0'", "unknown GGML tensor type id 99"});
  poke<uint32_t>(b, q4.type, 4);  // Q4_2, removed from GGML
  expect_error(b, q4.type, {"tensor 'q4_0'", "type id 4"});
  b = good;
  poke<uint32_t>(b, q4.n_dims, 5);
  expect_error(b, q4.n_dims, {"tensor 'q4_0'", "n_dims = 5"});
  b = good;
  poke<uint64_t>(b, q4.ne0, 48);
  expect_error(b, q4.type, {"tensor 'q4_0'", "ne[0] = 48 is not a multiple of the q4_0 block"});
  b = good;
  poke<uint64_t>(b, q4.ne0, ~uint64_t(0));
  expect_error(b, q4.ne0, {"ne[0] = 18446744073709551615 does not fit an int64"});
  b = good;
  poke<uint64_t>(b, q4.ne0 + 8, uint64_t(1) << 62);  // ne[1]: 64 * 2^62 elements
  expect_error(b, q4.type, {"tensor 'q4_0'", "overflows"});
  b = good;
  poke<uint64_t>(b, q4.ne0 + 8, uint64_t(1) << 40);
  expect_error(b, f.find_tensor("q4_0")->info_offset, {"tensor 'q4_0'", "runs past the end"});
  b = good;
  poke<uint64_t>(b, q4.offset, f.find_tensor("q4_0")->offset + 16);
  expect_error(b, q4.offset, {"tensor 'q4_0'", "not a multiple of the alignment 32"});
  b = good;
  poke<uint64_t>(b, q4.offset, ~uint64_t(0) - 31);
  expect_error(b, f.find_tensor("q4_0")->info_offset, {"tensor 'q4_0'", "runs past the end"});
  // Rename tensor "q8_0" to "q4_0".
  b = good;
  b[f.find_tensor("q8_0")->info_offset + 8 + 1] = '4';
  expect_error(b, f.find_tensor("q8_0")->info_offset, {"tensor 'q4_0'", "duplicate tensor name"});
  // A file cut inside the last tensor's data.
  b = std::vector<uint8_t>(good.begin(), good.begin() + int64_t(f.find_tensor("q6_K")->file_offset + 100));
  expect_error(b, f.find_tensor("q6_K")->info_offset, {"tensor 'q6_K'", "runs past the end"});
  // A file cut right after the tensor infos: the data section is missing.
  b = std::vector<uint8_t>(good.begin(), good.begin() + int64_t(info_fields(f, "empty").offset + 8));
  CHECK(b.size() % 32 != 0);
  expect_error(b, b.size(), {"the file ends before the data section"});
}

TEST_CASE("files that cannot be mapped are refused naming the file") {
  CHECK_THROWS_WITH_AS(GgufFile::open("/nonexistent/x.gguf"), doctest::Contains("/nonexistent/x.gguf: cannot open"),
                       GgufError);
  CHECK_THROWS_WITH_AS(GgufFile::open(fs::temp_directory_path().string()), doctest::Contains("not a regular file"),
                       GgufError);
  const std::string empty = (fs::temp_directory_path() / ("kgen_gguf_empty_" + std::to_string(::getpid()))).string();
  std::ofstream(empty).close();
  CHECK_THROWS_WITH_AS(GgufFile::open(empty), doctest::Contains("empty"), GgufError);
  fs::remove(empty);
  // A written file maps and reads back.
  const std::string path = (fs::temp_directory_path() / ("kgen_gguf_rt_" + std::to_string(::getpid()))).string();
  samples::every_type_writer().write(path);
  {
    const GgufFile f = GgufFile::open(path);
    CHECK(f.tensors().size() == 8);
    CHECK(f.path() == path);
  }
  fs::remove(path);
}

TEST_CASE("GGML type tables agree: gguf, checkpoint.h and ops/quant/formats.h") {
  namespace quant = kgen::ops::quant;
  for (const auto& q : quant::all_formats()) {
    const auto* t = gguf::ggml_type_info(uint32_t(q.format));
    REQUIRE(t);
    CHECK(std::string(t->name) == q.name);
    CHECK(t->block_elems == q.block_elems);
    CHECK(t->block_bytes == q.block_bytes);
  }
  for (uint32_t id = 0; id < 64; ++id) {
    CAPTURE(id);
    if (!llama::ggml_type_known(id)) {
      CHECK(std::string(llama::ggml_type_name(llama::GgmlType(id))) == "type " + std::to_string(id));
      continue;
    }
    const auto t = llama::GgmlType(id);
    const auto* g = gguf::ggml_type_info(id);
    REQUIRE(g);
    CHECK(std::string(llama::ggml_type_name(t)) == g->name);
    CHECK(llama::ggml_block_elems(t) == g->block_elems);
    CHECK(llama::ggml_block_bytes(t) == g->block_bytes);
  }
  int known = 0;
  for (uint32_t id = 0; id < 64; ++id) known += llama::ggml_type_known(id);
  CHECK(known == 13);
  CHECK(gguf::ggml_type_info(4) == nullptr);
  CHECK(gguf::ggml_type_info(31) == nullptr);
  CHECK(std::string(gguf::ggml_type_info(23)->name) == "iq4_xs");
  CHECK_THROWS_AS(llama::ggml_block_bytes(llama::GgmlType(9)), std::invalid_argument);
}

TEST_CASE("llama checkpoints: config, vocabulary and weights from a written file") {
  samples::LlamaSpec s;
  s.matrix_type = 8;  // q8_0
  const llama::Checkpoint ck = llama::checkpoint_from_gguf(parse(samples::llama_writer(s).bytes()));
  CHECK(ck.config.dim == 64);
  CHECK(ck.config.head_dim == 16);
  CHECK(ck.config.rope_dims == 16);
  CHECK(ck.config.rms_eps == 1e-6f);
  CHECK(ck.config.vocab == 40);
  CHECK(ck.find("output.weight") == nullptr);  // tied
  CHECK(ck.weight("blk.1.attn_k.weight").type == llama::GgmlType::Q8_0);
  CHECK(ck.weight("blk.1.attn_k.weight").ne == std::vector<int64_t>{64, 32});
  CHECK(ck.weight("blk.1.attn_k.weight").bytes == 32 * 2 * 34);
  CHECK(ck.vocab.kinds[5] == llama::TokenKind::Byte);
  CHECK(ck.vocab.tokens[12] == "\xe2\x96\x81w12");

  SUBCASE("MoE shapes") {
    s.n_experts = 4;
    s.n_experts_used = 2;
    s.tied = false;
    const auto moe = llama::checkpoint_from_gguf(parse(samples::llama_writer(s).bytes()));
    CHECK(moe.config.n_experts == 4);
    CHECK(moe.weight("blk.0.ffn_gate_exps.weight").ne == std::vector<int64_t>{64, 96, 4});
    CHECK(moe.weight("blk.0.ffn_gate_inp.weight").ne == std::vector<int64_t>{64, 4});
    CHECK(moe.find("output.weight") != nullptr);
  }
  SUBCASE("K-quants") {
    s.dim = 256;
    s.ffn = 256;
    s.n_layers = 1;
    for (uint32_t t : {10u, 11u, 12u, 13u, 14u}) {
      s.matrix_type = t;
      const auto k = llama::checkpoint_from_gguf(parse(samples::llama_writer(s).bytes()));
      CHECK(uint32_t(k.weight("blk.0.ffn_up.weight").type) == t);
    }
  }
  SUBCASE("rope scaling") {
    gguf::GgufWriter w = samples::llama_writer(s);
    w.set("llama.rope.freq_base", Value::of(500000.f));
    w.set("llama.rope.scaling.type", Value::of("linear"));
    w.set("llama.rope.scaling.factor", Value::of(4.f));
    auto c = llama::checkpoint_from_gguf(parse(w.bytes())).config;
    CHECK(c.rope_scale == 0.25f);
    CHECK(c.rope_base == 500000.f);
    w.set("llama.rope.scaling.type", Value::of("none"));
    CHECK(llama::checkpoint_from_gguf(parse(w.bytes())).config.rope_scale == 1.f);
    w.set("llama.rope.scaling.type", Value::of("yarn"));
    expect_llama_error(w.bytes(), {"llama.rope.scaling.type", "'yarn' is not supported"});
  }
}

TEST_CASE("llama checkpoints: wrong models are refused naming the key or tensor") {
  const samples::LlamaSpec s;
  auto with = [&](const std::string& key, Value v) {
    gguf::GgufWriter w = samples::llama_writer(s);
    w.set(key, std::move(v));
    return w.bytes();
  };
  expect_llama_error(with("general.architecture", Value::of("qwen2")),
                     {"key 'general.architecture'", "'qwen2'", "only 'llama'"});
  expect_llama_error(with("general.architecture", Value::of(uint32_t(1))), {"general.architecture", "is u32"});
  expect_llama_error(with("tokenizer.ggml.model", Value::of("gpt2")), {"tokenizer.ggml.model", "'gpt2'"});
  expect_llama_error(with("llama.attention.head_count_kv", Value::of(uint32_t(3))), {"head_count_kv", "does not divide"});
  expect_llama_error(with("llama.block_count", Value::of(int32_t(-1))), {"llama.block_count", "out of range"});
  expect_llama_error(with("llama.embedding_length", Value::of("64")), {"llama.embedding_length", "expected an integer"});
  expect_llama_error(with("llama.rope.dimension_count", Value::of(uint32_t(17))), {"rope.dimension_count", "odd"});
  expect_llama_error(with("llama.vocab_size", Value::of(uint32_t(41))), {"llama.vocab_size", "41"});
  expect_llama_error(with("tokenizer.ggml.eos_token_id", Value::of(uint32_t(40))), {"eos_token_id", "40 is not a token id"});
  expect_llama_error(with("tokenizer.ggml.scores", Value::array_of(std::vector<float>{1.f})), {"scores", "1 entries for 40"});
  expect_llama_error(with("tokenizer.ggml.token_type", Value::array_of(std::vector<int32_t>(40, 9))), {"type 9"});
  expect_llama_error(with("llama.attention.layer_norm_rms_epsilon", Value::of(-1.f)), {"rms_epsilon", "not finite"});
  expect_llama_error(with("llama.expert_used_count", Value::of(uint32_t(2))), {"expert_used_count", "without experts"});
  {
    gguf::GgufWriter w;
    w.set("general.architecture", Value::of("llama"));
    expect_llama_error(w.bytes(), {"llama.embedding_length", "absent"});
  }
  // Shapes: the file says 4 heads of 16, the config 2 heads of 32 (same q
  // dims) but 2 KV heads of 32 -> attn_k should be {64, 64}.
  expect_llama_error(with("llama.attention.head_count", Value::of(uint32_t(2))),
                     {"tensor 'blk.0.attn_k.weight'", "ne is {64, 32}, expected {64, 64}"});
  expect_llama_error(with("llama.block_count", Value::of(uint32_t(3))),
                     {"llama.block_count", "3 blocks need at least 9 tensors each; the file has 20"});
  {
    auto b = samples::llama_writer(s).bytes();
    const GgufFile f = parse(b);
    b[f.find_tensor("blk.1.ffn_up.weight")->info_offset + 8 + 10] = 'q';  // "ffn_uq"
    expect_llama_error(b, {"tensor 'blk.1.ffn_up.weight' is missing", "{64, 96}"});
  }
  {
    gguf::GgufWriter w = samples::llama_writer(s);
    samples::add_random_tensor(w, "output.weight", 24, {64, 40}, 5);  // i8
    expect_llama_error(w.bytes(), {"tensor 'output.weight'", "type i8 is not supported"});
  }
  {
    gguf::GgufWriter w = samples::llama_writer(s);
    samples::add_random_tensor(w, "output.weight", 0, {64, 41}, 5);
    expect_llama_error(w.bytes(), {"tensor 'output.weight'", "ne is {64, 41}, expected {64, 40}"});
  }
}

TEST_CASE("kgen info prints the header, metadata and tensors (text and JSON)") {
  const std::string path = shared_model("stories260K.gguf");
  if (path.empty()) return;
  const fs::path kgen = fs::read_symlink("/proc/self/exe").parent_path() / "../../tools/kgen";
  if (!fs::exists(kgen)) {
    MESSAGE("skipped: no kgen binary at " << kgen.string());
    return;
  }
  auto run = [&](const std::string& args) {
    std::string out;
    FILE* p = ::popen((kgen.string() + " info " + args + " 2>&1").c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    CHECK(::pclose(p) == 0);
    return out;
  };
  const std::string text = run(path);
  CHECK(text.find("GGUF v3, 1185376 bytes, alignment 32, data section at byte 14176") != std::string::npos);
  CHECK(text.find("metadata: 19 keys") != std::string::npos);
  CHECK(text.find("tokenizer.ggml.tokens                    array[string]  [\"<unk>\", \"<s>\", \"</s>\"") !=
        std::string::npos);
  CHECK(text.find(", ...] (512 items)") != std::string::npos);
  CHECK(text.find("blk.4.ffn_down.weight            f32      172 x 64                      44032      1082880") !=
        std::string::npos);
  CHECK(text.find("tensors: 48") != std::string::npos);
  CHECK(text.find("total: 292800 parameters, 1171200 bytes") != std::string::npos);
  const std::string json = run(path + " --json --head 2");
  CHECK(json.find("\"n_tensors\": 48") != std::string::npos);
  CHECK(json.find("\"key\": \"tokenizer.ggml.tokens\", \"type\": \"array\", \"value\": {\"elem_type\": \"string\", "
                  "\"length\": 512, \"head\": [\"<unk>\", \"<s>\"]}") != std::string::npos);
  CHECK(json.find("{\"name\": \"token_embd.weight\", \"type\": \"f32\", \"type_id\": 0, \"ne\": [64, 512], "
                  "\"bytes\": 131072, \"offset\": 0, \"file_offset\": 14176}") != std::string::npos);
  CHECK(json.find("\"parameters\": 292800") != std::string::npos);
}
