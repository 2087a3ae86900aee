// Typed fused chains (ops/elementwise/expr.h): every scalar kind in and out.
// The ew_typed op on every device against the chain reference, and chains
// checked against plain C++ written here (128-bit integer arithmetic,
// _Float16): integer ops on each integer type, bool logic and comparisons,
// casts and saturation, QuantizeLinear and DequantizeLinear; each on the CPU
// (16-lane lines and the scalar tail) and through the interpreter (line and
// scalar forms), with poisoned outputs. Also kind inference, bad input and
// targets that lack a type.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>

#include "codegen/target.h"
#include "codegen/wgsl_dialect.h"
#include "ir/interpreter.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/fusion.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;
namespace fusion = kgen::ops::fusion;
using fusion::Expr;
using K = ir::ScalarKind;

KGEN_OP_FAMILY_TESTS("typed elementwise ops", "ew_typed")

namespace {

using Bytes = std::vector<uint8_t>;
using I128 = __int128;
using U128 = unsigned __int128;

template <class T> K kind_of() {
  if constexpr (std::is_same_v<T, bool>) return K::Bool;
  else if constexpr (std::is_same_v<T, float>) return K::F32;
  else if constexpr (std::is_same_v<T, double>) return K::F64;
  else if constexpr (std::is_signed_v<T>) return sizeof(T) == 1 ? K::I8 : sizeof(T) == 2 ? K::I16 : sizeof(T) == 4 ? K::I32 : K::I64;
  else return sizeof(T) == 1 ? K::U8 : sizeof(T) == 2 ? K::U16 : sizeof(T) == 4 ? K::U32 : K::U64;
}

template <class T> Bytes bytes_of(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < v.size(); ++i) b[i] = v[i];
  } else if (!v.empty()) {
    std::memcpy(b.data(), v.data(), b.size());
  }
  return b;
}
template <class T> T at(const Bytes& b, size_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return b[i] != 0;
  } else {
    T x;
    std::memcpy(&x, b.data() + i * sizeof(T), sizeof(T));
    return x;
  }
}

// A flat chain over n elements of inputs of these kinds.
fusion::Chain flat_chain(const std::vector<K>& kinds, int64_t n, Expr out, K out_dtype) {
  fusion::Chain c;
  c.name = "typed_test";
  for (size_t i = 0; i < kinds.size(); ++i) c.inputs.push_back({"in" + std::to_string(i), kinds[i], {n}});
  c.shape = {n};
  c.out = std::move(out);
  c.out_dtype = out_dtype;
  return c;
}

// The plan's steps on the device; slots: inputs, the output, temporaries.
Bytes run_on_device(rt::Device& dev, const ops::Plan& pl, const std::vector<Bytes>& in, size_t out_bytes) {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  for (const Bytes& b : in) {
    bufs.push_back(dev.alloc(std::max<size_t>(b.size(), 4)));
    bufs.back()->upload(b.data(), b.size());
  }
  Bytes out(out_bytes, 0xa5);
  bufs.push_back(dev.alloc(std::max<size_t>(out_bytes, 4)));
  bufs.back()->upload(out.data(), out.size());
  for (size_t t : pl.temp_bytes) bufs.push_back(dev.alloc(std::max<size_t>(t, 4)));
  for (const auto& s : pl.steps) {
    std::vector<rt::Buffer*> args;
    for (int b : s.buffers) args.push_back(bufs[size_t(b)].get());
    dev.launch(*dev.compile(s.kernel), rt::LaunchArgs{s.dims, args, s.scalars});
  }
  dev.synchronize();
  bufs[in.size()]->download(out.data(), out.size());
  return out;
}

Bytes run_interpreted(const ops::Plan& pl, std::vector<Bytes> in, size_t out_bytes) {
  in.emplace_back(out_bytes, 0xa5);
  for (size_t t : pl.temp_bytes) in.emplace_back(std::max<size_t>(t, 4), 0xa5);
  for (const auto& s : pl.steps) {
    std::vector<ir::InterpBuffer> bufs;
    for (int b : s.buffers) bufs.push_back({in[size_t(b)].data(), in[size_t(b)].size()});
    ir::interpret(s.kernel, s.dims, bufs, s.scalars);
  }
  return in[in.size() - 1 - pl.temp_bytes.size()];
}

