// The scalar spec (ir/semantics.h), checked directly on edge cases.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ir/semantics.h"

using namespace kgen::ir;

TEST_CASE("integer arithmetic wraps in two's complement") {
  CHECK(sem_Add<int32_t>(INT32_MAX, 1) == INT32_MIN);
  CHECK(sem_Sub<int8_t>(-128, 1) == 127);
  CHECK(sem_Mul<uint16_t>(65535, 65535) == 1);  // no promotion to signed int overflow
  CHECK(sem_Mul<int64_t>(INT64_MAX, 2) == -2);
  CHECK(sem_Neg<int32_t>(INT32_MIN) == INT32_MIN);
  CHECK(sem_Abs<int16_t>(INT16_MIN) == INT16_MIN);
  CHECK(sem_Abs<int16_t>(-5) == 5);
  CHECK(sem_Abs<uint8_t>(200) == 200);
}

TEST_CASE("integer division truncates, by zero throws, INT_MIN/-1 wraps") {
  CHECK(sem_Div<int32_t>(-7, 2) == -3);
  CHECK(sem_Rem<int32_t>(-7, 2) == -1);
  CHECK(sem_Rem<int32_t>(7, -2) == 1);
  CHECK(sem_Div<uint32_t>(7, 2) == 3);
  CHECK(sem_Div<int32_t>(INT32_MIN, -1) == INT32_MIN);
  CHECK(sem_Rem<int32_t>(INT32_MIN, -1) == 0);
  CHECK(sem_Div<int8_t>(-128, -1) == -128);
  CHECK_THROWS_AS(sem_Div<int32_t>(1, 0), DivisionByZero);
  CHECK_THROWS_AS(sem_Rem<uint64_t>(1, 0), DivisionByZero);
  CHECK(std::isinf(sem_Div<float>(1.0f, 0.0f)));
  CHECK(sem_Rem<float>(-7.5f, 2.0f) == -1.5f);  // fmod
}

TEST_CASE("shifts take the amount modulo the width") {
  CHECK(sem_Shl<uint32_t>(1, 33) == 2);
  CHECK(sem_Shl<uint8_t>(1, 9) == 2);
  CHECK(sem_Shl<int32_t>(1, 31) == INT32_MIN);
  CHECK(sem_Shr<int32_t>(-8, 1) == -4);          // arithmetic
  CHECK(sem_Shr<uint32_t>(0x80000000u, 31) == 1);  // logical
  CHECK(sem_Shr<int8_t>(-128, 7) == -1);
  CHECK(sem_Shr<int32_t>(-1, -1) == -1);         // amount -1 -> 31
  CHECK(sem_Shl<uint64_t>(1, 64) == 1);
}

TEST_CASE("bitwise ops are logical on bool") {
  CHECK(sem_Not<bool>(true) == false);
  CHECK(sem_Not<uint8_t>(0x0f) == 0xf0);
  CHECK(sem_Xor<bool>(true, true) == false);
  CHECK(sem_And<bool>(true, false) == false);
  CHECK(sem_Or<int32_t>(5, 2) == 7);
}

TEST_CASE("float min/max ignore a single NaN, round is ties-to-even") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(sem_Min(nan, 1.0f) == 1.0f);
  CHECK(sem_Max(2.0f, nan) == 2.0f);
  CHECK(std::isnan(sem_Min(nan, nan)));
  CHECK(std::signbit(sem_Min(0.0f, -0.0f)));
  CHECK(!std::signbit(sem_Max(-0.0f, 0.0f)));
  CHECK(sem_Round(2.5f) == 2.0f);
  CHECK(sem_Round(3.5) == 4.0);
  CHECK(sem_Round(-0.5f) == 0.0f);
  CHECK(sem_Rsqrt(4.0f) == 0.5f);
  CHECK_FALSE(sem_Lt(nan, 1.0f));
  CHECK_FALSE(sem_Eq(nan, nan));
  CHECK(sem_Ne(nan, nan));
}

