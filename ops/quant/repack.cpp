// Rows interleaved by 16 (ops/quant/formats.h): the load-time repack and its
// inverse (the reference and tests read the GGML bytes back). One byte map,
// r16_byte_offset, says where each GGML byte goes; the DSL unpack kernel
// (ops/quant/r16.cpp) computes the same map.
#include <cstring>
#include <stdexcept>

#include "ops/quant/formats.h"

namespace kgen::ops::quant {

bool has_r16(QFormat f) {
  return f == QFormat::Q4_0 || f == QFormat::Q8_0 || f == QFormat::Q4_K || f == QFormat::Q6_K;
}

int64_t r16_tile_bytes(QFormat f) {
  switch (f) {
    case QFormat::Q4_0: return 576;
    case QFormat::Q8_0: return 1088;
    case QFormat::Q4_K: return 2304;
    case QFormat::Q6_K: return 6720;
    default: throw std::invalid_argument(std::string("no interleaved layout for ") + info(f).name);
  }
}

int64_t r16_blocks_per_tile(QFormat f) { return f == QFormat::Q4_K ? 1 : 2; }

size_t r16_bytes(QFormat f, int64_t rows, int64_t k) {
  const int64_t groups = (rows + kR16Rows - 1) / kR16Rows, bpt = r16_blocks_per_tile(f);
  const int64_t tiles = (k / info(f).block_elems + bpt - 1) / bpt;
  return size_t(groups * tiles * r16_tile_bytes(f));
}

size_t r16_byte_offset(QFormat f, size_t q, size_t j, size_t r) {
  // Code byte i: 4 per lane, 16 lanes per 64-byte chunk, 8 chunks per 32
  // bytes of a row (Q4_K's sub-block pairs).
  auto code = [&](size_t i) { return 512 * (i / 32) + 64 * ((i % 32) / 4) + i % 4 + 4 * r; };
  switch (f) {
    case QFormat::Q4_0: return q < 2 ? 512 + 32 * j + 2 * r + q : 256 * j + code(q - 2);
    case QFormat::Q8_0: return q < 2 ? 1024 + 32 * j + 2 * r + q : 512 * j + code(q - 2);
    case QFormat::Q4_K:
      if (q < 4) return 2240 + 32 * (q / 2) + 2 * r + q % 2;         // d, dmin
      if (q < 16) return 2048 + 64 * ((q - 4) / 4) + 4 * r + q % 4;  // the 12 scale bytes as 3 words
      return code(q - 16);
    case QFormat::Q6_K:
      if (q < 128) return 2048 * j + code(q);                                      // ql
      if (q < 192) return 4096 + 1024 * j + code(q - 128);                         // qh
      if (q < 208) return 6144 + 256 * j + 64 * ((q - 192) / 4) + 4 * r + q % 4;  // scales
      return 6656 + 32 * j + 2 * r + q - 208;                                      // d
    default: break;
  }
  throw std::invalid_argument(std::string("no interleaved layout for ") + info(f).name);
}

namespace {

// Calls f(GGML byte offset, r16 byte offset, xor mask) for every byte of the
// real (not padding) blocks of a rows x k tensor; the mask (0x80 on Q8_0's
// codes, stored unsigned; else 0) maps either form to the other.
template <class F>
void for_each_r16_byte(QFormat fmt, int64_t rows, int64_t k, F&& f) {
  const int64_t nb = k / info(fmt).block_elems, bpt = r16_blocks_per_tile(fmt), tiles = (nb + bpt - 1) / bpt;
  const size_t bb = size_t(info(fmt).block_bytes), tb = size_t(r16_tile_bytes(fmt));
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      const size_t src = size_t(n * nb + b) * bb, tile = size_t((n / kR16Rows) * tiles + b / bpt) * tb;
      for (size_t q = 0; q < bb; ++q)
        f(src + q, tile + r16_byte_offset(fmt, q, size_t(b % bpt), size_t(n % kR16Rows)),
          uint8_t(fmt == QFormat::Q8_0 && q >= 2 ? 0x80 : 0));
    }
}

}  // namespace

void repack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  // Padding rows and blocks: zero scales (and codes), so they add zero.
  std::memset(dst, 0, r16_bytes(f, rows, k));
  for_each_r16_byte(f, rows, k, [&](size_t s, size_t d, uint8_t x) { dst[d] = src[s] ^ x; });
}

void unpack_r16(QFormat f, const uint8_t* src, uint8_t* dst, int64_t rows, int64_t k) {
  for_each_r16_byte(f, rows, k, [&](size_t s, size_t d, uint8_t x) { dst[s] = src[d] ^ x; });
}

}  // namespace kgen::ops::quant
