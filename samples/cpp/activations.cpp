// Elementwise activations, the plain C++ twins of the silu, gelu_tanh and
// gelu_erf kernels in samples/kernels/elementwise.cpp. Float literals carry
// the f suffix: a double literal would make C++ compute in double.
#include "kgen_kernel.h"

using namespace kgen;

KGEN_KERNEL void silu(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    float v = x[i];
    y[i] = v / (1.0f + exp(-v));  // x * sigmoid(x)
  }
}

KGEN_KERNEL void gelu_tanh(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    float v = x[i];  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    y[i] = 0.5f * v * (1.0f + tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
}

KGEN_KERNEL void gelu_erf(const float* x, float* y, unsigned n) {
  unsigned i = global_id(0);
  if (i < n) {
    float v = x[i];  // 0.5 x (1 + erf(x / sqrt(2)))
    y[i] = 0.5f * v * (1.0f + erf(v * 0.7071067811865476f));
  }
}
