// Scalar semantics of every kgen math operation: THE specification.
//
// The interpreter evaluates kernels with exactly these functions, the
// constant folder folds with them, and every codegen dialect (C/LLVM for the
// CPU JIT, CUDA, Vulkan, WebGPU) must produce the same bits (within the
// documented tolerance for the transcendental library functions and for
// reassociated reductions). When a target's native instruction differs
// (e.g. shifts by >= width, float->int conversion of NaN, fmin of signed
// zeros), the emitter has to add the fix-up; the spec does not bend.
//
// Header-only, side-effect free (the only "effect" is throwing
// DivisionByZero for integer division/remainder by zero).
//
// One C++ type per scalar kind: bool, int8_t..int64_t, uint8_t..uint64_t,
// Half (f16), BFloat16 (bf16), float (f32), double (f64). Every sem_<Op> is a
// template over these; instantiating it for a type outside the op's domain
// (ir/ops.h) is a compile error.
//
// Narrow floats: f16 and bf16 values are computed in float and rounded back
// (round to nearest even) after EVERY operation. The overloads doing that are
// generated for every op from the X-macro lists at the end of this file.
#pragma once
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "ir/half.h"
#include "ir/ops.h"
#include "ir/type.h"

namespace kgen::ir {

// ---------------------------------------------------------------------------
// Narrow float value types. Same size and bits as their storage (uint16), so
// buffers, shared memory and interpreter slots hold them directly.
struct Half {
  uint16_t bits;
  Half() = default;
  explicit Half(float f) : bits(f32_to_f16(f)) {}  // round to nearest even
  static Half from_bits(uint16_t b) { Half h; h.bits = b; return h; }
  explicit operator float() const { return f16_to_f32(bits); }  // exact
};
struct BFloat16 {
  uint16_t bits;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(f32_to_bf16(f)) {}  // round to nearest even
  static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
  explicit operator float() const { return bf16_to_f32(bits); }  // exact
};
static_assert(sizeof(Half) == 2 && std::is_trivially_copyable_v<Half>);
static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>);

template <class T> concept NarrowFloat = std::same_as<T, Half> || std::same_as<T, BFloat16>;
template <class T> concept IntLike = std::integral<T> && !std::same_as<T, bool>;
template <class T> concept FloatLike = std::floating_point<T> || NarrowFloat<T>;

// Mantissa precision (significant bits, including the implicit one).
template <class T> inline constexpr int kPrecision = std::numeric_limits<T>::digits;
template <> inline constexpr int kPrecision<Half> = 11;
template <> inline constexpr int kPrecision<BFloat16> = 8;

// Thrown by integer Div/Rem with a zero divisor; the interpreter turns it into
// an ir::Error at the instruction, the constant folder simply does not fold.
struct DivisionByZero : std::domain_error {
  DivisionByZero() : std::domain_error("integer division by zero") {}
};

// ---------------------------------------------------------------------------
// ScalarKind <-> C++ type.
template <ScalarKind K> struct KindType;
#define KGEN_KIND_TYPE(K, T) \
  template <> struct KindType<ScalarKind::K> { using type = T; };
KGEN_KIND_TYPE(Bool, bool)
KGEN_KIND_TYPE(I8, int8_t)
KGEN_KIND_TYPE(I16, int16_t)
KGEN_KIND_TYPE(I32, int32_t)
KGEN_KIND_TYPE(I64, int64_t)
KGEN_KIND_TYPE(U8, uint8_t)
KGEN_KIND_TYPE(U16, uint16_t)
KGEN_KIND_TYPE(U32, uint32_t)
KGEN_KIND_TYPE(U64, uint64_t)
KGEN_KIND_TYPE(F16, Half)
KGEN_KIND_TYPE(BF16, BFloat16)
KGEN_KIND_TYPE(F32, float)
KGEN_KIND_TYPE(F64, double)
#undef KGEN_KIND_TYPE
template <ScalarKind K> using kind_type_t = typename KindType<K>::type;

