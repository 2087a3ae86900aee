#include "graph/llama/sampler.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace kgen::graph::llama {

namespace {

template <class T>
[[noreturn]] void bad_option(const char* name, const char* rule, T value) {
  std::ostringstream os;
  os << "sampler option " << name << " must be " << rule << " (got " << value << ")";
  throw std::invalid_argument(os.str());
}

// Most likely first; equal logits keep the lower id first, so the order (and
// with it every cut below) is deterministic.
bool more_likely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Probabilities of sorted candidates at their current logits.
std::vector<double> softmax(const std::vector<Candidate>& c) {
  std::vector<double> p(c.size());
  double sum = 0;
  for (size_t i = 0; i < c.size(); ++i) sum += p[i] = std::exp(double(c[i].logit) - double(c[0].logit));
  for (double& x : p) x /= sum;
  return p;
}

// Keeps the shortest most-likely prefix whose probability reaches `top_p`.
void keep_top_p(std::vector<Candidate>& c, float top_p) {
  std::vector<double> p = softmax(c);
  double cum = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    cum += p[i];
    if (cum >= top_p) {
      c.resize(i + 1);
      return;
    }
  }
}

// Keeps candidates whose probability is at least `min_p` times the top one's.
void keep_min_p(std::vector<Candidate>& c, float min_p) {
  const float threshold = c[0].logit + std::log(min_p);
  size_t keep = 1;
  while (keep < c.size() && c[keep].logit >= threshold) ++keep;
  c.resize(keep);
}

}  // namespace

void validate(const SamplerConfig& c) {
  if (!(c.temperature >= 0) || !std::isfinite(c.temperature)) bad_option("temperature", ">= 0 and finite", c.temperature);
  if (c.top_k < 0) bad_option("top_k", ">= 0 (0: off)", c.top_k);
  if (!(c.top_p > 0 && c.top_p <= 1)) bad_option("top_p", "in (0, 1] (1: off)", c.top_p);
  if (!(c.min_p >= 0 && c.min_p <= 1)) bad_option("min_p", "in [0, 1] (0: off)", c.min_p);
  if (!(c.repeat_penalty > 0) || !std::isfinite(c.repeat_penalty))
    bad_option("repeat_penalty", "> 0 and finite (1: off)", c.repeat_penalty);
  if (c.repeat_last_n < 0) bad_option("repeat_last_n", ">= 0 (0: off)", c.repeat_last_n);
}

Sampler::Sampler(const SamplerConfig& config) : config_(config) {
  validate(config_);
  rng_.seed(config_.seed);
}

void Sampler::reset() {
  history_.clear();
  rng_.seed(config_.seed);
}

void Sampler::accept(int32_t token) {
  if (config_.repeat_last_n == 0) return;
  history_.push_back(token);
  while (history_.size() > size_t(config_.repeat_last_n)) history_.pop_front();
}

// llama.cpp's repetition penalty: once per distinct recent token, positive
// logits are divided and negative ones multiplied, so both become less likely.
void Sampler::apply_penalty(std::vector<Candidate>& cands) const {
  if (config_.repeat_penalty == 1.0f) return;
  std::unordered_set<int32_t> seen(history_.begin(), history_.end());
  for (int32_t id : seen) {
    if (id < 0 || size_t(id) >= cands.size()) continue;
    float& l = cands[size_t(id)].logit;
    l = l <= 0 ? l * config_.repeat_penalty : l / config_.repeat_penalty;
  }
}

std::vector<Candidate> Sampler::candidates(std::span<const float> logits) const {
  if (logits.empty()) throw std::invalid_argument("sampler: no logits to sample from");
  for (size_t i = 0; i < logits.size(); ++i)
    if (std::isnan(logits[i])) throw std::invalid_argument("sampler: logit of token " + std::to_string(i) + " is NaN");
  if (config_.temperature == 0) {
    size_t best = size_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    return {{int32_t(best), logits[best], 1.0f}};
  }
  std::vector<Candidate> c(logits.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = {int32_t(i), logits[i], 0.f};
  apply_penalty(c);  // indexed by id: still in vocabulary order here
  size_t keep = config_.top_k > 0 ? std::min(c.size(), size_t(config_.top_k)) : c.size();
  std::partial_sort(c.begin(), c.begin() + ptrdiff_t(keep), c.end(), more_likely);
  c.resize(keep);
  if (config_.top_p < 1.0f) keep_top_p(c, config_.top_p);
  if (config_.min_p > 0.0f) keep_min_p(c, config_.min_p);
  for (Candidate& x : c) x.logit /= config_.temperature;
  std::vector<double> p = softmax(c);
  for (size_t i = 0; i < c.size(); ++i) c[i].p = float(p[i]);
  return c;
}

int32_t Sampler::sample(std::span<const float> logits) {
  std::vector<Candidate> c = candidates(logits);
  if (c.size() == 1) return c[0].id;
  double total = 0;
  for (const Candidate& x : c) total += x.p;
  const double target = uniform() * total;
  double cum = 0;
  for (const Candidate& x : c) {
    cum += x.p;
    if (target < cum) return x.id;
  }
  return c.back().id;  // rounding left target at the very top
}

// Two 32-bit outputs make a 53-bit fraction (the genrand_res53 recipe), the
// same on every standard library, unlike std::uniform_real_distribution.
double Sampler::uniform() {
  uint32_t a = uint32_t(rng_()) >> 5, b = uint32_t(rng_()) >> 6;
  return (double(a) * 67108864.0 + double(b)) * (1.0 / 9007199254740992.0);
}

}  // namespace kgen::graph::llama
