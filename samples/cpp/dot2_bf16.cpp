// bf16 pair products into f32, the plain C++ twins of
// samples/kernels/dot2_bf16.cpp: each u32 lane holds two bf16 (half 0 the
// low one), built here from the upper 16 bits of two f32 inputs, so every
// value is a normal bf16. One kernel per line width (u32 .. u32x16).
//   kgen run-kernel samples/cpp/dot2_bf16.cpp --kernel dot2_bf16_l16
#include "kgen_kernel.h"

using namespace kgen;

// The bf16 pair of element i: the high halves of v[2i] (low) and v[2i + 1].
template <class U, class F>
U bf16_pairs(const F* v, unsigned i) {
  U lo = bitcast<U>(v[i * 2u]), hi = bitcast<U>(v[i * 2u + 1u]);
  return (hi & 0xffff0000u) | (lo >> 16u);
}

// y gets 2 results per element: dot2_bf16(a, b, c) and dot2_bf16(b, a, -c).
template <class U, class F>
void dot2_bf16_both(const F* x, const F* w, const F* c, F* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    U a = bf16_pairs<U>(x, i), b = bf16_pairs<U>(w, i);
    F cv = c[i];
    y[i * 2u] = dot2_bf16(a, b, cv);
    y[i * 2u + 1u] = dot2_bf16(b, a, -cv);
  }
}

KGEN_KERNEL void dot2_bf16_l1(const f32* x, const f32* w, const f32* c, f32* y, unsigned n) {
  dot2_bf16_both<u32>(x, w, c, y, n);
}
KGEN_KERNEL void dot2_bf16_l4(const f32x4* x, const f32x4* w, const f32x4* c, f32x4* y, unsigned n) {
  dot2_bf16_both<u32x4>(x, w, c, y, n);
}
KGEN_KERNEL void dot2_bf16_l8(const f32x8* x, const f32x8* w, const f32x8* c, f32x8* y, unsigned n) {
  dot2_bf16_both<u32x8>(x, w, c, y, n);
}
KGEN_KERNEL void dot2_bf16_l16(const f32x16* x, const f32x16* w, const f32x16* c, f32x16* y, unsigned n) {
  dot2_bf16_both<u32x16>(x, w, c, y, n);
}
