// Signed 16-bit pair products into i32, the plain C++ twins of
// samples/kernels/dot2_i16.cpp: each i32 lane holds two i16 halves (half 0
// the low one). One kernel per line width (i32, i32x4, i32x8, i32x16).
//   kgen run-kernel samples/cpp/dot2_i16.cpp --kernel dot2_i16_l16
#include "kgen_kernel.h"

using namespace kgen;

// y gets 2 results per element: dot2_i16(a, b, c) and the same with a's
// halves swapped (the pairing of halves matters).
template <class I, class U>
void dot2_i16_both(const I* a, const I* b, const I* c, I* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    I av = a[i], bv = b[i], cv = c[i];
    y[i * 2u] = dot2_i16(av, bv, cv);
    I swapped = bitcast<I>((bitcast<U>(av) >> 16u) | (bitcast<U>(av) << 16u));
    y[i * 2u + 1u] = dot2_i16(swapped, bv, cv);
  }
}

KGEN_KERNEL void dot2_i16_l1(const i32* a, const i32* b, const i32* c, i32* y, unsigned n) {
  dot2_i16_both<i32, u32>(a, b, c, y, n);
}
KGEN_KERNEL void dot2_i16_l4(const i32x4* a, const i32x4* b, const i32x4* c, i32x4* y, unsigned n) {
  dot2_i16_both<i32x4, u32x4>(a, b, c, y, n);
}
KGEN_KERNEL void dot2_i16_l8(const i32x8* a, const i32x8* b, const i32x8* c, i32x8* y, unsigned n) {
  dot2_i16_both<i32x8, u32x8>(a, b, c, y, n);
}
KGEN_KERNEL void dot2_i16_l16(const i32x16* a, const i32x16* b, const i32x16* c, i32x16* y, unsigned n) {
  dot2_i16_both<i32x16, u32x16>(a, b, c, y, n);
}
