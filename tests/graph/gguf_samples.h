// Small GGUF files built with GgufWriter for the GGUF tests: a llama model of
// any shape and weight type, and a file holding every metadata type.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/gguf/gguf.h"
#include "graph/llama/load_gguf.h"

namespace kgen::graph::gguf_samples {

using gguf::Array;
using gguf::GgufWriter;
using gguf::Value;

// Deterministic random bytes.
inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

// A llama model: its config and the type of its matrices (norms are f32).
struct LlamaSpec {
  int64_t dim = 64, n_layers = 2, n_heads = 4, n_kv_heads = 2, ffn = 96, vocab = 40, context = 128;
  int64_t n_experts = 0, n_experts_used = 0;
  uint32_t matrix_type = 0;  // f32
  bool tied = true;          // no output.weight
  uint64_t seed = 1;
};

// The tokenizer keys of an SPM vocabulary of `n` tokens (3 control tokens, then
// byte tokens, then words).
inline void add_vocab(GgufWriter& w, int64_t n) {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int64_t i = 0; i < n; ++i) {
    char byte_token[8];
    std::snprintf(byte_token, sizeof byte_token, "<0x%02X>", unsigned(i - 3) & 0xff);
    tokens.push_back(i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : i < 10 ? byte_token : "\xe2\x96\x81w" + std::to_string(i));
    scores.push_back(-float(i));
    types.push_back(i == 0 ? 2 : i < 3 ? 3 : i < 10 ? 6 : 1);
  }
  w.set("tokenizer.ggml.model", Value::of("llama"));
  w.set("tokenizer.ggml.tokens", Value::array_of(tokens));
  w.set("tokenizer.ggml.scores", Value::array_of(scores));
  w.set("tokenizer.ggml.token_type", Value::array_of(types));
  w.set("tokenizer.ggml.bos_token_id", Value::of(uint32_t(1)));
  w.set("tokenizer.ggml.eos_token_id", Value::of(uint32_t(2)));
  w.set("tokenizer.ggml.unknown_token_id", Value::of(uint32_t(0)));
}

inline void add_random_tensor(GgufWriter& w, const std::string& name, uint32_t type, std::vector<int64_t> ne,
                              uint64_t seed) {
  const uint64_t bytes = *gguf::tensor_bytes(type, ne);
  std::vector<uint8_t> data = random_bytes(size_t(bytes), seed);
  if (type == 0)  // f32: finite values
    for (size_t i = 0; i + 4 <= data.size(); i += 4) {
      const float x = float(int(data[i]) - 128) / 64.f;
      std::memcpy(&data[i], &x, 4);
    }
  w.add_tensor(name, type, std::move(ne), data.data(), data.size());
}

// A writer holding a well-formed llama model of `s`.
inline GgufWriter llama_writer(const LlamaSpec& s) {
  GgufWriter w;
  w.set("general.architecture", Value::of("llama"));
  w.set("general.name", Value::of("sample llama"));
  w.set("llama.context_length", Value::of(uint32_t(s.context)));
  w.set("llama.embedding_length", Value::of(uint32_t(s.dim)));
  w.set("llama.block_count", Value::of(uint32_t(s.n_layers)));
  w.set("llama.feed_forward_length", Value::of(uint32_t(s.ffn)));
  w.set("llama.attention.head_count", Value::of(uint32_t(s.n_heads)));
  w.set("llama.attention.head_count_kv", Value::of(uint32_t(s.n_kv_heads)));
  w.set("llama.attention.layer_norm_rms_epsilon", Value::of(1e-6f));
  if (s.n_experts) {
    w.set("llama.expert_count", Value::of(uint32_t(s.n_experts)));
    w.set("llama.expert_used_count", Value::of(uint32_t(s.n_experts_used)));
  }
  add_vocab(w, s.vocab);
  llama::LlamaConfig c;
  c.dim = s.dim, c.n_layers = s.n_layers, c.n_heads = s.n_heads, c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.dim / s.n_heads, c.ffn_dim = s.ffn, c.vocab = s.vocab, c.n_experts = s.n_experts;
  uint64_t seed = s.seed;
  for (const auto& e : llama::expected_llama_weights(c)) {
    if (e.name == "output.weight" && s.tied) continue;
    const bool norm = e.ne.size() == 1;
    add_random_tensor(w, e.name, norm ? 0 : s.matrix_type, e.ne, seed++);
  }
  return w;
}

