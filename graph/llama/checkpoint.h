// A llama checkpoint as the runner sees it, whatever file it came from (GGUF,
// llama2.c): the hyper-parameters, the vocabulary, and every weight as GGML
// bytes used in place (a memory map kept alive by `owner`; no copy on the CPU).
//
// Weight names are GGUF's (llama.cpp's): token_embd.weight, output_norm.weight,
// output.weight (absent when tied to the embedding), blk.N.attn_norm.weight,
// blk.N.attn_q/k/v/output.weight, blk.N.ffn_norm.weight,
// blk.N.ffn_gate/up/down.weight; MoE: blk.N.ffn_gate_inp.weight and
// blk.N.ffn_gate_exps/up_exps/down_exps.weight. Dims are GGML's `ne`: ne[0]
// is the fastest-varying (a matrix W·x with W rows of length k has ne = {k, rows}).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kgen::graph::llama {

// GGML tensor type ids (the GGUF tensor `type` field).
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30,
};
const char* ggml_type_name(GgmlType t);  // "f32", "q4_K", ...; "type N" for others
int ggml_block_elems(GgmlType t);        // 1 for f32/f16/bf16, 32 or 256 for quantized
int ggml_block_bytes(GgmlType t);        // bytes per block (4, 2, 2, 18, ...)
bool ggml_type_known(uint32_t id);

// One weight: its bytes in place.
struct WeightRef {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;    // GGML order, ne[0] fastest
  const uint8_t* data = nullptr;
  size_t bytes = 0;
  int64_t numel() const;
};

// The llama hyper-parameters (GGUF `llama.*` keys).
struct LlamaConfig {
  int64_t dim = 0;          // embedding_length
  int64_t n_layers = 0;     // block_count
  int64_t n_heads = 0;      // attention.head_count
  int64_t n_kv_heads = 0;   // attention.head_count_kv (= n_heads when absent)
  int64_t head_dim = 0;     // dim / n_heads unless attention.key_length says otherwise
  int64_t ffn_dim = 0;      // feed_forward_length
  int64_t vocab = 0;
  int64_t context = 0;      // context_length
  int64_t rope_dims = 0;    // rope.dimension_count (= head_dim when absent)
  float rope_base = 10000.f;     // rope.freq_base
  float rope_scale = 1.f;        // positions are multiplied by this (1 / rope.scaling.factor; load_gguf.h)
  float rms_eps = 1e-5f;         // attention.layer_norm_rms_epsilon
  int64_t n_experts = 0;         // expert_count (0: dense)
  int64_t n_experts_used = 0;    // expert_used_count
};

// SentencePiece-style vocabulary (GGUF tokenizer.ggml.* or llama2.c tokenizer files).
enum class TokenKind : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
struct Vocab {
  std::vector<std::string> tokens;  // token text as bytes; SPM's U+2581 '▁' marks a space
  std::vector<float> scores;
  std::vector<TokenKind> kinds;     // Normal when the file has no types; <0xNN> tokens are Byte
  int32_t bos = 1, eos = 2, unk = 0;
  int32_t pad = -1;
  bool add_bos = true;
  bool add_space_prefix = true;     // SPM adds "▁" before the first word
};

struct Checkpoint {
  std::string path;
  std::string format;        // "gguf v3", "llama2.c"
  std::string name;          // general.name when present
  LlamaConfig config;
  Vocab vocab;
  std::map<std::string, WeightRef> weights;
  std::shared_ptr<const void> owner;  // keeps the mapping alive

  // The weight called `name`; throws naming the file and the weight when absent.
  const WeightRef& weight(const std::string& name) const;
  const WeightRef* find(const std::string& name) const;
};

}  // namespace kgen::graph::llama
