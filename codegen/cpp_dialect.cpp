#include "codegen/cpp_dialect.h"

#include <cmath>
#include <cstdio>

namespace kgen::codegen {

using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

// One row per math op. Scalar float formats see f32/f64 only (f16/bf16 are
// widened by compute_type); clang's __builtin_elementwise_* cover lines, and a
// missing line format falls back to lane-wise scalar code.
constexpr OpRule kRules[] = {
    // op          scalar float                         float line                                   scalar int / int line                 bool / bool line
    {Op::Neg, "-{0}", "-{0}", "-{0}", "-{0}"},
    {Op::Not, nullptr, nullptr, "~{0}", "~{0}", "!{0}", "~{0}"},
    {Op::Abs, "__builtin_fabs{f}({0})", "__builtin_elementwise_abs({0})", "({0} < 0 ? -{0} : {0})", "({0} < 0 ? -{0} : {0})"},
    {Op::Floor, "__builtin_floor{f}({0})", "__builtin_elementwise_floor({0})"},
    {Op::Ceil, "__builtin_ceil{f}({0})", "__builtin_elementwise_ceil({0})"},
    {Op::Round, "__builtin_roundeven{f}({0})", "__builtin_elementwise_roundeven({0})"},
    {Op::Trunc, "__builtin_trunc{f}({0})", "__builtin_elementwise_trunc({0})"},
    {Op::Sqrt, "__builtin_sqrt{f}({0})", "__builtin_elementwise_sqrt({0})"},
    {Op::Rsqrt, "({E})1 / __builtin_sqrt{f}({0})", "({E})1 / __builtin_elementwise_sqrt({0})"},
    {Op::Exp, "kg_exp{f}({0})", "__builtin_elementwise_exp({0})"},
    {Op::Exp2, "kg_exp2{f}({0})", "__builtin_elementwise_exp2({0})"},
    {Op::Log, "kg_log{f}({0})", "__builtin_elementwise_log({0})"},
    {Op::Log2, "kg_log2{f}({0})", "__builtin_elementwise_log2({0})"},
    {Op::Sin, "kg_sin{f}({0})", "__builtin_elementwise_sin({0})"},
    {Op::Cos, "kg_cos{f}({0})", "__builtin_elementwise_cos({0})"},
    {Op::Tanh, "kg_tanh{f}({0})"},
    {Op::Erf, "kg_erf{f}({0})"},

    {Op::Add, "{0} + {1}", "{0} + {1}", "{0} + {1}", "{0} + {1}"},
    {Op::Sub, "{0} - {1}", "{0} - {1}", "{0} - {1}", "{0} - {1}"},
    {Op::Mul, "{0} * {1}", "{0} * {1}", "{0} * {1}", "{0} * {1}"},
    // Signed INT_MIN / -1 traps on x86; kg_div/kg_rem give the wrapped result.
    {Op::Div, "{0} / {1}", "{0} / {1}", "kg_div({0}, {1})"},
    {Op::Rem, "__builtin_fmod{f}({0}, {1})", nullptr, "kg_rem({0}, {1})"},
    {Op::And, nullptr, nullptr, "{0} & {1}", "{0} & {1}", "{0} & {1}", "{0} & {1}"},
    {Op::Or, nullptr, nullptr, "{0} | {1}", "{0} | {1}", "{0} | {1}", "{0} | {1}"},
    {Op::Xor, nullptr, nullptr, "{0} ^ {1}", "{0} ^ {1}", "{0} ^ {1}", "{0} ^ {1}"},
    // Shift amounts are taken modulo the bit width.
    {Op::Shl, nullptr, nullptr, "{0} << ({1} & {B})", "{0} << ({1} & {B})"},
    {Op::Shr, nullptr, nullptr, "{0} >> ({1} & {B})", "{0} >> ({1} & {B})"},
    // fmin/fmax and elementwise_min/max (minnum) return the non-NaN operand.
    {Op::Min, "__builtin_fmin{f}({0}, {1})", "__builtin_elementwise_min({0}, {1})", "__builtin_elementwise_min({0}, {1})",
     "__builtin_elementwise_min({0}, {1})"},
    {Op::Max, "__builtin_fmax{f}({0}, {1})", "__builtin_elementwise_max({0}, {1})", "__builtin_elementwise_max({0}, {1})",
     "__builtin_elementwise_max({0}, {1})"},
    {Op::Pow, "kg_pow{f}({0}, {1})", "__builtin_elementwise_pow({0}, {1})"},

    // Line comparisons yield 0/-1 masks; convert them to bool lines.
    {Op::Eq, "{0} == {1}", "__builtin_convertvector({0} == {1}, {R})", "{0} == {1}", "__builtin_convertvector({0} == {1}, {R})", "{0} == {1}"},
    {Op::Ne, "{0} != {1}", "__builtin_convertvector({0} != {1}, {R})", "{0} != {1}", "__builtin_convertvector({0} != {1}, {R})", "{0} != {1}"},
    {Op::Lt, "{0} < {1}", "__builtin_convertvector({0} < {1}, {R})", "{0} < {1}", "__builtin_convertvector({0} < {1}, {R})"},
    {Op::Le, "{0} <= {1}", "__builtin_convertvector({0} <= {1}, {R})", "{0} <= {1}", "__builtin_convertvector({0} <= {1}, {R})"},
    {Op::Gt, "{0} > {1}", "__builtin_convertvector({0} > {1}, {R})", "{0} > {1}", "__builtin_convertvector({0} > {1}, {R})"},
    {Op::Ge, "{0} >= {1}", "__builtin_convertvector({0} >= {1}, {R})", "{0} >= {1}", "__builtin_convertvector({0} >= {1}, {R})"},

    {Op::Fma, "__builtin_fma{f}({0}, {1}, {2})", "__builtin_elementwise_fma({0}, {1}, {2})"},
};

std::string int_literal(Type t, int64_t v) {
  switch (t.kind) {
    case ScalarKind::I64:
      if (v == INT64_MIN) return "(-0x7fffffffffffffffLL - 1)";
      return std::to_string(v) + "LL";
    case ScalarKind::U64: return std::to_string(uint64_t(v)) + "ULL";
    case ScalarKind::I32:
      if (v == INT32_MIN) return "(-2147483647 - 1)";
      return std::to_string(v);
    case ScalarKind::U32: return std::to_string(uint32_t(v)) + "u";
    default: return "(" + std::string(ir::scalar_name(t.kind)) + ")" + std::to_string(v);
  }
}

// Shortest decimal that reads back to the same value.
std::string float_literal(double v, bool single) {
  if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
  char buf[64];
  for (int p = single ? 6 : 15; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (single ? float(std::strtod(buf, nullptr)) == float(v) : std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

// Saturation bounds for float->int casts: exact powers of two as hex floats.
struct SatBounds {
  std::string lo, hi, imin, imax;
};
SatBounds sat_bounds(Type to, bool single) {
  int bits = to.bits();
  const char* suf = single ? "f" : "";
  SatBounds b;
  if (to.is_signed()) {
    b.lo = "-0x1p" + std::to_string(bits - 1) + suf;
    b.hi = "0x1p" + std::to_string(bits - 1) + suf;
    b.imin = int_literal(to.scalar(), bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)));
    b.imax = int_literal(to.scalar(), bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1);
  } else {
    b.lo = std::string("0.0") + suf;
    b.hi = "0x1p" + std::to_string(bits) + suf;
    b.imin = int_literal(to.scalar(), 0);
    b.imax = int_literal(to.scalar(), bits == 64 ? -1 : (int64_t(1) << bits) - 1);
  }
  return b;
}

}  // namespace

CppDialect::CppDialect() : table_(kRules) {}

std::string CppDialect::type_name(Type t) const {
  std::string s(ir::scalar_name(t.kind));
  if (t.lanes > 1) s += "x" + std::to_string(t.lanes);
  return s;
}

Type CppDialect::compute_type(Type t) const {
  if (t.kind == ScalarKind::F16 || t.kind == ScalarKind::BF16) return Type(ScalarKind::F32, t.lanes);
  return t;
}

std::string CppDialect::literal(Type t, const ir::Imm& v) const {
  std::string s;
  switch (t.kind) {
    case ScalarKind::Bool: s = v.i ? "true" : "false"; break;
    case ScalarKind::F32: s = float_literal(v.f, true); break;
    case ScalarKind::F64: s = float_literal(v.f, false); break;
    case ScalarKind::F16:
    case ScalarKind::BF16: s = "(" + type_name(t.scalar()) + ")" + float_literal(float(v.f), true); break;
    default: s = int_literal(t.scalar(), v.i); break;
  }
  if (t.is_vector()) return splat(t, s);
  return s;
}

std::string CppDialect::cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  const bool vec = to.is_vector();
  if (to.is_bool()) {
    if (from.kind == ScalarKind::BF16) return cast(to, compute_type(from), cast(compute_type(from), from, x));
    if (!vec) return "(" + x + ") != 0";
    return "__builtin_convertvector((" + x + ") != 0, " + type_name(to) + ")";
  }
  if (from.is_float() && to.is_int()) {
    // Saturating, NaN -> 0, computed in f32 (or f64 for f64 sources).
    bool single = from.kind != ScalarKind::F64;
    std::string ft = single ? "f32" : "f64";
    SatBounds b = sat_bounds(to.scalar(), single);
    std::string bounds = b.lo + ", " + b.hi + ", " + b.imin + ", " + b.imax;
    if (!vec) return "kg_sat<" + type_name(to) + ">((" + ft + ")(" + x + "), " + bounds + ")";
    return "kg_satv<" + type_name(to) + ", " + std::to_string(to.lanes) + ">(" + x + ", " + bounds + ")";
  }
  if (!vec) return "(" + type_name(to) + ")(" + x + ")";
  return "__builtin_convertvector(" + x + ", " + type_name(to) + ")";
}