// Calls f(std::type_identity<T>{}) with T the C++ type of kind k (k != Void).
template <class F>
decltype(auto) visit_kind(ScalarKind k, F&& f) {
  switch (k) {
#define KGEN_X(K, ...) \
  case ScalarKind::K: return f(std::type_identity<kind_type_t<ScalarKind::K>>{});
    KGEN_SCALAR_KINDS(KGEN_X)
#undef KGEN_X
    case ScalarKind::Void: break;
  }
  throw std::logic_error("visit_kind: void has no values");
}

// True when op domain `d` admits lane type T (mirrors typing.cpp's in_domain).
template <class T>
constexpr bool domain_accepts(Domain d) {
  switch (d) {
    case Domain::Any: return true;
    case Domain::Numeric: return !std::same_as<T, bool>;
    case Domain::Float: return FloatLike<T>;
    case Domain::Int: return IntLike<T>;
    case Domain::Bits: return std::integral<T>;
  }
  return false;
}

namespace sem_detail {
// Unsigned type, at least as wide as `unsigned`, for wrapping arithmetic:
// avoids both signed-overflow UB and the promotion of u16*u16 to (signed) int.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T> constexpr bool dependent_false = false;
}  // namespace sem_detail

// ---------------------------------------------------------------------------
// Unary operations.

// neg: ints wrap (-INT_MIN == INT_MIN); floats flip the sign bit (IEEE negate).
template <class T> T sem_Neg(T a) {
  static_assert(!std::same_as<T, bool>, "neg is not defined on bool");
  if constexpr (IntLike<T>) return T(sem_detail::Wide<T>(0) - sem_detail::Wide<T>(a));
  else return -a;
}
// not: bitwise complement on ints, logical not on bool.
template <class T> T sem_Not(T a) {
  static_assert(std::integral<T>, "not needs an integer or bool");
  if constexpr (std::same_as<T, bool>) return !a;
  else return T(~a);
}
// abs: signed ints wrap (abs(INT_MIN) == INT_MIN); unsigned: identity;
// floats clear the sign bit (fabs; abs(NaN) is NaN).
template <class T> T sem_Abs(T a) {
  static_assert(!std::same_as<T, bool>, "abs is not defined on bool");
  if constexpr (IntLike<T> && std::is_signed_v<T>) return a < 0 ? sem_Neg(a) : a;
  else if constexpr (IntLike<T>) return a;
  else return std::fabs(a);
}

// Float-only unary functions: the C library function of the value's type
// (floorf/floor, ...). Round is nearbyint in the default rounding mode, i.e.
// ties to even (round(2.5) == 2). Rsqrt is 1/sqrt(x) (two roundings), so
// backends using a hardware rsqrt approximation need a tolerance.
#define KGEN_SEM_LIBM1(Name, expr_f, expr_d)                              \
  template <class T> T sem_##Name(T a) {                                  \
    static_assert(std::floating_point<T> || NarrowFloat<T>,               \
                     #Name " needs a float type");                        \
    if constexpr (std::same_as<T, float>) return expr_f;                  \
    else if constexpr (std::same_as<T, double>) return expr_d;            \
    else static_assert(sem_detail::dependent_false<T>, "narrow overload"); \
  }
KGEN_SEM_LIBM1(Floor, ::floorf(a), ::floor(a))
KGEN_SEM_LIBM1(Ceil, ::ceilf(a), ::ceil(a))
KGEN_SEM_LIBM1(Round, ::nearbyintf(a), ::nearbyint(a))
KGEN_SEM_LIBM1(Trunc, ::truncf(a), ::trunc(a))
KGEN_SEM_LIBM1(Sqrt, ::sqrtf(a), ::sqrt(a))
KGEN_SEM_LIBM1(Rsqrt, 1.0f / ::sqrtf(a), 1.0 / ::sqrt(a))
KGEN_SEM_LIBM1(Exp, ::expf(a), ::exp(a))
KGEN_SEM_LIBM1(Exp2, ::exp2f(a), ::exp2(a))
KGEN_SEM_LIBM1(Log, ::logf(a), ::log(a))
KGEN_SEM_LIBM1(Log2, ::log2f(a), ::log2(a))
KGEN_SEM_LIBM1(Sin, ::sinf(a), ::sin(a))
KGEN_SEM_LIBM1(Cos, ::cosf(a), ::cos(a))
KGEN_SEM_LIBM1(Tanh, ::tanhf(a), ::tanh(a))
KGEN_SEM_LIBM1(Erf, ::erff(a), ::erf(a))
#undef KGEN_SEM_LIBM1

