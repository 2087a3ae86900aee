// Q4_0 rows interleaved by 16 (quant_formats.h): the load-time repack and
// its inverse (the reference and tests read the GGML bytes back).
#include <cstring>

#include "ops/quant_formats.h"

namespace kgen::ops::quant {

namespace {

// Calls f(row, block, tile byte offset of the block's nibbles, of its scale)
// for every real (not padding) block of a rows x k Q4_0 tensor.
template <class F>
void for_each_r16_block(int64_t rows, int64_t k, F&& f) {
  const int64_t nb = k / 32, np = (nb + 1) / 2;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      const size_t tile = size_t(((n / kR16Rows) * np + b / 2) * kR16TileBytes);
      const size_t j = size_t(b % 2), r = size_t(n % kR16Rows);
      f(n, b, tile + 256 * j + 4 * r, tile + 512 + 32 * j + 2 * r);
    }
}

}  // namespace

size_t q4_0_r16_bytes(int64_t rows, int64_t k) {
  const int64_t groups = (rows + kR16Rows - 1) / kR16Rows, np = (k / 32 + 1) / 2;
  return size_t(groups * np * kR16TileBytes);
}

void repack_q4_0_r16(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  std::memset(dst, 0, q4_0_r16_bytes(rows, k));  // padding rows and blocks: zero scale, zero codes
  const size_t row_bytes = size_t(k / 32) * 18;
  for_each_r16_block(rows, k, [&](int64_t n, int64_t b, size_t codes, size_t scale) {
    const uint8_t* blk = src + size_t(n) * row_bytes + size_t(b) * 18;
    std::memcpy(dst + scale, blk, 2);
    // GGML byte i: element i (low nibble) and i + 16 (high); i = 4c + t.
    for (size_t i = 0; i < 16; ++i) dst[codes + 64 * (i / 4) + i % 4] = blk[2 + i];
  });
}

void unpack_q4_0_r16(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  const size_t row_bytes = size_t(k / 32) * 18;
  for_each_r16_block(rows, k, [&](int64_t n, int64_t b, size_t codes, size_t scale) {
    uint8_t* blk = dst + size_t(n) * row_bytes + size_t(b) * 18;
    std::memcpy(blk, src + scale, 2);
    for (size_t i = 0; i < 16; ++i) blk[2 + i] = src[codes + 64 * (i / 4) + i % 4];
  });
}

}  // namespace kgen::ops::quant
