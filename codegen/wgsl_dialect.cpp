// The WGSL dialect: the per-op table and the spellings that pin WGSL's loose
// corners to the interpreter (NaN in min/max, float->int of NaN/out of range,
// shift amounts: a constant shift >= width is a shader-creation error, so the
// amount is always masked), and the legalisation of types WGSL lacks (see
// wgsl_dialect.h): narrow values in 32-bit containers, wrapped or rounded back
// after every op; packed sub-word storage; lines of 8/16 lanes as arrays.
// WGSL integer / and % already match the IR for INT_MIN / -1 (wraps) and
// round() is ties-to-even.
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
// placeholder names, so lines shift lane by lane with the scalar rule. The
// transcendental helpers are scalar functions (WGSL has no overloads), so
// their line formats are null too.
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
    // Our own, ~1 ulp (the builtins may be 3 + 2|x| ulp; log only absolutely bounded near 1).
    {Op::Exp, "kg_exp({0})"},
    {Op::Exp2, "kg_exp2({0})"},
    {Op::Log, "kg_log({0})"},
    {Op::Log2, "kg_log2({0})"},
    {Op::Sin, "sin({0})", "sin({0})"},
    {Op::Cos, "cos({0})", "cos({0})"},
    {Op::Tanh, "kg_tanh({0})"},  // the builtin loses relative accuracy near 0
    {Op::Erf, "kg_erf({0})"},    // no WGSL builtin

    {Op::Add, "{0} + {1}", "{0} + {1}", "{0} + {1}", "{0} + {1}"},
    {Op::Sub, "{0} - {1}", "{0} - {1}", "{0} - {1}", "{0} - {1}"},
    {Op::Mul, "{0} * {1}", "{0} * {1}", "{0} * {1}", "{0} * {1}"},
    {Op::Div, "{0} / {1}", "{0} / {1}", "{0} / {1}", "{0} / {1}"},  // INT_MIN / -1 == INT_MIN
    // WGSL f32 % is a - b * trunc(a / b), not C fmod: kg_fmod (wgsl_helpers) is exact.
    {Op::Rem, "kg_fmod({0}, {1})", nullptr, "{0} % {1}", "{0} % {1}"},
    {Op::And, nullptr, nullptr, "{0} & {1}", "{0} & {1}", "{0} && {1}", "{0} & {1}"},
    {Op::Or, nullptr, nullptr, "{0} | {1}", "{0} | {1}", "{0} || {1}", "{0} | {1}"},
    {Op::Xor, nullptr, nullptr, "{0} ^ {1}", "{0} ^ {1}", "{0} != {1}", "{0} != {1}"},
    // {B} is the operand's width - 1 (7 for i8 held in an i32).
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

bool narrow_int(Type t) { return t.is_int() && t.bits() < 32; }
bool narrow_float(Type t) { return t.kind == ScalarKind::F16 || t.kind == ScalarKind::BF16; }

// The index of lane `l` of element `idx` in an array of scalars.
std::string lane_index(const std::string& idx, int lanes, int l) {
  if (lanes == 1) return "u32(" + idx + ")";
  return "(u32(" + idx + ") * " + std::to_string(lanes) + "u + " + std::to_string(l) + "u)";
}

}  // namespace

TargetCaps wgsl_default_caps() {
  TargetCaps c;
  c.name = "wgsl";
  c.f16 = c.bf16 = true;  // emulated: 16-bit storage, computed in f32 (wgsl_dialect.h)
  c.f64 = c.i64 = false;
  c.subgroups = false;
  c.max_shared_bytes = 16384;  // maxComputeWorkgroupStorageSize
  c.max_workgroup_threads = 256;
  c.max_workgroup_size = {256, 256, 64};
  c.atomics_f32 = c.atomics_64 = false;
  c.max_vector_lanes = 16;  // lines beyond 4 lanes are arrays
  return c;
}

