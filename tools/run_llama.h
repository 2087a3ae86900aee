// kgen run MODEL.gguf (or a llama2.c .bin with --tokenizer): text generation
// on the llama runner (graph/llama/runner.h), streamed as tokens arrive.
#pragma once
#include <string>

#include "graph/llama/sampler.h"

namespace kgen::tools {

struct LlamaArgs {
  std::string model, tokenizer, device = "cpu", prompt;
  int threads = 0;
  int n_predict = 128;     // tokens to generate (stops early at EOS)
  int64_t context = 0;     // 0: the model's, at most 4096
  graph::llama::SamplerConfig sampling;
  bool json = false, interactive = false, profile = false;
};

bool is_llama_file(const std::string& path);  // .gguf, or llama2.c's .bin
int run_llama(const LlamaArgs& a);

}  // namespace kgen::tools
