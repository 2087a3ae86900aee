// Decoding a whole block into f32x16 lines on the CPU: the block's scales
// are read once (scalar code), then each 16-element group is one vector
// load of its quant bytes, nibble/bit extraction on u8x16, a widening
// conversion and the scale arithmetic (GGML's, with d·q - m fused into one
// fma: the weights equal dequantize_ref's, or for Q4_K/Q5_K differ by at most
// one rounding). Used by the CPU GEMV and dequantize kernels.
#pragma once
#include <vector>

#include "ops/quant/kernels.h"

namespace kgen::ops::quant {

class BlockLines {
 public:
  BlockLines(QFormat f, const PackedBytes& w);
  // Reads the scales of the block at byte offset `base` (records code).
  void load(const dsl::Value& base);
  // f32x16 weights of elements 16g .. 16g+15 of the loaded block.
  dsl::Value line(int g);
  int lines() const { return info(f_).block_elems / 16; }

 private:
  QFormat f_;
  PackedBytes w_;
  dsl::Value base_;
  std::vector<dsl::Value> s_;  // per-format scalars (scales, mins)
};

}  // namespace kgen::ops::quant