std::string CppDialect::bitcast(Type to, Type from, const std::string& x) const {
  return "__builtin_bit_cast(" + type_name(to) + ", " + x + ")";
}

std::string CppDialect::splat(Type to, const std::string& x) const { return "(" + type_name(to) + ")(" + x + ")"; }

std::string CppDialect::construct(Type to, std::span<const std::string> lanes) const {
  std::string s = type_name(to) + "{";
  for (size_t i = 0; i < lanes.size(); ++i) s += (i ? ", " : "") + lanes[i];
  return s + "}";
}

static bool is_name(const std::string& x) {
  for (char c : x)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '[' || c == ']')) return false;
  return true;
}

std::string CppDialect::extract(Type vec, const std::string& x, int lane) const {
  return (is_name(x) ? x : "(" + x + ")") + "[" + std::to_string(lane) + "]";
}

std::string CppDialect::insert_lane(const std::string& target, int lane, const std::string& x) const {
  return target + "[" + std::to_string(lane) + "] = " + x;
}

std::string CppDialect::select(Type cond, Type val, const std::string& c, const std::string& a,
                               const std::string& b) const {
  if (!cond.is_vector()) return c + " ? " + a + " : " + b;
  // Vector ?: wants an integer mask of the value's lane width.
  static const ScalarKind mask_kind[] = {ScalarKind::I8, ScalarKind::I16, ScalarKind::I32, ScalarKind::I32, ScalarKind::I64};
  int bytes = val.scalar_bytes();
  ScalarKind mk = bytes == 1 ? mask_kind[0] : bytes == 2 ? mask_kind[1] : bytes == 4 ? mask_kind[2] : mask_kind[4];
  return "__builtin_convertvector(" + c + ", " + type_name(Type(mk, val.lanes)) + ") ? " + a + " : " + b;
}