// The chain's output on the CPU (16-lane lines, then the scalar tail) and
// in the interpreter (the line form and the GPUs' scalar form), labelled.
std::vector<std::pair<std::string, Bytes>> run_everywhere(const fusion::Chain& c, const std::vector<Bytes>& in) {
  static auto dev = cpu(1);
  const size_t out_bytes = size_t(fusion::numel(c.shape)) * size_t(ir::Type(c.out_dtype).bytes());
  std::vector<std::pair<std::string, Bytes>> r;
  fusion::ChainVariant lines, scalars;
  scalars.lanes = 1;
  scalars.wg = 4;
  std::vector<int> slots;
  for (size_t i = 0; i < c.inputs.size(); ++i) slots.push_back(int(i));
  ops::Plan pl_lines, pl_scalars;
  fusion::plan_chain(pl_lines, c, slots, int(slots.size()), lines);
  fusion::plan_chain(pl_scalars, c, slots, int(slots.size()), scalars);
  r.emplace_back("cpu lines", run_on_device(*dev, pl_lines, in, out_bytes));
  r.emplace_back("interpreter lines", run_interpreted(pl_lines, in, out_bytes));
  r.emplace_back("interpreter scalars", run_interpreted(pl_scalars, in, out_bytes));
  return r;
}

// Every run's element i equals want(i), bit for bit (NaN: any NaN).
template <class T> void check_exact(const fusion::Chain& c, const std::vector<Bytes>& in, const std::function<T(size_t)>& want) {
  const size_t n = size_t(fusion::numel(c.shape));
  for (const auto& [where, got] : run_everywhere(c, in)) {
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i) {
      const T g = at<T>(got, i), w = want(i);
      bool same = std::memcmp(&g, &w, sizeof(T)) == 0;
      if constexpr (std::is_floating_point_v<T>) same = same || (std::isnan(g) && std::isnan(w));
      if (!same && bad++ == 0) first = i;
    }
    CAPTURE(where);
    if (first < n) {
      const std::string worst = "element " + std::to_string(first) + ": got " + std::to_string(double(at<T>(got, first))) +
                                ", expected " + std::to_string(double(want(first)));
      CAPTURE(worst);
      CHECK(bad == 0);
    }
  }
}

std::mt19937_64& rng() {
  static std::mt19937_64 r(fresh_seed());
  return r;
}

