// "ew_typed": elementwise chains over any scalar kind, one recipe per fn
// (integer arithmetic that wraps or divides by zero, bool logic, casts,
// quantize and dequantize steps, comparisons, float math in f32 and f64),
// so every device runs them against the typed reference. The inputs are
// made to hit the edges: integer extremes, zero divisors, shift amounts
// past the width, NaN, infinities and rounding ties.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>

#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/host_scalar.h"

namespace kgen::ops {

using fusion::Expr;
using ir::Op;
using ir::ScalarKind;

namespace {

// How a recipe's integer inputs are drawn.
enum class IntRange {
  Full,      // the type's whole range, plus 0, +-1 and the extremes
  Exponent,  // a: [-5, 5]; b: [-3, 40] (pow)
  Shift,     // b: [-2, 2 bits + 2] (shift amounts)
};

struct Recipe {
  const char* name;
  int arity;
  // in: the inputs' expressions; to: the output kind (quantize's target).
  std::function<Expr(const std::vector<Expr>& in, ScalarKind to)> build;
  double lo = -4, hi = 4;  // float inputs
  IntRange ints = IntRange::Full;
  bool bool_cond = false;  // input a is bool (where)
  // Float inputs keep |a / b| well below 2^24: GPU remainders are exact only
  // there (kg_fmod), so no huge specials and no divisor nearer 0 than 1/16.
  bool bounded_quotient = false;
};

Expr op2(Op op, const std::vector<Expr>& x) { return fusion::apply(op, {x[0], x[1]}); }

// Quantization parameters: a power-of-two scale keeps x / s exact on every
// device (GPU division is not correctly rounded), so ties stay ties.
constexpr double kScale = 0.5, kZeroPoint = 3;

const std::vector<Recipe>& recipes() {
  using namespace fusion;
  using V = const std::vector<Expr>&;
  static const std::vector<Recipe> r = {
      {"add", 2, [](V x, ScalarKind) { return x[0] + x[1]; }},
      {"sub", 2, [](V x, ScalarKind) { return x[0] - x[1]; }},
      {"mul", 2, [](V x, ScalarKind) { return x[0] * x[1]; }},
      {"div", 2, [](V x, ScalarKind) { return x[0] / x[1]; }},
      {"mod", 2, [](V x, ScalarKind) { return mod(x[0], x[1], false); }, -4, 4, IntRange::Full, false, true},
      {"fmod", 2, [](V x, ScalarKind) { return mod(x[0], x[1], true); }, -4, 4, IntRange::Full, false, true},
      {"min", 2, [](V x, ScalarKind) { return min(x[0], x[1]); }},
      {"max", 2, [](V x, ScalarKind) { return max(x[0], x[1]); }},
      {"pow", 2, [](V x, ScalarKind) { return pow(x[0], x[1]); }, 0.25, 3, IntRange::Exponent},
      {"and", 2, [](V x, ScalarKind) { return op2(Op::And, x); }},
      {"or", 2, [](V x, ScalarKind) { return op2(Op::Or, x); }},
      {"xor", 2, [](V x, ScalarKind) { return op2(Op::Xor, x); }},
      {"not", 1, [](V x, ScalarKind) { return apply(Op::Not, {x[0]}); }},
      {"shl", 2, [](V x, ScalarKind) { return shl(x[0], x[1]); }, -4, 4, IntRange::Shift},
      {"shr", 2, [](V x, ScalarKind) { return shr(x[0], x[1]); }, -4, 4, IntRange::Shift},
      {"where", 3, [](V x, ScalarKind) { return where(x[0], x[1], x[2]); }, -4, 4, IntRange::Full, true},
      {"neg", 1, [](V x, ScalarKind) { return -x[0]; }},
      {"abs", 1, [](V x, ScalarKind) { return abs(x[0]); }},
      {"sign", 1, [](V x, ScalarKind) { return sign(x[0]); }},
      {"relu", 1, [](V x, ScalarKind) { return relu(x[0]); }},
      {"clip", 3, [](V x, ScalarKind) { return clip(x[0], min(x[1], x[2]), max(x[1], x[2])); }},
      {"exp", 1, [](V x, ScalarKind) { return exp(x[0]); }},
      {"cast", 1, [](V x, ScalarKind to) { return cast(to, x[0]); }, -300, 300},
      {"saturate_cast", 1, [](V x, ScalarKind to) { return saturate_cast(to, x[0]); }, -300, 300},
      // QuantizeLinear: saturate(round(x / s) + zp).
      {"quantize", 1, [](V x, ScalarKind to) { return saturate_cast(to, round(x[0] / lit(kScale)) + lit(kZeroPoint)); }, -80, 80},
      // DequantizeLinear: (x - zp) * s in f32.
      {"dequantize", 1, [](V x, ScalarKind) { return (cast(ScalarKind::F32, x[0]) - lit(kZeroPoint)) * lit(kScale); }},
      {"lt", 2, [](V x, ScalarKind) { return lt(x[0], x[1]); }},
      {"eq", 2, [](V x, ScalarKind) { return eq(x[0], x[1]); }},
      {"ge", 2, [](V x, ScalarKind) { return ge(x[0], x[1]); }},
      {"isnan", 1, [](V x, ScalarKind) { return isnan(x[0]); }},
      {"isinf", 1, [](V x, ScalarKind) { return isinf(x[0]); }},
      {"atan", 1, [](V x, ScalarKind) { return atan(x[0]); }, -20, 20},
      {"asinh", 1, [](V x, ScalarKind) { return asinh(x[0]); }, -20, 20},
      {"acosh", 1, [](V x, ScalarKind) { return acosh(x[0]); }, 1, 30},
      {"gelu_erf", 1, [](V x, ScalarKind) { return gelu_erf(x[0]); }},
      {"softplus", 1, [](V x, ScalarKind) { return softplus(x[0]); }, -30, 30},
      {"mish", 1, [](V x, ScalarKind) { return mish(x[0]); }},
  };
  return r;
}

const Recipe& recipe(const Problem& p) {
  const int64_t fn = p.attr("fn");
  if (fn < 0 || size_t(fn) >= recipes().size())
    throw std::invalid_argument("ew_typed: fn must be 0.." + std::to_string(recipes().size() - 1));
  return recipes()[size_t(fn)];
}

// attr out: 0 = the expression's own kind, else 1 + ir::ScalarKind.
ScalarKind requested_out(const Problem& p) {
  const int64_t o = p.attr("out");
  if (o < 0 || o > int64_t(ScalarKind::F64) + 1) throw std::invalid_argument("ew_typed: out must be 0..13");
  return o == 0 ? ScalarKind::Void : ScalarKind(o - 1);
}

ScalarKind input_kind(const Recipe& r, const Problem& p, int i) { return i == 0 && r.bool_cond ? ScalarKind::Bool : p.dtype; }

std::string help() {
  std::string s = "fn=";
  for (size_t i = 0; i < recipes().size(); ++i) s += (i ? "|" : "") + std::to_string(i) + ":" + recipes()[i].name;
  return s + " (inputs of dtype; where: a is bool) out=0(the expression's kind)|1+ir::ScalarKind"
             " (1 bool 2 i8 3 i16 4 i32 5 i64 6 u8 7 u16 8 u32 9 u64 10 f16 11 bf16 12 f32 13 f64)"
             " ba/bb/bc=broadcast axis mask ra/rb/rc=input rank";
}

}  // namespace

fusion::Chain typed_chain(const Problem& p) {
  const Recipe& r = recipe(p);
  const ScalarKind out = requested_out(p);
  fusion::Chain c;
  c.name = "ew_typed_" + std::string(r.name);
  std::vector<Expr> x;
  for (int i = 0; i < r.arity; ++i) {
    const char k = char('a' + i);
    c.inputs.push_back({std::string(1, k), input_kind(r, p, i), elementwise_input_shape(p, k)});
    x.push_back(fusion::in(i, input_kind(r, p, i)));
  }
  c.out = r.build(x, out == ScalarKind::Void ? ScalarKind::U8 : out);
  c.out_dtype = out == ScalarKind::Void ? c.out.kind() : out;
  c.shape = p.dims;
  fusion::validate_chain(c);
  return c;
}

namespace {

// Float inputs: uniform in the recipe's range, with NaN, infinities, signed
// zeros, rounding ties (of x and of x / kScale) and values past every
// integer range sprinkled in.
double float_value(const Recipe& r, std::mt19937_64& rng) {
  static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.25, 0.75, -1.25,
                                   1.0, -1.0, 1e10, -1e10, 3e19, -3e19, 126.75, 127.5, -128.5, 255.5, 255.75};
  if (rng() % 8 == 0) {
    const double v = special[rng() % std::size(special)];
    return r.bounded_quotient && std::abs(v) > 256 ? 0.5 : v;
  }
  const double v = std::uniform_real_distribution<double>(r.lo, r.hi)(rng);
  return r.bounded_quotient && std::abs(v) < 0.0625 ? std::copysign(0.0625, v) : v;
}

// Integer inputs (as their 64-bit value; u64 as bits).
int64_t int_value(const Recipe& r, ScalarKind k, int input, std::mt19937_64& rng) {
  const ir::Type t(k);
  const int bits = t.bits();
  const int64_t tmin = t.is_signed() ? (bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1))) : 0;
  const int64_t tmax = bits == 64 ? (t.is_signed() ? INT64_MAX : -1) : t.is_signed() ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  auto clamped = [&](int64_t lo, int64_t hi) {
    if (!t.is_signed()) lo = std::max<int64_t>(lo, 0);
    return std::uniform_int_distribution<int64_t>(std::max(lo, tmin), hi)(rng);
  };
  if (r.ints == IntRange::Exponent) return input == 0 ? clamped(-5, 5) : clamped(-3, 40);
  if (r.ints == IntRange::Shift && input == 1) return clamped(-2, 2 * bits + 2);
  if (rng() % 8 == 0) {
    const int64_t special[] = {0, 1, -1, tmin, tmax, tmin + 1, tmax - 1};
    const int64_t v = special[rng() % std::size(special)];
    return t.is_signed() || v >= 0 || bits == 64 ? v : 0;
  }
  if (bits == 64 && !t.is_signed()) return int64_t(rng());
  return std::uniform_int_distribution<int64_t>(tmin, tmax)(rng);
}

