// The scan family's strategy: which variant each target gets untuned. One
// rule per function, with why it holds; `kgen tune` may overrule any of them
// per shape, since every alternative stays a candidate.
#include "ops/scan/strategy.h"

#include "ops/scan/problem.h"

namespace kgen::ops {

namespace {

using namespace scan_detail;

// Chunks of 64 Ki elements when threads share a row: this chunk and the
// next one fit L2, where the look-back kernel's second pass reads them.
constexpr int64_t kSharedRowChunk = 65536;

// Rows enough for every thread, off whole lines: the scalar pass per row,
// since at 2 threads both kernels run at memory speed; rows of whole lines
// stream y in the look-back pass, which then wins there too.
bool rows_fill_threads(const Shape& s, int64_t threads) { return threads > 1 && s.rows >= 2 * threads && !whole_lines(s); }

// Few long rows: the threads share each row in chunks with look-back, so the
// data is still read from memory once.
bool threads_share_rows(const Shape& s, int64_t threads) {
  return threads > 1 && s.rows < 2 * threads && s.n >= 2 * threads * kSharedRowChunk;
}

// One pass in lines (look-back): a chunk per row unless the threads share
// rows. Rows of whole lines stream y (no read for ownership of its lines),
// and shared rows prefetch the chunk a work-item takes next (pa).
Variant cpu_lookback(const Shape& s, int64_t threads) {
  const bool share = threads_share_rows(s, threads), lines = whole_lines(s);
  Variant v = Variant{}.set("impl", kLookback).set("cl", share ? kSharedRowChunk : 0);
  if (lines) v.set("nt", 1);
  if (lines && share) v.set("pa", 1);
  return v;
}

}  // namespace

Variant scan_heuristic(const Problem& p, const TargetCaps& caps) {
  const Shape s = shape_of(p);
  // GPUs: Blelloch in blocks of 256 (128 work-items).
  if (!is_cpu(caps)) return Variant{}.set("impl", kBlelloch).set("wg", 128);
  // Rows of 2-24 values: 16 rows in lanes, where a loop per row spends its
  // setup on a few values. Zen 5, 100000 × 10 f32: 76 GB/s against 8.2.
  if (narrow_rows(s)) return Variant{}.set("impl", kNarrow);
  const int64_t threads = caps.threads ? caps.threads : 1;
  if (rows_fill_threads(s, threads)) return Variant{}.set("impl", kChunked).set("chunks", 1);
  return cpu_lookback(s, threads);
}

// The CPU takes 16 channels per work-item as lines of state (no horizontal
// sums) wherever Dm has 16; otherwise, and on GPUs, a work-item per channel.
Variant selective_scan_heuristic(const Problem& p, const TargetCaps& caps) {
  const ssm_detail::Shape s = ssm_detail::shape_of(p);
  if (is_cpu(caps) && ssm_detail::lines_fit(s)) return Variant{}.set("impl", ssm_detail::kLines);
  return Variant{}.set("impl", ssm_detail::kGeneric).set("wg", is_cpu(caps) ? 1 : 64);
}

}  // namespace kgen::ops
