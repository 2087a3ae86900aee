// Q4_0 / Q8_0 rows interleaved by 16 (quant_formats.h): the load-time repack
// and its inverse (the reference and tests read the GGML bytes back).
#include <cstring>
#include <stdexcept>

#include "ops/quant_formats.h"

namespace kgen::ops::quant {

namespace {

// Calls f(row, block, tile byte offset of the block's codes, of its scale)
// for every real (not padding) block of a rows x k tensor.
template <class F>
void for_each_r16_block(QFormat fmt, int64_t rows, int64_t k, F&& f) {
  const int64_t nb = k / 32, np = (nb + 1) / 2, tb = r16_tile_bytes(fmt);
  const size_t codes = fmt == QFormat::Q4_0 ? 256 : 512;  // per block
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      const size_t tile = size_t(((n / kR16Rows) * np + b / 2) * tb);
      const size_t j = size_t(b % 2), r = size_t(n % kR16Rows);
      f(n, b, tile + codes * j + 4 * r, tile + 2 * codes + 32 * j + 2 * r);
    }
}

// Byte i of a block's codes (GGML: after the 2-byte scale) sits at
// 64·(i/4) + i%4 from the row's first code byte: 4 codes per lane, 16 lanes
// per 64-byte chunk. Q4_0's byte i holds elements i and i + 16 (i < 16).
size_t code_offset(size_t i) { return 64 * (i / 4) + i % 4; }

}  // namespace

bool has_r16(QFormat f) { return f == QFormat::Q4_0 || f == QFormat::Q8_0; }

int64_t r16_tile_bytes(QFormat f) {
  if (!has_r16(f)) throw std::invalid_argument(std::string("no interleaved layout for ") + info(f).name);
  return f == QFormat::Q4_0 ? 576 : 1088;
}

size_t r16_bytes(QFormat f, int64_t rows, int64_t k) {
  const int64_t groups = (rows + kR16Rows - 1) / kR16Rows, np = (k / 32 + 1) / 2;
  return size_t(groups * np * r16_tile_bytes(f));
}

void repack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  // Padding rows and blocks: zero scales (and codes), so they add zero.
  std::memset(dst, 0, r16_bytes(f, rows, k));
  const size_t bb = size_t(info(f).block_bytes), row_bytes = size_t(k / 32) * bb, nq = bb - 2;
  const uint8_t flip = f == QFormat::Q8_0 ? 0x80 : 0;
  for_each_r16_block(f, rows, k, [&](int64_t n, int64_t b, size_t codes, size_t scale) {
    const uint8_t* blk = src + size_t(n) * row_bytes + size_t(b) * bb;
    std::memcpy(dst + scale, blk, 2);
    for (size_t i = 0; i < nq; ++i) dst[codes + code_offset(i)] = blk[2 + i] ^ flip;
  });
}

void unpack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  const size_t bb = size_t(info(f).block_bytes), row_bytes = size_t(k / 32) * bb, nq = bb - 2;
  const uint8_t flip = f == QFormat::Q8_0 ? 0x80 : 0;
  for_each_r16_block(f, rows, k, [&](int64_t n, int64_t b, size_t codes, size_t scale) {
    uint8_t* blk = dst + size_t(n) * row_bytes + size_t(b) * bb;
    std::memcpy(blk, src + scale, 2);
    for (size_t i = 0; i < nq; ++i) blk[2 + i] = src[codes + code_offset(i)] ^ flip;
  });
}

}  // namespace kgen::ops::quant