WgslDialect::WgslDialect(std::map<std::string, WgslStorage> arrays) : table_(kRules), arrays_(std::move(arrays)) {}

WgslStorage WgslDialect::storage(const std::string& ptr) const {
  auto it = arrays_.find(ptr);
  return it == arrays_.end() ? WgslStorage{} : it->second;
}

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
    case ScalarKind::I8: case ScalarKind::I16: case ScalarKind::I32: s = "i32"; break;
    case ScalarKind::U8: case ScalarKind::U16: case ScalarKind::U32: s = "u32"; break;
    case ScalarKind::F16: case ScalarKind::BF16: case ScalarKind::F32: s = "f32"; break;
    default: throw ir::Error({}, "wgsl: no type for " + t.str() + " (WGSL has no 64-bit types)");
  }
  if (t.lanes == 1) return s;
  if (t.lanes > 4) return "array<" + std::string(s) + ", " + std::to_string(t.lanes) + ">";
  return "vec" + std::to_string(t.lanes) + "<" + s + ">";
}

Type WgslDialect::compute_type(Type t) const {
  Type c = t;
  if (narrow_float(t)) c.kind = ScalarKind::F32;
  else if (narrow_int(t)) c.kind = t.is_signed() ? ScalarKind::I32 : ScalarKind::U32;
  return c;
}

std::string WgslDialect::literal(Type t, const ir::Imm& v) const {
  std::string s;
  if (t.is_bool()) s = v.i ? "true" : "false";
  else if (t.is_float()) s = f32_literal(v.f);  // f16/bf16 values are exact in f32
  else if (t.is_signed())
    // A WGSL literal has no sign and 2147483648i is out of range.
    s = int32_t(v.i) == INT32_MIN ? "i32(-2147483648)" : std::to_string(int32_t(v.i)) + "i";
  else s = std::to_string(uint32_t(v.i)) + "u";
  if (t.is_vector()) return splat(t, s);
  return s;
}

std::string WgslDialect::narrow(Type t, const std::string& x) const {
  const int b = t.bits();
  if (narrow_int(t)) {
    if (t.lanes > 4) {
      std::vector<std::string> l;
      for (int i = 0; i < t.lanes; ++i) l.push_back(narrow(t.scalar(), extract(t, x, i)));
      return construct(t, l);
    }
    auto u = [&](const std::string& lit) { return t.lanes == 1 ? lit : "vec" + std::to_string(t.lanes) + "<u32>(" + lit + ")"; };
    if (t.is_signed()) {  // sign-extend the low b bits
      std::string sh = u(std::to_string(32 - b) + "u");
      return "((" + paren(x) + " << " + sh + ") >> " + sh + ")";
    }
    return "(" + paren(x) + " & " + u(b == 8 ? "0xffu" : "0xffffu") + ")";
  }
  if (narrow_float(t)) {
    const char* f = t.kind == ScalarKind::F16 ? "kg_rf16(" : "kg_rbf16(";
    if (t.lanes == 1) return f + x + ")";
    std::vector<std::string> l;
    for (int i = 0; i < t.lanes; ++i) l.push_back(f + extract(t, x, i) + ")");
    return construct(t, l);
  }
  return x;
}

// NaN -> 0, saturate to `to`'s range, truncate, spelled out rather than
// relying on WGSL's conversion (whose NaN result is implementation-defined).
std::string WgslDialect::float_to_int(Type to, const std::string& x) const {
  std::string v = paren(x), T = type_name(to);
  std::string lo, hi, imin, imax;
  switch (to.kind) {
    case ScalarKind::I8: lo = "-128.0f", hi = "128.0f", imin = "-128i", imax = "127i"; break;
    case ScalarKind::I16: lo = "-32768.0f", hi = "32768.0f", imin = "-32768i", imax = "32767i"; break;
    case ScalarKind::I32: lo = "-2147483648.0f", hi = "2147483648.0f", imin = "i32(-2147483648)", imax = "2147483647i"; break;
    case ScalarKind::U8: lo = "0.0f", hi = "256.0f", imin = "0u", imax = "255u"; break;
    case ScalarKind::U16: lo = "0.0f", hi = "65536.0f", imin = "0u", imax = "65535u"; break;
    default: lo = "0.0f", hi = "4294967296.0f", imin = "0u", imax = "4294967295u"; break;
  }
  return "select(select(select(" + T + "(" + v + "), " + imax + ", " + v + " >= " + hi + "), " + imin + ", " + v + " <= " + lo +
         "), " + T + "(0), " + v + " != " + v + ")";
}

