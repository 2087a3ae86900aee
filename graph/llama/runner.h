// Runs a llama checkpoint on a device: a prepared graph per step size (the
// decode step, T = 1, and prefill steps of a few padded sizes) sharing one KV
// cache; each step uploads the token ids and positions, replays its launch
// list and returns the last token's logits.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "graph/llama/checkpoint.h"
#include "graph/prepared_model.h"
#include "runtimes/runtime.h"

namespace kgen::graph::llama {

struct RunnerOptions {
  int64_t context = 0;      // cache rows; 0: the model's context length, at most 4096
  // Prompt tokens per prefill step. A prompt runs in steps of this many; the
  // last step is padded up to a power of two (at least 8), so a handful of
  // prepared steps serve every prompt length. Padding rows write cache rows
  // past the prompt that the next tokens overwrite before anything reads them.
  int64_t prefill_chunk = 128;
};

struct RunnerStats {
  double prepare_ms = 0;      // every prepared step size so far
  int kernels_compiled = 0;   // in this process (not cache hits)
  int cache_hits = 0;
  int decode_launches = 0;    // per decode step
};

class Runner {
 public:
  Runner(rt::Device& dev, const Checkpoint& ck, const RunnerOptions& opt = {});
  ~Runner();

  // Feeds `tokens` at the current position and returns the logits after the
  // last one. Throws std::length_error when the context would overflow.
  std::vector<float> forward(std::span<const int32_t> tokens);
  // Starts over at position 0 (the cache is overwritten as it fills again).
  void reset() { pos_ = 0; }
  int64_t position() const { return pos_; }
  int64_t context() const { return context_; }
  const RunnerStats& stats() const { return stats_; }
  PreparedModel& model_for(int64_t tokens);  // the model of one step size, prepared on first use
  // Prepares the steps that forward() of n tokens, then decoding, will run
  // (so that timing them excludes compiles).
  void prepare(int64_t n);
  // The step size that runs a piece of n prompt tokens at position `at`.
  int64_t step_size(int64_t n, int64_t at) const;
  int64_t prefill_chunk() const { return chunk_; }

 private:
  std::vector<float> step(std::span<const int32_t> tokens);

  rt::Device& dev_;
  const Checkpoint& ck_;
  int64_t context_ = 0, pos_ = 0, chunk_ = 128;
  std::map<int64_t, std::unique_ptr<PreparedModel>> models_;  // by step size
  std::map<std::string, std::shared_ptr<rt::Buffer>> state_;
  RunnerStats stats_;
};

}  // namespace kgen::graph::llama
