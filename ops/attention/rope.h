// The "rope" op's problem and what its kernels take (ops/attention/rope.cpp),
// shared with its strategy (ops/attention/strategy.cpp).
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops {

namespace rope_detail {

struct Shape {
  int64_t T, H, D;
  int mode;  // 0 interleaved pairs (2i, 2i+1), 1 neox halves (i, i + D/2)
  int64_t pos;
  float c;  // -2 log2(base) / D
};
// The problem's shape; throws std::invalid_argument where it is malformed.
Shape shape_of(const Problem& p);

// The lines kernel (impl 2) sizes its cos/sin table by D (2·D floats on the
// work-item's stack): heads up to 2048 features (models use 64-256).
constexpr int64_t kLinesMaxD = 2048;
// The lines kernel applies: D % 16 == 0 interleaved, even D >= 32 neox.
bool lines_fit(int mode, int64_t D);
// Neox heads off whole lines (D % 32 != 0): unaligned line pairs, no streaming stores.
bool neox_tail(int mode, int64_t D);

}  // namespace rope_detail

// Registers "rope" (called by register_attention_ops()).
void register_rope_op();

}  // namespace kgen::ops