// One lane of a conversion with the IR's rules: bool(x) is x != 0, T(bool)
// is 0/1, int<->int wraps, int->float and float->float round to nearest even,
// float->int saturates (NaN -> 0).
std::string WgslDialect::scalar_cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  const std::string C = type_name(to);
  if (to.is_bool()) return "bool(" + x + ")";
  if (from.is_bool()) return C + "(" + x + ")";
  if (from.is_float() && to.is_int()) return float_to_int(to, x);
  if (from.is_int() && to.is_int()) {
    std::string c = type_name(from) == C ? x : C + "(" + x + ")";
    bool fits = from.bits() < to.bits() && (!from.is_signed() || to.is_signed());
    return fits ? c : narrow(to, c);
  }
  if (from.is_int()) return narrow(to, "f32(" + x + ")");  // exact up to 2^24; beyond, f16 overflows anyway
  return narrow(to, x);  // float -> float: all held in f32
}

std::string WgslDialect::cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  if (to.lanes == 1) return scalar_cast(to, from, x);
  std::string probe = scalar_cast(to.scalar(), from.scalar(), "X");
  if (to.lanes <= 4 && from.lanes == to.lanes) {
    if (probe == "X") return x;
    if (probe == type_name(to.scalar()) + "(X)") return type_name(to) + "(" + x + ")";
  }
  if (probe == "X" && from.lanes == to.lanes && type_name(to) == type_name(from)) return x;
  std::vector<std::string> lanes;
  for (int l = 0; l < to.lanes; ++l) lanes.push_back(scalar_cast(to.scalar(), from.scalar(), extract(from, x, l)));
  return construct(to, lanes);
}

// Bits of a narrow value as u32, and back.
std::string WgslDialect::scalar_bitcast(Type to, Type from, const std::string& x) const {
  if (to.bits() == 32) return "bitcast<" + type_name(to) + ">(" + x + ")";
  std::string b;
  switch (from.kind) {
    case ScalarKind::F16: b = "kg_f2h(" + x + ")"; break;
    case ScalarKind::BF16: b = "(bitcast<u32>(" + x + ") >> 16u)"; break;
    case ScalarKind::I8: b = "(bitcast<u32>(" + x + ") & 0xffu)"; break;
    case ScalarKind::I16: b = "(bitcast<u32>(" + x + ") & 0xffffu)"; break;
    default: b = x; break;  // u8/u16: already the bits
  }
  switch (to.kind) {
    case ScalarKind::F16: return "kg_h2f(" + b + ")";
    case ScalarKind::BF16: return "bitcast<f32>(" + b + " << 16u)";
    case ScalarKind::I8: case ScalarKind::I16: return narrow(to, "bitcast<i32>(" + b + ")");
    default: return b;
  }
}

std::string WgslDialect::bitcast(Type to, Type from, const std::string& x) const {
  if (to.lanes != from.lanes || to.bits() != from.bits())
    throw ir::Error({}, "wgsl: bitcast " + from.str() + " -> " + to.str() + " changes the lane count (not supported)");
  if (to.bits() == 32 && to.lanes <= 4) return "bitcast<" + type_name(to) + ">(" + x + ")";
  if (to.lanes == 1) return scalar_bitcast(to, from, x);
  std::vector<std::string> lanes;
  for (int l = 0; l < to.lanes; ++l) lanes.push_back(scalar_bitcast(to.scalar(), from.scalar(), extract(from, x, l)));
  return construct(to, lanes);
}

