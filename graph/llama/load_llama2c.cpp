#include "graph/llama/load_llama2c.h"
#include "graph/mapped_file.h"


#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace kgen::graph::llama {

namespace {

constexpr uint32_t kMagic = 0x616b3432;  // "ak42" as a little-endian uint32
constexpr size_t kLegacyHeaderBytes = 7 * sizeof(int32_t);
constexpr size_t kVersionedHeaderBytes = 256;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("llama2.c '" + path + "': " + what);
}

// The file mapped, or a failure naming it.
MappedFile map_or_fail(const std::string& path) {
  try {
    return map_file(path);
  } catch (const MapError& e) {
    fail(path, e.what());
  }
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Header {
  int32_t dim, hidden, layers, heads, kv_heads, vocab, seq_len;
};

// Where the weights start and how they are laid out.
struct Format {
  Header h{};
  int version = 0;            // 0: legacy, 1: "ak42" version 1
  size_t weights_offset = 0;
  bool shared_classifier = true;
};

std::string describe(const Header& h) {
  return "dim " + std::to_string(h.dim) + ", hidden_dim " + std::to_string(h.hidden) + ", n_layers " +
         std::to_string(h.layers) + ", n_heads " + std::to_string(h.heads) + ", n_kv_heads " +
         std::to_string(h.kv_heads) + ", vocab_size " + std::to_string(h.vocab) + ", seq_len " +
         std::to_string(h.seq_len);
}

Header read_fields(const uint8_t* p) {
  Header h;
  int32_t* f[] = {&h.dim, &h.hidden, &h.layers, &h.heads, &h.kv_heads, &h.vocab, &h.seq_len};
  for (int i = 0; i < 7; ++i) *f[i] = load<int32_t>(p + 4 * i);
  return h;
}

Format read_format(const MappedFile& m, const std::string& path) {
  if (m.size < kLegacyHeaderBytes)
    fail(path, "the file has " + std::to_string(m.size) + " bytes, too few for the " +
                   std::to_string(kLegacyHeaderBytes) + "-byte header");
  Format f;
  if (load<uint32_t>(m.data) != kMagic) {
    f.h = read_fields(m.data);
    f.weights_offset = kLegacyHeaderBytes;
    // The legacy format signals a separate classifier by a negative vocab size.
    f.shared_classifier = f.h.vocab > 0;
    if (f.h.vocab == INT32_MIN) fail(path, "header field vocab_size (offset 20) is " + std::to_string(f.h.vocab));
    if (f.h.vocab < 0) f.h.vocab = -f.h.vocab;
    return f;
  }
  if (m.size < kVersionedHeaderBytes)
    fail(path, "the file has " + std::to_string(m.size) + " bytes, too few for the 256-byte \"ak42\" header");
  f.version = load<int32_t>(m.data + 4);
  if (f.version == 2)
    fail(path, "version 2 exports (llama2.c's int8 groups) are not supported; export with --version 0 or 1");
  if (f.version != 1) fail(path, "unknown \"ak42\" header version " + std::to_string(f.version));
  f.h = read_fields(m.data + 8);
  f.shared_classifier = m.data[8 + kLegacyHeaderBytes] != 0;
  f.weights_offset = kVersionedHeaderBytes;
  if (f.h.vocab <= 0) fail(path, "header field vocab_size (offset 28) is " + std::to_string(f.h.vocab));
  return f;
}

void check_header(const Header& h, const std::string& path) {
  if (h.dim <= 0 || h.hidden <= 0 || h.layers <= 0 || h.heads <= 0 || h.kv_heads <= 0 || h.vocab <= 0 ||
      h.seq_len <= 0)
    fail(path, "header (" + describe(h) + ") has a field that is not positive");
  if (h.dim % h.heads != 0 || h.heads % h.kv_heads != 0 || (h.dim / h.heads) % 2 != 0)
    fail(path, "header (" + describe(h) +
                   ") needs dim divisible by n_heads into an even head size, and n_heads by n_kv_heads");
}

// Lays weights out one after another, in f32, checking every size for
// overflow. A sizing pass (record = false) only adds up the bytes, so a
// header with absurd counts fails the size check before anything is built.
class Placer {
 public:
  Placer(std::string path, size_t offset, bool record) : path_(std::move(path)), offset_(offset), record_(record) {}

  void add(std::string name, std::vector<int64_t> ne) {
    uint64_t bytes = sizeof(float);
    for (int64_t d : ne) bytes = mul(bytes, uint64_t(d));
    if (record_) {
      WeightRef w;
      w.name = std::move(name);
      w.type = GgmlType::F32;
      w.ne = std::move(ne);
      w.bytes = size_t(bytes);
      placed_.push_back({std::move(w), offset_});
    }
    offset_ = advance(offset_, bytes);
  }
  void per_layer(int64_t layers, const char* suffix, const std::vector<int64_t>& ne) {
    if (!record_) {
      uint64_t bytes = sizeof(float);
      for (int64_t d : ne) bytes = mul(bytes, uint64_t(d));
      offset_ = advance(offset_, mul(bytes, uint64_t(layers)));
      return;
    }
    for (int64_t l = 0; l < layers; ++l) add("blk." + std::to_string(l) + "." + suffix, ne);
  }
  void skip_floats(uint64_t n) { offset_ = advance(offset_, mul(n, sizeof(float))); }

  size_t end() const { return offset_; }
  std::vector<std::pair<WeightRef, size_t>>& placed() { return placed_; }

 private:
  uint64_t mul(uint64_t a, uint64_t b) const {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) fail(path_, "the header implies a weight beyond 2^64 bytes");
    return r;
  }
  size_t advance(uint64_t a, uint64_t b) const {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r) || r > SIZE_MAX) fail(path_, "the header implies a file beyond 2^64 bytes");
    return size_t(r);
  }

  std::string path_;
  size_t offset_;
  bool record_;
  std::vector<std::pair<WeightRef, size_t>> placed_;
};

