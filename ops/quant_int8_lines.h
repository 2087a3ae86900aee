// Line helpers shared by the int8-activation GEMVs (quant_int8.cpp: X in
// blocks of 32; quant_x8k.cpp: X in super-blocks of 256).
#pragma once
#include <cstdint>
#include <vector>

#include "ops/quant_kernels.h"

namespace kgen::ops::quant {

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

}  // namespace kgen::ops::quant