std::string WgslDialect::splat(Type to, const std::string& x) const {
  if (to.lanes <= 4) return type_name(to) + "(" + x + ")";
  std::vector<std::string> lanes(size_t(to.lanes), x);
  return construct(to, lanes);
}

std::string WgslDialect::construct(Type to, std::span<const std::string> lanes) const {
  std::string s = type_name(to) + "(";
  for (size_t i = 0; i < lanes.size(); ++i) s += (i ? ", " : "") + lanes[i];
  return s + ")";
}

std::string WgslDialect::extract(Type vec, const std::string& x, int lane) const {
  if (!vec.is_vector()) return x;  // a scalar operand broadcast over lanes
  if (vec.lanes > 4) return paren(x) + "[" + std::to_string(lane) + "]";
  return paren(x) + "." + "xyzw"[lane];
}

std::string WgslDialect::insert_lane(const std::string& target, int lane, const std::string& x) const {
  return target + "[" + std::to_string(lane) + "] = " + x;  // vectors and arrays alike
}

std::string WgslDialect::select(Type cond, Type val, const std::string& c, const std::string& a, const std::string& b) const {
  if (val.lanes <= 4) return "select(" + b + ", " + a + ", " + c + ")";  // WGSL order: (false, true, cond)
  std::vector<std::string> lanes;  // select() takes no arrays
  for (int l = 0; l < val.lanes; ++l)
    lanes.push_back("select(" + extract(val, b, l) + ", " + extract(val, a, l) + ", " + extract(cond, c, l) + ")");
  return construct(val, lanes);
}

std::string WgslDialect::reduce(Op op, Type vec, const std::string& x) const {
  Type e = vec.scalar();
  std::string acc = extract(vec, x, 0);
  for (int l = 1; l < vec.lanes; ++l) {
    std::string a[2] = {acc, extract(vec, x, l)};
    const char* f = op == Op::ReduceAdd ? "({0} + {1})" : op == Op::ReduceMul ? "({0} * {1})"
                    // Helpers, not the inline KG_FMIN: its operands appear 4 times,
                    // so nesting 15 steps of a 16-lane line would grow as 4^15.
                    : op == Op::ReduceMin ? (e.is_float() ? "kg_fmin({0}, {1})" : "min({0}, {1})")
                                          : (e.is_float() ? "kg_fmax({0}, {1})" : "max({0}, {1})");
    acc = narrow(e, format_op(f, a, {}));  // round/wrap every step, like the interpreter
  }
  return acc;
}

std::string WgslDialect::storage_elem(Type elem, WgslStorage s) const {
  std::string t;
  switch (s.form) {
    case WgslForm::Direct: t = type_name(elem); break;
    case WgslForm::PerLane: t = type_name(elem.scalar()); break;
    case WgslForm::Packed: t = "u32"; break;
    case WgslForm::F16: t = "f16"; break;
  }
  return s.atomic ? "atomic<" + t + ">" : t;
}

namespace {

// Lane of a packed word: the element at scalar index j of a 8/16-bit array.
std::string unpack(Type e, const std::string& w, const std::string& j) {
  const bool b8 = e.bits() == 8;
  std::string bits = (b8 ? "kg_ld8(" : "kg_ld16(") + w + ", " + j + ")";
  switch (e.kind) {
    case ScalarKind::Bool: return "(" + bits + " != 0u)";
    case ScalarKind::I8: return "((bitcast<i32>(" + bits + ") << 24u) >> 24u)";
    case ScalarKind::I16: return "((bitcast<i32>(" + bits + ") << 16u) >> 16u)";
    case ScalarKind::F16: return "kg_h2f(" + bits + ")";
    case ScalarKind::BF16: return "bitcast<f32>(" + bits + " << 16u)";
    default: return bits;
  }
}

// The storage bits (low 8/16 of a u32) of a narrow value held in its container.
std::string pack(Type e, const std::string& v) {
  switch (e.kind) {
    case ScalarKind::Bool: return "select(0u, 1u, " + v + ")";
    case ScalarKind::I8: return "(bitcast<u32>(" + v + ") & 0xffu)";
    case ScalarKind::U8: return "(" + paren(v) + " & 0xffu)";
    case ScalarKind::I16: return "(bitcast<u32>(" + v + ") & 0xffffu)";
    case ScalarKind::U16: return "(" + paren(v) + " & 0xffffu)";
    case ScalarKind::F16: return "kg_f2h(" + v + ")";
    default: return "(bitcast<u32>(" + v + ") >> 16u)";  // bf16: exact in f32, low half zero
  }
}

}  // namespace

