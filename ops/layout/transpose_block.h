// A 16×16 block transpose in registers, for packers that turn rows running
// along K (Bᵀ, LLM weights N×K) into K-major lines: 16 row pieces are read
// as whole lines (each cache line once) and regrouped lane by lane.
// Reading one element per row and k instead touches 16 cache lines K·4 bytes
// apart at every k; for power-of-two K they share one L1 set and miss on
// every load (the Bᵀ packer ran at ~4 GB/s that way).
// Also the regrouping behind the "16 rows in lanes" kernels (a narrow axis:
// transpose, row ops, reduce, scan, thin matmuls): n lines holding 16 rows of
// n values to n column lines and back.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "dsl/dsl.h"

namespace kgen::ops {

// out[j] lane i = rows[i] lane j: the transpose of 16 lines of 16 lanes (any
// lane type) in registers, as 4 stages of 16 two-source shuffles; stage b
// swaps bit b of the row index with bit b of the lane index. Building each
// output line lane by lane instead was ~16 inserts a line.
std::array<dsl::Value, 16> transpose16(const std::array<dsl::Value, 16>& rows);

// out[j] lane i = f32(src[at + i·stride + j]) for i, j < 16 (`at`, `stride`
// u64 element indices; no bounds checks: the whole block must exist); u32
// elements (bf16 pair words) are kept as u32.
std::array<dsl::Value, 16> transposed_block16(const dsl::Array& src, const dsl::Value& at, const dsl::Value& stride);

// A 32×32 f32 block t[t_at + j·32 + i] (j < rows, i < cols) stored
// transposed into c[c_at + i·ldc + j]: 16×16 quarters transposed in
// registers where the block is whole, one element at a time at the edges.
// (The swapped tile GEMMs' Cᵀ blocks into C.)
void store_transposed_block32(const dsl::Array& t, const dsl::Value& t_at, const dsl::Array& c, const dsl::Value& c_at,
                              const dsl::Value& ldc, const dsl::Value& rows, const dsl::Value& cols);

// A line whose lane i is lane lanes[i].second of src[lanes[i].first], as a
// chain of two-source shuffles (make_line of extracts from two lines is one
// shuffle): one per source after the first.
dsl::Value gather_lanes(const std::vector<dsl::Value>& src, const std::vector<std::pair<int, int>>& lanes);

// n lines holding 16 rows of n values (row-major: value c of row r is lane
// (16·k + lane) = r·n + c) as n column lines (lane r of line c = value c of
// row r), and back. For n = 2^s·m: s even/odd stages, then chains of m - 1
// two-source shuffles a line (n·(s + m - 1) shuffles in all).
std::vector<dsl::Value> deinterleave_lines(const std::vector<dsl::Value>& rows_major);
std::vector<dsl::Value> interleave_lines(const std::vector<dsl::Value>& columns);

// The "16 rows in lanes" walk the narrow-row kernels share: rows r0 ..
// r_end - 1 of x (n values each, row r at xbase + r·n) mapped to rows of y
// (m values each, at ybase + r·m; u64 bases). f(values, lanes) gets a row's
// n values as column lines (lanes 16: lane i = row i of a block of 16) or,
// for the last rows (under 16), as scalars one row at a time, and returns
// its m outputs the same way. 16-bit float storage is widened to f32 for f
// and narrowed back. `blocks` 16-row blocks go in each loop step: their
// independent chains let the core overlap them.
using RowMap = std::function<std::vector<dsl::Value>(const std::vector<dsl::Value>&, int lanes)>;
void map_rows_in_lanes(const dsl::Array& x, const dsl::Value& xbase, uint32_t n, const dsl::Array& y, const dsl::Value& ybase,
                       uint32_t m, const dsl::Value& r0, const dsl::Value& r_end, const RowMap& f, int blocks = 1);

}  // namespace kgen::ops