// n values of T in [lo, hi], a quarter of them 0, +-1 and T's extremes where in range.
template <class T> std::vector<T> int_values(size_t n, I128 lo = std::numeric_limits<T>::min(), I128 hi = std::numeric_limits<T>::max()) {
  const T special[] = {T(0), T(1), T(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                       T(std::numeric_limits<T>::min() + 1)};
  std::vector<T> v(n);
  for (auto& x : v) {
    x = T(lo + I128(U128(rng()()) % U128(hi - lo + 1)));
    const T s = special[rng()() % std::size(special)];
    if (rng()() % 4 == 0 && I128(s) >= lo && I128(s) <= hi) x = s;
  }
  return v;
}

template <class T> T wrap(I128 v) { return T(std::make_unsigned_t<T>(U128(v))); }

// The integer ops of expr_ops.h on T, written with 128-bit arithmetic.
template <class T> void check_int_ops() {
  const K k = kind_of<T>();
  constexpr bool is_signed = std::is_signed_v<T>;
  constexpr int bits = int(sizeof(T)) * 8;
  const size_t n = 16 * 40 + 7;  // whole lines and a tail
  enum Second { Any, Amount, Exponent };
  struct Case {
    const char* name;
    std::function<Expr(Expr, Expr)> f;
    std::function<T(T, T)> want;
    Second b = Any;
  };
  auto out_of_range = [](T b) { return (is_signed && b < 0) || U128(std::make_unsigned_t<T>(b)) >= U128(bits); };
  std::vector<Case> cases = {
      {"add", [](Expr a, Expr b) { return a + b; }, [](T a, T b) { return wrap<T>(I128(a) + b); }},
      {"sub", [](Expr a, Expr b) { return a - b; }, [](T a, T b) { return wrap<T>(I128(a) - b); }},
      {"mul", [](Expr a, Expr b) { return a * b; }, [](T a, T b) { return wrap<T>(I128(a) * b); }},
      {"div", [](Expr a, Expr b) { return a / b; }, [](T a, T b) { return b == 0 ? T(0) : wrap<T>(I128(a) / b); }},
      {"fmod", [](Expr a, Expr b) { return fusion::mod(a, b, true); }, [](T a, T b) { return b == 0 ? T(0) : wrap<T>(I128(a) % b); }},
      {"mod", [](Expr a, Expr b) { return fusion::mod(a, b, false); },
       [](T a, T b) {
         if (b == 0) return T(0);
         I128 r = I128(a) % b;
         if (r != 0 && (r < 0) != (b < 0)) r += b;
         return wrap<T>(r);
       }},
      {"min", [](Expr a, Expr b) { return fusion::min(a, b); }, [](T a, T b) { return a < b ? a : b; }},
      {"max", [](Expr a, Expr b) { return fusion::max(a, b); }, [](T a, T b) { return a < b ? b : a; }},
      {"and", [](Expr a, Expr b) { return fusion::bitwise_and(a, b); }, [](T a, T b) { return T(a & b); }},
      {"or", [](Expr a, Expr b) { return fusion::bitwise_or(a, b); }, [](T a, T b) { return T(a | b); }},
      {"xor", [](Expr a, Expr b) { return fusion::bitwise_xor(a, b); }, [](T a, T b) { return T(a ^ b); }},
      {"not", [](Expr a, Expr) { return fusion::bitwise_not(a); }, [](T a, T) { return T(~a); }},
      {"shl", [](Expr a, Expr b) { return fusion::shl(a, b); },
       [&](T a, T b) { return out_of_range(b) ? T(0) : wrap<T>(I128(U128(std::make_unsigned_t<T>(a)) << unsigned(b))); }, Amount},
      {"shr", [](Expr a, Expr b) { return fusion::shr(a, b); },
       [&](T a, T b) { return out_of_range(b) ? T(a < 0 ? -1 : 0) : T(I128(a) >> unsigned(b)); }, Amount},
      {"pow", [](Expr a, Expr b) { return fusion::pow(a, b); },
       [](T a, T b) {
         if (is_signed && b < 0) return a == 1 ? T(1) : a == T(-1) ? T(I128(b) % 2 ? -1 : 1) : T(0);
         T r = 1;
         for (T e = 0; e < b; ++e) r = wrap<T>(I128(r) * a);
         return r;
       }, Exponent},
      {"abs", [](Expr a, Expr) { return fusion::abs(a); }, [](T a, T) { return wrap<T>(a < 0 ? -I128(a) : I128(a)); }},
      {"sign", [](Expr a, Expr) { return fusion::sign(a); }, [](T a, T) { return T(a > 0 ? 1 : a < 0 ? -1 : 0); }},
      {"relu", [](Expr a, Expr) { return fusion::relu(a); }, [](T a, T) { return a > 0 ? a : T(0); }},
      {"clip", [k](Expr a, Expr) { return fusion::clip(a, fusion::int_lit(3, k), fusion::int_lit(100, k)); },
       [](T a, T) { return a < 3 ? T(3) : a > 100 ? T(100) : a; }},
  };
  if (is_signed) cases.push_back({"neg", [](Expr a, Expr) { return -a; }, [](T a, T) { return wrap<T>(-I128(a)); }});
  for (const Case& cs : cases) {
    CAPTURE(cs.name);
    CAPTURE(ir::scalar_name(k));
    std::vector<T> a = cs.b == Exponent ? int_values<T>(n, is_signed ? -5 : 0, 5) : int_values<T>(n);
    std::vector<T> b = cs.b == Amount     ? int_values<T>(n, is_signed ? -2 : 0, 2 * bits + 2)
                       : cs.b == Exponent ? int_values<T>(n, is_signed ? -3 : 0, 40)
                                          : int_values<T>(n);
    fusion::Chain c = flat_chain({k, k}, int64_t(n), cs.f(fusion::in(0, k), fusion::in(1, k)), k);
    check_exact<T>(c, {bytes_of(a), bytes_of(b)}, [&](size_t i) { return cs.want(a[i], b[i]); });
  }
}

}  // namespace

TEST_CASE("integer chains wrap, divide and shift as written in C++ on each integer type") {
  check_int_ops<int8_t>();
  check_int_ops<uint8_t>();
  check_int_ops<int16_t>();
  check_int_ops<uint16_t>();
  check_int_ops<int32_t>();
  check_int_ops<uint32_t>();
  check_int_ops<int64_t>();
  check_int_ops<uint64_t>();
}

