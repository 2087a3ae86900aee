// The WGSL dialect: the per-op table and the spellings that pin WGSL's loose
// corners to the interpreter (NaN in min/max, float->int of NaN/out of range,
// shift amounts: a constant shift >= width is a shader-creation error, so the
// amount is always masked). WGSL integer / and % already match the IR for
// INT_MIN / -1 (wraps) and round() is ties-to-even.
#include "codegen/wgsl_dialect.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kgen::codegen {

using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

// NaN-aware min/max (minNum/maxNum): a NaN operand yields the other one.
#define KG_FMIN "select(select(min({0}, {1}), {0}, {1} != {1}), {1}, {0} != {0})"
#define KG_FMAX "select(select(max({0}, {1}), {0}, {1} != {1}), {1}, {0} != {0})"

// Shifts have a null line format: the amount must be u32 (vecN<u32>), which no
// placeholder names, so lines shift lane by lane with the scalar rule.
constexpr OpRule kRules[] = {
    // op          scalar float          float line            scalar int              int line      bool / bool line
    {Op::Neg, "-{0}", "-{0}", "{T}(0) - {0}", "{T}(0) - {0}"},  // u32 has no unary minus; wraps like the IR
    {Op::Not, nullptr, nullptr, "~{0}", "~{0}", "!{0}", "!{0}"},
    {Op::Abs, "abs({0})", "abs({0})", "abs({0})", "abs({0})"},  // abs(INT_MIN) == INT_MIN in WGSL too
    {Op::Floor, "floor({0})", "floor({0})"},
    {Op::Ceil, "ceil({0})", "ceil({0})"},
    {Op::Round, "round({0})", "round({0})"},  // ties to even
    {Op::Trunc, "trunc({0})", "trunc({0})"},
    {Op::Sqrt, "sqrt({0})", "sqrt({0})"},
    {Op::Rsqrt, "{T}(1.0) / sqrt({0})", "{T}(1.0) / sqrt({0})"},  // two roundings, like the spec
    {Op::Exp, "exp({0})", "exp({0})"},
    {Op::Exp2, "exp2({0})", "exp2({0})"},
    {Op::Log, "log({0})", "log({0})"},
    {Op::Log2, "log2({0})", "log2({0})"},
    {Op::Sin, "sin({0})", "sin({0})"},
    {Op::Cos, "cos({0})", "cos({0})"},
    {Op::Tanh, "kg_tanh({0})"},  // the builtin loses relative accuracy near 0
    // Erf: no WGSL builtin (refused by wgsl_unsupported).

    {Op::Add, "{0} + {1}", "{0} + {1}", "{0} + {1}", "{0} + {1}"},
    {Op::Sub, "{0} - {1}", "{0} - {1}", "{0} - {1}", "{0} - {1}"},
    {Op::Mul, "{0} * {1}", "{0} * {1}", "{0} * {1}", "{0} * {1}"},
    {Op::Div, "{0} / {1}", "{0} / {1}", "{0} / {1}", "{0} / {1}"},  // INT_MIN / -1 == INT_MIN
    // WGSL f32 % is a - b * trunc(a / b), not C fmod: kg_fmod (wgsl_helpers) is exact.
    {Op::Rem, "kg_fmod({0}, {1})", nullptr, "{0} % {1}", "{0} % {1}"},
    {Op::And, nullptr, nullptr, "{0} & {1}", "{0} & {1}", "{0} && {1}", "{0} & {1}"},
    {Op::Or, nullptr, nullptr, "{0} | {1}", "{0} | {1}", "{0} || {1}", "{0} | {1}"},
    {Op::Xor, nullptr, nullptr, "{0} ^ {1}", "{0} ^ {1}", "{0} != {1}", "{0} != {1}"},
    {Op::Shl, nullptr, nullptr, "{0} << (u32({1}) & {B}u)"},
    {Op::Shr, nullptr, nullptr, "{0} >> (u32({1}) & {B}u)"},  // arithmetic on i32, logical on u32
    {Op::Min, KG_FMIN, KG_FMIN, "min({0}, {1})", "min({0}, {1})"},
    {Op::Max, KG_FMAX, KG_FMAX, "max({0}, {1})", "max({0}, {1})"},
    {Op::Pow, "pow({0}, {1})", "pow({0}, {1})"},

    {Op::Eq, "{0} == {1}", "{0} == {1}", "{0} == {1}", "{0} == {1}", "{0} == {1}", "{0} == {1}"},
    {Op::Ne, "{0} != {1}", "{0} != {1}", "{0} != {1}", "{0} != {1}", "{0} != {1}", "{0} != {1}"},
    {Op::Lt, "{0} < {1}", "{0} < {1}", "{0} < {1}", "{0} < {1}"},
    {Op::Le, "{0} <= {1}", "{0} <= {1}", "{0} <= {1}", "{0} <= {1}"},
    {Op::Gt, "{0} > {1}", "{0} > {1}", "{0} > {1}", "{0} > {1}"},
    {Op::Ge, "{0} >= {1}", "{0} >= {1}", "{0} >= {1}", "{0} >= {1}"},
    {Op::Fma, "fma({0}, {1}, {2})", "fma({0}, {1}, {2})"},
};

