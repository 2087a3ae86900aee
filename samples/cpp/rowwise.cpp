// Row-wise kernels for the CPU, the plain C++ twins of ops/rowwise/rowwise.cpp:
// softmax (two-pass and online), log-softmax, rmsnorm and layernorm of each
// row of a rows x cols matrix, one row (softmax: 64 rows) per single-item
// workgroup. One body per op serves every form:
//   L = 16: buffers of f32x16 lines (cols % 16 == 0), L = 1: scalars;
//   TAIL:   scalar buffers walked in f32x16 lines from any element offset,
//           plus a last line over the row's final 16 elements whose lanes
//           already walked are masked off (any cols >= 16);
//   STREAM: the output written once, by streaming stores;
//   PF:     the exp pass prefetches the row after next.
// The kernels are named as their DSL twins (the registry's workloads apply):
//   kgen run-kernel samples/cpp/rowwise.cpp --kernel rmsnorm_rows_f32_l16_tail
#include "kgen_kernel.h"

using namespace kgen;

constexpr unsigned kRowsPerGroup = 64;  // softmax rows per workgroup

// ---------------------------------------------------------------- lanes

// The f32 math type of L lanes, and its u32 bits.
template <int L> struct Lanes { using F = f32x16; using U = u32x16; };
template <> struct Lanes<1> { using F = float; using U = unsigned; };

template <class V> V bcast(float f) {
  if constexpr (Line<V>) return splat<V>(f);
  else return f;
}
template <class V> float hsum(V v) {
  if constexpr (Line<V>) return reduce_add(v);
  else return v;
}
template <class V> float hmax(V v) {
  if constexpr (Line<V>) return reduce_max(v);
  else return v;
}
// Running max m' = v > m ? v : m (one vmaxps; a NaN v is skipped, its exp
// makes the row's sum NaN anyway).
template <class V> V grow_max(V m, V v) { return select(v > m, v, m); }
// v where the mask adds lanes, `neutral` where they were walked already.
template <bool MASKED, class V, class M> V keep(M mask, V v, V neutral) {
  if constexpr (MASKED) return select(mask, v, neutral);
  else return v;
}

// x clamped to [-87, 88] by selects that pass NaN; NONPOSITIVE: x <= 0
// (x - rowmax), so no upper clamp.
template <bool NONPOSITIVE, class V> V exp_arg(V x) {
  V lo = select(x < -87.0f, bcast<V>(-87.0f), x);
  if constexpr (NONPOSITIVE) return lo;
  else return select(lo > 88.0f, bcast<V>(88.0f), lo);
}

// e^x within 1 ulp for x in [-87, 88] (NaN stays NaN), the range reduction,
// polynomial and exponent bits of ops/common/fast_exp.cpp.
template <bool NONPOSITIVE, class V> V fast_exp(V x_in) {
  using U = typename Lanes<sizeof(V) / sizeof(float)>::U;
  V x = exp_arg<NONPOSITIVE>(x_in);
  V t = fma(x, bcast<V>(1.44269504088896341f), bcast<V>(12582912.0f));  // k in t's low mantissa bits
  V k = t - 12582912.0f;
  V r = fma(k, bcast<V>(2.12194440e-4f), fma(k, bcast<V>(-0.693359375f), x));  // x - k ln2, ln2 in two parts
  V p = fma(r, bcast<V>(0.0013870788970962167f), bcast<V>(0.008368897251784801f));
  V p2 = fma(fma(fma(p, r, bcast<V>(0.041667390614748f)), r, bcast<V>(0.1666651964187622f)), r,
             bcast<V>(0.4999999701976776f));
  V q = fma(p2, r * r, r);  // e^r - 1
  V two_k = bitcast<V>((bitcast<U>(t) + 127u) << 23u);
  return fma(q, two_k, two_k);
}

// ---------------------------------------------------------------- rows

