#include "ops/common/fast_math.h"

#include <cmath>
#include <initializer_list>

#include "dsl/dsl.h"
#include "ops/common/fast_exp.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// c[0] + c[1] t + c[2] t^2 + ... by Horner's rule with fmas.
Value horner(const Value& t, std::initializer_list<float> c) {
  const float* k = c.begin();
  const int lanes = t.type().lanes;
  Value p = lanes > 1 ? splat(constant(f32, k[c.size() - 1]), lanes) : constant(f32, k[c.size() - 1]);
  for (size_t i = c.size() - 1; i-- > 0;) p = fma(p, t, k[i]);
  return p;
}

// |y| with x's sign.
Value with_sign_of(const Value& y, const Value& x) {
  const ir::Type ut = x.type().lanes > 1 ? line(u32, x.type().lanes) : ir::Type(u32);
  return bitcast(x.type(), bitcast(ut, y) | (bitcast(ut, x) & 0x80000000u));
}

}  // namespace

// |x| < 0.625: x + x^3 P(x^2), P of degree 5 fitted for relative error
// (1.6e-10 in exact arithmetic); above, 1 - 2 / (e^{2|x|} + 1) with |x|
// clamped to 9 (tanh(9) rounds to 1). Max 1.31 ulp (at 0.63), checked over
// every 7th float below 11 against the f64 tanh.
Value fast_tanh(const Value& x) {
  Value ax = abs(x), t = ax * ax;
  Value small = fma(ax * t, horner(t, {-0.33333330780867704f, 0.1333320531628145f, -0.053946688820724654f,
                                        0.021700347070851674f, -0.0081766104326846f, 0.0021423065676294054f}), ax);
  Value a9 = select(ax > 9.0f, 9.0f, ax);  // NaN passes
  Value large = 1.0f - 2.0f / (fast_exp(a9 + a9) + 1.0f);
  return with_sign_of(select(ax < 0.625f, small, large), x);
}

// |x| < 1: x (2/sqrt(pi) + x^2 Q(x^2)) with 2/sqrt(pi) - 1 added to 1 by the
// last fma (one rounding of the leading term); above, 1 - e^{-x^2} R(x) with
// R = erfc(x) e^{x^2} a degree-9 fit in x - 2.5 on [1, 3.92] (absolute
// error in erfc 4.5e-10), x^2 = sq + sl split so e^{-x^2} = e^{-sq} (1 -
// sl), |x| clamped to 3.92 (erf rounds to 1 beyond). Max 1.02 ulp (at
// 1.01), checked as fast_tanh.
Value fast_erf(const Value& x) {
  Value ax = abs(x), t = ax * ax;
  Value q = horner(t, {-0.37612625718573545f, 0.11283583983487977f, -0.02685376523243732f, 0.005188242266289195f,
                       -0.0008009466903825535f, 7.851525603509713e-05f});
  Value small = fma(ax, fma(t, q, 0.12837916571599270f), ax);
  Value xa = select(ax > 3.92f, 3.92f, ax);  // NaN passes
  Value sq = xa * xa, sl = fma(xa, xa, -sq);
  Value r = horner(xa - 2.5f, {0.21080633243981067f, -0.07434940374742201f, 0.024929526416156332f,
                               -0.007999986391377535f, 0.0025211811223983856f, -0.0006489477785286742f,
                               0.00022324630398881315f, -0.00013682898674706456f, -5.8090186702955404e-05f,
                               -2.8050182894347186e-05f});
  Value ec = fast_exp(-sq) * r;
  ec = fma(-sl, ec, ec);
  return with_sign_of(select(ax < 1.0f, small, 1.0f - ec), x);
}

Value fast_log(const Value& x) {
  const int lanes = x.type().lanes;
  const ir::Type ut = lanes > 1 ? line(u32, lanes) : ir::Type(u32), it = lanes > 1 ? line(i32, lanes) : ir::Type(i32);
  // x = m 2^e, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact); subnormals scaled by 2^23 first.
  Value sub = x < 0x1p-126f;
  Value ix = bitcast(ut, select(sub, x * 0x1p23f, x));
  Value k = bitcast(it, ix - 0x3f3504f3u) >> 23;
  Value e = cast(x.type(), select(sub, k - 23, k));
  Value f = bitcast(x.type(), ix - (bitcast(ut, k) << 23u)) - 1.0f;
  Value z = f * f;
  Value p = horner(f, {3.3333331174e-1f, -2.4999993993e-1f, 2.0000714765e-1f, -1.6668057665e-1f, 1.4249322787e-1f,
                       -1.2420140846e-1f, 1.1676998740e-1f, -1.1514610310e-1f, 7.0376836292e-2f});
  Value y = f * z * p;
  y = fma(e, -2.12194440e-4f, y);
  y = fma(z, -0.5f, y);
  Value r = fma(e, 0.693359375f, f + y);
  // log(inf) = inf, log(0) = -inf, log(< 0) = NaN, NaN stays.
  auto k_of = [&](float v) { return lanes > 1 ? splat(constant(f32, v), lanes) : constant(f32, v); };
  r = select(x == INFINITY, x, r);
  r = select(x > 0.0f, r, select(x == 0.0f, k_of(-INFINITY), k_of(NAN)));
  return select(x != x, x, r);
}

}  // namespace kgen::ops
