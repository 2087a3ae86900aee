#include "ops/fast_exp.h"

#include "dsl/dsl.h"

namespace kgen::ops {

using namespace kgen::dsl;

dsl::Value fast_exp(const dsl::Value& x_in, bool nonpositive) {
  const int lanes = x_in.type().lanes;
  const ir::Type uty = lanes > 1 ? line(u32, lanes) : ir::Type(u32);
  // Cephes expf: x = k ln2 + r with |r| <= ln2/2 (ln2 split in two so k*ln2_hi
  // is exact), e^r by a degree-6 polynomial, 2^k in the exponent bits.
  // k = round(x log2e) by the 1.5*2^23 trick: t holds k in its low mantissa
  // bits, so there is no round instruction and no float->int conversion
  // (whose saturating lowering is a per-lane loop).
  Value x = max(x_in, -87.0f);
  if (!nonpositive) x = min(x, 88.0f);
  Value t = fma(x, 1.44269504088896341f, 12582912.0f);
  Value k = t - 12582912.0f;
  Value r = fma(k, -0.693359375f, x);
  r = fma(k, 2.12194440e-4f, r);
  Value p = fma(r, 1.9875691500e-4f, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  Value q = fma(p, r * r, r);  // e^r - 1
  // (bits(t) + 127) << 23 == (k + 127) << 23: the shift drops the constant's bits.
  Value two_k = bitcast(x_in.type(), (bitcast(uty, t) + 127u) << 23u);
  return fma(q, two_k, two_k);  // (e^r - 1) 2^k + 2^k: one rounding, one op less than (q + 1) * 2^k
}

}  // namespace kgen::ops
