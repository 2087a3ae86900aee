// The llama runner on two tiny random-weight models made by
// scripts/make-test-llama.py (tests/graph/data/llama-{gqa,moe}-tiny), against
// the golden greedy ids of the script's independent float64 NumPy forward pass:
// a dense model with grouped-query attention, a separate output head and
// non-default metadata (rope base 500000, rms eps 1e-6), and a Mixtral-style
// mixture of experts (4 experts, top 2), on every device, by decode steps and
// after a prefill.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/llama/load_gguf.h"
#include "graph/llama/runner.h"
#include "tests/graph/llama_test_util.h"

using namespace kgen;
using namespace kgen::graph::llama;
using kgen::test::argmax;
using kgen::test::greedy;

namespace {

const std::string kData = std::string(KGEN_SOURCE_DIR) + "/tests/graph/data/";

// The golden file: '#' comments, then one "step token margin" line per step,
// margin being the gap between the two largest reference logits.
struct Golden {
  std::vector<int32_t> ids;
  double min_margin = 1e30;
};

Golden read_golden(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  Golden g;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    int64_t step = -1, id = -1;
    double margin = -1;
    s >> step >> id >> margin;
    REQUIRE_MESSAGE((s && step == int64_t(g.ids.size()) && id >= 0 && margin >= 0),
                    path << ":" << n << ": expected 'step token margin', got '" << line << "'");
    g.ids.push_back(int32_t(id));
    g.min_margin = std::min(g.min_margin, margin);
  }
  return g;
}

std::string str(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}




// Greedy from BOS step by step; then a prefill of BOS and the first half of
// the golden ids, which must predict the next one and decode the rest.
void check_golden(const std::string& dir) {
  const std::string model = kData + dir + "/model.gguf";
  // The data ships with the source tree: its absence is a failure, not a skip.
  REQUIRE_MESSAGE(std::filesystem::exists(model), model << " is absent");
  const Golden g = read_golden(kData + dir + "/golden.txt");
  REQUIRE(g.ids.size() == 24);
  // float32 rounding moves these logits by far less than this, so no argmax can flip.
  CHECK(g.min_margin > 0.05);
  const Checkpoint ck = load_gguf_checkpoint(model);
  const size_t half = g.ids.size() / 2;
  for (auto& dev : test::llama_devices()) {
    CAPTURE(dev->name());
    Runner r(*dev, ck, {.context = ck.config.context});
    const std::vector<int32_t> stepwise = greedy(r, ck.vocab.bos, g.ids.size());
    INFO("golden ", str(g.ids));
    INFO("got    ", str(stepwise));
    CHECK(stepwise == g.ids);

    r.reset();
    std::vector<int32_t> prompt = {ck.vocab.bos};
    prompt.insert(prompt.end(), g.ids.begin(), g.ids.begin() + half);
    std::vector<int32_t> after = {argmax(r.forward(prompt))};
    const std::vector<int32_t> rest = greedy(r, after[0], g.ids.size() - half - 1);
    after.insert(after.end(), rest.begin(), rest.end());
    INFO("after the prefill ", str(after));
    CHECK(after == std::vector<int32_t>(g.ids.begin() + half, g.ids.end()));
  }
}

}  // namespace

TEST_CASE("llama tiny models: the metadata the test data was made to exercise is read") {
  const Checkpoint dense = load_gguf_checkpoint(kData + "llama-gqa-tiny/model.gguf");
  CHECK(dense.config.n_heads == 4);
  CHECK(dense.config.n_kv_heads == 2);
  CHECK(dense.config.head_dim == 16);
  CHECK(dense.config.rope_base == 500000.f);
  CHECK(dense.config.rms_eps == 1e-6f);
  CHECK(dense.config.n_experts == 0);
  CHECK(dense.find("output.weight") != nullptr);
  const Checkpoint moe = load_gguf_checkpoint(kData + "llama-moe-tiny/model.gguf");
  CHECK(moe.config.n_experts == 4);
  CHECK(moe.config.n_experts_used == 2);
  CHECK(moe.config.ffn_dim == 96);
  CHECK(moe.config.rope_base == 10000.f);
  CHECK(moe.weight("blk.1.ffn_down_exps.weight").ne == std::vector<int64_t>{96, 64, 4});
  CHECK(moe.vocab.tokens.size() == 512);
}

TEST_CASE("llama tiny dense model (GQA, separate head, rope base 500000): greedy ids equal the golden ones") {
  check_golden("llama-gqa-tiny");
}

TEST_CASE("llama tiny mixture of experts (4 experts, top 2): greedy ids equal the golden ones") {
  check_golden("llama-moe-tiny");
}

TEST_CASE("llama tiny f16 model (weights read as f16 by the products): greedy ids equal the golden ones") {
  check_golden("llama-f16-tiny");
}