std::string CppDialect::reduce(Op op, Type vec, const std::string& x) const {
  Type e = vec.scalar();
  std::string v = is_name(x) ? x : "(" + x + ")";
  if (e.is_int()) {
    const char* f = op == Op::ReduceAdd ? "__builtin_reduce_add" : op == Op::ReduceMul ? "__builtin_reduce_mul"
                    : op == Op::ReduceMin ? "__builtin_reduce_min" : "__builtin_reduce_max";
    return std::string(f) + "(" + v + ")";
  }
  // Floats fold lane 0 first, rounding each step like the interpreter.
  Type ct = compute_type(e);
  bool narrow = ct != e;
  const char* suf = ct.kind == ScalarKind::F32 ? "f" : "";
  auto lane = [&](int l) { return narrow ? "(f32)" + v + "[" + std::to_string(l) + "]" : v + "[" + std::to_string(l) + "]"; };
  std::string acc = lane(0);
  for (int l = 1; l < vec.lanes; ++l) {
    switch (op) {
      case Op::ReduceAdd: acc = "(" + acc + " + " + lane(l) + ")"; break;
      case Op::ReduceMul: acc = "(" + acc + " * " + lane(l) + ")"; break;
      case Op::ReduceMin: acc = "__builtin_fmin" + std::string(suf) + "(" + acc + ", " + lane(l) + ")"; break;
      default: acc = "__builtin_fmax" + std::string(suf) + "(" + acc + ", " + lane(l) + ")"; break;
    }
    if (narrow) acc = "(f32)(" + type_name(e) + ")" + acc;
  }
  return narrow ? "(" + type_name(e) + ")" + acc : acc;
}