// A line of a row at element (TAIL) or line offset `at`.
template <class V, class P> V ld(const P* a, unsigned at) {
  if constexpr (Line<V> && !Line<P>) return load_line<V>(a, at);
  else return a[at];
}
template <bool STREAM, class V, class P> void st(P* a, unsigned at, V v) {
  if constexpr (Line<V> && !Line<P>) store_line(a, at, v);
  else if constexpr (STREAM) stream(&a[at], v);
  else a[at] = v;
}
// Whole lines per row, the offset of line j, and the row's length in f32.
template <bool TAIL> unsigned whole_lines(unsigned ncols) {
  if constexpr (TAIL) return ncols / 16u;
  else return ncols;
}
template <bool TAIL> unsigned line_off(unsigned j) {
  if constexpr (TAIL) return j * 16u;
  else return j;
}
template <bool TAIL, int L> float row_cols(unsigned ncols) {
  if constexpr (TAIL) return float(ncols);
  else return float(ncols) * float(L);
}
// The lanes the last line of a TAIL row adds: those past the whole lines.
inline i32x16 tail_mask(unsigned ncols) {
  i32x16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return lane >= splat<i32x16>(int(16u - ncols % 16u));
}

template <class V, bool TAIL, class P> float row_max(const P* x, unsigned base, unsigned ncols) {
  V m = bcast<V>(-infinity);
  unsigned nl = whole_lines<TAIL>(ncols);
  for (unsigned j = 0; j < nl; ++j) m = grow_max(m, ld<V>(x, base + line_off<TAIL>(j)));
  if constexpr (TAIL) {
    if (ncols % 16u != 0u) {
      V last = ld<V>(x, base + ncols - 16u);
      m = grow_max(m, keep<true>(tail_mask(ncols), last, bcast<V>(-infinity)));
    }
  }
  return hmax(m);
}

// ---------------------------------------------------------------- softmax

// One line of the exp pass: e = exp(x - max) parked in y (STREAM: in the
// group's scratch row), summed, and the next row's max grown.
template <bool MASKED, bool STREAM, bool PF, class V, class P, class Y, class S, class M>
void softmax_exp_line(const P* x, Y* y, S* scratch, unsigned base, unsigned next, unsigned soff, unsigned off,
                      unsigned ncols, V mxv, V& s, V& mn, M mask) {
  V ex = fast_exp<true>(ld<V>(x, base + off) - mxv);
  if constexpr (STREAM) scratch[soff] = ex;
  else st<false>(y, base + off, ex);
  s += keep<MASKED>(mask, ex, bcast<V>(0.0f));
  mn = grow_max(mn, keep<MASKED>(mask, ld<V>(x, next + off), bcast<V>(-infinity)));
  if constexpr (PF) prefetch(&x[next + ncols + off]);
}

// One line of the scale pass: y = e / sum.
template <bool MASKED, bool STREAM, class V, class Y, class S, class M>
void softmax_scale_line(Y* y, const S* scratch, unsigned at, unsigned soff, V inv, M mask) {
  if constexpr (STREAM) {
    stream(&y[at], scratch[soff] * inv);
  } else {
    V old = ld<V>(y, at);
    st<false>(y, at, keep<MASKED>(mask, old * inv, old));
  }
}

