// Picks the next token from a row of logits, as llama.cpp's default sampler
// chain does: repetition penalty -> top-k -> top-p -> min-p -> temperature ->
// softmax -> a random draw. The draw comes from a seeded std::mt19937, so a
// seed reproduces a run on every platform; the ids are not llama.cpp's for
// the same seed (its RNG and draw differ).
#pragma once
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

namespace kgen::graph::llama {

// The sampler's options; each has a value that turns it off.
struct SamplerConfig {
  float temperature = 0.8f;     // 0: greedy argmax (no penalty, no randomness)
  int32_t top_k = 40;           // keep the k most likely tokens; 0: off
  float top_p = 0.95f;          // keep the smallest prefix with this much probability; 1: off
  float min_p = 0.05f;          // drop tokens below min_p x the top probability; 0: off
  float repeat_penalty = 1.0f;  // shrink logits of recent tokens; 1: off
  int32_t repeat_last_n = 64;   // how many recent tokens the penalty looks at; 0: off
  uint32_t seed = 42;           // std::mt19937 seed
};

// Throws std::invalid_argument naming the first option outside its range.
void validate(const SamplerConfig& config);

// A token still in the running, with its probability after the chain.
struct Candidate {
  int32_t id;
  float logit;  // after penalty and temperature
  float p;
};

// Samples token ids; remembers accepted tokens for the repetition penalty.
class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);

  // Draws the next token from `logits` (one per vocabulary entry). Does not
  // record it: call accept() with whatever token the runner keeps.
  int32_t sample(std::span<const float> logits);

  // The candidates that survive the chain, most likely first, with the
  // probabilities sample() draws from (greedy: the argmax alone, p = 1).
  std::vector<Candidate> candidates(std::span<const float> logits) const;

  // Records a token (prompt or generated) for the repetition penalty.
  void accept(int32_t token);

  // Forgets the history and restarts the random sequence from the seed.
  void reset();

  const SamplerConfig& config() const { return config_; }

 private:
  void apply_penalty(std::vector<Candidate>& cands) const;
  double uniform();  // in [0, 1), 53 bits

  SamplerConfig config_;
  std::mt19937 rng_;
  std::deque<int32_t> history_;
};

}  // namespace kgen::graph::llama