TEST_CASE("f16 and bf16 compute in float and round after every op") {
  Half one(1.0f), eps(1.0f / 2048.0f);  // half an ulp of 1.0 in f16
  CHECK(float(sem_Add(one, eps)) == 1.0f);  // tie -> even
  Half tiny(1.0f / 1024.0f);
  CHECK(float(sem_Add(one, tiny)) == 1.0f + 1.0f / 1024.0f);
  CHECK(float(sem_Mul(Half(300.0f), Half(300.0f))) == INFINITY);  // > 65504
  BFloat16 b = sem_Add(BFloat16(1.0f), BFloat16(1.0f / 256.0f));
  CHECK(float(b) == 1.0f);
  CHECK(sem_Lt(Half(1.0f), Half(2.0f)));
  CHECK(float(sem_Sqrt(Half(2.0f))) == float(Half(std::sqrt(2.0f))));
}

TEST_CASE("casts: saturation, NaN -> 0, bool, wraparound") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(sem_cast<int32_t>(nan) == 0);
  CHECK(sem_cast<int32_t>(3e9f) == INT32_MAX);
  CHECK(sem_cast<int32_t>(-3e9f) == INT32_MIN);
  CHECK(sem_cast<uint8_t>(-1.5f) == 0);
  CHECK(sem_cast<uint8_t>(300.0) == 255);
  CHECK(sem_cast<int8_t>(-7.9f) == -7);
  CHECK(sem_cast<int64_t>(1e300) == INT64_MAX);
  CHECK(sem_cast<uint64_t>(1.8446744073709552e19) == UINT64_MAX);
  CHECK(sem_cast<int32_t>(2147483520.0f) == 2147483520);
  CHECK(sem_cast<int32_t>(Half(-2.75f)) == -2);
  CHECK(sem_cast<bool>(nan) == true);
  CHECK(sem_cast<bool>(-0.0f) == false);
  CHECK(sem_cast<bool>(int32_t(256)) == true);
  CHECK(sem_cast<float>(true) == 1.0f);
  CHECK(sem_cast<uint8_t>(int32_t(257)) == 1);
  CHECK(sem_cast<int32_t>(int8_t(-1)) == -1);     // sign-extends a signed source
  CHECK(sem_cast<int32_t>(uint8_t(255)) == 255);  // zero-extends an unsigned source
  CHECK(sem_cast<uint64_t>(int32_t(-1)) == UINT64_MAX);
}

TEST_CASE("casts to f16/bf16 round once") {
  CHECK(sem_cast<Half>(70000.0f).bits == 0x7c00);
  CHECK(float(sem_cast<Half>(int32_t(2049))) == 2048.0f);  // tie -> even
  CHECK(float(sem_cast<Half>(int32_t(2051))) == 2052.0f);
  CHECK(sem_cast<Half>(int32_t(65520)).bits == 0x7c00);
  CHECK(float(sem_cast<Half>(int32_t(-65504))) == -65504.0f);
  // int -> bf16 rounds once: via float it would round twice (to 2^24+65536,
  // then to the even 2^24) instead of up to 2^24 + 2^17.
  CHECK(float(sem_cast<BFloat16>(int32_t((1 << 24) + 65537))) == float((1 << 24) + (1 << 17)));
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is just above the tie.
  CHECK(float(sem_cast<Half>(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))) == 1.0f + 1.0f / 1024.0f);
  CHECK(float(sem_cast<Half>(1.0 + std::ldexp(1.0, -11))) == 1.0f);
  CHECK(float(sem_cast<BFloat16>(Half(3.0f))) == 3.0f);
  CHECK(std::isnan(float(sem_cast<Half>(std::nan("")))));
  CHECK(sem_cast<float>(int32_t(16777217)) == 16777216.0f);
  CHECK(sem_bitcast<uint32_t>(1.0f) == 0x3f800000u);
  CHECK(sem_bitcast<uint16_t>(Half(1.0f)) == 0x3c00);
}