// Shortest decimal that reads back to the same f32; NaN/inf through bits.
std::string f32_literal(double v) {
  if (std::isnan(v)) return "bitcast<f32>(0x7fc00000u)";
  if (std::isinf(v)) return v < 0 ? "bitcast<f32>(0xff800000u)" : "bitcast<f32>(0x7f800000u)";
  char buf[64];
  for (int p = 6; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (float(std::strtod(buf, nullptr)) == float(v)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

std::string paren(const std::string& x) {
  for (char c : x)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '[' || c == ']')) return "(" + x + ")";
  return x;
}

}  // namespace

TargetCaps wgsl_default_caps() {
  TargetCaps c;
  c.name = "wgsl";
  c.f16 = c.bf16 = c.f64 = c.i64 = false;
  c.subgroups = false;
  c.max_shared_bytes = 16384;  // maxComputeWorkgroupStorageSize
  c.max_workgroup_threads = 256;
  c.max_workgroup_size = {256, 256, 64};
  c.atomics_f32 = c.atomics_64 = false;
  c.max_vector_lanes = 4;
  return c;
}

WgslDialect::WgslDialect(std::set<std::string> atomic_arrays) : table_(kRules), atomic_(std::move(atomic_arrays)) {}

bool WgslDialect::expresses(Op op, Type t) const {
  const OpRule* r = table_.find(op);
  if (!r) return false;
  if (t.is_float()) return r->flt;
  if (t.is_bool()) return t.is_vector() ? r->vbool != nullptr : r->bool_ != nullptr;
  return r->int_;
}

std::string WgslDialect::type_name(Type t) const {
  const char* s = nullptr;
  switch (t.kind) {
    case ScalarKind::Bool: s = "bool"; break;
    case ScalarKind::I32: s = "i32"; break;
    case ScalarKind::U32: s = "u32"; break;
    case ScalarKind::F32: s = "f32"; break;
    default: throw ir::Error({}, "wgsl: no type for " + t.str() + " (WGSL core has only 32-bit numbers and bool)");
  }
  if (t.lanes == 1) return s;
  if (t.lanes > 4) throw ir::Error({}, "wgsl: no type for " + t.str() + " (vectors stop at 4 lanes)");
  return "vec" + std::to_string(t.lanes) + "<" + s + ">";
}

std::string WgslDialect::literal(Type t, const ir::Imm& v) const {
  std::string s;
  switch (t.kind) {
    case ScalarKind::Bool: s = v.i ? "true" : "false"; break;
    case ScalarKind::F32: s = f32_literal(v.f); break;
    case ScalarKind::U32: s = std::to_string(uint32_t(v.i)) + "u"; break;
    case ScalarKind::I32:
      // A WGSL literal has no sign and 2147483648i is out of range.
      s = int32_t(v.i) == INT32_MIN ? "i32(-2147483648)" : std::to_string(int32_t(v.i)) + "i";
      break;
    default: throw ir::Error({}, "wgsl: no literal of type " + t.str());
  }
  if (t.is_vector()) return splat(t, s);
  return s;
}

// NaN -> 0, saturate, truncate, spelled out rather than relying on WGSL's
// conversion (whose NaN result is implementation-defined).
std::string WgslDialect::float_to_int(Type to, Type from, const std::string& x) const {
  std::string v = paren(x), T = type_name(to);
  std::string lo, hi, imin, imax;
  if (to.is_signed()) {
    lo = "-2147483648.0f", hi = "2147483648.0f", imin = "i32(-2147483648)", imax = "2147483647i";
  } else {
    lo = "0.0f", hi = "4294967296.0f", imin = "0u", imax = "4294967295u";
  }
  return "select(select(select(" + T + "(" + v + "), " + imax + ", " + v + " >= " + hi + "), " + imin + ", " + v + " <= " + lo +
         "), " + T + "(0), " + v + " != " + v + ")";
}

std::string WgslDialect::cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  if (to.is_vector() && from.is_float() && to.is_int()) {  // lane by lane keeps the saturation rule in one place
    std::vector<std::string> lanes;
    for (int l = 0; l < to.lanes; ++l) lanes.push_back(float_to_int(to.scalar(), from.scalar(), extract(from, x, l)));
    return construct(to, lanes);
  }
  if (from.is_float() && to.is_int()) return float_to_int(to, from, x);
  // bool(x) is x != 0, T(bool) is 0/1, i32<->u32 keeps the bits (wraps),
  // int->f32 rounds: all the IR's rules.
  return type_name(to) + "(" + x + ")";
}

