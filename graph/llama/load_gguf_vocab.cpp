// The SentencePiece vocabulary of a GGUF llama model (tokenizer.ggml.*).
#include <cctype>

#include "graph/llama/load_gguf.h"

namespace kgen::graph::llama {

namespace {

using gguf::GgufFile;

// The array at `key` with items of type `type` and `n` of them (n < 0: any).
const gguf::Array& typed_array(const GgufFile& f, const std::string& key, gguf::ValueType type, int64_t n) {
  const gguf::Array& a = f.get_array(key);
  if (a.type != type)
    f.fail_key(key, std::string("is an array of ") + gguf::value_type_name(a.type) + ", expected " +
                        gguf::value_type_name(type));
  if (n >= 0 && int64_t(a.items.size()) != n)
    f.fail_key(key, "has " + std::to_string(a.items.size()) + " entries for " + std::to_string(n) + " tokens");
  return a;
}

bool is_byte_token(const std::string& s) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  return s.size() == 6 && s.compare(0, 3, "<0x") == 0 && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

void read_kinds(const GgufFile& f, Vocab& v) {
  const int64_t n = int64_t(v.tokens.size());
  if (!f.find("tokenizer.ggml.token_type")) {
    v.kinds.resize(size_t(n), TokenKind::Normal);
    for (int64_t i = 0; i < n; ++i)
      if (is_byte_token(v.tokens[size_t(i)])) v.kinds[size_t(i)] = TokenKind::Byte;
    return;
  }
  const auto& a = typed_array(f, "tokenizer.ggml.token_type", gguf::ValueType::I32, n);
  v.kinds.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int32_t k = *a.items[size_t(i)].get_if<int32_t>();
    if (k < 0 || k > int32_t(TokenKind::Byte))
      f.fail_key("tokenizer.ggml.token_type", "token " + std::to_string(i) + " has type " + std::to_string(k) +
                                                  " (0 to 6 are defined)");
    v.kinds.push_back(k == 0 ? TokenKind::Normal : TokenKind(k));  // 0: llama.cpp's "undefined"
  }
}

// A special token id: in [0, n_tokens), or -1 (GGUF's u32 0xFFFFFFFF) for none.
int32_t token_id(const GgufFile& f, const std::string& key, int32_t fallback, int64_t n_tokens) {
  const auto id = f.opt_int(key);
  if (!id) return fallback;
  if (*id == -1 || *id == 0xFFFFFFFF) return -1;
  if (*id < 0 || *id >= n_tokens)
    f.fail_key(key, std::to_string(*id) + " is not a token id (the vocabulary has " + std::to_string(n_tokens) +
                        " tokens)");
  return int32_t(*id);
}

}  // namespace

Vocab read_gguf_vocab(const GgufFile& f) {
  const std::string& model = f.get_string("tokenizer.ggml.model");
  if (model != "llama")
    f.fail_key("tokenizer.ggml.model", "is " + gguf::quoted(model) + "; only 'llama' (SentencePiece) is supported");
  Vocab v;
  const auto& tokens = typed_array(f, "tokenizer.ggml.tokens", gguf::ValueType::String, -1);
  if (tokens.items.empty()) f.fail_key("tokenizer.ggml.tokens", "is empty");
  const int64_t n = int64_t(tokens.items.size());
  v.tokens.reserve(size_t(n));
  for (const auto& t : tokens.items) v.tokens.push_back(*t.get_if<std::string>());
  v.scores.assign(size_t(n), 0.f);
  if (f.find("tokenizer.ggml.scores")) {
    const auto& scores = typed_array(f, "tokenizer.ggml.scores", gguf::ValueType::F32, n);
    for (int64_t i = 0; i < n; ++i) v.scores[size_t(i)] = *scores.items[size_t(i)].get_if<float>();
  }
  read_kinds(f, v);
  v.bos = token_id(f, "tokenizer.ggml.bos_token_id", v.bos < n ? v.bos : -1, n);
  v.eos = token_id(f, "tokenizer.ggml.eos_token_id", v.eos < n ? v.eos : -1, n);
  v.unk = token_id(f, "tokenizer.ggml.unknown_token_id", v.unk < n ? v.unk : -1, n);
  v.pad = token_id(f, "tokenizer.ggml.padding_token_id", v.pad, n);
  v.add_bos = f.opt_bool("tokenizer.ggml.add_bos_token").value_or(v.add_bos);
  v.add_space_prefix = f.opt_bool("tokenizer.ggml.add_space_prefix").value_or(v.add_space_prefix);
  return v;
}

}  // namespace kgen::graph::llama