void make_input(const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
  const Recipe& r = recipe(p);
  const ScalarKind k = input_kind(r, p, input);
  const size_t n = bytes.size() / size_t(ir::Type(k).bytes());
  std::mt19937_64 rng(seed);
  for (size_t e = 0; e < n; ++e) {
    fusion::Scalar v;
    ScalarKind from = ScalarKind::I64;
    if (k == ScalarKind::Bool) v.i = int64_t(rng() & 1);
    else if (fusion::is_float_kind(k)) v.f = float_value(r, rng), from = ScalarKind::F64;
    else v.i = int_value(r, k, input, rng), from = k;
    fusion::store(k, bytes.data(), int64_t(e), k == ScalarKind::Bool ? ScalarKind::Bool : from, v);
  }
}

double tolerance(const Problem& p) {
  switch (typed_chain(p).out_dtype) {
    case ScalarKind::F16: return 2e-3;
    case ScalarKind::BF16: return 1.6e-2;
    case ScalarKind::F32: return 2e-5;
    case ScalarKind::F64: return 1e-12;
    default: return 0;  // bool and integers: exact
  }
}

Problem prob(const std::string& fn, ScalarKind dt, std::vector<int64_t> dims, std::map<std::string, int64_t> attrs = {},
             ScalarKind out = ScalarKind::Void) {
  Problem p;
  p.op = "ew_typed";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = std::move(attrs);
  for (size_t i = 0; i < recipes().size(); ++i)
    if (fn == recipes()[i].name) p.attrs["fn"] = int64_t(i);
  if (out != ScalarKind::Void) p.attrs["out"] = int64_t(out) + 1;
  return p;
}

