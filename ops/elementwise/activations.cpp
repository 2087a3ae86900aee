// The compositions of ops/elementwise/activations.h. Piecewise functions
// select on a comparison so that NaN passes through (a min/max would drop it).
#include "ops/elementwise/activations.h"

#include "ops/elementwise/expr_math.h"
#include "ops/elementwise/expr_ops.h"

namespace kgen::ops::fusion {

Expr sigmoid(Expr a) { return lit(1.0) / (lit(1.0) + exp(-a)); }
Expr silu(Expr a) { return a * sigmoid(a); }
// 0.5 (1 + tanh(z)) == sigmoid(2 z): the same function through one exp and
// one division, ~3x cheaper than the (bit-exact, fdlibm) tanh on lines.
// -2z = a (-2k c a^2 - 2k) (k = sqrt(2/pi), c = 0.044715): one multiply and
// one fma after a^2, where the textbook form takes five ops and a negation
// (the CPU's gelu chain is bound by its arithmetic, not by DRAM).
Expr gelu(Expr a) {
  const double k2 = 2 * 0.7978845608028654;
  Expr minus_z2 = a * apply(ir::Op::Fma, {a * a, lit(-k2 * 0.044715), lit(-k2)});
  return a / (lit(1.0) + exp(minus_z2));
}
Expr gelu_tanh(Expr a) { return gelu(a); }
Expr gelu_erf(Expr a) { return lit(0.5) * a * (lit(1.0) + erf(a * lit(0.70710678118654752440))); }
Expr relu(Expr a) { return max(a, lit(0.0)); }

Expr leaky_relu(Expr a, double alpha) { return where(lt(a, lit(0)), a * lit(alpha), a); }
Expr elu(Expr a, double alpha) { return where(lt(a, lit(0)), lit(alpha) * (exp(a) - lit(1)), a); }
Expr selu(Expr a, double alpha, double gamma) {
  return where(gt(a, lit(0)), lit(gamma) * a, lit(gamma) * (lit(alpha) * exp(a) - lit(alpha)));
}
// For a > 0 the min term is 0, otherwise the max term: one select.
Expr celu(Expr a, double alpha) { return where(gt(a, lit(0)), a, lit(alpha) * (exp(a / lit(alpha)) - lit(1))); }
// max(a, 0) + log1p(exp(-|a|)): exp never overflows.
Expr softplus(Expr a) { return where(gt(a, lit(0)), a, lit(0)) + log1p(exp(-abs(a))); }
Expr softsign(Expr a) { return a / (lit(1) + abs(a)); }
Expr hardsigmoid(Expr a, double alpha, double beta) { return clip(lit(alpha) * a + lit(beta), lit(0), lit(1)); }
Expr hardswish(Expr a) { return a * hardsigmoid(a, 1.0 / 6, 0.5); }
Expr mish(Expr a) { return a * tanh(softplus(a)); }

}  // namespace kgen::ops::fusion
