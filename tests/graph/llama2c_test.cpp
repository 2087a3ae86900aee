// The llama2.c loader: stories260K.bin's config and weights against values
// read independently with NumPy, the tokenizer file's token kinds, the
// version-1 layout and a separate classifier on rewritten copies, and clear
// errors for truncated, oversized and mismatched files.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "graph/llama/load_llama2c.h"

using namespace kgen::graph::llama;
namespace fs = std::filesystem;

namespace {

std::string shared(const std::string& rel) { return std::string(KGEN_SHARED_DIR) + "/models/llama2c/" + rel; }

bool have_files() {
  for (const char* f : {"stories260K.bin", "tok512.bin", "tokenizer.bin"})
    if (!fs::exists(shared(f))) {
      MESSAGE("skipped: " << shared(f) << " is absent");
      return false;
    }
  return true;
}

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file in a per-process temporary folder, removed with the folder.
struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("kgen_llama2c_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir); }
  ~TempDir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::vector<char>& bytes) const {
    std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }
};

float at(const WeightRef& w, int64_t i) {
  REQUIRE(i < w.numel());
  float v;
  std::memcpy(&v, w.data + 4 * i, 4);
  return v;
}

// Element (row, col) of a matrix with ne = {cols, rows}.
float at(const WeightRef& w, int64_t row, int64_t col) { return at(w, row * w.ne[0] + col); }

std::vector<float> floats(const WeightRef& w) {
  std::vector<float> v(size_t(w.numel()));
  std::memcpy(v.data(), w.data, w.bytes);
  return v;
}

void append(std::vector<char>& out, const void* p, size_t n) {
  out.insert(out.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
}
void append(std::vector<char>& out, const WeightRef& w) { append(out, w.data, w.bytes); }

}  // namespace

TEST_CASE("stories260K.bin: config, vocabulary and weights") {
  if (!have_files()) return;
  Checkpoint ck = load_llama2c_checkpoint(shared("stories260K.bin"), shared("tok512.bin"));
  CHECK(ck.format == "llama2.c");
  // SOURCES.md §3.1: dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512, seq_len 512.
  const LlamaConfig& c = ck.config;
  CHECK(c.dim == 64);
  CHECK(c.ffn_dim == 172);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.head_dim == 8);
  CHECK(c.rope_dims == 8);
  CHECK(c.vocab == 512);
  CHECK(c.context == 512);
  CHECK(c.rope_base == 10000.f);
  CHECK(c.rms_eps == 1e-5f);
  CHECK(c.n_experts == 0);

  CHECK(ck.weights.size() == 2 + 9 * 5);
  CHECK(ck.find("output.weight") == nullptr);  // the classifier is the embedding
  const WeightRef& q = ck.weight("blk.1.attn_q.weight");
  CHECK(q.type == GgmlType::F32);
  CHECK(q.ne == std::vector<int64_t>{64, 64});
  CHECK(q.bytes == 64 * 64 * 4);
  CHECK(ck.weight("token_embd.weight").ne == std::vector<int64_t>{64, 512});
  CHECK(ck.weight("blk.2.attn_k.weight").ne == std::vector<int64_t>{64, 32});
  CHECK(ck.weight("blk.2.attn_v.weight").ne == std::vector<int64_t>{64, 32});
  CHECK(ck.weight("blk.0.ffn_gate.weight").ne == std::vector<int64_t>{64, 172});
  CHECK(ck.weight("blk.0.ffn_up.weight").ne == std::vector<int64_t>{64, 172});
  CHECK(ck.weight("blk.0.ffn_down.weight").ne == std::vector<int64_t>{172, 64});
  CHECK(ck.weight("blk.4.ffn_norm.weight").ne == std::vector<int64_t>{64});
  CHECK(ck.weight("output_norm.weight").ne == std::vector<int64_t>{64});

  // Expected values: NumPy over the raw file (np.fromfile(...)[28:].view(float32),
  // split in llama2.c's order, each matrix reshaped to [rows, cols]).
  CHECK(at(ck.weight("token_embd.weight"), 0, 0) == -0.29474878311157227f);
  CHECK(at(ck.weight("token_embd.weight"), 403, 5) == -0.09955767542123795f);
  CHECK(at(ck.weight("token_embd.weight"), 511, 63) == -0.424032598733902f);
  CHECK(at(ck.weight("blk.0.attn_norm.weight"), 0) == 0.9722429513931274f);
  CHECK(at(ck.weight("blk.4.attn_norm.weight"), 63) == 1.0649559497833252f);
  CHECK(at(ck.weight("blk.1.attn_q.weight"), 7, 3) == 0.050209593027830124f);
  CHECK(at(ck.weight("blk.2.attn_k.weight"), 31, 63) == 0.018669389188289642f);
  CHECK(at(ck.weight("blk.3.attn_v.weight"), 0, 1) == 0.08240299671888351f);
  CHECK(at(ck.weight("blk.4.attn_output.weight"), 63, 0) == -0.14539329707622528f);
  CHECK(at(ck.weight("blk.1.ffn_norm.weight"), 10) == 0.7761479020118713f);
  CHECK(at(ck.weight("blk.0.ffn_gate.weight"), 171, 63) == -0.13062290847301483f);
  CHECK(at(ck.weight("blk.4.ffn_down.weight"), 63, 171) == -0.0035068716388195753f);
  CHECK(at(ck.weight("blk.2.ffn_up.weight"), 100, 20) == -0.055701129138469696f);
  CHECK(at(ck.weight("output_norm.weight"), 0) == 2.4583089351654053f);
  CHECK(at(ck.weight("output_norm.weight"), 63) == 1.7077769041061401f);
  double sum = 0;
  for (float v : floats(ck.weight("token_embd.weight"))) sum += v;
  CHECK(sum == doctest::Approx(-752.3677446640068).epsilon(1e-9));

  // The tokenizer file, in SentencePiece spelling.
  const Vocab& v = ck.vocab;
  REQUIRE(v.tokens.size() == 512);
  CHECK(v.bos == 1);
  CHECK(v.eos == 2);
  CHECK(v.unk == 0);
  CHECK(v.tokens[0] == "<unk>");
  CHECK(v.kinds[0] == TokenKind::Unknown);
  CHECK(v.tokens[1] == "<s>");
  CHECK(v.kinds[1] == TokenKind::Control);
  CHECK(v.tokens[2] == "</s>");
  CHECK(v.kinds[2] == TokenKind::Control);
  for (int b = 0; b < 256; ++b) CHECK(v.kinds[size_t(b + 3)] == TokenKind::Byte);
  CHECK(v.tokens[3 + 0x0A] == "<0x0A>");
  CHECK(v.tokens[259] == "\xe2\x96\x81t");  // " t" in the file
  CHECK(v.kinds[259] == TokenKind::Normal);
  CHECK(v.scores[260] == -1.0f);
}

