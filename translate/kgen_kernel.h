// The builtins of plain C++ kernels for `kgen translate`.
//
//   #include "kgen_kernel.h"
//   using namespace kgen;
//
//   KGEN_KERNEL void saxpy(const float* x, float* y, float a, unsigned n) {
//     unsigned i = global_id(0);
//     if (i < n) y[i] = a * x[i] + y[i];
//   }
//
// The translator (clang) reads the declarations below by name; it never looks
// at their bodies. The bodies give the same file a serial host meaning, so a
// kernel also compiles with any C++20 compiler and runs (and can be debugged)
// on the host through kgen::host::launch. The host runs the work-items of a
// group one after another, so barrier() is a no-op there: kernels that
// communicate through shared memory only run correctly on the host with
// one-item groups.
//
// No standard headers are included: clang parses this file for every
// translation, and it must stay cheap.
#pragma once

#if defined(__clang__)
// Marks a function as a kernel to translate.
#define KGEN_KERNEL [[clang::annotate("kgen::kernel")]]
// Fixes the workgroup size of a kernel: KGEN_WORKGROUP(256) or (16, 16).
#define KGEN_WORKGROUP(...) [[clang::annotate("kgen::workgroup", __VA_ARGS__)]]
// Declares a workgroup-shared array: KGEN_SHARED float tile[16][16];
#define KGEN_SHARED [[clang::annotate("kgen::shared")]] static
#else
#define KGEN_KERNEL
#define KGEN_WORKGROUP(...)
#define KGEN_SHARED static
#endif

