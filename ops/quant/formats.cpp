// Host reference code of the GGML block formats (ops/quant/formats.h), written
// from the format definitions. Every dequantizer computes an element the
// way GGML's dequantize_row_* does (e.g. Q4_K: (d·sc)·q - (dmin·m)) so the
// f32 results are identical, not merely close.
#include "ops/quant/formats.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

namespace kgen::ops::quant {

namespace {

uint16_t rd16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
float rdh(const uint8_t* p) { return half_to_float(rd16(p)); }
void wr16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

// Scale and min of sub-block j (0..7) from the 12 packed bytes of Q4_K/Q5_K:
// bytes 0-3 hold scales 0-3 (low 6 bits), bytes 4-7 mins 0-3; sub-blocks 4-7
// take their low 4 bits from the nibbles of bytes 8-11 and their top 2 bits
// from the spare top bits of bytes 0-7.
void scale_min_k4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q3_K's 16 six-bit scales (minus 32): low nibbles in bytes 0-7 (sub-blocks
// 0-7 low nibble, 8-15 high nibble), the top 2 bits in bytes 8-11 (bits
// 2·(is/4) of byte 8 + is%4).
int scale_q3k(int is, const uint8_t* s) {
  int lo = is < 8 ? (s[is] & 0xF) : (s[is - 8] >> 4);
  int hi = (s[8 + is % 4] >> (2 * (is / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

void deq_block(QFormat f, const uint8_t* b, float* y) {
  switch (f) {
    case QFormat::Q4_0: {
      float d = rdh(b);
      for (int j = 0; j < 16; ++j) {
        y[j] = float((b[2 + j] & 0xF) - 8) * d;
        y[j + 16] = float((b[2 + j] >> 4) - 8) * d;
      }
      return;
    }
    case QFormat::Q4_1: {
      float d = rdh(b), m = rdh(b + 2);
      for (int j = 0; j < 16; ++j) {
        y[j] = float(b[4 + j] & 0xF) * d + m;
        y[j + 16] = float(b[4 + j] >> 4) * d + m;
      }
      return;
    }
    case QFormat::Q5_0: {
      float d = rdh(b);
      uint32_t qh;
      std::memcpy(&qh, b + 2, 4);
      for (int j = 0; j < 16; ++j) {
        int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
        y[j] = float(((b[6 + j] & 0xF) | h0) - 16) * d;
        y[j + 16] = float(((b[6 + j] >> 4) | h1) - 16) * d;
      }
      return;
    }
    case QFormat::Q5_1: {
      float d = rdh(b), m = rdh(b + 2);
      uint32_t qh;
      std::memcpy(&qh, b + 4, 4);
      for (int j = 0; j < 16; ++j) {
        int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
        y[j] = float((b[8 + j] & 0xF) | h0) * d + m;
        y[j + 16] = float((b[8 + j] >> 4) | h1) * d + m;
      }
      return;
    }
    case QFormat::Q8_0: {
      float d = rdh(b);
      for (int j = 0; j < 32; ++j) y[j] = float(int8_t(b[2 + j])) * d;
      return;
    }
    case QFormat::Q2_K: {
      const uint8_t* sc = b;
      const uint8_t* qs = b + 16;
      float d = rdh(b + 80), dmin = rdh(b + 82);
      for (int e = 0; e < 256; ++e) {
        int h = e / 128, j = (e % 128) / 32, l = e % 32;
        int is = h * 8 + j * 2 + l / 16;
        int q = (qs[h * 32 + l] >> (2 * j)) & 3;
        float dl = d * float(sc[is] & 0xF), ml = dmin * float(sc[is] >> 4);
        y[e] = dl * float(q) - ml;
      }
      return;
    }
    case QFormat::Q3_K: {
      const uint8_t* hm = b;
      const uint8_t* qs = b + 32;
      const uint8_t* sc = b + 96;
      float d = rdh(b + 108);
      for (int e = 0; e < 256; ++e) {
        int h = e / 128, j = (e % 128) / 32, l = e % 32;
        int is = h * 8 + j * 2 + l / 16;
        int q = ((qs[h * 32 + l] >> (2 * j)) & 3) - ((hm[l] >> (h * 4 + j)) & 1 ? 0 : 4);
        float dl = d * float(scale_q3k(is, sc));
        y[e] = dl * float(q);
      }
      return;
    }
    case QFormat::Q4_K:
    case QFormat::Q5_K: {
      bool five = f == QFormat::Q5_K;
      float d = rdh(b), dmin = rdh(b + 2);
      const uint8_t* sc = b + 4;
      const uint8_t* qh = b + 16;
      const uint8_t* qs = five ? b + 48 : b + 16;
      for (int e = 0; e < 256; ++e) {
        int c = e / 64, hi = (e % 64) / 32, l = e % 32;
        int s, m;
        scale_min_k4(2 * c + hi, sc, s, m);
        int q = hi ? qs[c * 32 + l] >> 4 : qs[c * 32 + l] & 0xF;
        if (five) q += ((qh[l] >> (2 * c + hi)) & 1) ? 16 : 0;
        y[e] = (d * float(s)) * float(q) - dmin * float(m);
      }
      return;
    }
    case QFormat::Q6_K: {
      const uint8_t* ql = b;
      const uint8_t* qh = b + 128;
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
      float d = rdh(b + 208);
      for (int e = 0; e < 256; ++e) {
        int h = e / 128, t = (e % 128) / 32, l = e % 32;
        int lo = ql[h * 64 + (t & 1) * 32 + l];
        lo = t >= 2 ? lo >> 4 : lo & 0xF;
        int q = (lo | (((qh[h * 32 + l] >> (2 * t)) & 3) << 4)) - 32;
        y[e] = d * float(sc[h * 8 + l / 16 + 2 * t]) * float(q);
      }
      return;
    }
  }
  throw std::invalid_argument("dequantize_ref: unknown format");
}

}  // namespace

const std::vector<FormatInfo>& all_formats() {
  static const std::vector<FormatInfo> v = {
      {QFormat::Q4_0, "q4_0", 32, 18},   {QFormat::Q4_1, "q4_1", 32, 20},   {QFormat::Q5_0, "q5_0", 32, 22},
      {QFormat::Q5_1, "q5_1", 32, 24},   {QFormat::Q8_0, "q8_0", 32, 34},   {QFormat::Q2_K, "q2_K", 256, 84},
      {QFormat::Q3_K, "q3_K", 256, 110}, {QFormat::Q4_K, "q4_K", 256, 144}, {QFormat::Q5_K, "q5_K", 256, 176},
      {QFormat::Q6_K, "q6_K", 256, 210},
  };
  return v;
}

std::optional<QFormat> format_from_id(int64_t id) {
  for (const auto& i : all_formats())
    if (int64_t(i.format) == id) return i.format;
  return std::nullopt;
}

const FormatInfo& info(QFormat f) {
  for (const auto& i : all_formats())
    if (i.format == f) return i;
  throw std::invalid_argument("unknown quantized format id " + std::to_string(int(f)));
}

std::optional<QFormat> parse_format(std::string_view name) {
  for (const auto& i : all_formats()) {
    std::string_view n = i.name;
    if (n.size() == name.size() &&
        std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
      return i.format;
  }
  return std::nullopt;
}

size_t packed_bytes(QFormat f, int64_t rows, int64_t k) {
  const FormatInfo& i = info(f);
  return size_t(rows) * size_t(k / i.block_elems) * size_t(i.block_bytes);
}

size_t padded_bytes(QFormat f, int64_t rows, int64_t k) { return (packed_bytes(f, rows, k) + 3) / 4 * 4; }

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0) {  // zero or subnormal: m·2^-24, exact in f32
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  uint32_t bits = e == 31 ? sign | 0x7F800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  uint16_t sign = uint16_t((b >> 16) & 0x8000);
  uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return uint16_t(sign | 0x7C00 | (a > 0x7F800000u ? 0x200 : 0));  // Inf / NaN
  if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // rounds to >= 65520: overflow
  if (a < 0x38800000u) {  // below 2^-14: subnormal half, round m·2^24 to nearest even
    float v = std::bit_cast<float>(a) * 16777216.0f;  // exact (power of two scaling)
    return uint16_t(sign | uint16_t(std::nearbyint(v)));
  }
  // Normal: drop 13 mantissa bits, round to nearest even (a carry into the
  // exponent is the correct result).
  uint32_t r = a - 0x38000000u;  // rebias 127 -> 15
  uint32_t half = (r >> 13) + (((r & 0x1FFF) > 0x1000 || ((r & 0x1FFF) == 0x1000 && ((r >> 13) & 1))) ? 1 : 0);
  return uint16_t(sign | half);
}

void dequantize_ref(QFormat f, const uint8_t* src, float* dst, int64_t nblocks) {
  const FormatInfo& i = info(f);
  for (int64_t b = 0; b < nblocks; ++b) deq_block(f, src + b * i.block_bytes, dst + b * i.block_elems);
}

void quantize_x8_ref(const float* x, float* xhat, int64_t n, int block) {
  for (int64_t b = 0; b < n / block; ++b, x += block, xhat += block) {
    float amax = 0;
    for (int j = 0; j < block; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < block; ++j) xhat[j] = d * std::nearbyint(x[j] * id);  // ties to even (default rounding mode)
  }
}

void quantize_q8_0_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 34) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    wr16(dst, float_to_half(d));
    for (int j = 0; j < 32; ++j) dst[2 + j] = uint8_t(int8_t(std::round(x[j] * id)));  // ties away from zero
  }
}

void quantize_q4_0_ref(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 18) {
    float amax = 0, max = 0;  // the first element of largest magnitude, with its sign
    for (int j = 0; j < 32; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
    wr16(dst, float_to_half(d));
    for (int j = 0; j < 16; ++j) {
      int q0 = std::min(15, int(int8_t(x[j] * id + 8.5f)));
      int q1 = std::min(15, int(int8_t(x[j + 16] * id + 8.5f)));
      dst[2 + j] = uint8_t(q0 | (q1 << 4));
    }
  }
}

void random_blocks(QFormat f, uint8_t* dst, int64_t nblocks, uint64_t seed) {
  const FormatInfo& fi = info(f);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mag(0.5f, 1.5f);
  auto sgn = [&] { return (rng() & 1) ? -1.0f : 1.0f; };
  auto put_half = [&](uint8_t* p, float v) { wr16(p, float_to_half(v)); };
  for (int64_t b = 0; b < nblocks; ++b) {
    uint8_t* p = dst + b * fi.block_bytes;
    for (int i = 0; i < fi.block_bytes; ++i) p[i] = uint8_t(rng());
    // Super-block scales so that weights are of order 1: d·q spans ~[-1, 1].
    switch (f) {
      case QFormat::Q4_0: case QFormat::Q5_0: put_half(p, sgn() * mag(rng) / 8); break;
      case QFormat::Q8_0: put_half(p, sgn() * mag(rng) / 128); break;
      case QFormat::Q4_1: case QFormat::Q5_1:
        put_half(p, mag(rng) / 16);
        put_half(p + 2, -mag(rng));
        break;
      case QFormat::Q2_K:  // scale nibble·q ≤ 45, min nibble ≤ 15
        put_half(p + 80, mag(rng) / 32);
        put_half(p + 82, mag(rng) / 16);
        break;
      case QFormat::Q3_K: put_half(p + 108, sgn() * mag(rng) / 128); break;  // |sc| ≤ 32, |q| ≤ 4
      case QFormat::Q4_K: case QFormat::Q5_K:  // sc, m ≤ 63; q ≤ 15 (31)
        put_half(p, mag(rng) / 512);
        put_half(p + 2, mag(rng) / 64);
        break;
      case QFormat::Q6_K: put_half(p + 208, sgn() * mag(rng) / 2048); break;  // |sc| ≤ 128, |q| ≤ 32
    }
  }
}

}  // namespace kgen::ops::quant
