// The sampler chain on hand-built logits: greedy is the argmax, top-k 1 is
// greedy, a seed reproduces its draws, temperature sampling follows the
// softmax (a chi-square test that a correct sampler fails with probability
// below 1e-6), top-p/min-p keep the documented sets, the repetition penalty
// follows llama.cpp's rule, and bad options are refused by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "graph/llama/sampler.h"

using namespace kgen::graph::llama;

namespace {

// Deterministic pseudo-random logits in [-5, 5), independent of the sampler's RNG.
std::vector<float> random_logits(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(s >> 11) / 9007199254740992.0 * 10.0 - 5.0);
  }
  return v;
}

SamplerConfig plain(float temperature) {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_k = 0;
  c.top_p = 1.f;
  c.min_p = 0.f;
  c.repeat_penalty = 1.f;
  return c;
}

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  double mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  double sum = 0;
  for (float l : logits) sum += p.emplace_back(std::exp((l - mx) / temperature));
  for (double& x : p) x /= sum;
  return p;
}

// P(X >= x) for a chi-square variable with an even number of degrees of freedom.
double chi2_sf_even(double x, int dof) {
  double term = 1, sum = 1;
  for (int i = 1; i < dof / 2; ++i) sum += term *= (x / 2) / i;
  return std::exp(-x / 2) * sum;
}

// Pearson's statistic of observed counts against expected probabilities.
double chi2_stat(const std::vector<int>& counts, const std::vector<double>& p, int n) {
  double stat = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    double e = p[i] * n;
    stat += (counts[i] - e) * (counts[i] - e) / e;
  }
  return stat;
}

std::set<int32_t> ids(const std::vector<Candidate>& c) {
  std::set<int32_t> s;
  for (const Candidate& x : c) s.insert(x.id);
  return s;
}

// Logits whose softmax is exactly {1/2, 1/4, 1/8, 1/16, 1/16}, shuffled so that
// id order is not probability order.
const std::vector<float> kHalving = {std::log(0.125f), std::log(0.5f), std::log(0.0625f), std::log(0.25f),
                                     std::log(0.0625f)};

}  // namespace

TEST_CASE("greedy (temperature 0) is the argmax and ignores the penalty") {
  SamplerConfig c = plain(0.f);
  c.repeat_penalty = 5.f;
  Sampler s(c);
  for (uint32_t seed = 0; seed < 20; ++seed) {
    std::vector<float> l = random_logits(1000, seed);
    int32_t best = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
    CHECK(s.sample(l) == best);
    s.accept(best);
    CHECK(s.sample(l) == best);
  }
  CHECK(s.sample(std::vector<float>{1.f, 3.f, 3.f, 2.f}) == 1);  // ties: the lowest id
  auto cands = s.candidates(std::vector<float>{0.f, 7.f});
  REQUIRE(cands.size() == 1);
  CHECK(cands[0].id == 1);
  CHECK(cands[0].p == 1.f);
}

TEST_CASE("top-k 1 is greedy at any temperature") {
  SamplerConfig c = plain(1.5f);
  c.top_k = 1;
  Sampler s(c);
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::vector<float> l = random_logits(300, seed + 100);
    CHECK(s.sample(l) == int32_t(std::max_element(l.begin(), l.end()) - l.begin()));
  }
}

TEST_CASE("a seed reproduces the draws; reset restarts them") {
  SamplerConfig c = plain(1.f);
  c.seed = 1234;
  Sampler a(c), b(c);
  c.seed = 1235;
  Sampler other(c);
  std::vector<float> l(64, 0.f);  // uniform over 64 tokens
  std::vector<int32_t> first, second, third;
  for (int i = 0; i < 200; ++i) {
    first.push_back(a.sample(l));
    second.push_back(b.sample(l));
    third.push_back(other.sample(l));
  }
  CHECK(first == second);
  CHECK(first != third);
  a.reset();
  std::vector<int32_t> again;
  for (int i = 0; i < 200; ++i) again.push_back(a.sample(l));
  CHECK(again == first);
}

