// Line helpers shared by the int8-activation GEMVs (ops/quant/int8.cpp and
// ops/quant/row_pairs.cpp: X in blocks of 32; ops/quant/x8k.cpp: X in super-blocks
// of 256).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/quant/kernels.h"

namespace kgen::ops::quant {

// 16 bytes as a u32x4 line (4 bytes per lane, the first the lowest).
dsl::Value u32x4(const dsl::Value& bytes);
// a's 4 lanes then b's, as one 8-lane line.
dsl::Value cat4(const dsl::Value& a, const dsl::Value& b);
// lo in lanes 0-7, hi in lanes 8-15 of a 16-lane line.
dsl::Value halves(const dsl::Value& lo, const dsl::Value& hi);
// v[q] in lanes 4q..4q+3 of a 16-lane line.
dsl::Value quarters(const std::vector<dsl::Value>& v);
// A u32x4 line of constant words.
dsl::Value u32_words(uint32_t a, uint32_t b, uint32_t c, uint32_t d);
// 64 bytes at `at` as a u32x16 line: the 16-byte runs at at, at + 16, ...,
// repeating after `distinct` of them (4: 64 consecutive bytes; 2: 32 bytes in
// both halves; 1: 16 bytes four times).
dsl::Value bytes64(const PackedBytes& w, const dsl::Value& at, uint32_t distinct = 4);
// A constant u32 line from its bytes (4 per lane, the first the lowest): byte
// permute indices and per-byte constants.
dsl::Value byte_index(const std::vector<uint32_t>& bytes);
// Q3_K's 16 6-bit scale codes sc (w = d·(sc - 32)·(u - 4)) of the block at
// `base`, in group order, as a u8x16 line.
dsl::Value q3k_scale_codes(const PackedBytes& w, const dsl::Value& base);
// Q4_K's and Q5_K's 6-bit sub-block scales and mins of the block at `base`
// (w = d·sc·q - dmin·m) as a u8x16 line [sc_0..7, m_0..7].
dsl::Value q4k_scale_min_codes(const PackedBytes& w, const dsl::Value& base);
// A GEMV work-item's loop over its `rows` rows of W, `steps` steps of
// `step_bytes` bytes per row: all rows in lockstep, body(step, 0, rows)
// (X's side of a step loaded once for all of them), or with seq_rows one
// after another, body(step, r, r + 1) per row. In lockstep W is read as
// `rows` streams a row apart, where rows shorter than a 4 KiB page (Q4_0 at
// K = 4096: 2304 bytes) put several streams in one page; one after another W
// is one sequential stream and X's side (from L1) is loaded again per row
// (where the heuristic walks them so: ops/quant/strategy.cpp).
// With `prefetch`, each step first prefetches (into L2, or with `into_l1`
// into L1 as well) its slice of the
// rows a few workgroups ahead, one contiguous span from `pf_base`: step s of
// row group g takes slice g·steps + s (of the group's rows·step_bytes), in
// address order. (A line per row at the current block of the rows ahead,
// strided streams, read Q8_0 at 40 GB/s on 2 threads against 60 for Q4_0's
// slices.) Past the buffer a prefetch is harmless.
void for_row_steps(const dsl::Array& w, const dsl::Value& pf_base, bool prefetch, bool into_l1, uint32_t rows, bool seq_rows,
                   const dsl::Value& steps, uint32_t step_bytes,
                   const std::function<void(dsl::Value, uint32_t, uint32_t)>& body, int unroll = 0);

}  // namespace kgen::ops::quant
