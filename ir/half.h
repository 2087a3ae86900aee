// IEEE binary16 and bfloat16 conversions (round to nearest even), used by the
// interpreter, the host side of runtimes and tests. Header-only and exact.
#pragma once
#include <cstdint>
#include <cstring>

namespace kgen::ir {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline uint16_t f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));  // inf/nan
  int32_t e = int32_t(exp) - 127 + 15;
  if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                    // subnormal or zero
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into exponent: correct
  return uint16_t(half);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_f32(sign);
    // subnormal: normalise
    int e = -1;
    do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
    return bits_f32(sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13));
  }
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return uint16_t(x >> 16);
}

inline float bf16_to_f32(uint16_t h) { return bits_f32(uint32_t(h) << 16); }

// Round a float through the narrow format (what storing it would keep).
inline float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }
inline float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }

}  // namespace kgen::ir