TEST_CASE("temperature sampling follows the softmax (chi-square, 1e-6 false-alarm rate)") {
  const std::vector<float> logits = {1.0f, 0.5f, 0.0f, -0.5f, 2.0f, -1.0f, 0.3f, 1.5f, -0.2f};
  const float temperature = 0.7f;
  const int n = 40000;
  Sampler s(plain(temperature));
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[size_t(s.sample(logits))];
  const std::vector<double> p = softmax(logits, temperature);
  // 9 categories: 8 degrees of freedom; smallest expected count is over 1000.
  double stat = chi2_stat(counts, p, n);
  INFO("chi-square " << stat);
  CHECK(chi2_sf_even(stat, 8) > 1e-6);
  // The same test has the power to notice the wrong temperature.
  CHECK(chi2_sf_even(chi2_stat(counts, softmax(logits, 1.0), n), 8) < 1e-6);
  // candidates() reports the same probabilities sample() draws from.
  auto cands = s.candidates(logits);
  REQUIRE(cands.size() == logits.size());
  for (const Candidate& x : cands) CHECK(x.p == doctest::Approx(p[size_t(x.id)]).epsilon(1e-5));
}

TEST_CASE("top-k samples only the k best, in proportion") {
  const std::vector<float> logits = {1.0f, 0.5f, 0.0f, -0.5f, 2.0f, -1.0f, 0.3f, 1.5f, -0.2f};
  SamplerConfig c = plain(1.f);
  c.top_k = 3;  // ids 4, 7, 0
  Sampler s(c);
  const int n = 30000;
  std::vector<int> counts(3, 0);
  const std::vector<int32_t> kept = {4, 7, 0};
  for (int i = 0; i < n; ++i) {
    int32_t id = s.sample(logits);
    auto it = std::find(kept.begin(), kept.end(), id);
    REQUIRE(it != kept.end());
    ++counts[size_t(it - kept.begin())];
  }
  std::vector<double> p = softmax({2.0f, 1.5f, 1.0f}, 1.0);
  CHECK(chi2_sf_even(chi2_stat(counts, p, n), 2) > 1e-6);
}

TEST_CASE("top-p keeps the smallest prefix reaching p, before temperature") {
  auto kept = [](float top_p, float temperature) {
    SamplerConfig c = plain(temperature);
    c.top_p = top_p;
    return ids(Sampler(c).candidates(kHalving));
  };
  CHECK(kept(0.4f, 1.f) == std::set<int32_t>{1});
  CHECK(kept(0.7f, 1.f) == std::set<int32_t>{1, 3});
  CHECK(kept(0.8f, 1.f) == std::set<int32_t>{1, 3, 0});
  CHECK(kept(0.9f, 1.f) == std::set<int32_t>{1, 3, 0, 2});  // equal logits: the lower id first
  CHECK(kept(1.f, 1.f).size() == 5);
  // Cut on the untempered probabilities: at temperature 0.1 the top token
  // alone would exceed 0.7, yet two tokens survive.
  CHECK(kept(0.7f, 0.1f) == std::set<int32_t>{1, 3});
  // Draws never leave the kept set; the survivors are renormalised.
  SamplerConfig c = plain(1.f);
  c.top_p = 0.7f;
  Sampler s(c);
  for (int i = 0; i < 2000; ++i) {
    int32_t id = s.sample(kHalving);
    CHECK((id == 1 || id == 3));
  }
  auto cands = s.candidates(kHalving);
  CHECK(cands[0].p == doctest::Approx(2.0 / 3));
  CHECK(cands[1].p == doctest::Approx(1.0 / 3));
}