std::string WgslDialect::load(Type elem, const std::string& ptr, const std::string& idx) const {
  WgslStorage s = storage(ptr);
  if (s.form == WgslForm::Direct) return s.atomic ? "atomicLoad(&" + ptr + "[" + idx + "])" : ptr + "[" + idx + "]";
  std::vector<std::string> lanes;
  const std::string shift = elem.bits() == 8 ? " >> 2u]" : " >> 1u]";
  for (int l = 0; l < elem.lanes; ++l) {
    std::string j = lane_index(idx, elem.lanes, l);
    switch (s.form) {
      case WgslForm::PerLane: lanes.push_back(ptr + "[" + j + "]"); break;
      case WgslForm::F16: lanes.push_back("f32(" + ptr + "[" + j + "])"); break;
      default: {
        std::string w = ptr + "[" + j + shift;
        lanes.push_back(unpack(elem.scalar(), s.atomic ? "atomicLoad(&" + w + ")" : w, j));
      }
    }
  }
  return elem.lanes == 1 ? lanes[0] : construct(elem, lanes);
}

std::string WgslDialect::store(Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const {
  WgslStorage s = storage(ptr);
  if (s.form == WgslForm::Direct)
    return s.atomic ? "atomicStore(&" + ptr + "[" + idx + "], " + v + ")" : ptr + "[" + idx + "] = " + v;
  std::string out;
  const bool b8 = elem.bits() == 8;
  for (int l = 0; l < elem.lanes; ++l) {
    std::string j = lane_index(idx, elem.lanes, l), x = extract(elem, v, l);
    std::string st;
    switch (s.form) {
      case WgslForm::PerLane: st = ptr + "[" + j + "] = " + x + ";"; break;
      case WgslForm::F16: st = ptr + "[" + j + "] = f16(" + x + ");"; break;  // exact: x is already an f16 value
      default: {
        // Clear then set this element's bits: two atomics on the word, so the
        // other elements sharing it (other work-items' stores) are kept.
        std::string w = "&" + ptr + "[kg_j" + (b8 ? " >> 2u]" : " >> 1u]");
        std::string sh = b8 ? "(kg_j & 3u) * 8u" : "(kg_j & 1u) * 16u", m = b8 ? "0xffu" : "0xffffu";
        st = "{ let kg_j = " + j + "; let kg_s = " + sh + "; atomicAnd(" + w + ", ~(" + m + " << kg_s)); atomicOr(" + w + ", " +
             pack(elem.scalar(), x) + " << kg_s); }";
      }
    }
    out += (l ? " " : "") + st;
  }
  // One statement (the caller adds ';', an empty statement after a block).
  if (out.back() == ';') out.pop_back();
  return elem.lanes == 1 ? out : "{ " + out + "; }";
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

// Workgroup arrays hold narrow types in their 32-bit container: the host
// never sees them, so they need neither packing nor atomics.
std::string WgslDialect::shared_decl(Type elem, int64_t count, const std::string& name) const {
  return "var<workgroup> " + name + ": array<" + storage_elem(elem, storage(name)) + ", " + std::to_string(count) + ">";
}

}  // namespace kgen::codegen