TEST_CASE("reductions are left folds in lane order") {
  float v[] = {1e8f, 1.0f, -1e8f, 1.0f};
  CHECK(sem_ReduceAdd<float>(v) == 1.0f);  // ((1e8+1)-1e8)+1 = 0+1
  int32_t w[] = {3, -2, 7};
  CHECK(sem_ReduceMin<int32_t>(w) == -2);
  CHECK(sem_ReduceMax<int32_t>(w) == 7);
  CHECK(sem_ReduceMul<int32_t>(w) == -42);
  CHECK(sem_AtomicCas<uint32_t>(5, 5, 9) == 9);
  CHECK(sem_AtomicCas<uint32_t>(5, 4, 9) == 5);
}

TEST_CASE("dot2_bf16 adds the high halves' product first, then the low halves', rounding each sum") {
  auto pair = [](uint16_t hi, uint16_t lo) { return uint32_t(hi) << 16 | lo; };
  const uint16_t one = 0x3F80, minus_one = 0xBF80, two = 0x4000, tiny = 0x3800;  // tiny = 2^-15
  CHECK(sem_Dot2Bf16(pair(two, one), pair(two, two), 0.5f) == 0.5f + 4.0f + 2.0f);
  // (1 + -1) + 2^-30 = 2^-30; the other order would lose 2^-30 against 1.
  CHECK(sem_Dot2Bf16(pair(minus_one, tiny), pair(one, tiny), 1.0f) == std::ldexp(1.0f, -30));
  // Two roundings: 1 + 2^-24 ties to 1, twice; one rounding of the exact sum
  // would give 1 + 2^-23.
  const uint16_t t12 = 0x3980;  // 2^-12
  CHECK(sem_Dot2Bf16(pair(t12, t12), pair(t12, t12), 1.0f) == 1.0f);
  // Products are exact: (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 needs 15 bits.
  const uint16_t q = 0x3F81;
  CHECK(sem_Dot2Bf16(pair(q, 0), pair(q, 0), 0.0f) == 1.0f + std::ldexp(1.0f, -6) + std::ldexp(1.0f, -14));
}

TEST_CASE("dot2_i16 multiplies the signed 16-bit halves pairwise and wraps the sum") {
  // Halves (low first) 3, -2 and 5, 7.
  const int32_t a = int32_t(0xFFFE0003u), b = int32_t(0x00070005u);
  CHECK(sem_Dot2I16(a, b, 10) == 10 + 15 - 14);
  CHECK(sem_Dot2I16(b, a, -10) == -10 + 15 - 14);
  CHECK(sem_Dot2I16(int32_t(0x80008000u), int32_t(0x80008000u), 0) == INT32_MIN);  // 2·2^30 wraps
  CHECK(sem_Dot2I16(int32_t(0x80008000u), int32_t(0x80008000u), -1) == INT32_MAX);
  CHECK(sem_Dot2I16(int32_t(0x7FFF8000u), int32_t(0x7FFF7FFFu), 0) == -32768 * 32767 + 32767 * 32767);
  CHECK(sem_Dot2I16(0x00010000, 0x00000001, 5) == 5);  // element 1 of a meets element 1 of b only
}

TEST_CASE("dot4 multiplies the four bytes of each operand, signed for i32, and wraps the sum") {
  // Bytes (least significant first) 1, 2, 3, 0xFF and 4, 5, 6, 0xFF.
  const uint32_t a = 0xFF030201u, b = 0xFF060504u;
  CHECK(sem_Dot4(a, b, 10) == 10 + 4 + 10 + 18 + 255 * 255);
  CHECK(sem_Dot4(a, int32_t(b), 10) == 10 + 4 + 10 + 18 - 255);  // 0xFF of b is -1
  CHECK(sem_Dot4(int32_t(a), b, 10) == 10 + 4 + 10 + 18 - 255);
  CHECK(sem_Dot4(int32_t(a), int32_t(b), 10) == 10 + 4 + 10 + 18 + 1);
  CHECK(sem_Dot4(0x80808080u, int32_t(0x80808080u), 0) == 4 * 128 * -128);  // extremes of u8 x i8
  CHECK(sem_Dot4(int32_t(0x80808080u), int32_t(0x80808080u), 0) == 4 * 128 * 128);
  CHECK(sem_Dot4(0xFFFFFFFFu, 0xFFFFFFFFu, INT32_MAX) == int32_t(uint32_t(INT32_MAX) + 4u * 255u * 255u));  // wraps
}
