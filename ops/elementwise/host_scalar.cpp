// Loads, stores and conversions of ops/elementwise/host_scalar.h, and the
// f32 host conversions of fusion.h built on them.
#include "ops/elementwise/host_scalar.h"

#include <cstring>

#include "ir/half.h"
#include "ops/elementwise/fusion.h"

namespace kgen::ops::fusion {

using ir::ScalarKind;

Scalar convert(ScalarKind from, ScalarKind to, Scalar v, bool saturating) {
  return with_kind(from, [&](auto f) {
    using F = typename decltype(f)::type;
    const F x = get<F>(v);
    if (to == ScalarKind::F16) return put(ir::round_f16(c_cast<float>(x)));
    if (to == ScalarKind::BF16) return put(ir::round_bf16(c_cast<float>(x)));
    return with_kind(to, [&](auto t) {
      using T = typename decltype(t)::type;
      return put(saturating ? saturating_cast<T>(x) : c_cast<T>(x));
    });
  });
}

Scalar load(ScalarKind k, const void* base, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(base);
  if (k == ScalarKind::F16 || k == ScalarKind::BF16) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return put(k == ScalarKind::F16 ? ir::f16_to_f32(h) : ir::bf16_to_f32(h));
  }
  if (k == ScalarKind::Bool) return put(p[i] != 0);
  return with_kind(k, [&](auto t) {
    using T = typename decltype(t)::type;
    T x;
    std::memcpy(&x, p + sizeof(T) * size_t(i), sizeof(T));
    return put(x);
  });
}

void store(ScalarKind k, void* base, int64_t i, ScalarKind from, Scalar v) {
  auto* p = static_cast<uint8_t*>(base);
  if (k == ScalarKind::F16 || k == ScalarKind::BF16) {
    const float x = get<float>(convert(from, ScalarKind::F32, v));
    const uint16_t h = k == ScalarKind::F16 ? ir::f32_to_f16(x) : ir::f32_to_bf16(x);
    std::memcpy(p + 2 * i, &h, 2);
    return;
  }
  const Scalar y = convert(from, k, v);
  if (k == ScalarKind::Bool) {
    p[i] = uint8_t(y.i != 0);
    return;
  }
  with_kind(k, [&](auto t) {
    using T = typename decltype(t)::type;
    const T x = get<T>(y);
    std::memcpy(p + sizeof(T) * size_t(i), &x, sizeof(T));
  });
}

float load_as_f32(ScalarKind k, const void* base, int64_t i) {
  return get<float>(convert(compute_kind(k), ScalarKind::F32, load(k, base, i)));
}

std::vector<float> load_all_as_f32(ScalarKind k, const void* base, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = load_as_f32(k, base, i);
  return v;
}

void store_from_f32(ScalarKind k, void* base, int64_t i, float v) { store(k, base, i, ScalarKind::F32, put(v)); }

}  // namespace kgen::ops::fusion