namespace kgen {

// The IR's scalar types by their IR names (no <cstdint> here).
using i8 = signed char;
using i16 = short;
using i32 = int;
using i64 = long long;
using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned;
using u64 = unsigned long long;
using f32 = float;
using f64 = double;
using f16 = _Float16;
#if defined(__clang__) || __GNUC__ >= 13
using bf16 = __bf16;
#endif

// The work-item the host is running; set by host::launch.
namespace host {
struct Item {
  unsigned global[3], local[3], group[3], size[3], groups[3];
};
inline Item current{};
}  // namespace host

// Vector lines: N lanes of one type (N = 2, 4, 8 or 16), as GNU vectors so
// that a host compiler runs them too. Buffers of lines (`const f32x16* x`)
// load and store whole lines; + - * / and compound assignment work lane-wise,
// a scalar operand is splat across the lanes (`a * x[i]`); v[k] with a
// constant k reads or writes one lane; `f32x4 v = {a, b, c, d}` builds one.
// GCC notes that lines passed by value (splat, reduce_*) have another ABI
// without AVX-512; the calls are in the kernel's own file and inlined, so
// the note is silenced for the rest of the file too.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define KGEN_LINES(T, name)                                                    \
  using name##x2 = T __attribute__((vector_size(2 * sizeof(T))));             \
  using name##x4 = T __attribute__((vector_size(4 * sizeof(T))));             \
  using name##x8 = T __attribute__((vector_size(8 * sizeof(T))));             \
  using name##x16 = T __attribute__((vector_size(16 * sizeof(T))));
KGEN_LINES(float, f32)
KGEN_LINES(double, f64)
KGEN_LINES(signed char, i8)
KGEN_LINES(unsigned char, u8)
KGEN_LINES(short, i16)
KGEN_LINES(unsigned short, u16)
KGEN_LINES(int, i32)
KGEN_LINES(unsigned, u32)
#undef KGEN_LINES

// A line type: indexable and added lane-wise (pointers cannot be added).
template <class V>
concept Line = requires(V v) {
  v[0];
  v + v;
} && sizeof(V) > sizeof(V{}[0]);

// The line V with every lane x: splat<f32x16>(a).
template <class V, class T> inline V splat(T x) {
  V v{};
  for (unsigned i = 0; i < sizeof(V) / sizeof(v[0]); ++i) v[i] = x;  // converts x to the lane type, narrow ones too
  return v;
}

// Horizontal reductions of a line to one lane value, lane 0 first.
template <class V> inline auto reduce_add(V v) {
  auto r = v[0];
  for (unsigned i = 1; i < sizeof(V) / sizeof(r); ++i) r += v[i];
  return r;
}
template <class V> inline auto reduce_mul(V v) {
  auto r = v[0];
  for (unsigned i = 1; i < sizeof(V) / sizeof(r); ++i) r *= v[i];
  return r;
}
template <class V> inline auto reduce_min(V v) {
  auto r = v[0];
  for (unsigned i = 1; i < sizeof(V) / sizeof(r); ++i) r = v[i] < r ? v[i] : r;
  return r;
}
template <class V> inline auto reduce_max(V v) {
  auto r = v[0];
  for (unsigned i = 1; i < sizeof(V) / sizeof(r); ++i) r = r < v[i] ? v[i] : r;
  return r;
}

// Work-item and workgroup indices along axis d (0, 1 or 2), as in the IR.
inline unsigned global_id(unsigned d) { return host::current.global[d]; }
inline unsigned local_id(unsigned d) { return host::current.local[d]; }
inline unsigned group_id(unsigned d) { return host::current.group[d]; }
inline unsigned group_size(unsigned d) { return host::current.size[d]; }
inline unsigned num_groups(unsigned d) { return host::current.groups[d]; }

// Workgroup barrier: every work-item of the group must reach it.
inline void barrier() {}

// Atomic read-modify-writes of one element, `atomic_add(&hist[b], 1u)`;
// they return the old value.
template <class T> inline T atomic_add(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T> inline T atomic_min(T* p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <class T> inline T atomic_max(T* p, T v) { T old = *p; *p = v > old ? v : old; return old; }
template <class T> inline T atomic_exch(T* p, T v) { T old = *p; *p = v; return old; }
template <class T> inline T atomic_cas(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }

// Memory hints; neither changes what a kernel computes. stream(&y[i], v)
// is y[i] = v written around the caches (a non-temporal store: no read for
// ownership of the output line), for large write-once outputs of buffer
// parameters; GPU targets store plainly. prefetch(&x[i]) says x[i] is read
// soon, prefetch_write(&y[i]) that y[i] is written soon; they never fault,
// so i may run past the end (the host does nothing).
template <class T, class V> inline void stream(T* p, V v) { *p = v; }
template <class T> inline void prefetch(const T*) {}
template <class T> inline void prefetch_write(const T*) {}

// Lines at any element offset of a buffer of scalars: load_line<f32x16>(x, at)
// reads x[at .. at + 15] as one line, store_line(y, at, v) writes v's lanes
// there (lane by lane; the index is widened to 64 bits first).
template <Line V, class T> requires(!Line<T>) inline V load_line(const T* p, unsigned long long at) {
  V v{};
  for (unsigned i = 0; i < sizeof(V) / sizeof(v[0]); ++i) v[i] = p[at + i];
  return v;
}
template <class T, Line V> requires(!Line<T>) inline void store_line(T* p, unsigned long long at, V v) {
  for (unsigned i = 0; i < sizeof(V) / sizeof(v[0]); ++i) p[at + i] = v[i];
}

// c ? a : b without a branch. On lines, lane by lane: the mask is a
// comparison of lines (`x < y`, all ones where it holds) of as many lanes,
// or any integer line (a lane that is not zero picks a).
template <class M, class T> requires(Line<M> == Line<T>) inline T select(M c, T a, T b) {
  if constexpr (Line<T>) {
    for (unsigned i = 0; i < sizeof(T) / sizeof(a[0]); ++i) a[i] = c[i] ? a[i] : b[i];
    return a;
  } else {
    return c ? a : b;
  }
}

// Subgroups (a target capability): work-items that run in lockstep, local
// ids [k·size, (k+1)·size) of a group. The reductions give every member
// the subgroup's sum, min or max of v. The host runs one work-item at a
// time, so there a subgroup is one work-item: size 1, lane 0, v itself.
inline unsigned subgroup_size() { return 1; }
inline unsigned subgroup_lane() { return 0; }
template <class T> inline T subgroup_add(T v) { return v; }
template <class T> inline T subgroup_min(T v) { return v; }
template <class T> inline T subgroup_max(T v) { return v; }

// +infinity as a float constant (for running maxima).
inline constexpr float infinity = __builtin_huge_valf();

// Math with the IR's meaning (rint rounds ties to even); on a line, lane by
// lane. min and max take two scalars or two lines.
#define KGEN_MATH1(name, f_builtin, d_builtin)                 \
  inline float name(float x) { return f_builtin(x); }           \
  inline double name(double x) { return d_builtin(x); }         \
  template <Line V> inline V name(V v) {                        \
    for (unsigned i = 0; i < sizeof(V) / sizeof(v[0]); ++i)     \
      v[i] = name(v[i]);                                        \
    return v;                                                   \
  }
KGEN_MATH1(sqrt, __builtin_sqrtf, __builtin_sqrt)
KGEN_MATH1(exp, __builtin_expf, __builtin_exp)
KGEN_MATH1(exp2, __builtin_exp2f, __builtin_exp2)
KGEN_MATH1(log, __builtin_logf, __builtin_log)
KGEN_MATH1(log2, __builtin_log2f, __builtin_log2)
KGEN_MATH1(sin, __builtin_sinf, __builtin_sin)
KGEN_MATH1(cos, __builtin_cosf, __builtin_cos)
KGEN_MATH1(tanh, __builtin_tanhf, __builtin_tanh)
KGEN_MATH1(erf, __builtin_erff, __builtin_erf)
KGEN_MATH1(floor, __builtin_floorf, __builtin_floor)
KGEN_MATH1(ceil, __builtin_ceilf, __builtin_ceil)
KGEN_MATH1(trunc, __builtin_truncf, __builtin_trunc)
KGEN_MATH1(rint, __builtin_rintf, __builtin_rint)
KGEN_MATH1(fabs, __builtin_fabsf, __builtin_fabs)
#undef KGEN_MATH1
inline float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
template <Line V> inline V rsqrt(V v) {
  for (unsigned i = 0; i < sizeof(V) / sizeof(v[0]); ++i) v[i] = rsqrt(v[i]);
  return v;
}
inline float pow(float x, float y) { return __builtin_powf(x, y); }
inline double pow(double x, double y) { return __builtin_pow(x, y); }
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
template <Line V> inline V fma(V a, V b, V c) {
  for (unsigned i = 0; i < sizeof(V) / sizeof(a[0]); ++i) a[i] = fma(a[i], b[i], c[i]);
  return a;
}
template <class T> inline T abs(T x) { return x < 0 ? -x : x; }
template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }

// The bits of x as type To of the same size: bitcast<i32x4>(u), bitcast<u32>(f).
template <class To, class From> [[gnu::always_inline]] inline To bitcast(From x) { return __builtin_bit_cast(To, x); }

namespace detail {
// Byte j of a 32-bit lane, signed for an int lane, unsigned for an unsigned one.
template <class T> inline int byte_of(T w, int j) {
  unsigned u = ((unsigned)w >> (8 * j)) & 0xffu;
  if constexpr ((T)-1 < 0) return (int)(signed char)u;
  else return (int)u;
}
template <class A, class B> inline int dot4_lane(A a, B b, int c) {
  unsigned acc = (unsigned)c;  // wraps like the IR's i32 sum
  for (int j = 0; j < 4; ++j) acc += (unsigned)(byte_of(a, j) * byte_of(b, j));
  return (int)acc;
}
inline int dot2_i16_lane(int a, int b, int c) {
  auto half = [](int v, int j) { return (int)(short)((unsigned)v >> (16 * j)); };
  return (int)((unsigned)c + (unsigned)(half(a, 0) * half(b, 0)) + (unsigned)(half(a, 1) * half(b, 1)));
}
inline float dot2_bf16_lane(unsigned a, unsigned b, float c) {
  auto half = [](unsigned v, int j) { return __builtin_bit_cast(float, j ? v & 0xffff0000u : v << 16); };
  return __builtin_fmaf(half(a, 0), half(b, 0), __builtin_fmaf(half(a, 1), half(b, 1), c));
}
// Applies a three-operand lane function to scalars or lane by lane to lines
// (always inlined: a line returned by an out-of-line call draws GCC's ABI note).
template <class C, class A, class B, class F> [[gnu::always_inline]] inline C per_lane(A a, B b, C c, F f) {
  if constexpr (Line<C>) {
    for (unsigned i = 0; i < sizeof(C) / sizeof(c[0]); ++i) c[i] = f(a[i], b[i], c[i]);
    return c;
  } else {
    return f(a, b, c);
  }
}
}  // namespace detail

// c + Σ_{j<4} byte_j(a)·byte_j(b) per 32-bit lane; a byte of an int operand
// (i32, i32xN) is signed, of an unsigned one (u32, u32xN) unsigned; c and the
// result are i32 (lines), wrapping.
template <class A, class B, class C> inline C dot4(A a, B b, C c) {
  return detail::per_lane(a, b, c, [](auto x, auto y, int z) { return detail::dot4_lane(x, y, z); });
}
// c + a.0·b.0 + a.1·b.1 per i32 lane of a and b holding two signed 16-bit
// halves (half 0 the low one), wrapping.
template <class V> inline V dot2_i16(V a, V b, V c) {
  return detail::per_lane(a, b, c, [](int x, int y, int z) { return detail::dot2_i16_lane(x, y, z); });
}
// c + a.1·b.1, rounded, then + a.0·b.0, rounded, per u32 lane of a and b
// holding two bf16 (half 0 the low one); c and the result are f32 (lines).
template <class U, class F> inline F dot2_bf16(U a, U b, F c) {
  return detail::per_lane(a, b, c, [](unsigned x, unsigned y, float z) { return detail::dot2_bf16_lane(x, y, z); });
}
// Byte i of the result (idx's type) is byte idx.byte(i) mod 2·sizeof(a) of
// the table a ++ b (a and b of one type, 4 to 64 bytes); CPU targets only.
template <class T, class I> inline I permute_bytes(T a, T b, I idx) {
  const unsigned char *ta = (const unsigned char*)&a, *tb = (const unsigned char*)&b, *ib = (const unsigned char*)&idx;
  I r = idx;
  unsigned char* rb = (unsigned char*)&r;
  for (unsigned i = 0; i < sizeof(I); ++i) {
    unsigned k = ib[i] % (2 * sizeof(T));
    rb[i] = k < sizeof(T) ? ta[k] : tb[k - sizeof(T)];
  }
  return r;
}

namespace host {
// Runs kernel(args...) serially over a grid of `groups` workgroups of
// `size` work-items (x fastest), the host meaning of a launch.
template <class F, class... Args>
void launch(const unsigned (&groups)[3], const unsigned (&size)[3], F kernel, Args... args) {
  for (unsigned gz = 0; gz < groups[2]; ++gz)
    for (unsigned gy = 0; gy < groups[1]; ++gy)
      for (unsigned gx = 0; gx < groups[0]; ++gx)
        for (unsigned lz = 0; lz < size[2]; ++lz)
          for (unsigned ly = 0; ly < size[1]; ++ly)
            for (unsigned lx = 0; lx < size[0]; ++lx) {
              const unsigned g[3] = {gx, gy, gz}, l[3] = {lx, ly, lz};
              for (int d = 0; d < 3; ++d) {
                current.group[d] = g[d];
                current.local[d] = l[d];
                current.size[d] = size[d];
                current.groups[d] = groups[d];
                current.global[d] = g[d] * size[d] + l[d];
              }
              kernel(args...);
            }
}
}  // namespace host

}  // namespace kgen