std::string WgslDialect::bitcast(Type to, Type from, const std::string& x) const {
  if (to.lanes != from.lanes || to.bits() != from.bits())
    throw ir::Error({}, "wgsl: bitcast " + from.str() + " -> " + to.str() + " changes the lane count (not supported)");
  return "bitcast<" + type_name(to) + ">(" + x + ")";
}

std::string WgslDialect::splat(Type to, const std::string& x) const { return type_name(to) + "(" + x + ")"; }

std::string WgslDialect::construct(Type to, std::span<const std::string> lanes) const {
  std::string s = type_name(to) + "(";
  for (size_t i = 0; i < lanes.size(); ++i) s += (i ? ", " : "") + lanes[i];
  return s + ")";
}

std::string WgslDialect::extract(Type vec, const std::string& x, int lane) const {
  if (!vec.is_vector()) return x;
  return paren(x) + "." + "xyzw"[lane];
}

std::string WgslDialect::insert_lane(const std::string& target, int lane, const std::string& x) const {
  return target + "[" + std::to_string(lane) + "] = " + x;
}

std::string WgslDialect::select(Type cond, Type val, const std::string& c, const std::string& a, const std::string& b) const {
  return "select(" + b + ", " + a + ", " + c + ")";  // WGSL order: (false, true, cond); a scalar cond may pick lines
}

std::string WgslDialect::reduce(Op op, Type vec, const std::string& x) const {
  Type e = vec.scalar();
  std::string acc = extract(vec, x, 0);
  for (int l = 1; l < vec.lanes; ++l) {
    std::string a[2] = {acc, extract(vec, x, l)};
    const char* f = op == Op::ReduceAdd ? "({0} + {1})" : op == Op::ReduceMul ? "({0} * {1})"
                    : op == Op::ReduceMin ? (e.is_float() ? KG_FMIN : "min({0}, {1})")
                                          : (e.is_float() ? KG_FMAX : "max({0}, {1})");
    acc = format_op(f, a, {});
  }
  return acc;
}

std::string WgslDialect::load(Type elem, const std::string& ptr, const std::string& idx) const {
  if (atomic_.count(ptr)) return "atomicLoad(&" + ptr + "[" + idx + "])";
  return ptr + "[" + idx + "]";
}

std::string WgslDialect::store(Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const {
  if (atomic_.count(ptr)) return "atomicStore(&" + ptr + "[" + idx + "], " + v + ")";
  return ptr + "[" + idx + "] = " + v;
}

std::string WgslDialect::atomic(Op op, Type elem, const std::string& ptr, const std::string& idx,
                                std::span<const std::string> a) const {
  std::string m = "&" + ptr + "[" + idx + "]";
  switch (op) {
    case Op::AtomicAdd: return "atomicAdd(" + m + ", " + a[0] + ")";
    case Op::AtomicMin: return "atomicMin(" + m + ", " + a[0] + ")";
    case Op::AtomicMax: return "atomicMax(" + m + ", " + a[0] + ")";
    case Op::AtomicExch: return "atomicExchange(" + m + ", " + a[0] + ")";
    // The weak form may fail spuriously; it still returns the old value the IR wants.
    case Op::AtomicCas: return "atomicCompareExchangeWeak(" + m + ", " + a[0] + ", " + a[1] + ").old_value";
    default: break;
  }
  throw ir::Error({}, "wgsl: unknown atomic " + std::string(ir::op_name(op)));
}

// The interpreter's barrier orders shared and buffer memory for the group.
std::string WgslDialect::barrier() const { return "storageBarrier(); workgroupBarrier()"; }

std::string WgslDialect::shared_decl(Type elem, int64_t count, const std::string& name) const {
  std::string t = atomic_.count(name) ? "atomic<" + type_name(elem) + ">" : type_name(elem);
  return "var<workgroup> " + name + ": array<" + t + ", " + std::to_string(count) + ">";
}

// Helper functions the table calls, printed before main only when used
// (WGSL has no overloads: f32 scalars only; lines go lane by lane).
std::string wgsl_helpers(const std::string& body) {
  std::string s;
  if (body.find("kg_fmod(") != std::string::npos)
    s += R"(// C fmod, exact: subtract the largest b * 2^k <= r until r < |b|; each
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
)";
  if (body.find("kg_tanh(") != std::string::npos)
    s += R"(// tanh: an odd polynomial below 0.625 (the builtin, (e^2x - 1) / (e^2x + 1) on
// lavapipe, cancels near 0); the builtin above, clamped where tanh rounds to 1.
fn kg_tanh(x: f32) -> f32 {
  let z = x * x;
  var p = -5.70498872745e-3f;
  p = fma(p, z, 2.06390887954e-2f); p = fma(p, z, -5.37397155531e-2f);
  p = fma(p, z, 1.33314422036e-1f); p = fma(p, z, -3.33332819422e-1f);
  let small = fma(x * z, p, x);
  let big = tanh(clamp(x, -9.0f, 9.0f));
  return select(select(big, small, abs(x) < 0.625f), x, x != x);
}
)";
  return s;
}

}  // namespace kgen::codegen