// ---------------------------------------------------------------------------
// Binary operations (both operands have the same type).

// add/sub/mul: ints wrap modulo 2^bits (two's complement); floats IEEE with
// one rounding in the value's type.
template <class T> T sem_Add(T a, T b) {
  static_assert(!std::same_as<T, bool>, "add is not defined on bool");
  if constexpr (IntLike<T>) return T(sem_detail::Wide<T>(a) + sem_detail::Wide<T>(b));
  else return a + b;
}
template <class T> T sem_Sub(T a, T b) {
  static_assert(!std::same_as<T, bool>, "sub is not defined on bool");
  if constexpr (IntLike<T>) return T(sem_detail::Wide<T>(a) - sem_detail::Wide<T>(b));
  else return a - b;
}
template <class T> T sem_Mul(T a, T b) {
  static_assert(!std::same_as<T, bool>, "mul is not defined on bool");
  if constexpr (IntLike<T>) return T(sem_detail::Wide<T>(a) * sem_detail::Wide<T>(b));
  else return a * b;
}
// div: ints truncate toward zero (C); b == 0 throws DivisionByZero;
// INT_MIN / -1 wraps to INT_MIN. Floats: IEEE (x/0 = +-inf, 0/0 = NaN).
template <class T> T sem_Div(T a, T b) {
  static_assert(!std::same_as<T, bool>, "div is not defined on bool");
  if constexpr (IntLike<T>) {
    if (b == 0) throw DivisionByZero();
    if constexpr (std::is_signed_v<T>)
      if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
    return T(a / b);
  } else {
    return a / b;
  }
}
// rem: ints: C remainder (sign of the dividend, a == (a/b)*b + a%b);
// b == 0 throws DivisionByZero; INT_MIN % -1 == 0. Floats: fmod (exact, sign
// of the dividend), NOT IEEE remainder.
template <class T> T sem_Rem(T a, T b) {
  static_assert(!std::same_as<T, bool>, "rem is not defined on bool");
  if constexpr (IntLike<T>) {
    if (b == 0) throw DivisionByZero();
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return T(0);
    return T(a % b);
  } else {
    return std::fmod(a, b);
  }
}
// and/or/xor: bitwise on ints, logical on bool (xor == !=).
template <class T> T sem_And(T a, T b) {
  static_assert(std::integral<T>, "and needs an integer or bool");
  if constexpr (std::same_as<T, bool>) return a && b;
  else return T(a & b);
}
template <class T> T sem_Or(T a, T b) {
  static_assert(std::integral<T>, "or needs an integer or bool");
  if constexpr (std::same_as<T, bool>) return a || b;
  else return T(a | b);
}
template <class T> T sem_Xor(T a, T b) {
  static_assert(std::integral<T>, "xor needs an integer or bool");
  if constexpr (std::same_as<T, bool>) return a != b;
  else return T(a ^ b);
}
// Shift amount: b modulo the bit width, with b read as unsigned bits, i.e.
// b & (bits-1) (so -1 shifts by bits-1). Targets whose shifts are undefined or
// saturating for amounts >= width must mask.
template <class T> unsigned sem_shift_amount(T b) {
  return unsigned(sem_detail::Wide<T>(std::make_unsigned_t<T>(b)) & (sizeof(T) * 8 - 1));
}
// shl: bits shifted out are lost (wraps, also for signed).
template <class T> T sem_Shl(T a, T b) {
  static_assert(IntLike<T>, "shl needs an integer");
  return T(sem_detail::Wide<T>(a) << sem_shift_amount(b));
}
// shr: arithmetic (sign-filling) for signed, logical for unsigned.
template <class T> T sem_Shr(T a, T b) {
  static_assert(IntLike<T>, "shr needs an integer");
  return T(a >> sem_shift_amount(b));
}
// min/max: ints the obvious. Floats: IEEE minNum/maxNum like C fmin/fmax:
// if exactly one operand is NaN the other is returned, both NaN -> NaN.
// Signed zeros are ordered -0 < +0 (min(+0,-0) = -0, max = +0) so the result
// is deterministic; fmin leaves that unspecified, tests must not rely on it
// across backends.
template <class T> T sem_Min(T a, T b) {
  static_assert(!std::same_as<T, bool>, "min is not defined on bool");
  if constexpr (IntLike<T>) {
    return b < a ? b : a;
  } else {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return b < a ? b : a;
  }
}
template <class T> T sem_Max(T a, T b) {
  static_assert(!std::same_as<T, bool>, "max is not defined on bool");
  if constexpr (IntLike<T>) {
    return a < b ? b : a;
  } else {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a < b ? b : a;
  }
}
// pow: C powf/pow.
template <class T> T sem_Pow(T a, T b) {
  static_assert(std::floating_point<T> || NarrowFloat<T>, "pow needs a float type");
  if constexpr (std::same_as<T, float>) return ::powf(a, b);
  else if constexpr (std::same_as<T, double>) return ::pow(a, b);
  else static_assert(sem_detail::dependent_false<T>, "narrow overload");
}

