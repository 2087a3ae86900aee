// The "transpose" op's view of a problem and which kernels it fits: shared by
// the op's candidates and plan (ops/layout/transpose.cpp) and its strategy
// (ops/layout/strategy.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "ops/core/op.h"

namespace kgen::ops::transpose_detail {

enum Impl { kStrided = 0, kTiled = 1, kLines = 2, kRows = 3, kNarrow = 4 };

// The row tiles' side (rows_kernel: 16 A × 16 B rows).
constexpr int kRowTile = 16;

// The permutation: output axis k = input axis perm[k] (attr perm's decimal
// digits; default the last two axes swapped). Throws where it is not one.
std::vector<int> perm_of(const Problem& p);

// The output's axes (outermost first) with their sizes and input strides,
// size-1 axes dropped and runs of axes consecutive in the input merged.
struct View {
  std::vector<int64_t> dims, in_stride;
};
View view_of(const Problem& p);

// The input's contiguous axis is still the output's innermost: a strided copy.
bool inner_contiguous(const View& v);
// The row-tiled copy applies: inner-contiguous rows of a multiple of 16
// elements under at least two other output axes.
bool rows_fit(const View& v);
// The row tiles walk A first where A's input stride is the smaller (the
// head reshapes: a tile's A rows are one contiguous run of the input).
bool rows_a_inner(const View& v);
// The narrow-axis kernels (ops/layout/transpose_narrow.h) apply: an input
// contiguous along A, and B (interleave, 2..24 values) or A (deinterleave,
// its rows packed: sb == A; 2..16) narrow. 1 interleave, 2 deinterleave, else 0.
// Past those sizes the 16 × 16 blocks keep up.
int narrow_mode(const View& v);
// ... with streaming stores (whole chunks of 16 along the wide axis; output
// lines on 16-value boundaries in every batch element).
bool narrow_streams(const View& v);
// The 16-bit 32 × 32 word blocks (pairs32_kernel): whole blocks, even input
// strides (rows and batch elements start on words), A along the input's rows.
bool pairs32_fit(const Problem& p, const View& v);

}  // namespace kgen::ops::transpose_detail
