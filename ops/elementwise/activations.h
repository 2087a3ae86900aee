// Activation functions as expression compositions (ONNX's definitions and
// default attributes), for float operands (f32 or f64); relu also takes
// integers.
#pragma once
#include "ops/elementwise/expr.h"

namespace kgen::ops::fusion {

Expr sigmoid(Expr a);   // 1 / (1 + exp(-a))
Expr silu(Expr a);      // a * sigmoid(a)
// tanh form 0.5 a (1 + tanh(z)), z = 0.79788456 (a + 0.044715 a^3), as a / (1 + exp(-2z))
Expr gelu(Expr a);
Expr gelu_tanh(Expr a);  // = gelu (ONNX Gelu approximate="tanh")
Expr gelu_erf(Expr a);   // 0.5 a (1 + erf(a / sqrt(2))) (ONNX Gelu)
Expr relu(Expr a);       // max(a, 0)
Expr leaky_relu(Expr a, double alpha = 0.01);   // a < 0 ? alpha a : a
Expr elu(Expr a, double alpha = 1.0);           // a < 0 ? alpha (exp(a) - 1) : a
Expr selu(Expr a, double alpha = 1.67326319217681884765625, double gamma = 1.05070102214813232421875);
Expr celu(Expr a, double alpha = 1.0);          // max(0, a) + min(0, alpha (exp(a / alpha) - 1))
Expr softplus(Expr a);   // log(1 + exp(a)), without overflow
Expr softsign(Expr a);   // a / (1 + |a|)
Expr hardsigmoid(Expr a, double alpha = 0.2, double beta = 0.5);  // clip(alpha a + beta, 0, 1)
Expr hardswish(Expr a);  // a * hardsigmoid(a, 1/6, 1/2)
Expr mish(Expr a);       // a * tanh(softplus(a))

}  // namespace kgen::ops::fusion
