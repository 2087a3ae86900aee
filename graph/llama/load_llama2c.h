// Karpathy's llama2.c checkpoints: the legacy (v0) .bin with its 7-int32
// header and f32 weights, the version-1 export (magic "ak42", 256-byte
// header, f32), and the llama2.c tokenizer file. Weights stay in a read-only
// memory map and are exposed under GGUF names (see checkpoint.h). Version-2
// exports (llama2.c's own int8 grouping, no GGML layout) are rejected.
#pragma once
#include <string>

#include "graph/llama/checkpoint.h"

namespace kgen::graph::llama {

// Maps `model_path` and reads `tokenizer_path`; throws std::runtime_error
// naming the file and the problem (bad header, size not what the header
// implies, vocabulary size mismatch).
Checkpoint load_llama2c_checkpoint(const std::string& model_path, const std::string& tokenizer_path);

// Reads a llama2.c tokenizer file: int32 max_token_length, then per token f32
// score, int32 length and its bytes. Spaces become SPM's '▁', "<s>"/"</s>"
// are Control, "<unk>" Unknown, <0xNN> Byte; bos 1, eos 2, unk 0.
Vocab load_llama2c_vocab(const std::string& tokenizer_path);

}  // namespace kgen::graph::llama
