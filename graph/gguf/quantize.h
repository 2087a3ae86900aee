// Converts a GGUF model's weight matrices to one GGML type, the way
// llama.cpp's quantize tool does without an importance matrix: the same
// reference quantizers (ops/quant, quantize_*_ref, byte for byte), the same
// choice of tensors, every metadata key copied, general.file_type set to
// llama.cpp's LLAMA_FTYPE value and general.quantization_version to 2.
//
// A tensor is converted when its name ends in "weight", it has at least two
// dims (trailing ones not counted), it is not a norm ("_norm.weight") or an
// MoE router ("ffn_gate_inp.weight"), and its rows fit the type's block.
// token_embd.weight and output.weight are converted like the rest. A K-quant
// whose 256-element block does not divide the rows falls back as llama.cpp
// does (Q2_K, Q3_K -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1; Q6_K -> Q8_0); rows
// that fit no block (llama.cpp: f16, or an error) keep their type here.
// Sources are f32, f16 or bf16; a quantized tensor that would be converted
// is an error, not a second quantization.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/gguf/gguf.h"

namespace kgen::graph::gguf {

// A target of `kgen quantize --type`: the GGML type the matrices get and
// the file's general.file_type (llama.cpp's LLAMA_FTYPE_*; a K-quant is its
// uniform "_S" mix, e.g. q4_k -> MOSTLY_Q4_K_S = 14).
struct QuantTarget {
  const char* name;    // "q8_0", "q4_k", "f16"
  uint32_t type;       // GGML tensor type id
  uint32_t file_type;  // LLAMA_FTYPE_*
};
const std::vector<QuantTarget>& quant_targets();
// The target called `name` (case-insensitive; "q4_K" and "q4_k" alike).
std::optional<QuantTarget> parse_quant_target(std::string_view name);

// What became of one tensor.
struct QuantizedTensor {
  std::string name;
  std::vector<int64_t> ne;
  uint32_t from = 0, to = 0;  // GGML type ids; equal when the bytes were copied
  uint64_t bytes_in = 0, bytes_out = 0;
  std::string note;           // why it kept its type or fell back ("" when converted as asked)
};

struct QuantizeReport {
  std::vector<QuantizedTensor> tensors;  // in file order
  uint64_t bytes_in = 0, bytes_out = 0;  // tensor data, before and after
  int converted = 0;                     // tensors whose type changed
};

// The type tensor `t` gets under `target` (its own type when it is kept);
// `note` (optional) receives the reason when it is not `target.type`.
uint32_t quantized_type(const TensorInfo& t, const QuantTarget& target, std::string* note = nullptr);

// Adds `in`'s metadata and tensors, converted, to `out` (which should be
// empty). Throws GgufError naming the tensor for a quantized source or a
// non-finite weight.
QuantizeReport quantize_gguf(const GgufFile& in, const QuantTarget& target, GgufWriter& out);

// Reads `in_path`, converts it and writes `out_path` (which must not be the
// input file).
QuantizeReport quantize_gguf_file(const std::string& in_path, const std::string& out_path, const QuantTarget& target);

}  // namespace kgen::graph::gguf
