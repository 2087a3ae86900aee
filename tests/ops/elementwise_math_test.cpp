// The float compositions of fused chains (ops/elementwise/expr_math.h,
// activations.h) against long double libm, in f32 and f64, on the CPU
// (16-lane lines and the scalar tail) and in the interpreter (the GPUs'
// scalar form), over their domains with NaN, infinities and values near 0
// where a naive formula would cancel.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <cstring>
#include <functional>
#include <random>

#include "ir/interpreter.h"
#include "ops/elementwise/fusion.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
namespace fusion = kgen::ops::fusion;
using fusion::Expr;
using K = ir::ScalarKind;
using LD = long double;

namespace {

// Every run of y = f(x) over x (n values of T): the CPU's line form and the
// interpreter's line and scalar forms.
template <class T> std::vector<std::vector<T>> run(const std::function<Expr(Expr)>& f, const std::vector<T>& x) {
  const K k = sizeof(T) == 4 ? K::F32 : K::F64;
  const int64_t n = int64_t(x.size());
  fusion::Chain c;
  c.name = "math_test";
  c.inputs = {{"x", k, {n}}};
  c.shape = {n};
  c.out = f(fusion::in(0, k));
  c.out_dtype = k;
  static auto dev = cpu(1);
  std::vector<std::vector<T>> outs;
  for (int lanes : {16, 1}) {
    fusion::ChainVariant v;
    v.lanes = lanes;
    ops::Plan pl;
    fusion::plan_chain(pl, c, {0}, 1, v);
    const ops::Step& s = pl.steps.at(0);
    std::vector<T> y(x.size(), T(-12345));
    if (lanes == 16) {
      auto bx = dev->alloc(x.size() * sizeof(T)), by = dev->alloc(y.size() * sizeof(T));
      bx->upload(x.data(), x.size() * sizeof(T));
      by->upload(y.data(), y.size() * sizeof(T));
      dev->launch(*dev->compile(s.kernel), rt::LaunchArgs{s.dims, {bx.get(), by.get()}, s.scalars});
      dev->synchronize();
      by->download(y.data(), y.size() * sizeof(T));
      outs.push_back(y);
      std::fill(y.begin(), y.end(), T(-12345));
    }
    std::vector<T> xin = x;
    std::vector<ir::InterpBuffer> bufs = {{xin.data(), xin.size() * sizeof(T)}, {y.data(), y.size() * sizeof(T)}};
    ir::interpret(s.kernel, s.dims, bufs, s.scalars);
    outs.push_back(y);
  }
  return outs;
}

struct MathCase {
  const char* name;
  std::function<Expr(Expr)> f;
  std::function<LD(LD)> want;
  LD lo, hi;          // uniform inputs
  LD floor;           // error relative to max(|want|, floor): 1 for activations (absolute near 0)
  bool small = true;  // also values x * 10^-k near 0 (relative accuracy there)
};

std::mt19937_64& rng() {
  static std::mt19937_64 r(fresh_seed());
  return r;
}

template <class T> std::vector<T> inputs(const MathCase& m, size_t n) {
  std::vector<T> x(n);
  const T special[] = {T(NAN), T(m.lo), T(m.hi), T(0)};
  std::uniform_real_distribution<double> u(double(m.lo), double(m.hi));
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng()();
    x[i] = r % 7 == 0 ? special[(r >> 8) % 4] : T(u(rng()));
    if (m.small && r % 3 == 0) x[i] = T(x[i] * std::pow(10.0, -double((r >> 16) % 8)));
  }
  return x;
}

template <class T> void check_math(const std::vector<MathCase>& cases) {
  // 8 ulp: the compositions round a few times (measured: under 2 ulp).
  const LD tol = 8 * (sizeof(T) == 4 ? LD(1.1920929e-7) : LD(2.220446049250313e-16));
  for (const MathCase& m : cases) {
    const std::string name = m.name;
    CAPTURE(name);
    CAPTURE(sizeof(T));
    const std::vector<T> x = inputs<T>(m, 16 * 40 + 13);
    int form = 0;
    for (const std::vector<T>& y : run<T>(m.f, x)) {
      CAPTURE(form++);
      size_t bad = 0, worst = 0;
      LD worst_err = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const LD w = m.want(LD(x[i])), g = LD(y[i]);
        LD err;
        if (std::isnan(w) || std::isnan(g)) err = std::isnan(w) == std::isnan(g) ? 0 : INFINITY;
        else if (std::isinf(w) || std::isinf(g)) err = g == w ? 0 : INFINITY;
        else err = std::fabs(g - w) / std::max(std::fabs(w), m.floor);
        if (err > tol) ++bad;
        if (err > worst_err) worst_err = err, worst = i;
      }
      INFO("worst: x = " << double(x[worst]) << ": got " << double(y[worst]) << ", expected " << double(m.want(LD(x[worst])))
                         << " (error " << double(worst_err) << ")");
      CHECK(bad == 0);
    }
  }
}