// ---------------------------------------------------------------------------
// Comparisons -> bool. IEEE: every comparison with NaN is false except ne.
// eq/ne also accept bool.
template <class T> bool sem_Eq(T a, T b) { return a == b; }
template <class T> bool sem_Ne(T a, T b) { return a != b; }
template <class T> bool sem_Lt(T a, T b) { return a < b; }
template <class T> bool sem_Le(T a, T b) { return a <= b; }
template <class T> bool sem_Gt(T a, T b) { return a > b; }
template <class T> bool sem_Ge(T a, T b) { return a >= b; }

// ---------------------------------------------------------------------------
// select: c ? a : b (lines: per lane, with a bool line or one bool for all).
template <class T> T sem_Select(bool c, T a, T b) { return c ? a : b; }

// fma: a*b+c with ONE rounding (fmaf/fma). For f16/bf16: fmaf in float, then
// rounded to the narrow type (like every narrow op).
template <class T> T sem_Fma(T a, T b, T c) {
  static_assert(std::floating_point<T> || NarrowFloat<T>, "fma needs a float type");
  if constexpr (std::same_as<T, float>) return ::fmaf(a, b, c);
  else if constexpr (std::same_as<T, double>) return ::fma(a, b, c);
  else return T(::fmaf(float(a), float(b), float(c)));
}

// dot2_bf16: c + a.1·b.1 + a.0·b.0 over the bf16 halves of a and b (half 0
// the low one), in that order, each sum rounded to f32. A product of two
// bf16 is exact in f32 (8-bit significands), so fmaf rounds only the sums.
inline float sem_Dot2Bf16(uint32_t a, uint32_t b, float c) {
  auto half = [](uint32_t v, int j) { return std::bit_cast<float>(j ? v & 0xFFFF0000u : v << 16); };
  return ::fmaf(half(a, 0), half(b, 0), ::fmaf(half(a, 1), half(b, 1), c));
}

// dot2_i16: c + a.0·b.0 + a.1·b.1 over the signed 16-bit halves of a and b
// (half 0 the low one); the products are exact, the sum wraps modulo 2^32.
inline int32_t sem_Dot2I16(int32_t a, int32_t b, int32_t c) {
  auto half = [](int32_t v, int j) { return int64_t(int16_t(uint32_t(v) >> (16 * j))); };
  return int32_t(uint32_t(int64_t(c) + half(a, 0) * half(b, 0) + half(a, 1) * half(b, 1)));
}

