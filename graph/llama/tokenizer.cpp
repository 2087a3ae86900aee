#include "graph/llama/tokenizer.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <utility>

namespace kgen::graph::llama {

namespace {

constexpr std::string_view kSpaceMark = "\xe2\x96\x81";   // U+2581 '▁'
constexpr std::string_view kUnknownMark = "\xe2\x96\x85"; // U+2585 '▅', llama.cpp's rendering of unk

// The bytes of the character at `off`: what its lead byte announces (as in
// llama.cpp) when that many continuation bytes follow, else one byte. Valid
// UTF-8 splits as in llama.cpp; a broken sequence can then never swallow the
// start of the next character, e.g. part of an escaped space.
size_t char_len(std::string_view text, size_t off) {
  static constexpr uint8_t lens[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  size_t n = lens[static_cast<unsigned char>(text[off]) >> 4];
  if (n > text.size() - off) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[off + k]) & 0xC0) != 0x80) return 1;
  return n;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte a "<0xNN>" token stands for, or -1.
int parse_byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0;;) {
    size_t hit = s.find(from, at);
    out.append(s.substr(at, hit - at));
    if (hit == std::string_view::npos) return out;
    out.append(to);
    at = hit + from.size();
  }
}

// A run of text that is currently one piece; merged-away symbols have n == 0.
struct Symbol {
  size_t start, n;
  int prev, next;
};

// Two adjacent symbols whose concatenation is a vocabulary piece.
struct Bigram {
  float score;
  int left, right;
  size_t size;  // bytes of the merged piece: a stale entry no longer matches
};

// Highest score first; among equals the leftmost pair (llama.cpp's order).
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  const size_t n = vocab_.tokens.size();
  if (vocab_.scores.empty()) vocab_.scores.assign(n, 0.f);
  if (vocab_.kinds.empty()) vocab_.kinds.assign(n, TokenKind::Normal);
  if (vocab_.scores.size() != n || vocab_.kinds.size() != n)
    throw std::invalid_argument("tokenizer: the vocabulary has " + std::to_string(n) + " tokens but " +
                                std::to_string(vocab_.scores.size()) + " scores and " +
                                std::to_string(vocab_.kinds.size()) + " token kinds");
  for (auto [what, id] : {std::pair{"bos", vocab_.bos}, {"eos", vocab_.eos}, {"unk", vocab_.unk}})
    if (id < -1 || id >= int64_t(n))
      throw std::invalid_argument(std::string("tokenizer: ") + what + " id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(n) + " tokens");
  byte_ids_.fill(-1);
  for (int32_t id = 0; id < int32_t(n); ++id) {
    const std::string& text = vocab_.tokens[size_t(id)];
    switch (vocab_.kinds[size_t(id)]) {
      case TokenKind::Byte: {
        int b = parse_byte_token(text);
        if (b < 0)
          throw std::invalid_argument("tokenizer: byte token " + std::to_string(id) + " is '" + text +
                                      "', not <0xNN>");
        if (byte_ids_[size_t(b)] < 0) byte_ids_[size_t(b)] = id;
        break;
      }
      case TokenKind::Normal: piece_ids_.emplace(text, id); break;
      case TokenKind::UserDefined:
        piece_ids_.emplace(text, id);
        if (!text.empty()) specials_.push_back(id);
        break;
      case TokenKind::Control:
      case TokenKind::Unknown:
        if (!text.empty()) specials_.push_back(id);
        break;
      case TokenKind::Unused: break;
    }
  }
  // Longer specials first, so "<|im_end|>" wins over a shorter token inside it.
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return vocab_.tokens[size_t(a)].size() > vocab_.tokens[size_t(b)].size();
  });
}

TokenKind Tokenizer::kind(int32_t id) const { return vocab_.kinds[size_t(id)]; }

int32_t Tokenizer::piece_id(std::string_view piece) const {
  auto it = piece_ids_.find(piece);
  return it == piece_ids_.end() ? -1 : it->second;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  // SentencePiece treats the text as starting a new word; after a special
  // token the next run of text does too (llama.cpp's rule).
  bool starts_word = true;
  for (const Fragment& f : split_special(text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      starts_word = true;
      continue;
    }
    std::string run = vocab_.add_space_prefix && starts_word ? " " + std::string(f.text) : std::string(f.text);
    encode_words(replace_all(run, " ", kSpaceMark), out);
    starts_word = false;
  }
  return out;
}