// llama2.c's v0 order: embedding, then each kind of layer weight for all
// layers, the final norm, the RoPE tables (unused: the runner computes RoPE)
// and the classifier when it is not the embedding.
void place_legacy(Placer& p, const Header& h, bool shared_classifier) {
  const int64_t dim = h.dim, hidden = h.hidden, L = h.layers, kv_dim = int64_t(h.kv_heads) * (dim / h.heads);
  p.add("token_embd.weight", {dim, h.vocab});
  p.per_layer(L, "attn_norm.weight", {dim});
  p.per_layer(L, "attn_q.weight", {dim, dim});
  p.per_layer(L, "attn_k.weight", {dim, kv_dim});
  p.per_layer(L, "attn_v.weight", {dim, kv_dim});
  p.per_layer(L, "attn_output.weight", {dim, dim});
  p.per_layer(L, "ffn_norm.weight", {dim});
  p.per_layer(L, "ffn_gate.weight", {dim, hidden});
  p.per_layer(L, "ffn_down.weight", {hidden, dim});
  p.per_layer(L, "ffn_up.weight", {dim, hidden});
  p.add("output_norm.weight", {dim});
  p.skip_floats(uint64_t(h.seq_len) * uint64_t(dim / h.heads));  // freq_cis_real and _imag: seq_len * head_size/2 each
  if (!shared_classifier) p.add("output.weight", {dim, h.vocab});
}

// Version 1 puts the norms first and has no RoPE tables.
void place_v1(Placer& p, const Header& h, bool shared_classifier) {
  const int64_t dim = h.dim, hidden = h.hidden, L = h.layers, kv_dim = int64_t(h.kv_heads) * (dim / h.heads);
  p.per_layer(L, "attn_norm.weight", {dim});
  p.per_layer(L, "ffn_norm.weight", {dim});
  p.add("output_norm.weight", {dim});
  p.add("token_embd.weight", {dim, h.vocab});
  p.per_layer(L, "attn_q.weight", {dim, dim});
  p.per_layer(L, "attn_k.weight", {dim, kv_dim});
  p.per_layer(L, "attn_v.weight", {dim, kv_dim});
  p.per_layer(L, "attn_output.weight", {dim, dim});
  p.per_layer(L, "ffn_gate.weight", {dim, hidden});
  p.per_layer(L, "ffn_down.weight", {hidden, dim});
  p.per_layer(L, "ffn_up.weight", {dim, hidden});
  if (!shared_classifier) p.add("output.weight", {dim, h.vocab});
}

LlamaConfig make_config(const Header& h) {
  LlamaConfig c;
  c.dim = h.dim;
  c.n_layers = h.layers;
  c.n_heads = h.heads;
  c.n_kv_heads = h.kv_heads;
  c.head_dim = h.dim / h.heads;
  c.ffn_dim = h.hidden;
  c.vocab = h.vocab;
  c.context = h.seq_len;
  c.rope_dims = c.head_dim;
  c.rope_base = 10000.f;
  c.rms_eps = 1e-5f;
  return c;
}