// dot4: c + Σ_{j<4} byte_j(a)·byte_j(b), byte 0 the least significant; a
// byte of an int32_t operand is signed (-128..127), of a uint32_t unsigned.
// The products and the sum are exact; adding c wraps modulo 2^32.
template <class A, class B> int32_t sem_Dot4(A a, B b, int32_t c) {
  static_assert((std::same_as<A, int32_t> || std::same_as<A, uint32_t>) &&
                    (std::same_as<B, int32_t> || std::same_as<B, uint32_t>),
                "dot4 needs i32 or u32 operands");
  auto byte = []<class T>(T v, int j) -> int32_t {
    uint32_t u = (uint32_t(v) >> (8 * j)) & 0xFFu;
    return std::same_as<T, int32_t> ? int32_t(int8_t(uint8_t(u))) : int32_t(u);
  };
  int32_t sum = 0;  // |sum| <= 4·255·255: no overflow
  for (int j = 0; j < 4; ++j) sum += byte(a, j) * byte(b, j);
  return int32_t(uint32_t(c) + uint32_t(sum));
}

// ---------------------------------------------------------------------------
// Conversions.
namespace sem_detail {

// |v| rounded to p significant bits, ties to even, as an exact float: the
// correctly rounded int -> f16/bf16 conversion goes through this instead of
// int -> float -> narrow, which would round twice.
template <class I>
float int_rounded_to_precision(I v, int p) {
  bool neg = false;
  uint64_t m;
  if constexpr (std::is_signed_v<I>) {
    neg = v < 0;
    m = neg ? uint64_t(0) - uint64_t(int64_t(v)) : uint64_t(v);
  } else {
    m = uint64_t(v);
  }
  if (m == 0) return 0.0f;
  int msb = 63 - std::countl_zero(m);
  int drop = msb + 1 - p;
  float r;
  if (drop <= 0) {
    r = float(m);  // < 2^p <= 2^24: exact
  } else {
    uint64_t rest = m & ((uint64_t(1) << drop) - 1), half = uint64_t(1) << (drop - 1);
    m >>= drop;
    if (rest > half || (rest == half && (m & 1))) ++m;  // m <= 2^p: exact in float
    r = std::ldexp(float(m), drop);
  }
  return neg ? -r : r;
}

// double -> float rounding to ODD (truncate, then set the last bit if
// inexact). Float has >= 2 more bits than f16/bf16, so rounding this result to
// nearest-even in the narrow type equals rounding the double directly.
inline float round_to_odd_float(double d) {
  float f = float(d);
  if (double(f) == d || std::isnan(d)) return f;
  if (std::fabs(double(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// float/double -> int: NaN -> 0; otherwise truncate toward zero and saturate
// to [min, max] of the target.
template <class To, class F>
To float_to_int(F v) {
  if (std::isnan(v)) return To(0);
  F t = std::trunc(v);
  const F hi = std::ldexp(F(1), std::numeric_limits<To>::digits);  // 2^digits, exact
  const F lo = std::is_signed_v<To> ? -hi : F(0);
  if (t < lo) return std::numeric_limits<To>::min();
  if (t >= hi) return std::numeric_limits<To>::max();
  return To(t);
}

}  // namespace sem_detail

// cast<To>(v):
//   same type           -> v
//   anything -> bool    -> v != 0 (NaN -> true, -0.0 -> false)
//   bool -> number      -> 0 or 1
//   int -> int          -> wraps: truncate, or extend by the SOURCE signedness
//   int -> float        -> round to nearest even (one rounding, also to f16/bf16)
//   float -> int        -> NaN -> 0, truncate toward zero, saturate to min/max
//   float -> float      -> widening exact, narrowing rounds to nearest even
//                          (one rounding, also f64 -> f16/bf16)
template <class To, class From>
To sem_cast(From v) {
  using namespace sem_detail;
  if constexpr (std::same_as<To, From>) {
    return v;
  } else if constexpr (NarrowFloat<From>) {
    return sem_cast<To>(float(v));  // exact widening first
  } else if constexpr (std::same_as<To, bool>) {
    return v != From(0);
  } else if constexpr (std::same_as<From, bool>) {
    if constexpr (NarrowFloat<To>) return To(v ? 1.0f : 0.0f);
    else return v ? To(1) : To(0);
  } else if constexpr (NarrowFloat<To>) {
    if constexpr (std::same_as<From, float>) return To(v);
    else if constexpr (std::same_as<From, double>) return To(round_to_odd_float(v));
    else return To(int_rounded_to_precision(v, kPrecision<To>));
  } else if constexpr (IntLike<To> && std::floating_point<From>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);  // int<->int (modular), int->float, float<->float: RNE
  }
}

// bitcast: reinterpret the bits (equal sizes; lines reinterpret the packed
// lanes, lane 0 in the lowest address).
template <class To, class From>
To sem_bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast needs equal sizes");
  return std::bit_cast<To>(v);
}

// ---------------------------------------------------------------------------
// Reductions. ReduceX over a line and SubgroupX over the active items of a
// subgroup are SEQUENTIAL LEFT FOLDS in lane order 0..n-1 with the binary op:
// ((v0 op v1) op v2) ... (for f16/bf16 rounded after every step). Backends
// may reassociate (tree reductions), so tests compare with tolerances.
template <class T, class Op2>
T sem_fold(std::span<const T> v, Op2 op) {
  T acc = v[0];
  for (size_t i = 1; i < v.size(); ++i) acc = op(acc, v[i]);
  return acc;
}
template <class T> T sem_ReduceAdd(std::span<const T> v) { return sem_fold(v, [](T a, T b) { return sem_Add(a, b); }); }
template <class T> T sem_ReduceMul(std::span<const T> v) { return sem_fold(v, [](T a, T b) { return sem_Mul(a, b); }); }
template <class T> T sem_ReduceMin(std::span<const T> v) { return sem_fold(v, [](T a, T b) { return sem_Min(a, b); }); }
template <class T> T sem_ReduceMax(std::span<const T> v) { return sem_fold(v, [](T a, T b) { return sem_Max(a, b); }); }
template <class T> T sem_SubgroupAdd(std::span<const T> v) { return sem_ReduceAdd(v); }
template <class T> T sem_SubgroupMin(std::span<const T> v) { return sem_ReduceMin(v); }
template <class T> T sem_SubgroupMax(std::span<const T> v) { return sem_ReduceMax(v); }

// Atomics: the new memory value from the old one (the op returns the old).
// add wraps / IEEE-adds, min/max as sem_Min/sem_Max, exch stores v, cas
// stores v iff old == cmp (bitwise: cas is integer-only).
template <class T> T sem_AtomicAdd(T old, T v) { return sem_Add(old, v); }
template <class T> T sem_AtomicMin(T old, T v) { return sem_Min(old, v); }
template <class T> T sem_AtomicMax(T old, T v) { return sem_Max(old, v); }
template <class T> T sem_AtomicExch(T, T v) { return v; }
template <class T> T sem_AtomicCas(T old, T cmp, T v) { return old == cmp ? v : old; }

// ---------------------------------------------------------------------------
// f16/bf16: compute in float, round back after every op. Generated from the
// lists so a new op cannot forget its narrow variant. (More constrained than
// the generic templates above, so overload resolution picks these.)
#define KGEN_SEM_NARROW_UNARY(Name, ...) \
  template <NarrowFloat T> T sem_##Name(T a) { return T(sem_##Name(float(a))); }
#define KGEN_SEM_NARROW_BINARY(Name, ...) \
  template <NarrowFloat T> T sem_##Name(T a, T b) { return T(sem_##Name(float(a), float(b))); }
#define KGEN_SEM_NARROW_COMPARE(Name, ...) \
  template <NarrowFloat T> bool sem_##Name(T a, T b) { return sem_##Name(float(a), float(b)); }
KGEN_UNARY_OPS(KGEN_SEM_NARROW_UNARY)
KGEN_BINARY_OPS(KGEN_SEM_NARROW_BINARY)
KGEN_COMPARE_OPS(KGEN_SEM_NARROW_COMPARE)
#undef KGEN_SEM_NARROW_UNARY
#undef KGEN_SEM_NARROW_BINARY
#undef KGEN_SEM_NARROW_COMPARE
template <NarrowFloat T> T sem_AtomicCas(T old, T cmp, T v) { return old.bits == cmp.bits ? v : old; }

}  // namespace kgen::ir
