// The layout family's strategy: which variant each target gets untuned. One
// rule per function, with why it holds; `kgen tune` may overrule any of them
// per shape, since every alternative stays a candidate.
#include "ops/layout/strategy.h"

#include "ops/common/stream_heuristic.h"
#include "ops/elementwise/fusion.h"
#include "ops/layout/data_movement.h"
#include "ops/layout/transpose_view.h"

namespace kgen::ops {

namespace {

using namespace transpose_detail;

// What every rule reads: the merged view, the element size and whether the
// output is large enough to stream (ops/common/stream_heuristic.h).
struct Facts {
  View v;
  int elem_bytes;
  double out_bytes;
  bool stream;  // the output is past the cache (whole lines or not)
};

Facts facts_of(const Problem& p, const TargetCaps& caps) {
  Facts f{view_of(p), int(ir::Type(p.dtype).bytes()), 0.0, false};
  f.out_bytes = double(fusion::numel(p.dims)) * double(f.elem_bytes);
  f.stream = stream_output(caps, f.out_bytes);
  return f;
}

// ---- the input's contiguous axis stays innermost ----

// Short rows (up to 384 bytes) whose inner tile axis spans several tiles, so
// a tile's reads are not one sequential run anyway: 4 outer rows per inner
// step keep more lines in flight per write stream. Not for 16 heads (one
// tile then reads whole input rows in order) or 128-element rows.
// Zen 5, 1×4096×32×64 0213: 2.04 ms against 2.33 one row per step.
bool short_rows_over_tiles(const Facts& f) {
  const size_t R = f.v.dims.size();
  const int64_t row_bytes = f.v.dims[R - 1] * f.elem_bytes;
  return rows_a_inner(f.v) && f.v.dims[R - 3] > kRowTile && row_bytes <= 384;
}

// CPU rows of whole lines under two other axes: row tiles in input order,
// where the output order would read one row per 4 KiB page, more streams
// than the prefetchers follow; streamed when large (no reads for ownership
// of the scattered writes).
Variant contiguous_rows(const Facts& f, const TargetCaps& caps) {
  if (!is_cpu(caps) || !rows_fit(f.v)) return Variant{}.set("impl", kStrided);
  Variant r = Variant{}.set("impl", kRows).set("nt", f.stream ? 1 : 0);
  if (short_rows_over_tiles(f)) r.set("rb", 4);
  return r;
}

// ---- a transposed inner axis, on the CPU ----

// A narrow axis (narrow_mode): whole lines regrouped by lane shuffles, where
// the 16 × 16 blocks would waste most of each block; streamed where large.
// Zen 5, 64×3×224×224 to NHWC: 55 GB/s against 5.1 in 16 × 16 blocks.
Variant narrow_axis(const Facts& f) {
  return Variant{}.set("impl", kNarrow).set("u", 4).set("nt", narrow_streams(f.v) && f.stream ? 1 : 0);
}

// Blocks in diagonal order within a tile (dg) for f32 outputs kept in the
// cache whose rows are a multiple of 2 KiB apart: a block's 16 output lines
// then share one or two L1 sets, and in row order the next block's lines
// land in the same sets and evict the previous fills before their stores
// retire. Streamed outputs read their input from DRAM, where the row order's
// forward runs win.
// Zen 5, 512² with the input in cache: 87 GB/s against 29 in row order.
bool diagonal_blocks(const Facts& f, bool nt) {
  return f.elem_bytes == 4 && !nt && (f.v.dims.back() * f.elem_bytes) % 2048 == 0;
}

// The output rows' stride lies 64 bytes or more from a multiple of 4 KiB, so
// the 64 output rows of a 64 × 4 tile spread over the L1 sets.
bool rows_spread_over_sets(const Facts& f) {
  const int64_t alias = f.v.dims.back() * 4 % 4096;
  return alias >= 64 && alias <= 4096 - 64;
}

// 16 × 16 blocks transposed in registers, in tiles of ta × tb blocks;
// streamed where the output lines are whole and the output large.
Variant block_tiles(const Problem& p, const Facts& f) {
  const bool nt = f.v.dims.back() % 16 == 0 && f.stream;
  // 16-bit values in 32 × 32 word blocks where they fit, 16 × 2 of them a
  // group: whole 64-byte lines each way, where 16-bit lines are half lines.
  if (pairs32_fit(p, f.v)) return Variant{}.set("impl", kLines).set("w32", 1).set("ta", 16).set("tb", 2).set("nt", nt ? 1 : 0);
  const bool half = f.elem_bytes == 2;
  if (diagonal_blocks(f, nt)) return Variant{}.set("impl", kLines).set("ta", 8).set("tb", 8).set("nt", 0).set("dg", 1);
  // Large 32-bit outputs with rows spread over the L1 sets: tiles of 64 × 4
  // blocks, long runs of every input row; below 16 MiB, with the input in
  // cache, 8 × 8 keeps up.
  // Zen 5, 4000² streamed: 3.10 ms against 3.90 in 4 × 32 tiles.
  if (!half && rows_spread_over_sets(f) && (nt || f.out_bytes >= 16.0 * 1048576.0))
    return Variant{}.set("impl", kLines).set("ta", 64).set("tb", 4).set("nt", nt ? 1 : 0);
  // Other streamed 32-bit outputs: 4 × 32 blocks in A-fast order, so
  // consecutive tiles continue the same input rows.
  if (nt && !half) return Variant{}.set("impl", kLines).set("ta", 4).set("tb", 32).set("nt", 1).set("af", 1);
  // 16-bit values off the word blocks: 64 × 2 blocks, 2 KiB runs of each
  // input row and whole output cache lines; else 8 × 8.
  return Variant{}.set("impl", kLines).set("ta", half ? 64 : 8).set("tb", half ? 2 : 8).set("nt", nt ? 1 : 0);
}

}  // namespace

Variant transpose_heuristic(const Problem& p, const TargetCaps& caps) {
  const Facts f = facts_of(p, caps);
  if (inner_contiguous(f.v)) return contiguous_rows(f, caps);
  // GPUs: 32 × 32 tiles through the work-items, whole cache lines each way.
  if (!is_cpu(caps)) return Variant{}.set("impl", kTiled);
  if (narrow_mode(f.v)) return narrow_axis(f);
  return block_tiles(p, f);
}

// The data-movement kernels (ops/layout/data_movement.h): the CPU walks rows
// in 16-lane lines, one work-item per group (its SIMT emulation pays per
// work-item, and a contiguous run becomes vector loads and stores); GPUs
// take one element per work-item, which coalesces wherever the output does.
MoveVariant move_variant_for(const TargetCaps& caps) {
  MoveVariant v;
  v.rows = is_cpu(caps);
  return v;
}

}  // namespace kgen::ops
