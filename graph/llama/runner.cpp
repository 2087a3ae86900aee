#include "graph/llama/runner.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "graph/llama/llama_graph.h"

namespace kgen::graph::llama {

Runner::Runner(rt::Device& dev, const Checkpoint& ck, const RunnerOptions& opt) : dev_(dev), ck_(ck) {
  context_ = opt.context > 0 ? opt.context : std::min<int64_t>(ck.config.context > 0 ? ck.config.context : 2048, 4096);
  if (context_ < 1) throw std::invalid_argument("context must be positive");
}

Runner::~Runner() = default;

Session& Runner::session(int64_t tokens) {
  auto it = sessions_.find(tokens);
  if (it != sessions_.end()) return *it->second;
  SessionOptions so;
  so.state = state_;
  auto s = std::make_unique<Session>(dev_, build_llama_graph(ck_, tokens, context_), so);
  for (int64_t l = 0; l < ck_.config.n_layers; ++l)
    for (const std::string& name : {k_cache_name(l), v_cache_name(l)}) state_[name] = s->state_buffer(name);
  stats_.prepare_ms += s->stats().prepare_ms;
  stats_.kernels_compiled += s->stats().kernels_compiled;
  stats_.cache_hits += s->stats().cache_hits;
  if (tokens == 1) stats_.decode_launches = s->stats().launches;
  return *sessions_.emplace(tokens, std::move(s)).first->second;
}

std::vector<float> Runner::forward(std::span<const int32_t> tokens) {
  const int64_t T = int64_t(tokens.size());
  if (T == 0) throw std::invalid_argument("forward: no tokens");
  if (pos_ + T > context_)
    throw std::length_error("the context of " + std::to_string(context_) + " tokens is full (position " +
                            std::to_string(pos_) + " + " + std::to_string(T) + " new tokens)");
  const int64_t vocab = ck_.config.vocab;
  Tensor ids(ScalarKind::I64, {T}), positions(ScalarKind::I64, {1, T}), pos(ScalarKind::I32, {1});
  for (int64_t t = 0; t < T; ++t) {
    if (tokens[size_t(t)] < 0 || tokens[size_t(t)] >= vocab)
      throw std::invalid_argument("token id " + std::to_string(tokens[size_t(t)]) + " outside the vocabulary");
    ids.set(t, double(tokens[size_t(t)]));
    positions.set(t, double(pos_ + t));
  }
  pos.set(0, double(pos_));
  std::vector<Tensor> out = session(T).run({ids, positions, pos});
  pos_ += T;
  const float* logits = reinterpret_cast<const float*>(out.at(0).data()) + (T - 1) * vocab;
  return std::vector<float>(logits, logits + vocab);
}

}  // namespace kgen::graph::llama