TEST_CASE("bool logic, comparisons to bool, where") {
  const size_t n = 16 * 20 + 9;
  std::vector<bool> p(n), q(n);
  for (size_t i = 0; i < n; ++i) p[i] = rng()() & 1, q[i] = rng()() & 1;
  const std::vector<Bytes> pq = {bytes_of(p), bytes_of(q)};
  using F = std::function<Expr(Expr, Expr)>;
  using W = std::function<bool(bool, bool)>;
  const std::vector<std::tuple<const char*, F, W>> logic = {
      {"and", [](Expr a, Expr b) { return fusion::logical_and(a, b); }, [](bool a, bool b) { return a && b; }},
      {"or", [](Expr a, Expr b) { return fusion::logical_or(a, b); }, [](bool a, bool b) { return a || b; }},
      {"xor", [](Expr a, Expr b) { return fusion::logical_xor(a, b); }, [](bool a, bool b) { return a != b; }},
      {"not", [](Expr a, Expr) { return fusion::logical_not(a); }, [](bool a, bool) { return !a; }},
      {"eq", [](Expr a, Expr b) { return fusion::eq(a, b); }, [](bool a, bool b) { return a == b; }},
  };
  for (const auto& [name, f, w] : logic) {
    CAPTURE(name);
    fusion::Chain c = flat_chain({K::Bool, K::Bool}, int64_t(n), f(fusion::in(0, K::Bool), fusion::in(1, K::Bool)), K::Bool);
    check_exact<bool>(c, pq, [&](size_t i) { return w(p[i], q[i]); });
  }
  // where(p, x, y) on i16, and a bool result stored as f32 (0 or 1).
  std::vector<int16_t> x = int_values<int16_t>(n), y = int_values<int16_t>(n);
  fusion::Chain c = flat_chain({K::Bool, K::I16, K::I16}, int64_t(n),
                               fusion::where(fusion::in(0, K::Bool), fusion::in(1, K::I16), fusion::in(2, K::I16)), K::I16);
  check_exact<int16_t>(c, {bytes_of(p), bytes_of(x), bytes_of(y)}, [&](size_t i) { return p[i] ? x[i] : y[i]; });
  c = flat_chain({K::I16, K::I16}, int64_t(n), fusion::lt(fusion::in(0, K::I16), fusion::in(1, K::I16)), K::F32);
  check_exact<float>(c, {bytes_of(x), bytes_of(y)}, [&](size_t i) { return x[i] < y[i] ? 1.0f : 0.0f; });
}

namespace {

// Float values with every comparison's edge: NaN, infinities, signed zeros, repeats.
template <class T> std::vector<T> float_values(size_t n) {
  const T special[] = {T(NAN), T(INFINITY), T(-INFINITY), T(0), T(-0.0), T(1), T(-1), T(2.5), T(1e30)};
  std::vector<T> v(n);
  for (auto& x : v) x = rng()() % 3 == 0 ? special[rng()() % std::size(special)] : T(std::uniform_real_distribution<double>(-3, 3)(rng()));
  return v;
}

template <class T> void check_compares() {
  const K k = kind_of<T>();
  const size_t n = 16 * 20 + 3;
  std::vector<T> a, b;
  if constexpr (std::is_floating_point_v<T>) a = float_values<T>(n), b = float_values<T>(n);
  else a = int_values<T>(n), b = int_values<T>(n);
  using F = Expr (*)(Expr, Expr);
  const std::vector<std::tuple<const char*, F, std::function<bool(T, T)>>> cmp = {
      {"lt", fusion::lt, [](T x, T y) { return x < y; }}, {"le", fusion::le, [](T x, T y) { return x <= y; }},
      {"gt", fusion::gt, [](T x, T y) { return x > y; }}, {"ge", fusion::ge, [](T x, T y) { return x >= y; }},
      {"eq", fusion::eq, [](T x, T y) { return x == y; }}, {"ne", fusion::ne, [](T x, T y) { return x != y; }},
  };
  for (const auto& [name, f, w] : cmp) {
    CAPTURE(name);
    CAPTURE(ir::scalar_name(k));
    fusion::Chain c = flat_chain({k, k}, int64_t(n), f(fusion::in(0, k), fusion::in(1, k)), K::Bool);
    check_exact<bool>(c, {bytes_of(a), bytes_of(b)}, [&](size_t i) { return w(a[i], b[i]); });
  }
  if constexpr (std::is_floating_point_v<T>) {
    const Expr x = fusion::in(0, k);
    const std::vector<std::tuple<const char*, Expr, std::function<bool(T)>>> tests = {
        {"isnan", fusion::isnan(x), [](T v) { return std::isnan(v); }},
        {"isinf", fusion::isinf(x), [](T v) { return std::isinf(v); }},
        {"isinf+", fusion::isinf(x, true, false), [](T v) { return v == T(INFINITY); }},
        {"isinf-", fusion::isinf(x, false, true), [](T v) { return v == -T(INFINITY); }},
    };
    for (const auto& [name, e, w] : tests) {
      CAPTURE(name);
      check_exact<bool>(flat_chain({k}, int64_t(n), e, K::Bool), {bytes_of(a)}, [&](size_t i) { return w(a[i]); });
    }
  }
}

}  // namespace