TEST_CASE("min-p keeps tokens at least min_p times as likely as the best") {
  auto kept = [](float min_p) {
    SamplerConfig c = plain(1.f);
    c.min_p = min_p;
    return ids(Sampler(c).candidates(kHalving));
  };
  CHECK(kept(0.2f) == std::set<int32_t>{1, 3, 0});  // threshold 0.1
  CHECK(kept(0.3f) == std::set<int32_t>{1, 3});     // threshold 0.15
  CHECK(kept(0.6f) == std::set<int32_t>{1});
  CHECK(kept(1.f) == std::set<int32_t>{1});
  CHECK(kept(0.1f).size() == 5);
  // After top-k: min-p only thins what top-k left.
  SamplerConfig c = plain(1.f);
  c.top_k = 2;
  c.min_p = 0.2f;
  CHECK(ids(Sampler(c).candidates(kHalving)) == std::set<int32_t>{1, 3});
}

TEST_CASE("repetition penalty divides positive and multiplies negative logits") {
  SamplerConfig c = plain(1.f);
  c.repeat_penalty = 2.f;
  c.repeat_last_n = 3;
  Sampler s(c);
  const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f};
  for (int32_t id : {0, 1, 0}) s.accept(id);  // a repeat is penalised once
  auto logit_of = [&](const std::vector<Candidate>& cands, int32_t id) {
    for (const Candidate& x : cands)
      if (x.id == id) return x.logit;
    return std::numeric_limits<float>::quiet_NaN();
  };
  auto cands = s.candidates(logits);
  CHECK(logit_of(cands, 0) == 1.0f);
  CHECK(logit_of(cands, 1) == -2.0f);
  CHECK(logit_of(cands, 2) == 0.5f);
  CHECK(logit_of(cands, 3) == 3.0f);
  // Only the last repeat_last_n tokens count: 0 and 1 have left the window.
  for (int32_t id : {4, 2, 3}) s.accept(id);
  cands = s.candidates(logits);
  CHECK(logit_of(cands, 0) == 2.0f);
  CHECK(logit_of(cands, 1) == -1.0f);
  CHECK(logit_of(cands, 2) == 0.25f);
  CHECK(logit_of(cands, 3) == 1.5f);
  CHECK(logit_of(cands, 4) == 0.0f);
  // The penalty comes before top-k: a penalised leader can drop out.
  SamplerConfig k1 = c;
  k1.top_k = 1;
  Sampler t(k1);
  t.accept(0);
  CHECK(t.sample(std::vector<float>{3.0f, 2.9f, 0.1f}) == 1);
  t.reset();  // forgets the history
  CHECK(t.sample(std::vector<float>{3.0f, 2.9f, 0.1f}) == 0);
}

TEST_CASE("invalid options and logits are refused by name") {
  auto refused = [](auto tweak, const char* option) {
    SamplerConfig c;
    tweak(c);
    CHECK_THROWS_WITH_AS(Sampler{c}, doctest::Contains(option), std::invalid_argument);
  };
  refused([](SamplerConfig& c) { c.temperature = -0.1f; }, "temperature");
  refused([](SamplerConfig& c) { c.temperature = std::nanf(""); }, "temperature");
  refused([](SamplerConfig& c) { c.temperature = INFINITY; }, "temperature");
  refused([](SamplerConfig& c) { c.top_k = -1; }, "top_k");
  refused([](SamplerConfig& c) { c.top_p = 0.f; }, "top_p");
  refused([](SamplerConfig& c) { c.top_p = 1.01f; }, "top_p");
  refused([](SamplerConfig& c) { c.min_p = -0.01f; }, "min_p");
  refused([](SamplerConfig& c) { c.min_p = 1.5f; }, "min_p");
  refused([](SamplerConfig& c) { c.repeat_penalty = 0.f; }, "repeat_penalty");
  refused([](SamplerConfig& c) { c.repeat_last_n = -1; }, "repeat_last_n");
  CHECK_NOTHROW(Sampler{SamplerConfig{}});

  Sampler s(plain(1.f));
  CHECK_THROWS_AS(s.sample(std::vector<float>{}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(s.sample(std::vector<float>{0.f, std::nanf("")}), doctest::Contains("token 1"),
                       std::invalid_argument);
}
