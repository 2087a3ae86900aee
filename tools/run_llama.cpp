#include "tools/run_llama.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "graph/llama/load_gguf.h"
#include "graph/llama/load_llama2c.h"
#include "graph/llama/runner.h"
#include "graph/llama/tokenizer.h"
#include "tools/json_writer.h"
#include "tools/run_report.h"

namespace kgen::tools {

namespace {

using namespace graph::llama;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Checkpoint load(const LlamaArgs& a) {
  if (ends_with(a.model, ".gguf")) return load_gguf_checkpoint(a.model);
  if (a.tokenizer.empty()) throw std::invalid_argument("a llama2.c checkpoint needs --tokenizer FILE (tok512.bin, tokenizer.bin)");
  return load_llama2c_checkpoint(a.model, a.tokenizer);
}

struct Generation {
  std::vector<int32_t> tokens;
  std::string text;
  double prefill_ms = 0, decode_ms = 0;
  int64_t prompt_tokens = 0;
};

// Prefills `prompt`, then samples up to n tokens, handing each piece to `emit`.
Generation generate(Runner& r, const Tokenizer& tok, Sampler& s, const std::vector<int32_t>& prompt, int n,
                    const std::function<void(const std::string&)>& emit) {
  Generation g;
  g.prompt_tokens = int64_t(prompt.size());
  r.prepare(g.prompt_tokens);  // before the clocks start
  for (int32_t t : prompt) s.accept(t);
  auto t0 = Clock::now();
  std::vector<float> logits = r.forward(prompt);
  g.prefill_ms = ms_since(t0);
  Utf8Stream utf8;
  int32_t prev = prompt.back();
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    const int32_t next = s.sample(logits);
    s.accept(next);
    if (next == tok.vocab().eos) break;
    g.tokens.push_back(next);
    const std::string piece = utf8.push(tok.piece(next, prev));
    g.text += piece;
    emit(piece);
    prev = next;
    if (i + 1 == n || r.position() >= r.context()) break;
    logits = r.forward(std::span<const int32_t>(&next, 1));
  }
  g.decode_ms = ms_since(t0);
  const std::string rest = utf8.flush();
  g.text += rest;
  emit(rest);
  return g;
}

double per_s(int64_t n, double ms) { return ms > 0 ? double(n) * 1000.0 / ms : 0.0; }

}  // namespace

bool is_llama_file(const std::string& path) { return ends_with(path, ".gguf") || ends_with(path, ".bin"); }

int run_llama(const LlamaArgs& a) {
  validate(a.sampling);
  if (a.n_predict < 0) throw std::invalid_argument("-n must be >= 0");
  const Checkpoint ck = load(a);
  const Tokenizer tok(ck.vocab);
  rt::DeviceOptions dopt;
  dopt.threads = unsigned(a.threads);
  auto dev = rt::create_device(a.device, dopt);
  Runner runner(*dev, ck, {.context = a.context});
  Sampler sampler(a.sampling);
  auto prompt_ids = [&](const std::string& text) {
    std::vector<int32_t> ids = tok.encode(text, ck.vocab.add_bos);
    if (ids.empty()) ids.push_back(ck.vocab.bos);
    return ids;
  };
  const auto emit = [&](const std::string& piece) {
    if (a.json) return;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  if (a.interactive) {
    // One conversation: each line continues the context (after the last
    // generated token, which generate() leaves unfed); a full context starts over.
    std::string line;
    std::vector<int32_t> pending;
    std::printf("> ");
    std::fflush(stdout);
    while (std::getline(std::cin, line)) {
      std::vector<int32_t> ids = pending;
      const std::vector<int32_t> text = tok.encode(line, false);
      ids.insert(ids.end(), text.begin(), text.end());
      if (runner.position() == 0 || runner.position() + int64_t(ids.size()) + a.n_predict > runner.context()) {
        if (runner.position() > 0) std::printf("[the context is full: starting over]\n");
        runner.reset();
        sampler.reset();
        ids = prompt_ids(line);
      }
      const Generation g = generate(runner, tok, sampler, ids, a.n_predict, emit);
      pending.assign(g.tokens.empty() ? 0 : 1, g.tokens.empty() ? 0 : g.tokens.back());
      std::printf("\n> ");
      std::fflush(stdout);
    }
    return 0;
  }
  if (!a.json) std::fputs(a.prompt.c_str(), stdout);
  const Generation g = generate(runner, tok, sampler, prompt_ids(a.prompt), a.n_predict, emit);
  const RunnerStats& st = runner.stats();
  const double prefill = per_s(g.prompt_tokens, g.prefill_ms);
  const double decode = per_s(int64_t(g.tokens.size()) - 1, g.decode_ms);
  if (a.profile) {
    graph::PreparedModel& step = runner.model_for(1);
    std::printf("\ndecode step:\n");
    print_profile(step, step.time_launches(20), decode > 0 ? 1000.0 / decode : 0.0);
    if (g.prompt_tokens > 1) {
      const int64_t b = runner.step_size(std::min(g.prompt_tokens, runner.prefill_chunk()), 0);
      graph::PreparedModel& pre = runner.model_for(b);
      std::printf("\nprefill step of %lld tokens:\n", (long long)b);
      print_profile(pre, pre.time_launches(3), 0.0);
    }
  }
  if (a.json) {
    std::string ids = "[";
    for (size_t i = 0; i < g.tokens.size(); ++i) ids += (i ? ", " : "") + std::to_string(g.tokens[i]);
    JsonObject j;
    j.add("model", a.model).add("device", dev->name()).add("text", g.text).raw("tokens", ids + "]");
    j.add("prompt_tokens", g.prompt_tokens).add("prefill_tok_per_s", prefill).add("decode_tok_per_s", decode);
    j.add("compile_ms", st.prepare_ms).add("kernels_compiled", int64_t(st.kernels_compiled)).add("cache_hits", int64_t(st.cache_hits));
    j.add("decode_launches", int64_t(st.decode_launches));
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("\n\n%s on %s: prompt %lld tokens at %.1f tok/s, %zu generated at %.1f tok/s; prepare %.0f ms (%d kernels compiled, %d cache hits), %d launches per decode step\n",
                a.model.c_str(), dev->description().c_str(), (long long)g.prompt_tokens, prefill, g.tokens.size(), decode,
                st.prepare_ms, st.kernels_compiled, st.cache_hits, st.decode_launches);
  }
  return 0;
}

}  // namespace kgen::tools