int byte_token_value(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  return hex(t[3]) && hex(t[4]) ? std::stoi(t.substr(3, 2), nullptr, 16) : -1;
}

// llama2.c's exporter stores BOS/EOS as "\n<s>\n" and "\n</s>\n" and spaces as
// ' '; the Vocab holds SentencePiece's spelling.
void add_token(Vocab& v, std::string text, float score) {
  TokenKind kind = TokenKind::Normal;
  if (text == "<s>" || text == "\n<s>\n") {
    text = "<s>";
    kind = TokenKind::Control;
  } else if (text == "</s>" || text == "\n</s>\n") {
    text = "</s>";
    kind = TokenKind::Control;
  } else if (text == "<unk>") {
    kind = TokenKind::Unknown;
  } else if (byte_token_value(text) >= 0) {
    kind = TokenKind::Byte;
  } else {
    std::string spm;
    for (char c : text) spm += c == ' ' ? std::string("\xe2\x96\x81") : std::string(1, c);
    text = std::move(spm);
  }
  v.tokens.push_back(std::move(text));
  v.scores.push_back(score);
  v.kinds.push_back(kind);
}

}  // namespace

Vocab load_llama2c_vocab(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("llama2.c tokenizer '" + path + "': cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](size_t offset, const std::string& what) {
    throw std::runtime_error("llama2.c tokenizer '" + path + "' at offset " + std::to_string(offset) + ": " + what);
  };
  if (bytes.size() < 4) bad(0, "the file has " + std::to_string(bytes.size()) + " bytes, too few for max_token_length");
  Vocab v;
  for (size_t off = 4; off < bytes.size();) {
    const std::string token = "token " + std::to_string(v.tokens.size());
    if (bytes.size() - off < 8) bad(off, token + " is truncated before its score and length");
    float score = load<float>(&bytes[off]);
    int32_t len = load<int32_t>(&bytes[off + 4]);
    off += 8;
    if (len < 0 || size_t(len) > bytes.size() - off)
      bad(off - 4, token + " has length " + std::to_string(len) + " but " + std::to_string(bytes.size() - off) +
                       " bytes remain");
    add_token(v, std::string(reinterpret_cast<const char*>(&bytes[off]), size_t(len)), score);
    off += size_t(len);
  }
  if (v.tokens.size() < 3) bad(4, "the file holds " + std::to_string(v.tokens.size()) + " tokens, fewer than unk, bos, eos");
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

Checkpoint load_llama2c_checkpoint(const std::string& model_path, const std::string& tokenizer_path) {
  MappedFile m = map_or_fail(model_path);
  Format f = read_format(m, model_path);
  check_header(f.h, model_path);

  auto place = [&](Placer& p) {
    if (f.version == 0)
      place_legacy(p, f.h, f.shared_classifier);
    else
      place_v1(p, f.h, f.shared_classifier);
  };
  Placer sizing(model_path, f.weights_offset, false);
  place(sizing);
  if (sizing.end() != m.size)
    fail(model_path, "the file has " + std::to_string(m.size) + " bytes but its header (" + describe(f.h) +
                         (f.shared_classifier ? ", shared classifier" : ", separate classifier") + ") implies " +
                         std::to_string(sizing.end()) + " bytes");
  Placer placer(model_path, f.weights_offset, true);
  place(placer);

  Checkpoint ck;
  ck.path = model_path;
  ck.format = f.version == 0 ? "llama2.c" : "llama2.c v1";
  ck.config = make_config(f.h);
  ck.vocab = load_llama2c_vocab(tokenizer_path);
  if (int64_t(ck.vocab.tokens.size()) != ck.config.vocab)
    throw std::runtime_error("llama2.c tokenizer '" + tokenizer_path + "' has " +
                             std::to_string(ck.vocab.tokens.size()) + " tokens but the model '" + model_path +
                             "' has vocab_size " + std::to_string(ck.config.vocab));
  for (auto& [w, offset] : placer.placed()) {
    w.data = m.data + offset;
    std::string name = w.name;
    ck.weights.emplace(std::move(name), std::move(w));
  }
  ck.owner = std::move(m.owner);
  return ck;
}

}  // namespace kgen::graph::llama