// Splits `text` around the special tokens it spells out, longest tokens first,
// each splitting every remaining raw run (llama.cpp's partition).
std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text, bool parse_special) const {
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({text, -1});
  for (int32_t id : specials_) {
    if (!parse_special && kind(id) != TokenKind::UserDefined) continue;
    const std::string& special = vocab_.tokens[size_t(id)];
    std::vector<Fragment> next;
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      std::string_view rest = f.text;
      for (size_t at; (at = rest.find(special)) != std::string_view::npos;) {
        if (at > 0) next.push_back({rest.substr(0, at), -1});
        next.push_back({{}, id});
        rest.remove_prefix(at + special.size());
      }
      if (!rest.empty()) next.push_back({rest, -1});
    }
    frags = std::move(next);
  }
  return frags;
}

// BPE over UTF-8 characters: repeatedly merge the adjacent pair whose merged
// piece scores highest, until no adjacent pair forms a vocabulary piece.
void Tokenizer::encode_words(const std::string& text, std::vector<int32_t>& out) const {
  std::vector<Symbol> syms;
  for (size_t off = 0; off < text.size();) {
    size_t n = char_len(text, off);
    int i = int(syms.size());
    syms.push_back({off, n, i - 1, off + n == text.size() ? -1 : i + 1});
    off += n;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    std::string_view merged(text.data() + syms[size_t(left)].start, syms[size_t(left)].n + syms[size_t(right)].n);
    int32_t id = piece_id(merged);
    if (id >= 0) queue.push({vocab_.scores[size_t(id)], left, right, merged.size()});
  };
  for (int i = 1; i < int(syms.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol& l = syms[size_t(b.left)];
    Symbol& r = syms[size_t(b.right)];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // one side changed since
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) syms[size_t(r.next)].prev = b.left;
    try_pair(l.prev, b.left);
    try_pair(b.left, l.next);
  }
  for (int i = syms.empty() ? -1 : 0; i != -1; i = syms[size_t(i)].next)
    emit_piece(std::string_view(text).substr(syms[size_t(i)].start, syms[size_t(i)].n), out);
}

// Merged pieces are always in the vocabulary; a single character may not be,
// and then it is spelled with byte tokens.
void Tokenizer::emit_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (int32_t id = piece_id(piece); id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : piece) {
    int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) id = vocab_.unk;
    if (id < 0)
      throw std::runtime_error("tokenizer: the vocabulary has neither a byte token for 0x" +
                               std::string{"0123456789ABCDEF"[(c >> 4) & 15], "0123456789ABCDEF"[c & 15]} +
                               " nor an unknown token");
    out.push_back(id);
  }
}

std::string Tokenizer::piece(int32_t id, int32_t prev) const {
  if (id < 0 || id >= size())
    throw std::out_of_range("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " +
                            std::to_string(size()) + " tokens");
  const std::string& text = vocab_.tokens[size_t(id)];
  switch (kind(id)) {
    case TokenKind::Normal: {
      std::string s = replace_all(text, kSpaceMark, " ");
      // The space encode() put before the first word is not part of the text.
      if (prev >= 0 && prev == vocab_.bos && vocab_.add_space_prefix && !s.empty() && s[0] == ' ') s.erase(0, 1);
      return s;
    }
    case TokenKind::Byte: return std::string(1, char(parse_byte_token(text)));
    case TokenKind::UserDefined: return text;
    case TokenKind::Unknown: return std::string(kUnknownMark);
    case TokenKind::Control:
    case TokenKind::Unused: return {};
  }
  return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  int32_t prev = -1;
  for (int32_t id : ids) {
    out += piece(id, prev);
    prev = id;
  }
  return out;
}

namespace {

// Bytes a sequence starting with `lead` needs; 1 for ASCII and for bytes that
// cannot start a valid sequence (those pass through as they are).
size_t utf8_needed(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 1;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  size_t cut = pending_.size();
  // Only the last three bytes can belong to an unfinished sequence.
  for (size_t back = 1; back <= 3 && back <= pending_.size(); ++back) {
    unsigned char c = static_cast<unsigned char>(pending_[pending_.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: its lead is further back
    if (utf8_needed(c) > back) cut = pending_.size() - back;
    break;
  }
  std::string out = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return out;
}

std::string Utf8Stream::flush() { return std::exchange(pending_, {}); }

}  // namespace kgen::graph::llama
