// The declarations every generated CUDA file starts with: the IR's type
// names, lines, and the helpers whose semantics CUDA's operators or
// intrinsics do not give directly (see ir/semantics.h, the spec).
#include "codegen/cuda_dialect.h"

namespace kgen::codegen {

std::string CudaDialect::prelude() const {
  return R"(// ---- kgen CUDA prelude ----
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef signed char i8; typedef short i16; typedef int i32; typedef long long i64;
typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long long u64;
typedef __half f16; typedef __nv_bfloat16 bf16; typedef float f32; typedef double f64;
#define KG_INL __device__ __forceinline__
// A line: lanes packed in order, lane 0 at the lowest address (the IR's memory
// layout). Power-of-two lines are aligned to their size (at most 16 bytes) so
// loads and stores of whole lines become vector instructions.
template <class T, int N>
struct alignas(((N & (N - 1)) == 0) ? (sizeof(T) * N < 16 ? sizeof(T) * N : 16) : sizeof(T)) kg_line {
  typedef T elem;
  static const int lanes = N;
  T v[N];
  KG_INL T& operator[](int i) { return v[i]; }
  KG_INL const T& operator[](int i) const { return v[i]; }
};
#define KG_LINE(T, N) typedef kg_line<T, N> T##x##N;
#define KG_LINES(T) KG_LINE(T, 2) KG_LINE(T, 3) KG_LINE(T, 4) KG_LINE(T, 8) KG_LINE(T, 16)
KG_LINES(bool) KG_LINES(i8) KG_LINES(i16) KG_LINES(i32) KG_LINES(i64) KG_LINES(u8) KG_LINES(u16) KG_LINES(u32)
KG_LINES(u64) KG_LINES(f16) KG_LINES(bf16) KG_LINES(f32) KG_LINES(f64)
// Explicit casts to the lane type: lane expressions of narrow ints are ints
// after promotion, and braced initialisation would reject the narrowing.
template <class L, class... A> KG_INL L kg_make(A... a) { L r = {{(typename L::elem)a...}}; return r; }
template <class L, class T> KG_INL L kg_splat(T x) { L r; for (int i = 0; i < L::lanes; ++i) r[i] = x; return r; }
template <class To, class From> KG_INL To kg_bitcast(From x) { To r; memcpy(&r, &x, sizeof(To)); return r; }
// Integers wrap: signed arithmetic is done in unsigned (as wide as the
// promoted type), since NVVM treats signed overflow as undefined.
template <class T> struct kg_wide { typedef u32 type; };
template <> struct kg_wide<i64> { typedef u64 type; };
template <> struct kg_wide<u64> { typedef u64 type; };
template <class T> struct kg_is_float { static const bool value = false; };
template <> struct kg_is_float<f32> { static const bool value = true; };
template <> struct kg_is_float<f64> { static const bool value = true; };
#define KG_W typename kg_wide<T>::type
template <class T> KG_INL T kg_add(T a, T b) { return (T)((KG_W)a + (KG_W)b); }
template <class T> KG_INL T kg_sub(T a, T b) { return (T)((KG_W)a - (KG_W)b); }
template <class T> KG_INL T kg_mul(T a, T b) { return (T)((KG_W)a * (KG_W)b); }
template <class T> KG_INL T kg_neg(T a) { return (T)((KG_W)0 - (KG_W)a); }
template <class T> KG_INL T kg_abs(T a) { return a < (T)0 ? kg_neg(a) : a; }
// Shift amounts are taken modulo the bit width.
template <class T> KG_INL T kg_shl(T a, T b) { return (T)((KG_W)a << ((KG_W)b & (sizeof(T) * 8 - 1))); }
// INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0 (both trap or are UB natively).
template <class T> KG_INL T kg_div(T a, T b) { if ((T)-1 < (T)0 && b == (T)-1) return kg_neg(a); return (T)(a / b); }
template <class T> KG_INL T kg_rem(T a, T b) { if ((T)-1 < (T)0 && b == (T)-1) return (T)0; return (T)(a % b); }
#undef KG_W
// float -> int: saturate, NaN -> 0 (lo/hi are exact powers of two).
template <class I, class F> KG_INL I kg_sat(F x, F lo, F hi, I imin, I imax) {
  return x != x ? (I)0 : x <= lo ? imin : x >= hi ? imax : (I)x;
}
// The binary ops of reductions, subgroup folds and float atomics: wrapping
// ints, IEEE minNum/maxNum floats, f16/bf16 rounded after each step, lines
// lane by lane.
template <class T> KG_INL T kg_op_add(T a, T b) { if constexpr (kg_is_float<T>::value) return a + b; else return kg_add(a, b); }
template <class T> KG_INL T kg_op_mul(T a, T b) { if constexpr (kg_is_float<T>::value) return a * b; else return kg_mul(a, b); }
template <class T> KG_INL T kg_op_min(T a, T b) {
  if constexpr (sizeof(T) == 4 && kg_is_float<T>::value) return fminf(a, b);
  else if constexpr (kg_is_float<T>::value) return fmin(a, b);
  else return b < a ? b : a;
}
template <class T> KG_INL T kg_op_max(T a, T b) {
  if constexpr (sizeof(T) == 4 && kg_is_float<T>::value) return fmaxf(a, b);
  else if constexpr (kg_is_float<T>::value) return fmax(a, b);
  else return a < b ? b : a;
}
#define KG_NARROW(op)                                                                                          \
  KG_INL f16 op(f16 a, f16 b) { return __float2half_rn(op(__half2float(a), __half2float(b))); }               \
  KG_INL bf16 op(bf16 a, bf16 b) { return __float2bfloat16_rn(op(__bfloat162float(a), __bfloat162float(b))); } \
  template <class T, int N> KG_INL kg_line<T, N> op(kg_line<T, N> a, kg_line<T, N> b) {                        \
    kg_line<T, N> r; for (int i = 0; i < N; ++i) r[i] = op(a[i], b[i]); return r;                              \
  }
KG_NARROW(kg_op_add) KG_NARROW(kg_op_mul) KG_NARROW(kg_op_min) KG_NARROW(kg_op_max)
#undef KG_NARROW
struct kg_fadd { template <class T> KG_INL T operator()(T a, T b) const { return kg_op_add(a, b); } };
struct kg_fmul { template <class T> KG_INL T operator()(T a, T b) const { return kg_op_mul(a, b); } };
struct kg_fmin { template <class T> KG_INL T operator()(T a, T b) const { return kg_op_min(a, b); } };
struct kg_fmax { template <class T> KG_INL T operator()(T a, T b) const { return kg_op_max(a, b); } };
// Horizontal fold of a line, lane 0 first (sequential, like the interpreter).
template <class T, int N, class F> KG_INL T kg_reduce(kg_line<T, N> x, F op) {
  T acc = x[0]; for (int i = 1; i < N; ++i) acc = op(acc, x[i]); return acc;
}
// Subgroups are warps (32 lanes, linear local id order). Shuffles move any
// type as 32-bit words.
KG_INL u32 kg_lane() { return ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) & 31u; }
template <class T> KG_INL T kg_shfl(u32 m, T v, u32 l) {
  const int W = (sizeof(T) + 3) / 4;
  u32 w[W] = {}; memcpy(w, &v, sizeof(T));
  for (int i = 0; i < W; ++i) w[i] = __shfl_sync(m, w[i], l);
  T r; memcpy(&r, w, sizeof(T)); return r;
}
template <class T> KG_INL T kg_sg_shuffle(T v, u32 l) { return kg_shfl(__activemask(), v, l); }
// Full warp: butterfly (every lane ends with the same value; reassociated,
// which the spec allows). Partial warp (a short last workgroup, returned
// items): a left fold over the active lanes in lane order, like the interpreter.
template <class T, class F> KG_INL T kg_sg_fold(T v, F op) {
  const u32 m = __activemask();
  if (m == 0xffffffffu) {
    for (u32 o = 16; o > 0; o >>= 1) v = op(v, kg_shfl(m, v, kg_lane() ^ o));
    return v;
  }
  u32 rest = m;
  T acc = kg_shfl(m, v, (u32)(__ffs(rest) - 1));
  rest &= rest - 1;
  while (rest) { acc = op(acc, kg_shfl(m, v, (u32)(__ffs(rest) - 1))); rest &= rest - 1; }
  return acc;
}
// Atomics returning the old value. Native where CUDA has the overload, a
// compare-and-swap loop on the bits otherwise (float min/max).
template <class W, class T, class F> KG_INL T kg_cas_loop(T* p, T v, F op) {
  W* wp = (W*)p;
  W old = *(volatile W*)wp, assumed;
  do {
    assumed = old;
    old = atomicCAS(wp, assumed, kg_bitcast<W>(op(kg_bitcast<T>(assumed), v)));
  } while (old != assumed);
  return kg_bitcast<T>(old);
}
KG_INL i32 kg_atomic_add(i32* p, i32 v) { return atomicAdd(p, v); }
KG_INL u32 kg_atomic_add(u32* p, u32 v) { return atomicAdd(p, v); }
KG_INL i64 kg_atomic_add(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)v); }
KG_INL u64 kg_atomic_add(u64* p, u64 v) { return atomicAdd(p, v); }
KG_INL f32 kg_atomic_add(f32* p, f32 v) { return atomicAdd(p, v); }
KG_INL f64 kg_atomic_add(f64* p, f64 v) { return atomicAdd(p, v); }
KG_INL i32 kg_atomic_min(i32* p, i32 v) { return atomicMin(p, v); }
KG_INL u32 kg_atomic_min(u32* p, u32 v) { return atomicMin(p, v); }
KG_INL i64 kg_atomic_min(i64* p, i64 v) { return atomicMin(p, v); }
KG_INL u64 kg_atomic_min(u64* p, u64 v) { return atomicMin(p, v); }
KG_INL f32 kg_atomic_min(f32* p, f32 v) { return kg_cas_loop<u32>(p, v, kg_fmin()); }
KG_INL f64 kg_atomic_min(f64* p, f64 v) { return kg_cas_loop<u64>(p, v, kg_fmin()); }
KG_INL i32 kg_atomic_max(i32* p, i32 v) { return atomicMax(p, v); }
KG_INL u32 kg_atomic_max(u32* p, u32 v) { return atomicMax(p, v); }
KG_INL i64 kg_atomic_max(i64* p, i64 v) { return atomicMax(p, v); }
KG_INL u64 kg_atomic_max(u64* p, u64 v) { return atomicMax(p, v); }
KG_INL f32 kg_atomic_max(f32* p, f32 v) { return kg_cas_loop<u32>(p, v, kg_fmax()); }
KG_INL f64 kg_atomic_max(f64* p, f64 v) { return kg_cas_loop<u64>(p, v, kg_fmax()); }
template <class T> KG_INL T kg_atomic_exch(T* p, T v) {
  if constexpr (sizeof(T) == 4) return kg_bitcast<T>(atomicExch((u32*)p, kg_bitcast<u32>(v)));
  else return kg_bitcast<T>(atomicExch((u64*)p, kg_bitcast<u64>(v)));
}
template <class T> KG_INL T kg_atomic_cas(T* p, T c, T v) {
  if constexpr (sizeof(T) == 4) return (T)atomicCAS((u32*)p, (u32)c, (u32)v);
  else return (T)atomicCAS((u64*)p, (u64)c, (u64)v);
}
// dot4 (ir/ops.h): PTX dp4a (sm_61+), the byte signedness in its types.
#define KG_DOT4(N, TA, TB, PA, PB) KG_INL i32 N(TA a, TB b, i32 c) { \
  i32 d; asm("dp4a." PA "." PB " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }
KG_DOT4(kg_dot4_ss, i32, i32, "s32", "s32") KG_DOT4(kg_dot4_su, i32, u32, "s32", "u32")
KG_DOT4(kg_dot4_us, u32, i32, "u32", "s32") KG_DOT4(kg_dot4_uu, u32, u32, "u32", "u32")
#undef KG_DOT4
// dot2_i16 (ir/ops.h): the signed halves' products (exact), summed wrapping.
KG_INL i32 kg_dot2_i16(i32 a, i32 b, i32 c) {
  return (i32)((u32)c + (u32)((i32)(short)a * (i32)(short)b) + (u32)((a >> 16) * (b >> 16)));
}
// dot2_bf16 (ir/ops.h): the halves as f32 (a product of two bf16 is exact),
// a.1·b.1 added first.
KG_INL f32 kg_dot2_bf16(u32 a, u32 b, f32 c) {
  return fmaf(__uint_as_float(a << 16), __uint_as_float(b << 16),
              fmaf(__uint_as_float(a & 0xffff0000u), __uint_as_float(b & 0xffff0000u), c));
}
// ---- end of prelude ----
)";
}

}  // namespace kgen::codegen
