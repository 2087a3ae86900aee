// A llama checkpoint from a GGUF file: the config, the vocabulary and the
// weights in place.
#include "graph/llama/load_gguf.h"

#include <cmath>

namespace kgen::graph::llama {

namespace {

using gguf::GgufFile;

// Config dims stay below 2^31 so that products of two never overflow.
constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

// An integer key in [lo, kMaxDim], or `fallback` when absent.
int64_t int_key(const GgufFile& f, const std::string& key, std::optional<int64_t> fallback, int64_t lo = 1) {
  const auto v = f.opt_int(key);
  if (!v) {
    if (!fallback) f.fail_key(key, "absent (a llama model needs it)");
    return *fallback;
  }
  if (*v < lo || *v > kMaxDim)
    f.fail_key(key, std::to_string(*v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(kMaxDim) + "]");
  return *v;
}

// A float key that must be finite and > 0 (>= 0 when zero_ok), or `fallback`.
float float_key(const GgufFile& f, const std::string& key, float fallback, bool zero_ok = false) {
  const auto v = f.opt_float(key);
  if (!v) return fallback;
  if (!std::isfinite(*v) || *v < 0 || (*v == 0 && !zero_ok))
    f.fail_key(key, std::to_string(*v) + (zero_ok ? " is not finite and >= 0" : " is not finite and > 0"));
  return float(*v);
}

void read_attention(const GgufFile& f, LlamaConfig& c) {
  c.n_heads = int_key(f, "llama.attention.head_count", std::nullopt);
  c.n_kv_heads = int_key(f, "llama.attention.head_count_kv", c.n_heads);
  if (c.n_heads % c.n_kv_heads != 0)
    f.fail_key("llama.attention.head_count_kv", std::to_string(c.n_kv_heads) + " does not divide head_count " +
                                                    std::to_string(c.n_heads));
  if (!f.find("llama.attention.key_length") && c.dim % c.n_heads != 0)
    f.fail_key("llama.attention.head_count", std::to_string(c.n_heads) + " does not divide embedding_length " +
                                                 std::to_string(c.dim));
  c.head_dim = int_key(f, "llama.attention.key_length", c.dim / c.n_heads);
  const int64_t v_dim = int_key(f, "llama.attention.value_length", c.head_dim);
  if (v_dim != c.head_dim)
    f.fail_key("llama.attention.value_length", std::to_string(v_dim) + " differs from the key length " +
                                                   std::to_string(c.head_dim) + " (not supported)");
  c.rms_eps = float_key(f, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
}

void read_rope(const GgufFile& f, LlamaConfig& c) {
  c.rope_dims = int_key(f, "llama.rope.dimension_count", c.head_dim);
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0)
    f.fail_key("llama.rope.dimension_count", std::to_string(c.rope_dims) + " is odd or exceeds the head dim " +
                                                 std::to_string(c.head_dim));
  c.rope_base = float_key(f, "llama.rope.freq_base", 10000.f);
  const std::string type = f.opt_string("llama.rope.scaling.type").value_or("linear");
  if (type == "none") return;
  if (type != "linear") f.fail_key("llama.rope.scaling.type", "'" + type + "' is not supported (linear or none)");
  float factor = float_key(f, "llama.rope.scale_linear", 0.f, true);
  factor = float_key(f, "llama.rope.scaling.factor", factor, true);
  c.rope_scale = factor == 0.f ? 1.f : 1.f / factor;
}

void read_experts(const GgufFile& f, LlamaConfig& c) {
  c.n_experts = int_key(f, "llama.expert_count", 0, 0);
  c.n_experts_used = int_key(f, "llama.expert_used_count", 0, 0);
  if (c.n_experts == 0 && c.n_experts_used != 0)
    f.fail_key("llama.expert_used_count", "is " + std::to_string(c.n_experts_used) + " without experts");
  if (c.n_experts > 0 && (c.n_experts_used < 1 || c.n_experts_used > c.n_experts))
    f.fail_key("llama.expert_used_count", std::to_string(c.n_experts_used) + " is not in [1, expert_count = " +
                                              std::to_string(c.n_experts) + "]");
}

void check_architecture(const GgufFile& f) {
  const std::string& arch = f.get_string("general.architecture");
  if (arch != "llama")
    f.fail_key("general.architecture", "is " + gguf::quoted(arch) + "; only 'llama' models are supported");
}

// Trailing ones do not change a GGML shape ({64} and {64, 1} are the same).
std::vector<int64_t> trimmed(std::vector<int64_t> ne) {
  while (!ne.empty() && ne.back() == 1) ne.pop_back();
  return ne;
}

std::string dims_str(const std::vector<int64_t>& ne) {
  std::string s = "{";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

void check_weights(const GgufFile& f, const LlamaConfig& c) {
  // Bounds the list below by the file's size: a block has at least 9 tensors.
  const int64_t per_block = c.n_experts == 0 ? 9 : 10;
  if (c.n_layers > int64_t(f.tensors().size()) / per_block)
    f.fail_key("llama.block_count", std::to_string(c.n_layers) + " blocks need at least " + std::to_string(per_block) +
                                        " tensors each; the file has " + std::to_string(f.tensors().size()));
  for (const ExpectedWeight& e : expected_llama_weights(c)) {
    const gguf::TensorInfo* t = f.find_tensor(e.name);
    if (!t) {
      if (!e.required) continue;
      throw gguf::GgufError(f.path(), gguf::GgufError::kNoOffset,
                            "tensor '" + e.name + "' is missing (expected ne " + dims_str(e.ne) + ")");
    }
    if (trimmed(t->ne) != trimmed(e.ne))
      f.fail_tensor(*t, "ne is " + dims_str(t->ne) + ", expected " + dims_str(e.ne) + " from the config");
    if (!llama_weight_type_supported(t->type))
      f.fail_tensor(*t, std::string("type ") + gguf::ggml_type_info(t->type)->name +
                            " is not supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K..q6_K)");
  }
}

}  // namespace

LlamaConfig read_llama_config(const GgufFile& f) {
  check_architecture(f);
  LlamaConfig c;
  c.dim = int_key(f, "llama.embedding_length", std::nullopt);
  c.n_layers = int_key(f, "llama.block_count", std::nullopt);
  c.ffn_dim = int_key(f, "llama.feed_forward_length", std::nullopt);
  c.context = int_key(f, "llama.context_length", std::nullopt);
  read_attention(f, c);
  read_rope(f, c);
  read_experts(f, c);
  return c;
}

std::vector<ExpectedWeight> expected_llama_weights(const LlamaConfig& c) {
  const int64_t q_dim = c.n_heads * c.head_dim, kv_dim = c.n_kv_heads * c.head_dim;
  std::vector<ExpectedWeight> w = {
      {"token_embd.weight", {c.dim, c.vocab}},
      {"output_norm.weight", {c.dim}},
      {"output.weight", {c.dim, c.vocab}, false},
  };
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.push_back({b + "attn_norm.weight", {c.dim}});
    w.push_back({b + "attn_q.weight", {c.dim, q_dim}});
    w.push_back({b + "attn_k.weight", {c.dim, kv_dim}});
    w.push_back({b + "attn_v.weight", {c.dim, kv_dim}});
    w.push_back({b + "attn_output.weight", {q_dim, c.dim}});
    w.push_back({b + "ffn_norm.weight", {c.dim}});
    if (c.n_experts == 0) {
      w.push_back({b + "ffn_gate.weight", {c.dim, c.ffn_dim}});
      w.push_back({b + "ffn_up.weight", {c.dim, c.ffn_dim}});
      w.push_back({b + "ffn_down.weight", {c.ffn_dim, c.dim}});
    } else {
      w.push_back({b + "ffn_gate_inp.weight", {c.dim, c.n_experts}});
      w.push_back({b + "ffn_gate_exps.weight", {c.dim, c.ffn_dim, c.n_experts}});
      w.push_back({b + "ffn_up_exps.weight", {c.dim, c.ffn_dim, c.n_experts}});
      w.push_back({b + "ffn_down_exps.weight", {c.ffn_dim, c.dim, c.n_experts}});
    }
  }
  return w;
}

bool llama_weight_type_supported(uint32_t id) { return ggml_type_known(id); }

Checkpoint checkpoint_from_gguf(const GgufFile& f) {
  Checkpoint ck;
  ck.path = f.path();
  ck.format = "gguf v" + std::to_string(f.version());
  ck.name = f.opt_string("general.name").value_or("");
  ck.config = read_llama_config(f);
  ck.vocab = read_gguf_vocab(f);
  const int64_t n_tokens = int64_t(ck.vocab.tokens.size());
  ck.config.vocab = int_key(f, "llama.vocab_size", n_tokens);
  if (ck.config.vocab != n_tokens)
    f.fail_key("llama.vocab_size", std::to_string(ck.config.vocab) + " differs from the " +
                                       std::to_string(n_tokens) + " tokens of tokenizer.ggml.tokens");
  check_weights(f, ck.config);
  for (const gguf::TensorInfo& t : f.tensors())
    ck.weights.emplace(t.name, WeightRef{t.name, GgmlType(t.type), t.ne, t.data, size_t(t.bytes)});
  ck.owner = f.owner();
  return ck;
}

Checkpoint load_gguf_checkpoint(const std::string& path) { return checkpoint_from_gguf(GgufFile::open(path)); }

}  // namespace kgen::graph::llama
