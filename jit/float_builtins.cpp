#include "jit/float_builtins.h"

#include <bit>
#include <cstdint>

namespace kgen::jit {

namespace {

// Round a double to a binary float with EB exponent and MB mantissa bits,
// once, to nearest even (the IR's rule for f64 -> f16/bf16, see
// ir/semantics.h; float inputs widen to double exactly first). Overflow gives
// infinity; a NaN stays a quiet NaN with its sign and leading payload bits.
template <int EB, int MB>
uint16_t round_from_double(double x) {
  constexpr int kMaxExp = (1 << EB) - 1;
  constexpr int kBias = (1 << (EB - 1)) - 1;
  constexpr uint16_t kInf = uint16_t(kMaxExp << MB);
  const uint64_t a = std::bit_cast<uint64_t>(x);
  const uint16_t sign = uint16_t((a >> 63) << (EB + MB));
  const int e = int((a >> 52) & 0x7ff);
  const uint64_t man = a & ((uint64_t(1) << 52) - 1);
  if (e == 0x7ff) return man ? uint16_t(sign | kInf | (1 << (MB - 1)) | (man >> (52 - MB))) : uint16_t(sign | kInf);
  const uint64_t sig = man | (e ? uint64_t(1) << 52 : 0);  // 53-bit significand
  const int e_unbiased = e ? e - 1023 : -1022;
  const int de = e_unbiased + kBias;  // biased exponent in the destination
  if (de >= kMaxExp) return uint16_t(sign | kInf);
  auto round_shift = [](uint64_t v, int sh) {  // v >> sh, rounded to nearest even
    const uint64_t q = v >> sh, rem = v & ((uint64_t(1) << sh) - 1), half = uint64_t(1) << (sh - 1);
    return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
  };
  if (de > 0) {
    // Exponent field plus mantissa: a rounding carry moves into the exponent
    // (and up to infinity) by itself.
    const uint64_t r = (uint64_t(de) << MB) + round_shift(sig, 52 - MB) - (uint64_t(1) << MB);
    return uint16_t(sign | r);
  }
  // Subnormal in the destination: count units of 2^(1 - bias - MB).
  const int sh = 52 - (e_unbiased - (1 - kBias - MB));
  if (sh > 63) return sign;  // below half the smallest subnormal
  return uint16_t(sign | round_shift(sig, sh));  // may round up to the smallest normal: still the right encoding
}

// x86-64 passes and returns _Float16 and __bf16 in the low 16 bits of xmm0,
// like a float: these signatures use float to move the bits.
float bits_as_xmm(uint16_t h) { return std::bit_cast<float>(uint32_t(h)); }
uint16_t xmm_as_bits(float f) { return uint16_t(std::bit_cast<uint32_t>(f)); }

float truncsfbf2(float x) { return bits_as_xmm(round_from_double<8, 7>(double(x))); }
float truncdfbf2(double x) { return bits_as_xmm(round_from_double<8, 7>(x)); }
float truncsfhf2(float x) { return bits_as_xmm(round_from_double<5, 10>(double(x))); }
float truncdfhf2(double x) { return bits_as_xmm(round_from_double<5, 10>(x)); }

float extendhfsf2(float h_in_xmm) {
  const uint32_t h = xmm_as_bits(h_in_xmm);
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 31, man = h & 0x3ffu;
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    const float v = float(man) * 0x1p-24f;  // exact: subnormal halves are multiples of 2^-24
    return (h & 0x8000u) ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (man << 13));
}
float extendbfsf2(float b_in_xmm) { return std::bit_cast<float>(uint32_t(xmm_as_bits(b_in_xmm)) << 16); }

}  // namespace

const std::vector<std::pair<const char*, void*>>& float_builtins() {
  static const std::vector<std::pair<const char*, void*>> table = {
      {"__truncsfbf2", reinterpret_cast<void*>(&truncsfbf2)}, {"__truncdfbf2", reinterpret_cast<void*>(&truncdfbf2)},
      {"__truncsfhf2", reinterpret_cast<void*>(&truncsfhf2)}, {"__truncdfhf2", reinterpret_cast<void*>(&truncdfhf2)},
      {"__extendhfsf2", reinterpret_cast<void*>(&extendhfsf2)}, {"__extendbfsf2", reinterpret_cast<void*>(&extendbfsf2)},
  };
  return table;
}

}  // namespace kgen::jit