TEST_CASE("the mapping outlives the loader's Checkpoint") {
  if (!have_files()) return;
  WeightRef w;
  std::shared_ptr<const void> owner;
  {
    Checkpoint ck = load_llama2c_checkpoint(shared("stories260K.bin"), shared("tok512.bin"));
    w = ck.weight("output_norm.weight");
    owner = ck.owner;
  }
  CHECK(at(w, 63) == 1.7077769041061401f);
}

TEST_CASE("files whose size disagrees with the header are rejected") {
  if (!have_files()) return;
  TempDir tmp;
  const std::vector<char> model = read_all(shared("stories260K.bin"));
  REQUIRE(model.size() == 1056540);
  const std::string tok = shared("tok512.bin");

  std::vector<char> cut(model.begin(), model.end() - 4);
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("cut.bin", cut), tok),
                    doctest::Contains("has 1056536 bytes but its header (dim 64, hidden_dim 172, n_layers 5, "
                                      "n_heads 8, n_kv_heads 4, vocab_size 512, seq_len 512, shared classifier) "
                                      "implies 1056540 bytes"));
  std::vector<char> longer = model;
  longer.push_back(0);
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("long.bin", longer), tok),
                    doctest::Contains("has 1056541 bytes"));
  std::vector<char> header_only(model.begin(), model.begin() + 28);
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("header.bin", header_only), tok),
                    doctest::Contains("implies 1056540 bytes"));
  std::vector<char> tiny(model.begin(), model.begin() + 10);
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("tiny.bin", tiny), tok),
                    doctest::Contains("10 bytes, too few for the 28-byte header"));
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("empty.bin", {}), tok), doctest::Contains("0 bytes"));
  CHECK_THROWS_WITH(load_llama2c_checkpoint((tmp.dir / "missing.bin").string(), tok),
                    doctest::Contains("cannot open"));

  std::vector<char> bad_heads = model;
  int32_t zero = 0;
  std::memcpy(bad_heads.data() + 12, &zero, 4);  // n_heads
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("heads.bin", bad_heads), tok),
                    doctest::Contains("not positive"));
  std::vector<char> huge = model;
  int32_t big = 1 << 30;
  for (int field : {0, 1, 2}) std::memcpy(huge.data() + 4 * field, &big, 4);  // dim, hidden_dim, n_layers
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("huge.bin", huge), tok), doctest::Contains("beyond 2^64"));
}

