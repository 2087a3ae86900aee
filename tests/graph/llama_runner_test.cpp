// The llama runner against the golden greedy tokens of stories260K (computed
// by an independent NumPy forward pass, ../shared/models/SOURCES.md §3.1),
// from both file formats, on the CPU and on Vulkan; prefill equals the same
// tokens fed one at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "graph/llama/load_gguf.h"
#include "graph/llama/load_llama2c.h"
#include "graph/llama/runner.h"
#include "tests/graph/llama_test_util.h"
#include "graph/llama/tokenizer.h"

using namespace kgen;
using namespace kgen::graph::llama;
using kgen::test::argmax;
using kgen::test::greedy;

namespace {

const std::string kModels = std::string(KGEN_SHARED_DIR) + "/models/";

const std::vector<int32_t> kGolden = {
    403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408,
    419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426,
    338, 391, 266, 267, 337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13,  438, 310};




bool have(const std::string& p) {
  if (std::filesystem::exists(p)) return true;
  MESSAGE("skipped: " << p << " is absent");
  return false;
}

}  // namespace

TEST_CASE("llama runner: stories260K greedy from BOS gives the golden tokens (GGUF and llama2.c, every device)") {
  const std::string gguf = kModels + "gguf/stories260K.gguf", bin = kModels + "llama2c/stories260K.bin",
                    tok = kModels + "llama2c/tok512.bin";
  if (!have(gguf) || !have(bin)) return;
  const Checkpoint from_gguf = load_gguf_checkpoint(gguf);
  const Checkpoint from_bin = load_llama2c_checkpoint(bin, tok);
  for (auto& dev : test::llama_devices()) {
    for (const Checkpoint* ck : {&from_gguf, &from_bin}) {
      CAPTURE(dev->name());
      CAPTURE(ck->format);
      Runner r(*dev, *ck, {.context = 128});
      const std::vector<int32_t> got = greedy(r, ck->vocab.bos, kGolden.size());
      CHECK(got == kGolden);
      CHECK(r.position() == int64_t(kGolden.size()));
      if (got == kGolden) {
        const Tokenizer t(ck->vocab);
        std::vector<int32_t> from_bos = {ck->vocab.bos};
        from_bos.insert(from_bos.end(), got.begin(), got.end());
        CHECK(t.decode(from_bos).rfind("Once upon a time, there was a little girl named Lily.", 0) == 0);
      }
    }
  }
}

TEST_CASE("llama runner: a prefill of the prompt equals feeding its tokens one at a time") {
  const std::string gguf = kModels + "gguf/stories260K.gguf";
  if (!have(gguf)) return;
  const Checkpoint ck = load_gguf_checkpoint(gguf);
  auto dev = rt::create_device("cpu");
  const Tokenizer t(ck.vocab);
  const std::vector<int32_t> prompt = t.encode("Once upon a time, a small dog", true);
  REQUIRE(prompt.size() == 12);
  // One step per token; one padded step (12 tokens -> 16); steps of 5 (5, 5, then 2 padded to 5).
  Runner one(*dev, ck, {.context = 64}), all(*dev, ck, {.context = 64}), chunked(*dev, ck, {.context = 64, .prefill_chunk = 5});
  std::vector<float> a;
  for (int32_t tok : prompt) a = one.forward(std::span<const int32_t>(&tok, 1));
  for (Runner* r : {&all, &chunked}) {
    const std::vector<float> b = r->forward(prompt);
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    CHECK(worst < 1e-3);
    CHECK(r->position() == int64_t(prompt.size()));
    // Decoding continues from the prefill's cache (padding rows overwritten) as from the stepwise one.
    Runner again(*dev, ck, {.context = 64});
    for (int32_t tok : prompt) again.forward(std::span<const int32_t>(&tok, 1));
    CHECK(greedy(again, argmax(a), 16) == greedy(*r, argmax(b), 16));
  }
}

TEST_CASE("llama runner: the context overflows with a clear error, and bad token ids are refused") {
  const std::string gguf = kModels + "gguf/stories260K.gguf";
  if (!have(gguf)) return;
  const Checkpoint ck = load_gguf_checkpoint(gguf);
  auto dev = rt::create_device("cpu");
  Runner r(*dev, ck, {.context = 4});
  const std::vector<int32_t> four = {1, 403, 407, 261};
  r.forward(four);
  const int32_t one = 5;
  CHECK_THROWS_AS(r.forward(std::span<const int32_t>(&one, 1)), std::length_error);
  r.reset();
  const int32_t bad = 512;
  CHECK_THROWS_AS(r.forward(std::span<const int32_t>(&bad, 1)), std::invalid_argument);
}

TEST_CASE("llama runner: llama-2-tiny-random (F16, 32000 tokens) loads, runs, and its tokenizer round-trips") {
  const std::string gguf = kModels + "gguf/llama-2-tiny-random.gguf";
  if (!have(gguf)) return;
  const Checkpoint ck = load_gguf_checkpoint(gguf);
  const Tokenizer t(ck.vocab);
  CHECK(t.encode("Hello world", true) == std::vector<int32_t>{1, 15043, 3186});  // the Llama 2 vocabulary's ids
  for (const std::string text : {"Hello world", "  two  spaces\nand a newline", "naïve café, 東京 and 🙂!", "x = 3.14159; y <= 2e-5"}) {
    CAPTURE(text);
    std::vector<int32_t> ids = t.encode(text, true);
    CHECK(t.decode(ids) == text);
  }
  auto dev = rt::create_device("cpu");
  Runner r(*dev, ck, {.context = 32});
  const std::vector<float> logits = r.forward(t.encode("Once upon a time", true));
  REQUIRE(logits.size() == 32000);
  CHECK(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
  // Greedy decoding is deterministic: the same from a fresh runner.
  Runner again(*dev, ck, {.context = 32});
  CHECK(again.forward(t.encode("Once upon a time", true)) == logits);
  CHECK(greedy(r, argmax(logits), 8).size() == 8);
}