std::string CppDialect::load(Type elem, const std::string& ptr, const std::string& idx) const {
  return ptr + "[" + idx + "]";
}

std::string CppDialect::store(Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const {
  return ptr + "[" + idx + "] = " + v;
}

std::string CppDialect::atomic(Op op, Type elem, const std::string& ptr, const std::string& idx,
                               std::span<const std::string> a) const {
  std::string p = "&" + ptr + "[" + idx + "]";
  switch (op) {
    case Op::AtomicAdd: return "__atomic_fetch_add(" + p + ", " + a[0] + ", __ATOMIC_RELAXED)";
    case Op::AtomicMin:
      return elem.is_float() ? "kg_atomic_min(" + p + ", " + a[0] + ")" : "__atomic_fetch_min(" + p + ", " + a[0] + ", __ATOMIC_RELAXED)";
    case Op::AtomicMax:
      return elem.is_float() ? "kg_atomic_max(" + p + ", " + a[0] + ")" : "__atomic_fetch_max(" + p + ", " + a[0] + ", __ATOMIC_RELAXED)";
    case Op::AtomicExch: return "kg_xchg(" + p + ", " + a[0] + ")";
    case Op::AtomicCas: return "kg_cas(" + p + ", " + a[0] + ", " + a[1] + ")";
    default: break;
  }
  throw ir::Error({}, "c++ dialect: unknown atomic " + std::string(ir::op_name(op)));
}

// The CPU runs barrier-separated regions one after the other; the SIMT
// emitter never prints a barrier statement.
std::string CppDialect::barrier() const { return "/* barrier */"; }

std::string CppDialect::shared_decl(Type elem, int64_t count, const std::string& name) const {
  return "alignas(64) " + type_name(elem) + " " + name + "[" + std::to_string(count) + "]";
}

std::string CppDialect::unroll_hint(int factor) const {
  if (factor <= 1) return {};
  return "#pragma clang loop unroll_count(" + std::to_string(factor) + ")";
}

std::string CppDialect::prelude() const {
  // Deliberately no #include: a bare kernel compiles in ~15 ms, <cmath> alone
  // costs ~250 ms. Math is __builtin_* (LLVM intrinsics with -fno-math-errno).
  return R"(// ---- kgen C++ prelude (no standard headers) ----
typedef __INT8_TYPE__ i8; typedef __INT16_TYPE__ i16; typedef __INT32_TYPE__ i32; typedef __INT64_TYPE__ i64;
typedef __UINT8_TYPE__ u8; typedef __UINT16_TYPE__ u16; typedef __UINT32_TYPE__ u32; typedef __UINT64_TYPE__ u64;
typedef _Float16 f16; typedef __bf16 bf16; typedef float f32; typedef double f64;
#define KG_LINE(T, N) typedef T T##x##N __attribute__((ext_vector_type(N)));
#define KG_LINES(T) KG_LINE(T, 2) KG_LINE(T, 3) KG_LINE(T, 4) KG_LINE(T, 8) KG_LINE(T, 16)
KG_LINES(bool) KG_LINES(i8) KG_LINES(i16) KG_LINES(i32) KG_LINES(i64) KG_LINES(u8) KG_LINES(u16) KG_LINES(u32)
KG_LINES(u64) KG_LINES(f16) KG_LINES(bf16) KG_LINES(f32) KG_LINES(f64)
// libm through glibc's vector ABI: `declare simd` gives the loop vectoriser
// the libmvec variants (_ZGVeN16v_expf, _ZGVeN16v_tanhf...); the asm labels
// keep clang from turning the calls back into intrinsics, for which LLVM 19
// knows only SSE/AVX2 variants and none for tanh/erf.
extern "C" {
#define KG_LIBM1(n) _Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f32 kg_##n##f(f32) __asm__(#n "f"); \
  _Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f64 kg_##n(f64) __asm__(#n);
KG_LIBM1(exp) KG_LIBM1(exp2) KG_LIBM1(log) KG_LIBM1(log2) KG_LIBM1(sin) KG_LIBM1(cos) KG_LIBM1(tanh) KG_LIBM1(erf)
_Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f32 kg_powf(f32, f32) __asm__("powf");
_Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f64 kg_pow(f64, f64) __asm__("pow");
}
struct KgenArgs { void* const* buffers; const unsigned long long* scalars; unsigned grid[3]; unsigned wg[3]; };
template <class T> static inline T kg_slot(const unsigned long long* s, int i) { T v; __builtin_memcpy(&v, s + i, sizeof(T)); return v; }
// float -> int: saturate, NaN -> 0 (lo/hi are exact powers of two).
template <class I, class F> static inline I kg_sat(F x, F lo, F hi, I imin, I imax) {
  return x != x ? (I)0 : x <= lo ? imin : x >= hi ? imax : (I)x;
}
template <class IV, int N, class FV, class F, class I> static inline IV kg_satv(FV x, F lo, F hi, I imin, I imax) {
  IV r; for (int l = 0; l < N; ++l) r[l] = kg_sat<I>((F)x[l], lo, hi, imin, imax); return r;
}
template <class T> static inline T kg_div(T a, T b) { if constexpr ((T)-1 < (T)0) { if (b == (T)-1) return (T)(0 - a); } return (T)(a / b); }
template <class T> static inline T kg_rem(T a, T b) { if constexpr ((T)-1 < (T)0) { if (b == (T)-1) return (T)0; } return (T)(a % b); }
template <class T> static inline T kg_xchg(T* p, T v) { T r; __atomic_exchange(p, &v, &r, __ATOMIC_RELAXED); return r; }
template <class T> static inline T kg_cas(T* p, T cmp, T v) { __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); return cmp; }
template <class T> static inline T kg_atomic_min(T* p, T v) {
  T old; __atomic_load(p, &old, __ATOMIC_RELAXED); T nv;
  do { nv = __builtin_elementwise_min(old, v); } while (!__atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
template <class T> static inline T kg_atomic_max(T* p, T v) {
  T old; __atomic_load(p, &old, __ATOMIC_RELAXED); T nv;
  do { nv = __builtin_elementwise_max(old, v); } while (!__atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
// ---- end of prelude ----
)";
}

}  // namespace kgen::codegen
