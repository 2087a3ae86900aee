#include "graph/llama/runner.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "graph/llama/llama_graph.h"

namespace kgen::graph::llama {

Runner::Runner(rt::Device& dev, const Checkpoint& ck, const RunnerOptions& opt) : dev_(dev), ck_(ck) {
  context_ = opt.context > 0 ? opt.context : std::min<int64_t>(ck.config.context > 0 ? ck.config.context : 2048, 4096);
  if (context_ < 1) throw std::invalid_argument("context must be positive");
  chunk_ = std::clamp<int64_t>(opt.prefill_chunk, 1, context_);
}

Runner::~Runner() = default;

PreparedModel& Runner::model_for(int64_t tokens) {
  auto it = models_.find(tokens);
  if (it != models_.end()) return *it->second;
  PrepareOptions so;
  so.state = state_;
  auto s = std::make_unique<PreparedModel>(dev_, build_llama_graph(ck_, tokens, context_), so);
  for (int64_t l = 0; l < ck_.config.n_layers; ++l)
    for (const std::string& name : {k_cache_name(l), v_cache_name(l)}) state_[name] = s->state_buffer(name);
  stats_.prepare_ms += s->stats().prepare_ms;
  stats_.kernels_compiled += s->stats().kernels_compiled;
  stats_.cache_hits += s->stats().cache_hits;
  if (tokens == 1) stats_.decode_launches = s->stats().launches;
  return *models_.emplace(tokens, std::move(s)).first->second;
}

int64_t Runner::step_size(int64_t n, int64_t at) const {
  if (n <= 1) return 1;
  int64_t b = 8;
  while (b < n) b *= 2;
  b = std::min(b, chunk_);
  return at + b <= context_ ? std::max(b, n) : n;
}

void Runner::prepare(int64_t n) {
  for (int64_t done = 0; done < n; done += std::min(chunk_, n - done))
    model_for(step_size(std::min(chunk_, n - done), pos_ + done));
  model_for(1);
}

std::vector<float> Runner::forward(std::span<const int32_t> tokens) {
  const int64_t T = int64_t(tokens.size());
  if (T == 0) throw std::invalid_argument("forward: no tokens");
  if (pos_ + T > context_)
    throw std::length_error("the context of " + std::to_string(context_) + " tokens is full (position " +
                            std::to_string(pos_) + " + " + std::to_string(T) + " new tokens)");
  for (int32_t t : tokens)
    if (t < 0 || t >= ck_.config.vocab) throw std::invalid_argument("token id " + std::to_string(t) + " outside the vocabulary");
  std::vector<float> logits;
  for (int64_t done = 0; done < T; done += std::min(chunk_, T - done))
    logits = step(tokens.subspan(size_t(done), size_t(std::min(chunk_, T - done))));
  return logits;
}

// One prepared step over n <= chunk tokens, padded to its step size.
std::vector<float> Runner::step(std::span<const int32_t> tokens) {
  const int64_t n = int64_t(tokens.size()), B = step_size(n, pos_);
  Tensor ids(ScalarKind::I64, {B}), positions(ScalarKind::I64, {1, B}), pos(ScalarKind::I32, {1}), last(ScalarKind::I64, {1});
  for (int64_t t = 0; t < B; ++t) {
    ids.set(t, t < n ? double(tokens[size_t(t)]) : 0.0);
    positions.set(t, double(pos_ + t));
  }
  pos.set(0, double(pos_));
  last.set(0, double(n - 1));
  std::vector<Tensor> out = model_for(B).run({ids, positions, pos, last});
  pos_ += n;
  const float* logits = reinterpret_cast<const float*>(out.at(0).data());
  return std::vector<float>(logits, logits + ck_.config.vocab);
}

}  // namespace kgen::graph::llama