TEST_CASE("the tokenizer file must match the model and be well formed") {
  if (!have_files()) return;
  TempDir tmp;
  CHECK_THROWS_WITH(load_llama2c_checkpoint(shared("stories260K.bin"), shared("tokenizer.bin")),
                    doctest::Contains("has 32000 tokens but the model"));
  const std::vector<char> tok = read_all(shared("tok512.bin"));
  std::vector<char> cut(tok.begin(), tok.end() - 2);
  CHECK_THROWS_WITH(load_llama2c_vocab(tmp.write("cut_tok.bin", cut)),
                    doctest::Contains("token 511 has length"));
  std::vector<char> stub(tok.begin(), tok.begin() + 6);
  CHECK_THROWS_WITH(load_llama2c_vocab(tmp.write("stub_tok.bin", stub)),
                    doctest::Contains("token 0 is truncated"));
  CHECK_THROWS_WITH(load_llama2c_vocab(tmp.write("no_tok.bin", {})), doctest::Contains("too few"));
}

TEST_CASE("a separate classifier (negative vocab_size) becomes output.weight") {
  if (!have_files()) return;
  TempDir tmp;
  std::vector<char> model = read_all(shared("stories260K.bin"));
  int32_t neg = -512;
  std::memcpy(model.data() + 20, &neg, 4);
  std::vector<float> wcls(512 * 64);
  for (size_t i = 0; i < wcls.size(); ++i) wcls[i] = float(i) * 0.25f - 7.f;
  append(model, wcls.data(), wcls.size() * 4);
  Checkpoint ck = load_llama2c_checkpoint(tmp.write("wcls.bin", model), shared("tok512.bin"));
  CHECK(ck.config.vocab == 512);
  const WeightRef& out = ck.weight("output.weight");
  CHECK(out.ne == std::vector<int64_t>{64, 512});
  CHECK(floats(out) == wcls);
  CHECK(at(ck.weight("output_norm.weight"), 63) == 1.7077769041061401f);
}

TEST_CASE("version-1 exports load the same weights; version 2 is refused") {
  if (!have_files()) return;
  TempDir tmp;
  Checkpoint v0 = load_llama2c_checkpoint(shared("stories260K.bin"), shared("tok512.bin"));
  const std::vector<char> raw = read_all(shared("stories260K.bin"));
  // export.py's version1_export: magic, version, the 7 fields, the shared
  // flag, zeros up to 256 bytes; then norms first, no RoPE tables.
  auto header = [&](int32_t version) {
    std::vector<char> h(256, 0);
    uint32_t magic = 0x616b3432;
    std::memcpy(h.data(), &magic, 4);
    std::memcpy(h.data() + 4, &version, 4);
    std::memcpy(h.data() + 8, raw.data(), 28);
    h[36] = 1;
    return h;
  };
  std::vector<char> v1 = header(1);
  auto layers = [&](const char* suffix) {
    for (int l = 0; l < 5; ++l) append(v1, v0.weight("blk." + std::to_string(l) + "." + suffix));
  };
  layers("attn_norm.weight");
  layers("ffn_norm.weight");
  append(v1, v0.weight("output_norm.weight"));
  append(v1, v0.weight("token_embd.weight"));
  for (const char* s : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight", "ffn_gate.weight",
                        "ffn_down.weight", "ffn_up.weight"})
    layers(s);
  Checkpoint ck = load_llama2c_checkpoint(tmp.write("v1.bin", v1), shared("tok512.bin"));
  CHECK(ck.format == "llama2.c v1");
  CHECK(ck.config.dim == 64);
  REQUIRE(ck.weights.size() == v0.weights.size());
  for (const auto& [name, w] : v0.weights) {
    INFO(name);
    const WeightRef& other = ck.weight(name);
    CHECK(other.ne == w.ne);
    CHECK(floats(other) == floats(w));
  }
  std::vector<char> cut(v1.begin(), v1.end() - 1);
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("v1cut.bin", cut), shared("tok512.bin")),
                    doctest::Contains("implies"));
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("v2.bin", header(2)), shared("tok512.bin")),
                    doctest::Contains("version 2"));
  CHECK_THROWS_WITH(load_llama2c_checkpoint(tmp.write("v7.bin", header(7)), shared("tok512.bin")),
                    doctest::Contains("unknown \"ak42\" header version 7"));
}
