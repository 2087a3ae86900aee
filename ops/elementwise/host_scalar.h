// Host values of any compute kind, for the plain C++ references of this
// family (ops/elementwise/chain_reference.cpp): loads and stores of every
// storage type and the conversions of cast() and saturate_cast() written out
// in C++.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "ir/ir.h"

namespace kgen::ops::fusion {

// A value of one compute kind: floats in f (an f32 value exactly), bool and
// integers in i (u64: its bits).
struct Scalar {
  double f = 0;
  int64_t i = 0;
};

template <class T> T get(const Scalar& s) {
  if constexpr (std::is_floating_point_v<T>) return T(s.f);
  else if constexpr (std::is_same_v<T, bool>) return s.i != 0;
  else return T(s.i);
}
template <class T> Scalar put(T v) {
  Scalar s;
  if constexpr (std::is_floating_point_v<T>) s.f = double(v);
  else s.i = int64_t(v);
  return s;
}

// Calls f(std::type_identity<T>{}) with T the C++ type of compute kind k
// (bool, the integer kinds, float, double).
template <class F> decltype(auto) with_kind(ir::ScalarKind k, F&& f) {
  using K = ir::ScalarKind;
  switch (k) {
    case K::Bool: return f(std::type_identity<bool>{});
    case K::I8: return f(std::type_identity<int8_t>{});
    case K::I16: return f(std::type_identity<int16_t>{});
    case K::I32: return f(std::type_identity<int32_t>{});
    case K::I64: return f(std::type_identity<int64_t>{});
    case K::U8: return f(std::type_identity<uint8_t>{});
    case K::U16: return f(std::type_identity<uint16_t>{});
    case K::U32: return f(std::type_identity<uint32_t>{});
    case K::U64: return f(std::type_identity<uint64_t>{});
    case K::F32: return f(std::type_identity<float>{});
    case K::F64: return f(std::type_identity<double>{});
    default: break;
  }
  throw std::invalid_argument("fusion: " + std::string(ir::scalar_name(k)) + " is not a compute kind");
}

template <class T> constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// cast(): C's conversion; float -> int truncates toward zero and saturates,
// NaN -> 0 (where C leaves it undefined).
template <class To, class From> To c_cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<From, bool>) {
    return To(v ? 1 : 0);
  } else if constexpr (kIsInt<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    const From t = std::trunc(v), hi = std::ldexp(From(1), std::numeric_limits<To>::digits);
    if (t >= hi) return std::numeric_limits<To>::max();
    if (t < (std::is_signed_v<To> ? -hi : From(0))) return std::numeric_limits<To>::min();
    return To(t);
  } else {
    return static_cast<To>(v);  // int <-> int wraps; to float: nearest
  }
}

// saturate_cast(): to an integer, rounded half to even and clamped.
template <class To, class From> To saturating_cast(From v) {
  if constexpr (kIsInt<To> && std::is_floating_point_v<From>) {
    return c_cast<To>(std::nearbyint(v));
  } else if constexpr (kIsInt<To> && kIsInt<From>) {
    if (std::cmp_less(v, std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (std::cmp_greater(v, std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return To(v);
  } else {
    return c_cast<To>(v);
  }
}

// v (of kind `from`) converted to `to` as cast() (or saturate_cast()) does,
// in compute_kind(to): f16 and bf16 targets round there and stay f32.
Scalar convert(ir::ScalarKind from, ir::ScalarKind to, Scalar v, bool saturating = false);
// Element i of a buffer of storage type k, in compute_kind(k).
Scalar load(ir::ScalarKind k, const void* base, int64_t i);
// Stores v (of kind `from`) as element i of a buffer of storage type k.
void store(ir::ScalarKind k, void* base, int64_t i, ir::ScalarKind from, Scalar v);

}  // namespace kgen::ops::fusion
