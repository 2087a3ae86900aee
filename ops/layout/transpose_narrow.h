// CPU transposes where one of the two transposed axes is narrow (2-32
// values): NCHW <-> NHWC with a few channels (RGB images), pairs and
// quadruples interleaved with planes. The 16 x 16 block transpose wastes most
// of each block there and goes element by element at the edge (64 x 3 x
// 224 x 224 to NHWC: 5 GB/s); these move whole lines and regroup them with
// two-source lane shuffles.
#pragma once
#include "ir/ir.h"

namespace kgen::ops {

// The output is (batch..., A, B), B innermost, read from an input
// contiguous along A (sa = 1):
//  - interleave (B = n narrow, NCHW -> NHWC): per 16 values of A, the n
//    input rows' lines (16 consecutive A each, sb apart) become n output
//    lines (16 output rows of n values, contiguous), n - 1 shuffles a line;
//  - deinterleave (A = n narrow, sb == n, NHWC -> NCHW): per 16 values of
//    B, the n input lines (16·n contiguous values) become n output lines
//    (one per output row a, 16 consecutive B).
// `u` chunks of 16 per work-item along the wide axis; the last work-item
// copies the wide axis's remainder (below 16) element by element. Scalars
// A, B, sb, then the batch axes (ops/layout/transpose_batch.h); grid (ceil(wide /
// 16u), 1, batch elements), workgroup 1. Any 2- or 4-byte type (moved as
// bits). stream: nontemporal line stores, for a wide axis of whole chunks
// and output lines on 16-value boundaries (interleave: A·n % 16 == 0,
// deinterleave: B % 16 == 0); no remainder then.
ir::Kernel transpose_narrow_kernel(ir::Type dt, int nbatch, int n, bool interleave, int u, bool stream = false);

}  // namespace kgen::ops
