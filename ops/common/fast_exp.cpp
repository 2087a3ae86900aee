#include "ops/common/fast_exp.h"

#include "dsl/dsl.h"

namespace kgen::ops {

using namespace kgen::dsl;

dsl::Value fast_exp(const dsl::Value& x_in, bool nonpositive) {
  // The clamps as selects that pass NaN (one vmaxps/vminps each, with the
  // NaN-passing operand order), so exp(NaN) is NaN: a softmax row holding
  // a NaN comes out NaN, as the exact exp makes it.
  Value x = select(x_in < -87.0f, -87.0f, x_in);
  if (!nonpositive) x = select(x > 88.0f, 88.0f, x);
  const int lanes = x.type().lanes;
  const ir::Type uty = lanes > 1 ? line(u32, lanes) : ir::Type(u32);
  // Cephes-style expf: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two so
  // k*ln2_hi is exact), e^r - 1 = r + r^2 p(r), 2^k in the exponent bits.
  // p is a degree-4 minimax fit of (e^r - 1 - r) / r^2 (relative error of
  // e^r 3.7e-9 in exact arithmetic, 0.58 ulp evaluated in f32: the same as
  // Cephes' degree 5, one fma less; fitted by reweighted least squares).
  // k = round(x log2e) by the 1.5*2^23 trick: t holds k in its low mantissa
  // bits, so there is no round instruction and no float->int conversion
  // (whose saturating lowering is a per-lane loop).
  Value t = fma(x, 1.44269504088896341f, 12582912.0f);
  Value k = t - 12582912.0f;
  Value r = fma(k, -0.693359375f, x);
  r = fma(k, 2.12194440e-4f, r);
  Value p = fma(r, 0.0013870788970962167f, 0.008368897251784801f);
  p = fma(p, r, 0.041667390614748f);
  p = fma(p, r, 0.1666651964187622f);
  p = fma(p, r, 0.4999999701976776f);
  Value q = fma(p, r * r, r);  // e^r - 1
  // (bits(t) + 127) << 23 == (k + 127) << 23: the shift drops the constant's bits.
  Value two_k = bitcast(x.type(), (bitcast(uty, t) + 127u) << 23u);
  return fma(q, two_k, two_k);  // (e^r - 1) 2^k + 2^k: one rounding, one op less than (q + 1) * 2^k
}

}  // namespace kgen::ops