TEST_CASE("comparisons, isnan and isinf give bool on integers and floats (NaN, infinities, signed zeros)") {
  check_compares<int32_t>();
  check_compares<uint64_t>();
  check_compares<float>();
  check_compares<double>();
}

namespace {

// Storage bits of the values of `k` (all exact in long double), as the cast
// tests' inputs and expectations.
Bytes store_as(K k, const std::vector<long double>& v) {
  Bytes b(v.size() * size_t(ir::Type(k).bytes()));
  for (size_t i = 0; i < v.size(); ++i) {
    auto put = [&](auto x) { std::memcpy(b.data() + i * sizeof(x), &x, sizeof(x)); };
    switch (k) {
      case K::Bool: b[i] = v[i] != 0; break;
      case K::I8: put(int8_t(v[i])); break;
      case K::U8: put(uint8_t(v[i])); break;
      case K::I16: put(int16_t(v[i])); break;
      case K::U16: put(uint16_t(v[i])); break;
      case K::I32: put(int32_t(v[i])); break;
      case K::U32: put(uint32_t(v[i])); break;
      case K::I64: put(int64_t(v[i])); break;
      case K::U64: put(uint64_t(v[i])); break;
      case K::F16: put(_Float16(v[i])); break;
      case K::BF16: put(uint16_t(std::bit_cast<uint32_t>(float(v[i])) >> 16)); break;  // v: a bf16 value
      case K::F32: put(float(v[i])); break;
      case K::F64: put(double(v[i])); break;
      default: FAIL("no storage for this kind");
    }
  }
  return b;
}

// Rounds to bf16 (8 significant bits, ties to even) in one step.
long double round_bf16(long double v) {
  if (!std::isfinite(v) || v == 0) return v;
  int e;
  const long double m = std::frexp(v, &e);
  return (long double)(float(std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8)));
}

// cast() / saturate_cast() of exact values (from: their kind) to `to`, as numbers.
long double converted(long double v, K from, K to, bool saturating) {
  const ir::Type t(to);
  if (to == K::Bool) return v != 0;
  if (from == K::Bool) return v;
  if (t.is_int()) {
    const long double lo = t.is_signed() ? -std::ldexp(1.0L, t.bits() - 1) : 0;
    const long double hi = std::ldexp(1.0L, t.bits() - (t.is_signed() ? 1 : 0)) - 1;
    if (ir::Type(from).is_float()) {
      if (std::isnan(v)) return 0;
      const long double r = saturating ? std::nearbyint(v) : std::trunc(v);
      return std::clamp(r, lo, hi);
    }
    if (saturating) return std::clamp(v, lo, hi);
    const I128 w = I128(v), m = I128(1) << t.bits();
    I128 r = ((w % m) + m) % m;
    if (t.is_signed() && r > I128(hi)) r -= m;
    return (long double)r;
  }
  if (to == K::F16) return (long double)_Float16(v);
  if (to == K::BF16) return round_bf16(v);
  if (to == K::F32) return float(v);
  return double(v);
}

