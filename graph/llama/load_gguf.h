// Llama checkpoints from GGUF files (llama.cpp's `llama` architecture): the
// hyper-parameters from `llama.*`, the SentencePiece vocabulary from
// `tokenizer.ggml.*`, and every tensor in place in the file's memory map,
// the llama weights checked against the config. Every problem is a
// gguf::GgufError naming the file, the key or tensor, and its byte offset.
//
// LlamaConfig::rope_scale is the factor positions are multiplied by before
// the rotation (llama.cpp's freq_scale): angle_i(p) = p * rope_scale *
// rope_base^(-2i / rope_dims). For `llama.rope.scaling.type` "linear" (what
// llama.cpp assumes when the type is absent) with `llama.rope.scaling.factor`
// f > 0 (or the older `llama.rope.scale_linear`) it is 1 / f; with no factor,
// f = 0, or type "none" it is 1. Other scaling types are refused.
#pragma once
#include <string>
#include <vector>

#include "graph/gguf/gguf.h"
#include "graph/llama/checkpoint.h"

namespace kgen::graph::llama {

// Maps `path` and reads it as a llama checkpoint.
Checkpoint load_gguf_checkpoint(const std::string& path);
// The same from an already parsed file (the checkpoint shares its owner).
Checkpoint checkpoint_from_gguf(const gguf::GgufFile& file);

// The `llama.*` hyper-parameters, checked for consistency.
LlamaConfig read_llama_config(const gguf::GgufFile& file);
// The `tokenizer.ggml.*` vocabulary (model "llama" only).
Vocab read_gguf_vocab(const gguf::GgufFile& file);

// A weight the llama graph reads: its name and dims (ne order).
struct ExpectedWeight {
  std::string name;
  std::vector<int64_t> ne;
  bool required = true;  // output.weight is optional (tied to token_embd.weight)
};
// Every weight a llama model of config `c` reads (dense or MoE).
std::vector<ExpectedWeight> expected_llama_weights(const LlamaConfig& c);
// The tensor types the llama runner accepts.
bool llama_weight_type_supported(uint32_t ggml_type);

}  // namespace kgen::graph::llama