std::vector<Problem> test_problems() {
  using K = ScalarKind;
  return {
      prob("add", K::U8, {1000}), prob("add", K::U8, {37, 29}, {{"bb", 0b01}, {"rb", 1}}),  // wraps mod 256
      prob("sub", K::I16, {3, 5, 17}), prob("mul", K::I64, {999}), prob("mul", K::U32, {7, 33}, {{"ba", 0b10}}),
      prob("div", K::I32, {1003}), prob("div", K::U8, {130}), prob("mod", K::I32, {517}), prob("fmod", K::I32, {517}),
      prob("mod", K::F32, {300}), prob("fmod", K::I64, {99}), prob("min", K::U16, {333}),
      prob("max", K::I8, {11, 7}, {{"bb", 0b10}}), prob("pow", K::I32, {257}), prob("pow", K::U8, {100}),
      prob("pow", K::F64, {100}), prob("and", K::Bool, {1001}), prob("or", K::Bool, {65}), prob("xor", K::Bool, {5, 13}),
      prob("not", K::Bool, {31}), prob("and", K::U32, {100}), prob("not", K::I8, {50}), prob("shl", K::U8, {300}),
      prob("shr", K::I16, {300}), prob("shr", K::U64, {100}), prob("where", K::F32, {6, 5, 19}, {{"ba", 0b001}}),
      prob("where", K::I64, {40, 5}, {{"bb", 0b01}, {"rb", 1}}),
      // Bool lines select through i8 lines (clang's vector ?: on bool lines breaks the module).
      prob("where", K::Bool, {3, 37}), prob("neg", K::I32, {200}), prob("abs", K::I16, {200}),
      prob("sign", K::I8, {200}), prob("sign", K::F32, {200}), prob("relu", K::I8, {77}),
      prob("clip", K::I32, {3, 40}, {{"bb", 0b11}, {"rb", 0}}), prob("exp", K::F64, {777}),
      prob("cast", K::F16, {7, 33}, {}, K::F32), prob("cast", K::F32, {500}, {}, K::I32),
      prob("cast", K::U8, {100}, {}, K::Bool), prob("cast", K::F64, {100}, {}, K::F16),
      prob("cast", K::I64, {100}, {}, K::U8), prob("cast", K::Bool, {100}, {}, K::F32),
      prob("saturate_cast", K::I32, {300}, {}, K::U8), prob("saturate_cast", K::F32, {300}, {}, K::I8),
      prob("quantize", K::F32, {1000}, {}, K::U8), prob("quantize", K::F32, {3, 5, 17}, {}, K::I8),
      prob("quantize", K::F16, {64}, {}, K::U8), prob("dequantize", K::U8, {1000}), prob("dequantize", K::I8, {5, 40}),
      prob("lt", K::F32, {1000}), prob("eq", K::I32, {100}), prob("ge", K::U64, {100}), prob("lt", K::F64, {64}),
      prob("isnan", K::F32, {1000}), prob("isinf", K::F32, {100}), prob("isinf", K::F64, {100}), prob("atan", K::F32, {1000}),
      prob("atan", K::F64, {500}), prob("asinh", K::F32, {300}), prob("acosh", K::F32, {300}),
      prob("gelu_erf", K::F32, {1000}), prob("softplus", K::F64, {300}), prob("mish", K::F32, {300}),
  };
}

}  // namespace

OpDef typed_elementwise_def() {
  OpDef d = elementwise_def("ew_typed", "a typed elementwise chain (any scalar kind: wrap, division, casts, quantize)", help());
  d.validate = [](const Problem& p) { typed_chain(p); };
  d.inputs = [](const Problem& p) {
    fusion::Chain c = typed_chain(p);
    std::vector<TensorSpec> t;
    for (const auto& i : c.inputs) t.push_back(tensor(i.name, ir::Type(i.dtype), i.shape));
    return t;
  };
  d.make_input = make_input;
  d.tolerance = tolerance;
  d.test_problems = test_problems();
  d.bench_problems = {prob("add", ScalarKind::U8, {int64_t(1) << 26}), prob("quantize", ScalarKind::F32, {int64_t(1) << 26}, {}, ScalarKind::U8)};
  return d;
}

}  // namespace kgen::ops
