// The WGSL helper functions generated code calls: exact fmod, our own exp/log
// family (the GLSL prelude's algorithms, so both GPU targets share accuracy
// and tolerances), erf, and the f16/bf16 and packed-storage conversions. Only
// the helpers a kernel calls are printed (naga parses every line per shader).
// The rint steps use round() (ties to even) rather than the 1.5*2^23 trick,
// which a driver free to reassociate (WGSL has no `precise`) could fold away.
#include <iterator>
#include <string>

#include "codegen/wgsl_dialect.h"

namespace kgen::codegen {

namespace {

struct Helper {
  const char* name;
  const char* deps;  // space-separated helpers it calls
  const char* text;
};

// dot4 (ir/ops.h): extractBits sign-extends i32 bytes, zero-extends u32
// ones; i32 arithmetic wraps. (dot4I8Packed/dot4U8Packed would need the
// packed_4x8_integer_dot_product language feature and cover no mixed case.)
#define KG_WGSL_DOT4(N, TA, TB) \
  {N, "", "fn " N "(a: " TA ", b: " TB ", c0: i32) -> i32 {\n  var c = c0;\n" \
          "  for (var j = 0u; j < 32u; j += 8u) { c += i32(extractBits(a, j, 8u)) * i32(extractBits(b, j, 8u)); }\n" \
          "  return c;\n}\n"},

const Helper kHelpers[] = {
    {"kg_fmod", "", R"(// C fmod, exact: subtract the largest b * 2^k <= r until r < |b|; each
// step is exact (Sterbenz: t <= r < 2t). Sign of the dividend, like the IR.
fn kg_fmod(a: f32, b: f32) -> f32 {
  let ab = abs(b);
  var r = abs(a);
  if (a != a || b != b || ab == 0.0f || r > 3.40282347e+38f) { return bitcast<f32>(0x7fc00000u); }
  if (r < ab) { return a; }
  loop {
    if (r < ab) { break; }
    let e = frexp(r).exp - frexp(ab).exp;
    var t = ldexp(ab, e);
    if (t > r) { t = ldexp(ab, e - 1); }
    r = r - t;
  }
  return select(r, -r, a < 0.0f);
}
)"},
    {"kg_fmin", "", R"(// minNum/maxNum: a NaN operand yields the other one (WGSL's min/max leave NaN undefined).
fn kg_fmin(a: f32, b: f32) -> f32 { return select(select(min(a, b), a, b != b), b, a != a); }
)"},
    {"kg_fmax", "", R"(fn kg_fmax(a: f32, b: f32) -> f32 { return select(select(max(a, b), a, b != b), b, a != a); }
)"},
    {"kg_scale", "", R"(// p * 2^n in two steps, so 2^n itself need not be representable.
fn kg_scale(p: f32, n: i32) -> f32 {
  let a = n >> 1u;
  let b = n - a;
  return p * bitcast<f32>(u32(a + 127) << 23u) * bitcast<f32>(u32(b + 127) << 23u);
}
)"},
    {"kg_exp", "kg_scale", R"(// exp to ~1 ulp (WebGPU allows the builtin 3 + 2|x| ulp): Cody-Waite
// reduction whose first product is exact, then a degree-6 polynomial.
fn kg_exp(x0: f32) -> f32 {
  var x = select(x0, 88.8f, x0 > 88.8f);
  x = select(x, -104.0f, x < -104.0f);  // NaN passes through
  let kk = round(x * 1.44269504f);
  let n = i32(clamp(kk, -200.0f, 200.0f));
  var r = fma(kk, -0.693359375f, x);
  r = fma(kk, 2.12194440e-4f, r);
  var p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f); p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f); p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  p = fma(p, r * r, r) + 1.0f;
  return kg_scale(p, n);
}
)"},
    {"kg_exp2", "kg_scale", R"(fn kg_exp2(x0: f32) -> f32 {
  var x = select(x0, 128.5f, x0 > 128.5f);
  x = select(x, -151.0f, x < -151.0f);
  let kk = round(x);
  let n = i32(clamp(kk, -200.0f, 200.0f));
  let r = x - kk;  // exact, |r| <= 1/2
  var p = 1.535336188319500e-4f;
  p = fma(p, r, 1.339887440266574e-3f); p = fma(p, r, 9.618437357674640e-3f);
  p = fma(p, r, 5.550332471162809e-2f); p = fma(p, r, 2.402264791363012e-1f);
  p = fma(p, r, 6.931472028550421e-1f);
  p = fma(p, r, 1.0f);
  return kg_scale(p, n);
}
)"},
    {"kg_logred", "", R"(// log/log2 to ~1 ulp (WebGPU bounds the builtins only absolutely near 1).
// x = (1 + f) 2^e with 1 + f in [sqrt(1/2), sqrt(2)); returns (f, e).
fn kg_logred(x: f32) -> vec2<f32> {
  let sub = x < 1.17549435e-38f;
  let ix = bitcast<u32>(select(x, x * 8388608.0f, sub));
  let k = bitcast<i32>(ix - 0x3f3504f3u) >> 23u;
  return vec2<f32>(bitcast<f32>(ix - (u32(k) << 23u)) - 1.0f, f32(k - select(0, 23, sub)));
}
fn kg_logpoly(f: f32) -> f32 {  // (log(1+f) - f + f^2/2) / f^3
  var p = 7.0376836292e-2f;
  p = fma(p, f, -1.1514610310e-1f); p = fma(p, f, 1.1676998740e-1f);
  p = fma(p, f, -1.2420140846e-1f); p = fma(p, f, 1.4249322787e-1f);
  p = fma(p, f, -1.6668057665e-1f); p = fma(p, f, 2.0000714765e-1f);
  p = fma(p, f, -2.4999993993e-1f); p = fma(p, f, 3.3333331174e-1f);
  return p;
}
fn kg_logfix(x: f32, r0: f32) -> f32 {  // log(0) = -inf, log(<0) = NaN, log(inf) = inf
  var r = select(r0, x, x > 3.40282347e+38f);
  r = select(select(bitcast<f32>(0x7fc00000u), bitcast<f32>(0xff800000u), x == 0.0f), r, x > 0.0f);
  return select(r, x, x != x);
}
)"},
    {"kg_log", "kg_logred", R"(fn kg_log(x: f32) -> f32 {
  let fe = kg_logred(x);
  let f = fe.x;
  let e = fe.y;
  let z = f * f;
  var y = f * z * kg_logpoly(f);
  y = fma(e, -2.12194440e-4f, y);  // the products of e with the split ln2 are exact
  y = fma(z, -0.5f, y);
  return kg_logfix(x, fma(e, 0.693359375f, f + y));
}
)"},
    {"kg_log2", "kg_logred", R"(fn kg_log2(x: f32) -> f32 {
  let fe = kg_logred(x);
  let f = fe.x;
  let z = f * f;
  let y = fma(f * z, kg_logpoly(f), z * -0.5f);  // log(1+f) - f
  let L = 0.442695041f;                          // log2(e) - 1
  return kg_logfix(x, fma(f, L, y * L) + y + f + fe.y);
}
)"},
    {"kg_tanh", "kg_exp", R"(// tanh without the cancellation of (e^2x - 1) / (e^2x + 1) near 0.
fn kg_tanh(x: f32) -> f32 {
  let ax = abs(x);
  let z = x * x;
  var p = -5.70498872745e-3f;
  p = fma(p, z, 2.06390887954e-2f); p = fma(p, z, -5.37397155531e-2f);
  p = fma(p, z, 1.33314422036e-1f); p = fma(p, z, -3.33332819422e-1f);
  let small = fma(x * z, p, x);
  let big = 1.0f - 2.0f / (kg_exp(ax + ax) + 1.0f);
  return select(select(select(big, -big, x < 0.0f), x, x != x), small, ax < 0.625f);
}
)"},
    {"kg_erf", "kg_exp", R"(// erf: the CPU prelude's fit (x + x*P(x^2) below 1, 1 - exp(-x^2) Q(x) above).
fn kg_erf(x: f32) -> f32 {
  let ax = abs(x);
  let z = x * x;
  var p = 7.875875063e-5f;
  p = fma(p, z, -8.016864287e-4f); p = fma(p, z, 5.189087423e-3f);
  p = fma(p, z, -2.685421201e-2f); p = fma(p, z, 1.128359472e-1f);
  p = fma(p, z, -3.761262667e-1f); p = fma(p, z, 1.283791658e-1f);
  let small = fma(x, p, x);
  let a = select(ax, 4.0f, ax > 4.0f);
  let hi = a >= 2.0f;
  let u = a - select(1.5f, 3.0f, hi);
  var q = select(-6.994892742e-4f, -2.365032323e-5f, hi);
  q = fma(q, u, select(2.001826988e-3f, 9.469385801e-5f, hi));
  q = fma(q, u, select(-5.140028842e-3f, -3.2242398e-4f, hi));
  q = fma(q, u, select(1.335906669e-2f, 1.215908479e-3f, hi));
  q = fma(q, u, select(-3.293120293e-2f, -4.479774428e-3f, hi));
  q = fma(q, u, select(7.615195751e-2f, 1.58858108e-2f, hi));
  q = fma(q, u, select(-1.636229154e-1f, -5.437224926e-2f, hi));
  q = fma(q, u, select(3.215854093e-1f, 1.790011061e-1f, hi));
  // a^2 = s + sl (Dekker split), so exp(-a^2) does not lose the low part.
  let s = a * a;
  let ah = a * 4097.0f - (a * 4097.0f - a);
  let al = a - ah;
  let sl = ((ah * ah - s) + 2.0f * ah * al) + al * al;
  let ec = kg_exp(-s) * q;
  let big = 1.0f - (ec - sl * ec);
  return select(select(select(big, -big, x < 0.0f), small, ax < 1.0f), x, x != x);
}
)"},
    {"kg_ld8", "", R"(// Element j of a packed 8/16-bit array, given the u32 word holding it.
fn kg_ld8(w: u32, j: u32) -> u32 { return (w >> ((j & 3u) * 8u)) & 0xffu; }
)"},
    {"kg_ld16", "", R"(fn kg_ld16(w: u32, j: u32) -> u32 { return (w >> ((j & 1u) * 16u)) & 0xffffu; }
)"},
    {"kg_h2f", "", R"(// f16 bits -> f32 (exact).
fn kg_h2f(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { let v = f32(m) * 5.9604644775390625e-8f; return select(v, -v, s != 0u); }
  if (e == 31u) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}
)"},
    {"kg_f2h", "", R"(// f32 -> f16 bits, round to nearest even (WGSL's own conversion may round
// either way and leaves overflow indeterminate).
fn kg_f2h(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  let s = (u >> 16u) & 0x8000u;
  let a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) { return s | ((a + 0xc8000fffu + ((a >> 13u) & 1u)) >> 13u); }
  return s | u32(round(bitcast<f32>(a) * 16777216.0f));
}
)"},
    {"kg_rf16", "kg_h2f kg_f2h", R"(fn kg_rf16(x: f32) -> f32 { return kg_h2f(kg_f2h(x)); }  // x rounded to f16
)"},
    {"kg_rbf16", "", R"(// x rounded to bf16 (nearest even; NaN stays quiet NaN), as an f32.
fn kg_rbf16(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if (x != x) { return bitcast<f32>((u | 0x400000u) & 0xffff0000u); }
  return bitcast<f32>((u + 0x7fffu + ((u >> 16u) & 1u)) & 0xffff0000u);
}
)"},
    KG_WGSL_DOT4("kg_dot4_ss", "i32", "i32") KG_WGSL_DOT4("kg_dot4_su", "i32", "u32")
    KG_WGSL_DOT4("kg_dot4_us", "u32", "i32") KG_WGSL_DOT4("kg_dot4_uu", "u32", "u32")
    {"kg_dot2_i16", "", R"(// dot2_i16 (ir/ops.h): extractBits sign-extends i32 halves; i32 arithmetic
// wraps.
fn kg_dot2_i16(a: i32, b: i32, c: i32) -> i32 {
  return c + extractBits(a, 0u, 16u) * extractBits(b, 0u, 16u) + (a >> 16u) * (b >> 16u);
}
)"},
    {"kg_dot2_bf16", "", R"(// dot2_bf16 (ir/ops.h): the halves as floats (a product of two bf16 is
// exact), a.1·b.1 added first.
fn kg_dot2_bf16(a: u32, b: u32, c: f32) -> f32 {
  let h = fma(bitcast<f32>(a & 0xffff0000u), bitcast<f32>(b & 0xffff0000u), c);
  return fma(bitcast<f32>(a << 16u), bitcast<f32>(b << 16u), h);
}
)"},
};

}  // namespace

std::string wgsl_helpers(const std::string& body) {
  const size_t n = std::size(kHelpers);
  std::vector<bool> need(n);
  for (size_t i = 0; i < n; ++i) need[i] = body.find(std::string(kHelpers[i].name) + "(") != std::string::npos;
  // Close over dependencies (a helper's deps come earlier in the table or are
  // resolved by iterating until nothing changes).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (!need[i]) continue;
      std::string deps = kHelpers[i].deps;
      for (size_t j = 0; j < n; ++j)
        if (!need[j] && (" " + deps + " ").find(" " + std::string(kHelpers[j].name) + " ") != std::string::npos)
          need[j] = changed = true;
    }
  }
  std::string s;
  for (size_t i = 0; i < n; ++i)
    if (need[i]) s += kHelpers[i].text;
  return s;
}

}  // namespace kgen::codegen