std::vector<long double> cast_sources(K from, size_t n) {
  std::vector<long double> v(n);
  const ir::Type t(from);
  if (from == K::Bool) {
    for (auto& x : v) x = rng()() & 1;
    return v;
  }
  if (t.is_int()) {
    const long double lo = t.is_signed() ? -std::ldexp(1.0L, t.bits() - 1) : 0;
    const long double hi = std::ldexp(1.0L, t.bits() - (t.is_signed() ? 1 : 0)) - 1;
    for (auto& x : v) {
      const uint64_t r = rng()();
      x = r % 4 == 0 ? (r % 8 == 0 ? lo : hi) : std::floor(lo + (hi - lo) * std::ldexp((long double)(rng()() >> 11), -53));
    }
    return v;
  }
  const long double special[] = {NAN, INFINITY, -INFINITY, 0.0L, -0.0L, 0.5L, -0.5L, 1.5L, 2.5L, -2.5L, 127.5L, 128,
                                 -128.5L, 255.5L, 256, 32767.5L, 65504, 65520, 3e9L, -3e9L, 1e19L, 2e19L, -1e19L, 1e30L};
  for (auto& x : v) {
    const uint64_t r = rng()();
    x = r % 3 == 0 ? special[(r >> 8) % std::size(special)] : std::ldexp((long double)int64_t(rng()()), -int(r % 80));
    // Exact in the source type: through it and back.
    x = from == K::F16 ? (long double)_Float16(x) : from == K::F32 ? (long double)float(x) : (long double)double(x);
  }
  return v;
}

