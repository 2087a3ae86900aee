// Byte dot products, the plain C++ twins of samples/kernels/dot4.cpp: dot4
// takes the signedness of each packed operand from its type (u32: unsigned
// bytes, i32: signed), so bitcast<I>(u) picks the signed reading of the same
// bits. One kernel per line width (u32, u32x4, u32x8, u32x16).
//   kgen run-kernel samples/cpp/dot4.cpp --kernel dot4_l16
#include "kgen_kernel.h"

using namespace kgen;

// y gets 4 results per element: unsigned x unsigned, unsigned x signed,
// signed x unsigned, signed x signed.
template <class U, class I>
void dot4_signedness(const U* a, const U* b, const I* c, I* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    U av = a[i], bv = b[i];
    I cv = c[i];
    I as = bitcast<I>(av), bs = bitcast<I>(bv);
    y[i * 4u] = dot4(av, bv, cv);
    y[i * 4u + 1u] = dot4(av, bs, cv);
    y[i * 4u + 2u] = dot4(as, bv, cv);
    y[i * 4u + 3u] = dot4(as, bs, cv);
  }
}

KGEN_KERNEL void dot4_l1(const u32* a, const u32* b, const i32* c, i32* y, unsigned n) { dot4_signedness(a, b, c, y, n); }
KGEN_KERNEL void dot4_l4(const u32x4* a, const u32x4* b, const i32x4* c, i32x4* y, unsigned n) {
  dot4_signedness(a, b, c, y, n);
}
KGEN_KERNEL void dot4_l8(const u32x8* a, const u32x8* b, const i32x8* c, i32x8* y, unsigned n) {
  dot4_signedness(a, b, c, y, n);
}
KGEN_KERNEL void dot4_l16(const u32x16* a, const u32x16* b, const i32x16* c, i32x16* y, unsigned n) {
  dot4_signedness(a, b, c, y, n);
}

// Two dot4 chained through the accumulator: unsigned bytes below 64, then
// up to 127 (where a 16-bit pair sum would saturate), times signed bytes.
template <class U, class I>
void dot4_chain(const U* a, const U* b, const I* c, I* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    U av = a[i];
    I bs = bitcast<I>(b[i]), cv = c[i];
    I bs2 = bitcast<I>(b[i] >> 3u);
    y[i * 2u] = dot4(av & 0x3f3f3f3fu, bs, dot4((av >> 2u) & 0x3f3f3f3fu, bs2, cv));
    y[i * 2u + 1u] = dot4(av & 0x7f7f7f7fu, bs, dot4((av >> 1u) & 0x7f7f7f7fu, bs2, cv));
  }
}

KGEN_KERNEL void dot4_pair_l1(const u32* a, const u32* b, const i32* c, i32* y, unsigned n) { dot4_chain(a, b, c, y, n); }
KGEN_KERNEL void dot4_pair_l4(const u32x4* a, const u32x4* b, const i32x4* c, i32x4* y, unsigned n) {
  dot4_chain(a, b, c, y, n);
}
KGEN_KERNEL void dot4_pair_l8(const u32x8* a, const u32x8* b, const i32x8* c, i32x8* y, unsigned n) {
  dot4_chain(a, b, c, y, n);
}
KGEN_KERNEL void dot4_pair_l16(const u32x16* a, const u32x16* b, const i32x16* c, i32x16* y, unsigned n) {
  dot4_chain(a, b, c, y, n);
}

// max(byte, -127) on every signed byte: byte lines hold at most 16 lanes, so
// wider lines go 4 words at a time.
inline i32 clamp_bytes(i32 v) { return bitcast<i32>(max(bitcast<i8x4>(v), splat<i8x4>(-127))); }
inline i32x4 clamp_bytes(i32x4 v) { return bitcast<i32x4>(max(bitcast<i8x16>(v), splat<i8x16>(-127))); }
inline i32x8 clamp_bytes(i32x8 v) {
  i32x4 lo = clamp_bytes(i32x4{v[0], v[1], v[2], v[3]}), hi = clamp_bytes(i32x4{v[4], v[5], v[6], v[7]});
  return i32x8{lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
}
inline i32x16 clamp_bytes(i32x16 v) {
  i32x4 q0 = clamp_bytes(i32x4{v[0], v[1], v[2], v[3]}), q1 = clamp_bytes(i32x4{v[4], v[5], v[6], v[7]});
  i32x4 q2 = clamp_bytes(i32x4{v[8], v[9], v[10], v[11]}), q3 = clamp_bytes(i32x4{v[12], v[13], v[14], v[15]});
  return i32x16{q0[0], q0[1], q0[2], q0[3], q1[0], q1[1], q1[2], q1[3],
                q2[0], q2[1], q2[2], q2[3], q3[0], q3[1], q3[2], q3[3]};
}

// The edges of the x86 lowerings, 6 results per element: unsigned bytes up
// to 127 (2·127·-128) and up to 15 (nibble codes) times signed bytes, both
// ways round, then signed bytes times signed bytes clamped to >= -127.
template <class U, class I>
void dot4_edges(const U* a, const U* b, const I* c, I* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    U av = a[i];
    I bs = bitcast<I>(b[i]), cv = c[i];
    U small = av & 0x7f7f7f7fu;
    U nib = (av >> 4u) & 0x0f0f0f0fu;
    I as = bitcast<I>(av);
    I clamped = clamp_bytes(bs);
    y[i * 6u] = dot4(small, bs, cv);
    y[i * 6u + 1u] = dot4(bs, small, cv);
    y[i * 6u + 2u] = dot4(nib, bs, cv);
    y[i * 6u + 3u] = dot4(bs, nib, cv);
    y[i * 6u + 4u] = dot4(as, clamped, cv);
    y[i * 6u + 5u] = dot4(clamped, as, cv);
  }
}

KGEN_KERNEL void dot4_small_l1(const u32* a, const u32* b, const i32* c, i32* y, unsigned n) { dot4_edges(a, b, c, y, n); }
KGEN_KERNEL void dot4_small_l4(const u32x4* a, const u32x4* b, const i32x4* c, i32x4* y, unsigned n) {
  dot4_edges(a, b, c, y, n);
}
KGEN_KERNEL void dot4_small_l8(const u32x8* a, const u32x8* b, const i32x8* c, i32x8* y, unsigned n) {
  dot4_edges(a, b, c, y, n);
}
KGEN_KERNEL void dot4_small_l16(const u32x16* a, const u32x16* b, const i32x16* c, i32x16* y, unsigned n) {
  dot4_edges(a, b, c, y, n);
}