// Two-pass softmax of the group's rows: row r's exp pass also takes row
// r + 1's max; the scale pass re-reads the L1-resident row. `scratch` is
// the STREAM forms' scratch buffer (the others pass y, unused).
template <int L, bool TAIL, bool STREAM, bool PF, class P, class Y, class S>
void softmax_two_pass(const P* x, Y* y, S* scratch, unsigned ncols, unsigned nrows) {
  using V = typename Lanes<L>::F;
  unsigned r0 = group_id(0) * kRowsPerGroup, r_end = min(r0 + kRowsPerGroup, nrows);
  unsigned nl = whole_lines<TAIL>(ncols);
  float mx = row_max<V, TAIL>(x, r0 * ncols, ncols);
  unsigned sbase = group_id(0) * ncols;
  for (unsigned r = r0; r < r_end; ++r) {
    unsigned base = r * ncols, next = min(r + 1u, r_end - 1u) * ncols;
    V mxv = bcast<V>(mx);
    V s = bcast<V>(0.0f), mn = bcast<V>(-infinity);
    for (unsigned j = 0; j < nl; ++j) {
      unsigned off = line_off<TAIL>(j);
      softmax_exp_line<false, STREAM, PF>(x, y, scratch, base, next, sbase + off, off, ncols, mxv, s, mn, 0);
    }
    if constexpr (TAIL)
      if (ncols % 16u != 0u)
        softmax_exp_line<true, STREAM, PF>(x, y, scratch, base, next, 0u, ncols - 16u, ncols, mxv, s, mn,
                                           tail_mask(ncols));
    V inv = bcast<V>(1.0f / hsum(s));
    for (unsigned j = 0; j < nl; ++j) {
      unsigned off = line_off<TAIL>(j);
      softmax_scale_line<false, STREAM>(y, scratch, base + off, sbase + off, inv, 0);
    }
    if constexpr (TAIL)
      if (ncols % 16u != 0u)
        softmax_scale_line<true, STREAM>(y, scratch, base + ncols - 16u, 0u, inv, tail_mask(ncols));
    mx = hmax(mn);
  }
}

// Online softmax: a running max and a sum rescaled to it in one statistics
// pass (2 exps per element); lanes meet at the end.
template <int L, bool STREAM, class P, class Y>
void softmax_online(const P* x, Y* y, unsigned ncols, unsigned nrows) {
  using V = typename Lanes<L>::F;
  unsigned r0 = group_id(0) * kRowsPerGroup, r_end = min(r0 + kRowsPerGroup, nrows);
  for (unsigned r = r0; r < r_end; ++r) {
    unsigned base = r * ncols;
    V m = bcast<V>(-3.40282347e38f), s = bcast<V>(0.0f);  // the lowest finite float: exp(-inf - -inf) would be NaN
    for (unsigned j = 0; j < ncols; ++j) {
      V v = x[base + j];
      V mn = grow_max(m, v);
      s = s * fast_exp<false>(m - mn) + fast_exp<false>(v - mn);
      m = mn;
    }
    float mx = hmax(m);
    V inv = bcast<V>(1.0f / hsum(s * fast_exp<false>(m - bcast<V>(mx))));
    V mxv = bcast<V>(mx);
    for (unsigned j = 0; j < ncols; ++j) st<STREAM>(y, base + j, fast_exp<true>(x[base + j] - mxv) * inv);
  }
}

// ---------------------------------------------------------------- log-softmax

// One line of log-softmax's exp pass: d = x - max parked in y (not when
// STREAM), exp(d) summed, the next row's max grown.
template <bool MASKED, bool STREAM, bool PF, class V, class P, class Y, class M>
void log_softmax_exp_line(const P* x, Y* y, unsigned base, unsigned next, unsigned off, unsigned ncols, V mxv, V& s,
                          V& mn, M mask) {
  V d = ld<V>(x, base + off) - mxv;
  if constexpr (!STREAM) st<false>(y, base + off, d);
  s += keep<MASKED>(mask, fast_exp<true>(d), bcast<V>(0.0f));
  mn = grow_max(mn, keep<MASKED>(mask, ld<V>(x, next + off), bcast<V>(-infinity)));
  if constexpr (PF) prefetch(&x[next + ncols + off]);
}

// One line of the output pass: y = d - log(sum), d re-read from y, or (STREAM)
// recomputed from the L1-resident x.
template <bool MASKED, bool STREAM, class V, class P, class Y, class M>
void log_softmax_out_line(const P* x, Y* y, unsigned at, V mxv, V c, M mask) {
  if constexpr (STREAM) {
    st<true>(y, at, (ld<V>(x, at) - mxv) - c);
  } else {
    V old = ld<V>(y, at);
    st<false>(y, at, keep<MASKED>(mask, old - c, old));
  }
}