// Every metadata type, nested and empty arrays, and awkward strings.
inline std::vector<std::pair<std::string, Value>> every_value() {
  Array nested;
  nested.type = gguf::ValueType::Array;
  nested.items = {Value::array_of(std::vector<int16_t>{-1, 2}), Value::array_of(std::vector<int16_t>{})};
  Array deep = nested;
  Array deeper;
  deeper.type = gguf::ValueType::Array;
  deeper.items = {Value::of(deep), Value::of(nested)};
  const std::string with_nul("a\0b\xff", 4);
  return {
      {"t.u8", Value::of(uint8_t(255))},
      {"t.i8", Value::of(int8_t(-128))},
      {"t.u16", Value::of(uint16_t(65535))},
      {"t.i16", Value::of(int16_t(-32768))},
      {"t.u32", Value::of(uint32_t(4000000000u))},
      {"t.i32", Value::of(int32_t(-2000000000))},
      {"t.f32", Value::of(-0.0f)},
      {"t.f32_nan", Value::of(std::numeric_limits<float>::quiet_NaN())},
      {"t.bool_true", Value::of(true)},
      {"t.bool_false", Value::of(false)},
      {"t.string", Value::of("\xe2\x96\x81hello")},
      {"t.string_empty", Value::of("")},
      {"t.string_nul", Value::of(with_nul)},
      {"t.u64", Value::of(std::numeric_limits<uint64_t>::max())},
      {"t.i64", Value::of(std::numeric_limits<int64_t>::min())},
      {"t.f64", Value::of(1e300)},
      {"t.f64_inf", Value::of(-std::numeric_limits<double>::infinity())},
      {"t.array_u8", Value::array_of(std::vector<uint8_t>{0, 1, 255})},
      {"t.array_i8", Value::array_of(std::vector<int8_t>{-1, 1})},
      {"t.array_u16", Value::array_of(std::vector<uint16_t>{7})},
      {"t.array_i16", Value::array_of(std::vector<int16_t>{-7, 7})},
      {"t.array_u32", Value::array_of(std::vector<uint32_t>{1, 2, 3})},
      {"t.array_i32", Value::array_of(std::vector<int32_t>{-1, -2})},
      {"t.array_f32", Value::array_of(std::vector<float>{1.5f, -2.25f})},
      {"t.array_bool", Value::array_of(std::vector<bool>{true, false, true})},
      {"t.array_string", Value::array_of(std::vector<std::string>{"", "x", with_nul})},
      {"t.array_u64", Value::array_of(std::vector<uint64_t>{uint64_t(1) << 63})},
      {"t.array_i64", Value::array_of(std::vector<int64_t>{-5})},
      {"t.array_f64", Value::array_of(std::vector<double>{0.1, -0.0})},
      {"t.array_empty", Value::array_of(std::vector<float>{})},
      {"t.array_nested", Value::of(nested)},
      {"t.array_nested3", Value::of(deeper)},
  };
}

// A file with every metadata type and tensors of several types.
inline GgufWriter every_type_writer() {
  GgufWriter w;
  for (auto& [k, v] : every_value()) w.set(k, v);
  add_random_tensor(w, "f32", 0, {5, 3}, 11);
  add_random_tensor(w, "f16", 1, {7}, 12);
  add_random_tensor(w, "bf16", 30, {2, 2, 2, 2}, 13);
  add_random_tensor(w, "q4_0", 2, {64, 2}, 14);
  add_random_tensor(w, "q8_0", 8, {32, 3}, 15);
  add_random_tensor(w, "q4_K", 12, {256, 1}, 16);
  add_random_tensor(w, "q6_K", 14, {256, 2}, 17);
  add_random_tensor(w, "empty", 0, {0, 4}, 18);
  return w;
}

}  // namespace kgen::graph::gguf_samples
