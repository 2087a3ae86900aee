// The llama forward pass of T new tokens as a graph/ Graph, so a llama runs
// on the executor that runs ONNX models (fusion, memory plan, replay):
//
//   inputs   tokens i64 [T], positions i64 [1, T] (pos..pos+T-1), pos i32 [1],
//            last i64 [1] (the row whose logits are wanted: a padded prompt
//            chunk's last real token)
//   state    blk.N.k_cache / blk.N.v_cache f32 [Hkv, capacity, D] (graph/
//            Value::state: kept by the PreparedModel, shared between the prefill
//            and the decode graphs)
//   output   logits f32 [1, vocab] of row `last`
//
// Weights are constants over the checkpoint's bytes in place: f32 matrices
// feed Gemm, f16 / bf16 and block-quantized ones kgen.GgmlLinear, which reads
// them in their own type (graph/nodes/ggml.cpp); an embedding table or a norm
// in another type than f32 is converted to f32 once. Nodes are
// ONNX's (Gather, RMSNormalization, Gemm, RotaryEmbedding, Sigmoid, Mul, Add,
// Reshape; Softmax, ReduceMax, Where... for the experts' routing) plus
// kgen.KvAttention (graph/nodes/kv_cache.cpp), whose kernels read pos at run
// time: one prepared graph serves every position.
#pragma once
#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "graph/llama/checkpoint.h"

namespace kgen::graph::llama {

// The state value names of layer `layer`.
std::string k_cache_name(int64_t layer);
std::string v_cache_name(int64_t layer);

// The graph of one step over `tokens` new tokens with caches of `capacity`
// rows. Throws std::invalid_argument naming a weight the graph cannot use
// (its type) or a size out of range.
Graph build_llama_graph(const Checkpoint& ck, int64_t tokens, int64_t capacity);

}  // namespace kgen::graph::llama