template <int L, bool TAIL, bool STREAM, bool PF, class P, class Y>
void log_softmax(const P* x, Y* y, unsigned ncols, unsigned nrows) {
  using V = typename Lanes<L>::F;
  unsigned r0 = group_id(0) * kRowsPerGroup, r_end = min(r0 + kRowsPerGroup, nrows);
  unsigned nl = whole_lines<TAIL>(ncols);
  float mx = row_max<V, TAIL>(x, r0 * ncols, ncols);
  for (unsigned r = r0; r < r_end; ++r) {
    unsigned base = r * ncols, next = min(r + 1u, r_end - 1u) * ncols;
    V mxv = bcast<V>(mx);
    V s = bcast<V>(0.0f), mn = bcast<V>(-infinity);
    for (unsigned j = 0; j < nl; ++j)
      log_softmax_exp_line<false, STREAM, PF>(x, y, base, next, line_off<TAIL>(j), ncols, mxv, s, mn, 0);
    if constexpr (TAIL)
      if (ncols % 16u != 0u)
        log_softmax_exp_line<true, STREAM, PF>(x, y, base, next, ncols - 16u, ncols, mxv, s, mn, tail_mask(ncols));
    V c = bcast<V>(log(hsum(s)));
    for (unsigned j = 0; j < nl; ++j) log_softmax_out_line<false, STREAM>(x, y, base + line_off<TAIL>(j), mxv, c, 0);
    if constexpr (TAIL)
      if (ncols % 16u != 0u) log_softmax_out_line<true, STREAM>(x, y, base + ncols - 16u, mxv, c, tail_mask(ncols));
    mx = hmax(mn);
  }
}

// ---------------------------------------------------------------- norms

// Lines of 16 prefetch the next row's line at `off` (rows of a page or more
// start where the hardware prefetcher stops); scalar rows would issue 16
// prefetches per cache line.
template <class V, class P> void prefetch_next(const P* a, unsigned base, unsigned ncols, unsigned off) {
  if constexpr (Line<V>) prefetch(&a[base + ncols + off]);
}
template <class V, class P> void prefetch_next_write(P* a, unsigned base, unsigned ncols, unsigned off) {
  if constexpr (Line<V>) prefetch_write(&a[base + ncols + off]);
}

// One line of rmsnorm's statistics: ss += x² (two chains, even and odd lines).
template <bool MASKED, class V, class P, class M>
void sumsq_line(const P* x, unsigned base, unsigned off, unsigned ncols, V& ss, M mask) {
  if constexpr (!MASKED) prefetch_next<V>(x, base, ncols, off);
  V v = keep<MASKED>(mask, ld<V>(x, base + off), bcast<V>(0.0f));
  ss = fma(v, v, ss);
}

template <int L, bool TAIL, bool STREAM, class P, class Y>
void rmsnorm(const P* x, const P* w, Y* y, float eps, unsigned ncols) {
  using V = typename Lanes<L>::F;
  unsigned base = group_id(0) * ncols;
  unsigned nl = whole_lines<TAIL>(ncols);
  V ss0 = bcast<V>(0.0f), ss1 = bcast<V>(0.0f);
  for (unsigned i = 0; i < nl / 2u; ++i) {
    sumsq_line<false>(x, base, line_off<TAIL>(i * 2u), ncols, ss0, 0);
    sumsq_line<false>(x, base, line_off<TAIL>(i * 2u + 1u), ncols, ss1, 0);
  }
  if (nl % 2u != 0u) sumsq_line<false>(x, base, line_off<TAIL>(nl - 1u), ncols, ss0, 0);
  if constexpr (TAIL)
    if (ncols % 16u != 0u) sumsq_line<true>(x, base, ncols - 16u, ncols, ss1, tail_mask(ncols));
  V r = bcast<V>(rsqrt(hsum(ss0 + ss1) / row_cols<TAIL, L>(ncols) + eps));
  for (unsigned j = 0; j < nl; ++j) {
    unsigned off = line_off<TAIL>(j);
    if constexpr (!STREAM) prefetch_next_write<V>(y, base, ncols, off);
    V v = ld<V>(x, base + off) * r;
    st<STREAM>(y, base + off, v * ld<V>(w, off));
  }
  if constexpr (TAIL) {
    if (ncols % 16u != 0u) {
      unsigned off = ncols - 16u;
      V v = ld<V>(x, base + off) * r;
      st<STREAM>(y, base + off, v * ld<V>(w, off));
    }
  }
}