LD softplus_ld(LD x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

std::vector<MathCase> inverse_and_hyperbolic() {
  using namespace fusion;
  const LD tiny = 1e-300L;
  return {
      {"tan", [](Expr a) { return tan(a); }, [](LD x) { return std::tan(x); }, -1.4L, 1.4L, tiny},
      {"atan", [](Expr a) { return atan(a); }, [](LD x) { return std::atan(x); }, -60, 60, tiny},
      {"atan inf", [](Expr a) { return atan(a / lit(0)); }, [](LD x) { return std::atan(x * std::numeric_limits<LD>::infinity()); }, -1, 1, tiny, false},
      {"asin", [](Expr a) { return asin(a); }, [](LD x) { return std::asin(x); }, -1, 1, tiny},
      {"acos", [](Expr a) { return acos(a); }, [](LD x) { return std::acos(x); }, -1, 1, tiny},
      {"sinh", [](Expr a) { return sinh(a); }, [](LD x) { return std::sinh(x); }, -30, 30, tiny},
      {"cosh", [](Expr a) { return cosh(a); }, [](LD x) { return std::cosh(x); }, -30, 30, tiny},
      {"asinh", [](Expr a) { return asinh(a); }, [](LD x) { return std::asinh(x); }, -1e6L, 1e6L, tiny},
      {"asinh huge", [](Expr a) { return asinh(a * lit(1e30)); }, [](LD x) { return std::asinh(x * LD(1e30)); }, -1e6L, 1e6L, tiny, false},
      {"acosh", [](Expr a) { return acosh(a); }, [](LD x) { return std::acosh(x); }, 1, 1e6L, tiny, false},
      {"acosh near 1", [](Expr a) { return acosh(a); }, [](LD x) { return std::acosh(x); }, 1, 1.001L, tiny, false},
      {"atanh", [](Expr a) { return atanh(a); }, [](LD x) { return std::atanh(x); }, -1, 1, tiny},
      {"log1p", [](Expr a) { return log1p(a); }, [](LD x) { return std::log1p(x); }, -0.99L, 100, tiny},
  };
}

std::vector<MathCase> activations() {
  using namespace fusion;
  auto sig = [](LD x) { return 1 / (1 + std::exp(-x)); };
  return {
      {"sigmoid", [](Expr a) { return sigmoid(a); }, sig, -30, 30, 1},
      {"silu", [](Expr a) { return silu(a); }, [=](LD x) { return x * sig(x); }, -30, 30, 1},
      {"gelu_tanh", [](Expr a) { return gelu_tanh(a); },
       [](LD x) { return x / 2 * (1 + std::tanh(0.7978845608028654L * (x + 0.044715L * x * x * x))); }, -10, 10, 1},
      {"gelu_erf", [](Expr a) { return gelu_erf(a); }, [](LD x) { return x / 2 * (1 + std::erf(x / std::sqrt(2.0L))); }, -10, 10, 1},
      {"relu", [](Expr a) { return relu(a); }, [](LD x) { return x > 0 ? x : 0; }, -5, 5, 1},
      {"leaky_relu", [](Expr a) { return leaky_relu(a, 0.1); }, [](LD x) { return x < 0 ? LD(0.1) * x : x; }, -5, 5, 1},
      {"elu", [](Expr a) { return elu(a, 0.5); }, [](LD x) { return x < 0 ? LD(0.5) * std::expm1(x) : x; }, -10, 10, 1},
      {"selu", [](Expr a) { return selu(a); },
       [](LD x) { return 1.05070102214813232421875L * (x > 0 ? x : 1.67326319217681884765625L * std::expm1(x)); }, -10, 10, 1},
      {"celu", [](Expr a) { return celu(a, 2); }, [](LD x) { return x > 0 ? x : 2 * std::expm1(x / 2); }, -10, 10, 1},
      {"softplus", [](Expr a) { return softplus(a); }, softplus_ld, -100, 100, 1},
      {"softsign", [](Expr a) { return softsign(a); }, [](LD x) { return x / (1 + std::fabs(x)); }, -100, 100, 1},
      {"hardsigmoid", [](Expr a) { return hardsigmoid(a); }, [](LD x) { return std::clamp(LD(0.2) * x + LD(0.5), LD(0), LD(1)); }, -5, 5, 1},
      {"hardswish", [](Expr a) { return hardswish(a); }, [](LD x) { return x * std::clamp(x / 6 + LD(0.5), LD(0), LD(1)); }, -5, 5, 1},
      {"mish", [](Expr a) { return mish(a); }, [](LD x) { return x * std::tanh(softplus_ld(x)); }, -30, 30, 1},
      {"sign", [](Expr a) { return sign(a); }, [](LD x) { return x > 0 ? 1 : x < 0 ? -1 : x; }, -5, 5, 1},
      {"reciprocal", [](Expr a) { return reciprocal(a); }, [](LD x) { return 1 / x; }, 0.01L, 100, 1e-300L},
      {"mod", [](Expr a) { return mod(a, lit(-0.75), false); },
       [](LD x) {
         const LD r = std::fmod(x, LD(-0.75));  // the divisor's sign (Python's %)
         return r > 0 ? r - LD(0.75) : r;
       }, -10, 10, 1},
  };
}

}  // namespace

TEST_CASE("inverse trigonometric and hyperbolic compositions match libm within a few ulp (f32, f64)") {
  check_math<float>(inverse_and_hyperbolic());
  check_math<double>(inverse_and_hyperbolic());
}

TEST_CASE("activation compositions match their ONNX definitions (f32, f64)") {
  check_math<float>(activations());
  check_math<double>(activations());
}
