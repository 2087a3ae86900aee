// SentencePiece-BPE tokenization over a `Vocab`, as llama.cpp's SPM tokenizer
// does it: spaces become U+2581 '▁', the text is split into UTF-8 characters,
// adjacent pieces merge by the highest score of the merged piece, and a piece
// the vocabulary lacks falls back to <0xNN> byte tokens (then to unk).
//
// Decoding is per token, so decoding a list token by token gives exactly the
// bytes of decoding it whole. A byte-fallback character spans several tokens;
// a streaming printer passes the pieces through a `Utf8Stream` to hold back
// incomplete UTF-8 sequences until their last byte arrives.
#pragma once
#include <array>
#include <functional>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/llama/checkpoint.h"

namespace kgen::graph::llama {

// Encodes text into token ids and decodes ids back into bytes.
class Tokenizer {
 public:
  // Indexes `vocab`; throws std::invalid_argument when its arrays disagree in
  // size or a Byte token is not spelled <0xNN>.
  explicit Tokenizer(Vocab vocab);

  // The ids of `text`, with BOS first when `add_bos`. Control and unknown
  // tokens written in the text (e.g. "</s>") become their ids only when
  // `parse_special`; user-defined tokens always do (as in SentencePiece).
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

  // The bytes of token `id` when it follows `prev` (-1: nothing): '▁' reads
  // as a space, <0xNN> as that byte, control tokens as nothing, and the space
  // that encoding put before the first word is dropped right after BOS.
  std::string piece(int32_t id, int32_t prev = -1) const;

  // The concatenated pieces of `ids` (each with its predecessor as `prev`).
  std::string decode(std::span<const int32_t> ids) const;

  const Vocab& vocab() const { return vocab_; }
  int32_t size() const { return int32_t(vocab_.tokens.size()); }

 private:
  struct Fragment {
    std::string_view text;  // raw text when token < 0
    int32_t token = -1;
  };
  std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
  void encode_words(const std::string& escaped, std::vector<int32_t>& out) const;
  void emit_piece(std::string_view piece, std::vector<int32_t>& out) const;
  int32_t piece_id(std::string_view piece) const;
  TokenKind kind(int32_t id) const;

  // Looks pieces up by string_view without building a std::string.
  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  Vocab vocab_;
  std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> piece_ids_;  // pieces BPE may produce
  std::array<int32_t, 256> byte_ids_;                   // <0xNN> tokens; -1 when absent
  std::vector<int32_t> specials_;                       // longest text first
};

// Holds back an incomplete UTF-8 sequence at the end of streamed bytes, so a
// terminal never sees half a character. Bytes that can never form a valid
// sequence pass through unchanged: the concatenated output of push() calls
// followed by flush() is always exactly the concatenated input.
class Utf8Stream {
 public:
  // Appends `bytes`; returns everything up to the start of a trailing
  // sequence that still waits for continuation bytes.
  std::string push(std::string_view bytes);
  // Returns (and forgets) whatever is held back; call at the end of the stream.
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace kgen::graph::llama