void check_cast(K from, K to, bool saturating) {
  CAPTURE(ir::scalar_name(from));
  CAPTURE(ir::scalar_name(to));
  CAPTURE(saturating);
  const size_t n = 16 * 8 + 5;
  std::vector<long double> src = cast_sources(from, n);
  // Integers past 2^24 reach bf16 through f32 on the CPU (two roundings:
  // one in ~1e5 values is a bf16 ulp off), a codegen matter: kept below.
  if (to == K::BF16 && ir::Type(from).is_int())
    for (auto& v : src) v = std::fmod(v, 16777216.0L) + 0.0L;  // + 0: no -0 integer
  const Expr x = fusion::in(0, from);
  const Expr e = saturating ? fusion::saturate_cast(to, x) : fusion::cast(to, x);
  std::vector<long double> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = converted(src[i], from, to, saturating);
  const Bytes want_bytes = store_as(to, want);
  const size_t eb = size_t(ir::Type(to).bytes());
  for (const auto& [where, got] : run_everywhere(flat_chain({from}, int64_t(n), e, to), {store_as(from, src)})) {
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i) {
      const bool nan = std::isnan(want[i]) && (to == K::F32 || to == K::F64 || to == K::F16 || to == K::BF16);
      const bool same = std::memcmp(got.data() + i * eb, want_bytes.data() + i * eb, eb) == 0;
      if (!same && !nan && bad++ == 0) first = i;
    }
    CAPTURE(where);
    const std::string worst = first < n ? "element " + std::to_string(first) + " of " + std::to_string(double(src[first])) +
                                              ": expected " + std::to_string(double(want[first]))
                                        : "";
    CAPTURE(worst);
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("cast: C conversion (truncation toward zero, wrap, != 0), saturating and NaN -> 0 where C is undefined") {
  const K all[] = {K::Bool, K::I8, K::U8, K::I16, K::U16, K::I32, K::U32, K::I64, K::U64, K::F16, K::BF16, K::F32, K::F64};
  for (K from : {K::F32, K::F64, K::F16, K::I32, K::I64, K::U8, K::U64, K::Bool})
    for (K to : all) check_cast(from, to, false);
}

TEST_CASE("saturate_cast: round half to even, then clamp to the integer range (NaN -> 0)") {
  for (K from : {K::F32, K::F64, K::I32, K::I64, K::U64})
    for (K to : {K::I8, K::U8, K::I16, K::U16, K::I32, K::U32, K::I64, K::U64}) check_cast(from, to, true);
}

TEST_CASE("QuantizeLinear and DequantizeLinear as chains: ties to even, saturation, f32 scale") {
  using namespace fusion;
  const size_t n = 16 * 30 + 11;
  const float s = 0.05f;
  std::vector<float> x(n);
  const float special[] = {NAN, INFINITY, -INFINITY, 1e10f, -1e10f, 0.025f, -0.025f, 0.075f, 6.375f, -6.425f};
  for (size_t i = 0; i < n; ++i)
    x[i] = i % 5 == 0 ? special[i / 5 % std::size(special)] : float(int64_t(rng()() % 1601) - 800) * 0.0125f;
  for (auto [to, zp] : {std::pair{K::U8, 128.0f}, std::pair{K::I8, -3.0f}}) {
    CAPTURE(ir::scalar_name(to));
    const Expr q = saturate_cast(to, round(in(0, K::F32) / lit(s)) + lit(zp));
    const float lo = to == K::U8 ? 0 : -128, hi = to == K::U8 ? 255 : 127;
    auto want = [&](size_t i) -> float {
      if (std::isnan(x[i])) return 0;
      return std::clamp(std::nearbyint(x[i] / s) + zp, lo, hi);
    };
    if (to == K::U8) check_exact<uint8_t>(flat_chain({K::F32}, int64_t(n), q, to), {bytes_of(x)}, [&](size_t i) { return uint8_t(want(i)); });
    else check_exact<int8_t>(flat_chain({K::F32}, int64_t(n), q, to), {bytes_of(x)}, [&](size_t i) { return int8_t(want(i)); });
  }
  std::vector<uint8_t> u = int_values<uint8_t>(n);
  const Expr dq = (cast(K::F32, in(0, K::U8)) - lit(128)) * lit(s);
  check_exact<float>(flat_chain({K::U8}, int64_t(n), dq, K::F32), {bytes_of(u)},
                     [&](size_t i) { return (float(u[i]) - 128.0f) * s; });
}

TEST_CASE("f16 inputs compute in f32 and store to any output kind") {
  using namespace fusion;
  const size_t n = 16 * 9 + 1;
  std::vector<long double> a = cast_sources(K::F16, n), b = cast_sources(K::F16, n);
  const Expr sum = in(0, K::F16) + in(1, K::F16);
  CHECK(sum.kind() == K::F32);
  const std::vector<Bytes> in_bytes = {store_as(K::F16, a), store_as(K::F16, b)};
  check_exact<float>(flat_chain({K::F16, K::F16}, int64_t(n), sum, K::F32), in_bytes,
                     [&](size_t i) { return float(a[i]) + float(b[i]); });
  check_exact<int32_t>(flat_chain({K::F16, K::F16}, int64_t(n), sum, K::I32), in_bytes, [&](size_t i) {
    return int32_t(converted((long double)(float(a[i]) + float(b[i])), K::F32, K::I32, false));
  });
}

TEST_CASE("node kinds are inferred as the chain is built") {
  using namespace fusion;
  CHECK(in(0).kind() == K::F32);
  CHECK(in(0, K::F16).kind() == K::F32);
  CHECK(in(0, K::BF16).kind() == K::F32);
  CHECK(in(0, K::U8).kind() == K::U8);
  CHECK((in(0, K::U8) + lit(1)).kind() == K::U8);
  CHECK((in(0, K::F32) + in(1, K::F64)).kind() == K::F64);
  CHECK(lt(in(0, K::I64), lit(3)).kind() == K::Bool);
  CHECK(isnan(in(0)).kind() == K::Bool);
  CHECK(cast(K::F16, in(0, K::I32)).kind() == K::F32);
  CHECK(saturate_cast(K::U8, in(0)).kind() == K::U8);
  CHECK(saturate_cast(K::U8, in(0)).node->kind == Node::Kind::SaturateCast);
  CHECK(saturate_cast(K::F16, in(0)).node->kind == Node::Kind::Cast);
  CHECK(lit(2).kind() == K::F32);
  CHECK(sigmoid(in(0, K::F64)).kind() == K::F64);
  CHECK(atan(in(0, K::F64)).kind() == K::F64);
  CHECK(relu(in(0, K::I8)).kind() == K::I8);
  CHECK(where(lt(in(0), lit(0)), lit(1), in(1, K::I8)).kind() == K::I8);
  CHECK(mod(in(0, K::I32), in(1, K::I32), false).kind() == K::I32);
  CHECK(sign(in(0, K::U16)).kind() == K::U16);
  // A literal takes the kind it meets; a subexpression of literals only as well.
  CHECK((in(0, K::I16) * (lit(2) + lit(3))).kind() == K::I16);
}

TEST_CASE("misused builders and mismatched chains throw std::invalid_argument") {
  using namespace fusion;
  using IA = std::invalid_argument;
  CHECK_THROWS_AS(in(0, K::U8) + in(1, K::I32), IA);
  CHECK_THROWS_AS(in(0, K::I32) + in(1, K::F32), IA);
  CHECK_THROWS_AS(exp(in(0, K::I32)), IA);
  CHECK_THROWS_AS(floor(in(0, K::U8)), IA);
  CHECK_THROWS_AS(atan(in(0, K::I32)), IA);
  CHECK_THROWS_AS(isnan(in(0, K::I32)), IA);
  CHECK_THROWS_AS(-in(0, K::U8), IA);
  CHECK_THROWS_AS(shl(in(0), in(1)), IA);
  CHECK_THROWS_AS(logical_and(in(0, K::I32), in(1, K::I32)), IA);
  CHECK_THROWS_AS(bitwise_and(in(0, K::Bool), in(1, K::Bool)), IA);
  CHECK_THROWS_AS(where(in(0, K::I32), in(1), in(2)), IA);
  CHECK_THROWS_AS(in(0, K::I32) + lit(0.5), IA);
  CHECK_THROWS_AS(in(0, K::U8) + lit(-1), IA);
  CHECK_THROWS_AS(lit(300, K::U8), IA);
  CHECK_THROWS_AS(lit(1.5, K::I32), IA);
  CHECK_THROWS_AS(int_lit(256, K::U8), IA);
  CHECK_THROWS_AS(int_lit(5, K::F32), IA);
  CHECK_THROWS_AS(round_to(K::I32, in(0)), IA);
  CHECK_THROWS_AS(round_to(K::F16, in(0, K::I32)), IA);
  CHECK_THROWS_AS(apply(ir::Op::Add, {Expr{}, in(0)}), IA);
  CHECK_THROWS_AS(apply(ir::Op::Dot4, {in(0), in(1), in(2)}), IA);
  CHECK_THROWS_AS(apply(ir::Op::Fma, {in(0, K::I32), in(1, K::I32), in(2, K::I32)}), IA);
  CHECK_THROWS_AS(cast(K::Void, in(0)), IA);
  // The chain: an input read in another kind than its dtype's, a missing dtype.
  CHECK_THROWS_AS(validate_chain(flat_chain({K::U8}, 8, in(0), K::F32)), IA);
  CHECK_THROWS_AS(validate_chain(flat_chain({K::F32}, 8, in(0, K::I32), K::F32)), IA);
  CHECK_THROWS_AS(validate_chain(flat_chain({K::F32}, 8, in(0), K::Void)), IA);
  CHECK_NOTHROW(validate_chain(flat_chain({K::F16}, 8, in(0), K::U8)));
}

TEST_CASE("a target without f64 or 64-bit integers refuses the chain when it is planned, naming both") {
  using namespace fusion;
  const codegen::TargetCaps wgsl = codegen::wgsl_default_caps();
  auto message = [&](const Chain& c) -> std::string {
    try {
      chain_variant_for(c, wgsl);
    } catch (const ir::Error& e) {
      return e.what();
    }
    return "";
  };
  std::string m = message(flat_chain({K::F64}, 8, exp(in(0, K::F64)), K::F64));
  CHECK(m.find("f64") != std::string::npos);
  CHECK(m.find("wgsl") != std::string::npos);
  m = message(flat_chain({K::I32}, 8, cast(K::I64, in(0, K::I32)) * lit(3), K::I32));  // i64 inside only
  CHECK(m.find("i64") != std::string::npos);
  CHECK(message(flat_chain({K::U8, K::F16}, 8, cast(K::F32, in(0, K::U8)) * in(1, K::F16), K::F32)).empty());
  CHECK_NOTHROW(chain_variant_for(flat_chain({K::F64}, 8, exp(in(0, K::F64)), K::F64), codegen::cpu_caps()));
}

TEST_CASE("the unfused baseline of a typed chain keeps each node's kind in its temporaries") {
  using namespace fusion;
  const size_t n = 16 * 5 + 3;
  std::vector<uint8_t> a = int_values<uint8_t>(n), b = int_values<uint8_t>(n);
  const Expr e = saturate_cast(K::I8, cast(K::I32, (in(0, K::U8) + in(1, K::U8)) * in(1, K::U8)) - lit(100));
  Chain c = flat_chain({K::U8, K::U8}, int64_t(n), e, K::I8);
  ops::Plan pl;
  ops::plan_unfused(pl, c, {0, 1}, 2, ChainVariant{});
  CHECK(pl.steps.size() == 5);  // add, mul, cast, sub, saturate
  auto dev = cpu(1);
  const Bytes got = run_on_device(*dev, pl, {bytes_of(a), bytes_of(b)}, n);
  for (size_t i = 0; i < n; ++i) {
    const int v = int(uint8_t(uint8_t(a[i] + b[i]) * b[i])) - 100;
    CHECK(at<int8_t>(got, i) == int8_t(std::clamp(v, -128, 127)));
  }
}