// One line of layernorm's statistics over d = x - k (k ~ the mean): Σd, Σd².
template <bool MASKED, class V, class P, class M>
void shifted_sums_line(const P* x, unsigned base, unsigned off, unsigned ncols, V k, V& s, V& sq, M mask) {
  if constexpr (!MASKED) prefetch_next<V>(x, base, ncols, off);
  V d = keep<MASKED>(mask, ld<V>(x, base + off) - k, bcast<V>(0.0f));
  s += d;
  sq = fma(d, d, sq);
}

// One line of y = (x - k - c)·rstd·w + b, c = mean - k.
template <bool MASKED, bool STREAM, class V, class P, class Y>
void layernorm_out_line(const P* x, const P* w, const P* b, Y* y, unsigned base, unsigned off, unsigned ncols, V k,
                        V c, V rstd) {
  if constexpr (!MASKED && !STREAM) prefetch_next_write<V>(y, base, ncols, off);
  st<STREAM>(y, base + off, fma(((ld<V>(x, base + off) - k) - c) * rstd, ld<V>(w, off), ld<V>(b, off)));
}

// Lines: one statistics pass over x shifted by the mean of the row's first
// line (Σ(x - mean)² = Σd² - (Σd)²/n, the cancellation kept small). Scalar
// rows: the mean, then centred squares.
template <int L, bool TAIL, bool STREAM, class P, class Y>
void layernorm(const P* x, const P* w, const P* b, Y* y, float eps, unsigned ncols) {
  using V = typename Lanes<L>::F;
  unsigned base = group_id(0) * ncols;
  unsigned nl = whole_lines<TAIL>(ncols);
  float cols = row_cols<TAIL, L>(ncols);
  if constexpr (L > 1) {
    V k = bcast<V>(hsum(ld<V>(x, base)) / float(L));
    V s0 = bcast<V>(0.0f), sq0 = bcast<V>(0.0f), s1 = bcast<V>(0.0f), sq1 = bcast<V>(0.0f);
    for (unsigned i = 0; i < nl / 2u; ++i) {
      shifted_sums_line<false>(x, base, line_off<TAIL>(i * 2u), ncols, k, s0, sq0, 0);
      shifted_sums_line<false>(x, base, line_off<TAIL>(i * 2u + 1u), ncols, k, s1, sq1, 0);
    }
    if (nl % 2u != 0u) shifted_sums_line<false>(x, base, line_off<TAIL>(nl - 1u), ncols, k, s0, sq0, 0);
    if constexpr (TAIL)
      if (ncols % 16u != 0u) shifted_sums_line<true>(x, base, ncols - 16u, ncols, k, s1, sq1, tail_mask(ncols));
    float sum_d = hsum(s0 + s1);
    V c = bcast<V>(sum_d / cols);
    float var_sum = hsum(sq0 + sq1) - sum_d * sum_d / cols;
    V rstd = bcast<V>(rsqrt(max(var_sum, 0.0f) / cols + eps));
    for (unsigned j = 0; j < nl; ++j)
      layernorm_out_line<false, STREAM>(x, w, b, y, base, line_off<TAIL>(j), ncols, k, c, rstd);
    if constexpr (TAIL)
      if (ncols % 16u != 0u) layernorm_out_line<true, STREAM>(x, w, b, y, base, ncols - 16u, ncols, k, c, rstd);
  } else {
    V s = 0.0f;
    for (unsigned j = 0; j < ncols; ++j) s += x[base + j];
    V mean = hsum(s) / cols;
    V sq = 0.0f;
    for (unsigned j = 0; j < ncols; ++j) {
      V d = x[base + j] - mean;
      sq = fma(d, d, sq);
    }
    V rstd = rsqrt(hsum(sq) / cols + eps);
    for (unsigned j = 0; j < ncols; ++j) st<STREAM>(y, base + j, fma((x[base + j] - mean) * rstd, w[j], b[j]));
  }
}

// ---------------------------------------------------------------- kernels

// Lines of 16 (cols % 16 == 0); the softmax family prefetches the row after next.
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_rows_pf_f32_l16(const f32x16* x, f32x16* y, unsigned ncols, unsigned nrows) {
  softmax_two_pass<16, false, false, true>(x, y, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_online_rows_f32_l16(const f32x16* x, f32x16* y, unsigned ncols, unsigned nrows) {
  softmax_online<16, false>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void log_softmax_rows_pf_f32_l16(const f32x16* x, f32x16* y, unsigned ncols, unsigned nrows) {
  log_softmax<16, false, false, true>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void rmsnorm_rows_f32_l16(const f32x16* x, const f32x16* w, f32x16* y, float eps, unsigned ncols) {
  rmsnorm<16, false, false>(x, w, y, eps, ncols);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void layernorm_rows_f32_l16(const f32x16* x, const f32x16* w, const f32x16* b, f32x16* y, float eps, unsigned ncols) {
  layernorm<16, false, false>(x, w, b, y, eps, ncols);
}

// Scalars (any cols).
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_rows_f32(const float* x, float* y, unsigned ncols, unsigned nrows) {
  softmax_two_pass<1, false, false, false>(x, y, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_online_rows_f32(const float* x, float* y, unsigned ncols, unsigned nrows) {
  softmax_online<1, false>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void log_softmax_rows_f32(const float* x, float* y, unsigned ncols, unsigned nrows) {
  log_softmax<1, false, false, false>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void rmsnorm_rows_f32(const float* x, const float* w, float* y, float eps, unsigned ncols) {
  rmsnorm<1, false, false>(x, w, y, eps, ncols);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void layernorm_rows_f32(const float* x, const float* w, const float* b, float* y, float eps, unsigned ncols) {
  layernorm<1, false, false>(x, w, b, y, eps, ncols);
}

// Lines of 16 from any element offset, a masked last line (any cols >= 16).
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_rows_pf_f32_l16_tail(const float* x, float* y, unsigned ncols, unsigned nrows) {
  softmax_two_pass<16, true, false, true>(x, y, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void log_softmax_rows_pf_f32_l16_tail(const float* x, float* y, unsigned ncols, unsigned nrows) {
  log_softmax<16, true, false, true>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void rmsnorm_rows_f32_l16_tail(const float* x, const float* w, float* y, float eps, unsigned ncols) {
  rmsnorm<16, true, false>(x, w, y, eps, ncols);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void layernorm_rows_f32_l16_tail(const float* x, const float* w, const float* b, float* y, float eps, unsigned ncols) {
  layernorm<16, true, false>(x, w, b, y, eps, ncols);
}

// Lines of 16, the output by streaming stores; two-pass softmax parks
// exp(x - max) in a scratch row per group (ncols lines each).
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_rows_pf_stream_f32_l16(const f32x16* x, f32x16* y, f32x16* scratch, unsigned ncols, unsigned nrows) {
  softmax_two_pass<16, false, true, true>(x, y, scratch, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void softmax_online_rows_stream_f32_l16(const f32x16* x, f32x16* y, unsigned ncols, unsigned nrows) {
  softmax_online<16, true>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void log_softmax_rows_pf_stream_f32_l16(const f32x16* x, f32x16* y, unsigned ncols, unsigned nrows) {
  log_softmax<16, false, true, true>(x, y, ncols, nrows);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void rmsnorm_rows_stream_f32_l16(const f32x16* x, const f32x16* w, f32x16* y, float eps, unsigned ncols) {
  rmsnorm<16, false, true>(x, w, y, eps, ncols);
}
KGEN_KERNEL KGEN_WORKGROUP(1)
void layernorm_rows_stream_f32_l16(const f32x16* x, const f32x16* w, const f32x16* b, f32x16* y, float eps,
                                   unsigned ncols) {
  layernorm<16, false, true>(x, w, b, y, eps, ncols);
}
