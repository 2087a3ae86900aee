// The GLSL dialect: the per-op table and the spellings GLSL needs to match the
// interpreter exactly where its builtins are loose (GLSL min/max/% /int()
// leave NaN, negative operands and out-of-range values undefined; helpers in
// the prelude pin them down).
#include "codegen/glsl_dialect.h"

#include "ir/half.h"

#include <cmath>
#include <cstdio>

namespace kgen::codegen {

using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

// Scalar float formats see f32/f64 (f16 is widened by compute_type). A null
// line format scalarises lane by lane.
constexpr OpRule kRules[] = {
    // op          scalar float          float line            scalar int            int line              bool / bool line
    {Op::Neg, "-{0}", "-{0}", "-{0}", "-{0}"},
    {Op::Not, nullptr, nullptr, "~{0}", "~{0}", "!{0}", "not({0})"},
    {Op::Abs, "abs({0})", "abs({0})", "({0} < {E}(0) ? -{0} : {0})"},  // wraps: abs(INT_MIN) == INT_MIN
    {Op::Floor, "floor({0})", "floor({0})"},
    {Op::Ceil, "ceil({0})", "ceil({0})"},
    {Op::Round, "roundEven({0})", "roundEven({0})"},
    {Op::Trunc, "trunc({0})", "trunc({0})"},
    {Op::Sqrt, "sqrt({0})", "sqrt({0})"},
    {Op::Rsqrt, "{T}(1) / sqrt({0})", "{T}(1) / sqrt({0})"},  // two roundings, like the spec (not inversesqrt)
    {Op::Exp, "kg_exp({0})"},
    {Op::Exp2, "kg_exp2({0})"},
    {Op::Log, "kg_log({0})"},
    {Op::Log2, "kg_log2({0})"},
    {Op::Sin, "sin({0})", "sin({0})"},
    {Op::Cos, "cos({0})", "cos({0})"},
    {Op::Tanh, "kg_tanh({0})"},
    {Op::Erf, "kg_erf({0})"},

    {Op::Add, "{0} + {1}", "{0} + {1}", "{0} + {1}", "{0} + {1}"},
    {Op::Sub, "{0} - {1}", "{0} - {1}", "{0} - {1}", "{0} - {1}"},
    {Op::Mul, "{0} * {1}", "{0} * {1}", "{0} * {1}", "{0} * {1}"},
    // Signed INT_MIN / -1 and negative operands of % are undefined in GLSL.
    {Op::Div, "{0} / {1}", "{0} / {1}", "kg_div({0}, {1})"},
    {Op::Rem, "kg_fmod({0}, {1})", nullptr, "kg_rem({0}, {1})"},
    {Op::And, nullptr, nullptr, "{0} & {1}", "{0} & {1}", "{0} && {1}"},
    {Op::Or, nullptr, nullptr, "{0} | {1}", "{0} | {1}", "{0} || {1}"},
    {Op::Xor, nullptr, nullptr, "{0} ^ {1}", "{0} ^ {1}", "{0} ^^ {1}", "notEqual({0}, {1})"},
    // Shift amounts are taken modulo the bit width.
    {Op::Shl, nullptr, nullptr, "{0} << ({1} & {B})", "{0} << ({1} & {B})"},
    {Op::Shr, nullptr, nullptr, "{0} >> ({1} & {B})", "{0} >> ({1} & {B})"},
    // GLSL min/max are undefined for NaN; kg_min/kg_max return the other operand.
    {Op::Min, "kg_min({0}, {1})", "kg_min({0}, {1})", "min({0}, {1})", "min({0}, {1})"},
    {Op::Max, "kg_max({0}, {1})", "kg_max({0}, {1})", "max({0}, {1})", "max({0}, {1})"},
    {Op::Pow, "kg_pow({0}, {1})"},

    {Op::Eq, "{0} == {1}", "equal({0}, {1})", "{0} == {1}", "equal({0}, {1})", "{0} == {1}", "equal({0}, {1})"},
    {Op::Ne, "{0} != {1}", "notEqual({0}, {1})", "{0} != {1}", "notEqual({0}, {1})", "{0} != {1}", "notEqual({0}, {1})"},
    {Op::Lt, "{0} < {1}", "lessThan({0}, {1})", "{0} < {1}", "lessThan({0}, {1})"},
    {Op::Le, "{0} <= {1}", "lessThanEqual({0}, {1})", "{0} <= {1}", "lessThanEqual({0}, {1})"},
    {Op::Gt, "{0} > {1}", "greaterThan({0}, {1})", "{0} > {1}", "greaterThan({0}, {1})"},
    {Op::Ge, "{0} >= {1}", "greaterThanEqual({0}, {1})", "{0} >= {1}", "greaterThanEqual({0}, {1})"},

    // One rounding. GLSL fma is only fused under `precise`, and some drivers
    // (lavapipe) split it anyway; kg_fma computes f32 through f64 when it can.
    {Op::Fma, "kg_fma({0}, {1}, {2})", "kg_fma({0}, {1}, {2})"},
};

std::string int_literal(Type t, int64_t v) {
  switch (t.kind) {
    case ScalarKind::I32:
      if (v == INT32_MIN) return "(-2147483647 - 1)";
      return std::to_string(v);
    case ScalarKind::U32: return std::to_string(uint32_t(v)) + "u";
    case ScalarKind::I64:
      if (v == INT64_MIN) return "(-9223372036854775807l - 1l)";
      return std::to_string(v) + "l";
    case ScalarKind::U64: return std::to_string(uint64_t(v)) + "ul";
    case ScalarKind::I8: return "int8_t(" + std::to_string(int8_t(v)) + ")";
    case ScalarKind::U8: return "uint8_t(" + std::to_string(uint8_t(v)) + ")";
    case ScalarKind::I16: return "int16_t(" + std::to_string(int16_t(v)) + ")";
    case ScalarKind::U16: return "uint16_t(" + std::to_string(uint16_t(v)) + ")";
    default: break;
  }
  throw ir::Error({}, "glsl: no integer literal of type " + t.str());
}

// Shortest decimal that reads back to the same value; NaN/inf through bits.
std::string float_literal(double v, bool single) {
  if (std::isnan(v)) return single ? "uintBitsToFloat(0x7fc00000u)" : "packDouble2x32(uvec2(0u, 0x7ff80000u))";
  if (std::isinf(v)) {
    if (single) return v < 0 ? "uintBitsToFloat(0xff800000u)" : "uintBitsToFloat(0x7f800000u)";
    return v < 0 ? "packDouble2x32(uvec2(0u, 0xfff00000u))" : "packDouble2x32(uvec2(0u, 0x7ff00000u))";
  }
  char buf[64];
  for (int p = single ? 6 : 15; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (single ? float(std::strtod(buf, nullptr)) == float(v) : std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s : s + "lf";
}

std::string paren(const std::string& x) {
  for (char c : x)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '[' || c == ']')) return "(" + x + ")";
  return x;
}

const char* kLane = "xyzw";

bool used(uint32_t mask, ScalarKind k) { return mask & (1u << unsigned(k)); }

}  // namespace

TargetCaps glsl_default_caps() {
  TargetCaps c;
  c.name = "glsl";
  c.f16 = true;   // storage + conversions; math in f32
  c.bf16 = true;   // emulated: uint16_t bits, math in f32 (needs 16-bit ints and storage)
  c.f64 = c.i64 = true;
  c.subgroups = true;
  c.subgroup_size = 8;
  c.max_shared_bytes = 32768;
  c.max_workgroup_threads = 1024;
  c.max_workgroup_size = {1024, 1024, 64};
  c.atomics_f32 = false;  // only atomicAdd with GL_EXT_shader_atomic_float; min/max need more: refuse
  c.atomics_64 = false;
  c.max_vector_lanes = 16;  // vec2..vec4; 8/16 lanes as arrays, computed lane by lane
  return c;
}

GlslDialect::GlslDialect(uint32_t used_kinds) : table_(kRules), used_(used_kinds) {}

std::string GlslDialect::type_name(Type t) const {
  const char* prefix = "";
  const char* scalar = "";
  switch (t.kind) {
    case ScalarKind::Bool: prefix = "b"; scalar = "bool"; break;
    case ScalarKind::I8: prefix = "i8"; scalar = "int8_t"; break;
    case ScalarKind::I16: prefix = "i16"; scalar = "int16_t"; break;
    case ScalarKind::I32: prefix = "i"; scalar = "int"; break;
    case ScalarKind::I64: prefix = "i64"; scalar = "int64_t"; break;
    case ScalarKind::U8: prefix = "u8"; scalar = "uint8_t"; break;
    case ScalarKind::U16: prefix = "u16"; scalar = "uint16_t"; break;
    case ScalarKind::U32: prefix = "u"; scalar = "uint"; break;
    case ScalarKind::U64: prefix = "u64"; scalar = "uint64_t"; break;
    case ScalarKind::F16: prefix = "f16"; scalar = "float16_t"; break;
    // No bf16 type in GLSL: its bits live in a uint16_t, widened to f32 for math.
    case ScalarKind::BF16: prefix = "u16"; scalar = "uint16_t"; break;
    case ScalarKind::F32: prefix = ""; scalar = "float"; break;
    case ScalarKind::F64: prefix = "d"; scalar = "double"; break;
    default: throw ir::Error({}, "glsl: no type for " + t.str());
  }
  if (t.lanes == 1) return scalar;
  // GLSL vectors stop at 4 lanes; wider lines are arrays (computed lane by
  // lane, see vector_ops), whose std430 stride is the packed line size.
  if (t.lanes > 4) return std::string(scalar) + "[" + std::to_string(t.lanes) + "]";
  return std::string(prefix) + "vec" + std::to_string(t.lanes);
}

std::string GlslDialect::storage_type(Type elem) const {
  if (elem.kind == ScalarKind::Bool) return type_name(Type(ScalarKind::U8, elem.lanes));
  return type_name(elem);
}

Type GlslDialect::compute_type(Type t) const {
  if (t.kind == ScalarKind::F16 || t.kind == ScalarKind::BF16) return Type(ScalarKind::F32, t.lanes);
  return t;
}

std::string GlslDialect::literal(Type t, const ir::Imm& v) const {
  std::string s;
  switch (t.kind) {
    case ScalarKind::Bool: s = v.i ? "true" : "false"; break;
    case ScalarKind::F32: s = float_literal(v.f, true); break;
    case ScalarKind::F64: s = float_literal(v.f, false); break;
    case ScalarKind::F16: s = "float16_t(" + float_literal(float(v.f), true) + ")"; break;
    case ScalarKind::BF16: s = "uint16_t(" + std::to_string(ir::f32_to_bf16(float(v.f))) + ")"; break;
    default: s = int_literal(t.scalar(), v.i); break;
  }
  if (t.is_vector()) return splat(t, s);
  return s;
}

// NaN -> 0, saturate, truncate: GLSL's int(x) is undefined out of range.
std::string GlslDialect::float_to_int(Type to, Type from, const std::string& x) const {
  bool single = from.kind != ScalarKind::F64;
  std::string v = from.kind == ScalarKind::F16 ? "float(" + x + ")" : from.kind == ScalarKind::BF16 ? "kg_from_bf16(" + x + ")" : paren(x);
  int bits = to.bits();
  std::string lo, hi, imin, imax, T = type_name(to);
  auto pow2 = [&](int e) { return float_literal(std::ldexp(1.0, e), single); };
  if (to.is_signed()) {
    lo = "-" + pow2(bits - 1);
    hi = pow2(bits - 1);
    imin = int_literal(to, bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)));
    imax = int_literal(to, bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1);
  } else {
    lo = single ? "0.0" : "0.0lf";
    hi = pow2(bits);
    imin = int_literal(to, 0);
    imax = int_literal(to, bits == 64 ? -1 : (int64_t(1) << bits) - 1);
  }
  return "(isnan(" + v + ") ? " + T + "(0) : " + v + " <= " + lo + " ? " + imin + " : " + v + " >= " + hi + " ? " + imax +
         " : " + T + "(" + v + "))";
}

std::string GlslDialect::cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  if (to.is_vector()) {  // lane by lane keeps every rule below in one place
    std::vector<std::string> lanes;
    for (int l = 0; l < to.lanes; ++l) lanes.push_back(cast(to.scalar(), from.scalar(), extract(from, x, l)));
    return construct(to, lanes);
  }
  const std::string T = type_name(to);
  // bf16 converts through f32 (exact widening; narrowing rounds to nearest even).
  if (from.kind == ScalarKind::BF16 && !to.is_int()) return cast(to, Type(ScalarKind::F32), "kg_from_bf16(" + x + ")");
  if (to.kind == ScalarKind::BF16) return "kg_to_bf16(" + cast(Type(ScalarKind::F32), from, x) + ")";
  if (to.is_bool()) {
    if (from.kind == ScalarKind::F16) return "(float(" + x + ") != 0.0)";
    return "(" + paren(x) + " != " + type_name(from) + "(0))";
  }
  if (from.is_bool()) return "(" + paren(x) + " ? " + T + "(1) : " + T + "(0))";
  if (from.is_float() && to.is_int()) return float_to_int(to, from, x);
  return T + "(" + x + ")";  // int<->int wraps/extends by source sign, ->float rounds to nearest even
}

std::string GlslDialect::bitcast(Type to, Type from, const std::string& x) const {
  if (to.lanes != from.lanes || to.bits() != from.bits())
    throw ir::Error({}, "glsl: bitcast " + from.str() + " -> " + to.str() + " changes the lane count (not supported)");
  if (!vector_ops(to)) {
    std::vector<std::string> lanes;
    for (int l = 0; l < to.lanes; ++l) lanes.push_back(bitcast(to.scalar(), from.scalar(), extract(from, x, l)));
    return construct(to, lanes);
  }
  auto fn = [&]() -> std::string {
    const int b = to.bits();
    // bf16 is already its bits (uint16_t).
    if (from.kind == ScalarKind::BF16) return to.kind == ScalarKind::F16 ? "uint16BitsToFloat16" : type_name(to);
    if (to.kind == ScalarKind::BF16) return from.kind == ScalarKind::F16 ? "float16BitsToUint16" : "uint16_t";
    if (from.is_float() && to.is_int()) {
      if (b == 32) return to.is_signed() ? "floatBitsToInt" : "floatBitsToUint";
      if (b == 64) return to.is_signed() ? "doubleBitsToInt64" : "doubleBitsToUint64";
      return to.is_signed() ? "float16BitsToInt16" : "float16BitsToUint16";
    }
    if (from.is_int() && to.is_float()) {
      if (b == 32) return from.is_signed() ? "intBitsToFloat" : "uintBitsToFloat";
      if (b == 64) return from.is_signed() ? "int64BitsToDouble" : "uint64BitsToDouble";
      return from.is_signed() ? "int16BitsToFloat16" : "uint16BitsToFloat16";
    }
    return type_name(to);  // same-width integers: a value-preserving-bits conversion
  };
  return fn() + "(" + x + ")";
}

std::string GlslDialect::splat(Type to, const std::string& x) const {
  if (!vector_ops(to)) return construct(to, std::vector<std::string>(to.lanes, x));
  return type_name(to) + "(" + x + ")";
}

std::string GlslDialect::construct(Type to, std::span<const std::string> lanes) const {
  std::string s = type_name(to) + "(";
  for (size_t i = 0; i < lanes.size(); ++i) s += (i ? ", " : "") + lanes[i];
  return s + ")";
}

std::string GlslDialect::extract(Type vec, const std::string& x, int lane) const {
  if (!vec.is_vector()) return x;  // a scalar operand broadcast over lanes
  if (!vector_ops(vec)) return paren(x) + "[" + std::to_string(lane) + "]";
  return paren(x) + "." + kLane[lane];
}

std::string GlslDialect::insert_lane(const std::string& target, int lane, const std::string& x) const {
  return target + "[" + std::to_string(lane) + "] = " + x;  // indexing works on vectors and arrays
}

std::string GlslDialect::select(Type cond, Type val, const std::string& c, const std::string& a, const std::string& b) const {
  if (!cond.is_vector()) return paren(c) + " ? " + a + " : " + b;
  std::vector<std::string> lanes;
  for (int l = 0; l < val.lanes; ++l)
    lanes.push_back(extract(cond, c, l) + " ? " + extract(val, a, l) + " : " + extract(val, b, l));
  return construct(val, lanes);
}

std::string GlslDialect::reduce(Op op, Type vec, const std::string& x) const {
  Type e = vec.scalar();
  Type ct = compute_type(e);
  bool narrow = ct != e;
  auto lane = [&](int l) { return narrow ? cast(ct, e, extract(vec, x, l)) : extract(vec, x, l); };
  std::string acc = lane(0);
  for (int l = 1; l < vec.lanes; ++l) {
    switch (op) {
      case Op::ReduceAdd: acc = "(" + acc + " + " + lane(l) + ")"; break;
      case Op::ReduceMul: acc = "(" + acc + " * " + lane(l) + ")"; break;
      case Op::ReduceMin: acc = (ct.is_float() ? "kg_min(" : "min(") + acc + ", " + lane(l) + ")"; break;
      default: acc = (ct.is_float() ? "kg_max(" : "max(") + acc + ", " + lane(l) + ")"; break;
    }
    if (narrow) acc = cast(ct, e, cast(e, ct, acc));  // round every step, like the interpreter
    else if (e.bits() < 32 && e.is_int()) acc = type_name(e) + "(" + acc + ")";
  }
  return narrow ? cast(e, ct, acc) : acc;
}

// A storage buffer holds fewer than 2^32 elements (its range is a u32 of
// bytes), so a 64-bit index converts to uint exactly.
std::string GlslDialect::index(Type t, const std::string& idx) const {
  return t.bits() == 64 ? "uint(" + idx + ")" : idx;
}

// Bool lives in memory as u8 (buffers) or uint (shared): convert at the edge.
std::string GlslDialect::load(Type elem, const std::string& ptr, const std::string& idx) const {
  std::string e = ptr + "[" + idx + "]";
  if (!elem.is_bool()) return e;
  if (elem.is_vector()) return type_name(elem) + "(" + type_name(Type(ScalarKind::U32, elem.lanes)) + "(" + e + "))";
  return "bool(uint(" + e + "))";
}

std::string GlslDialect::store(Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const {
  std::string e = ptr + "[" + idx + "]";
  if (!elem.is_bool()) return e + " = " + v;
  return e + " = " + storage_type(elem) + "(" + type_name(Type(ScalarKind::U32, elem.lanes)) + "(" + v + "))";
}

std::string GlslDialect::atomic(Op op, Type elem, const std::string& ptr, const std::string& idx,
                                std::span<const std::string> a) const {
  std::string m = ptr + "[" + idx + "]";
  switch (op) {
    case Op::AtomicAdd: return "atomicAdd(" + m + ", " + a[0] + ")";
    case Op::AtomicMin: return "atomicMin(" + m + ", " + a[0] + ")";
    case Op::AtomicMax: return "atomicMax(" + m + ", " + a[0] + ")";
    case Op::AtomicExch: return "atomicExchange(" + m + ", " + a[0] + ")";
    case Op::AtomicCas: return "atomicCompSwap(" + m + ", " + a[0] + ", " + a[1] + ")";
    default: break;
  }
  throw ir::Error({}, "glsl: unknown atomic " + std::string(ir::op_name(op)));
}

// Control barrier plus the memory barriers that make shared and buffer writes
// before it visible to the group after it (the interpreter's barrier orders both).
std::string GlslDialect::barrier() const { return "memoryBarrierShared(); memoryBarrierBuffer(); barrier()"; }

std::string GlslDialect::subgroup(Op op, Type t, std::span<const std::string> a) const {
  switch (op) {
    // subgroupBroadcast wants a compile-time lane; shuffle takes any (uniform) lane.
    case Op::SubgroupShuffle:
    case Op::SubgroupBroadcast: return "subgroupShuffle(" + a[0] + ", " + a[1] + ")";
    case Op::SubgroupAdd: return "subgroupAdd(" + a[0] + ")";
    case Op::SubgroupMin: return "subgroupMin(" + a[0] + ")";
    case Op::SubgroupMax: return "subgroupMax(" + a[0] + ")";
    default: break;
  }
  throw ir::Error({}, "glsl: unknown subgroup op " + std::string(ir::op_name(op)));
}

std::string GlslDialect::shared_decl(Type elem, int64_t count, const std::string& name) const {
  std::string t = elem.is_bool() ? type_name(Type(ScalarKind::U32, elem.lanes)) : type_name(elem);
  return "shared " + t + " " + name + "[" + std::to_string(count) + "]";
}

namespace {

// One helper of the prelude: its name (as called from generated code), the
// helpers it calls, and its text. Only helpers the kernel calls are printed:
// every line costs compile time (glslang parses it for each shader).
struct Helper {
  const char* name;
  const char* deps;
  const char* text;
};

// dot4 (ir/ops.h): bitfieldExtract sign-extends int bytes, zero-extends uint
// ones; int arithmetic wraps. (GL_EXT_integer_dot_product would need a
// capability check; lavapipe lowers it to the same arithmetic.)
#define KG_GLSL_DOT4(N, TA, TB) \
  {N, "", "int " N "(" TA " a, " TB " b, int c) { for (int j = 0; j < 32; j += 8) c += int(bitfieldExtract(a, j, 8)) * int(bitfieldExtract(b, j, 8)); return c; }\n"},

const Helper kHelpers[] = {
    {"kg_min", "", R"(// minNum/maxNum: a NaN operand yields the other one (GLSL min/max leave it undefined).
#define KG_MINMAX(T) \
  T kg_min(T a, T b) { return mix(mix(min(a, b), a, isnan(b)), b, isnan(a)); } \
  T kg_max(T a, T b) { return mix(mix(max(a, b), a, isnan(b)), b, isnan(a)); }
KG_MINMAX(float) KG_MINMAX(vec2) KG_MINMAX(vec3) KG_MINMAX(vec4)
)"},
    {"kg_exp", "", R"(// exp/exp2 to ~1 ulp (the driver's may be far looser: Vulkan allows 3 + 2|x| ulp).
// Cody-Waite reduction whose first product is exact, so it does not matter
// whether the driver fuses the fma's; `precise` keeps the rounding trick intact.
float kg_scale(float p, int n) { int a = n >> 1, b = n - a; return p * uintBitsToFloat(uint(a + 127) << 23) * uintBitsToFloat(uint(b + 127) << 23); }
float kg_exp(float x) {
  x = x > 88.8 ? 88.8 : x; x = x < -104.0 ? -104.0 : x;  // NaN passes through
  precise float k = x * 1.44269504 + 12582912.0;         // rint(x / ln2) in the low bits
  int n = int(floatBitsToUint(k) - 0x4b400000u);
  precise float kk = k - 12582912.0;
  precise float r = fma(kk, -0.693359375, x);
  r = fma(kk, 2.12194440e-4, r);
  float p = 1.9875691500e-4;
  p = fma(p, r, 1.3981999507e-3); p = fma(p, r, 8.3334519073e-3);
  p = fma(p, r, 4.1665795894e-2); p = fma(p, r, 1.6666665459e-1);
  p = fma(p, r, 5.0000001201e-1);
  p = fma(p, r * r, r) + 1.0;
  return kg_scale(p, n);
}
)"},
    {"kg_exp2", "kg_exp", R"(float kg_exp2(float x) {
  x = x > 128.5 ? 128.5 : x; x = x < -151.0 ? -151.0 : x;
  precise float k = x + 12582912.0;
  int n = int(floatBitsToUint(k) - 0x4b400000u);
  precise float kk = k - 12582912.0;
  precise float r = x - kk;  // exact, |r| <= 1/2
  float p = 1.535336188319500e-4;
  p = fma(p, r, 1.339887440266574e-3); p = fma(p, r, 9.618437357674640e-3);
  p = fma(p, r, 5.550332471162809e-2); p = fma(p, r, 2.402264791363012e-1);
  p = fma(p, r, 6.931472028550421e-1);
  p = fma(p, r, 1.0);
  return kg_scale(p, n);
}
)"},
    {"kg_log", "", R"(// log/log2 to ~1 ulp (Vulkan only bounds the builtins absolutely near 1).
// The products of e with the split ln2 are exact, so a split fma is harmless.
float kg_logred(float x, out float e) {  // x = (1 + f) 2^e, 1 + f in [sqrt(1/2), sqrt(2))
  bool sub = x < 1.17549435e-38;
  uint ix = floatBitsToUint(sub ? x * 8388608.0 : x);
  int k = int(ix - 0x3f3504f3u) >> 23;
  e = float(k - (sub ? 23 : 0));
  return uintBitsToFloat(ix - (uint(k) << 23)) - 1.0;
}
float kg_logpoly(float f) {  // (log(1+f) - f + f^2/2) / f^3
  float p = 7.0376836292e-2;
  p = fma(p, f, -1.1514610310e-1); p = fma(p, f, 1.1676998740e-1);
  p = fma(p, f, -1.2420140846e-1); p = fma(p, f, 1.4249322787e-1);
  p = fma(p, f, -1.6668057665e-1); p = fma(p, f, 2.0000714765e-1);
  p = fma(p, f, -2.4999993993e-1); p = fma(p, f, 3.3333331174e-1);
  return p;
}
float kg_logfix(float x, float r) {  // log(0) = -inf, log(<0) = NaN, log(inf) = inf
  r = isinf(x) && x > 0.0 ? x : r;
  r = x > 0.0 ? r : (x == 0.0 ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7fc00000u));
  return isnan(x) ? x : r;
}
float kg_log(float x) {
  float e;
  float f = kg_logred(x, e), z = f * f;
  float y = f * z * kg_logpoly(f);
  y = fma(e, -2.12194440e-4, y);
  y = fma(z, -0.5, y);
  return kg_logfix(x, fma(e, 0.693359375, f + y));
}
)"},
    {"kg_log2", "kg_log", R"(float kg_log2(float x) {
  float e;
  float f = kg_logred(x, e), z = f * f;
  float y = fma(f * z, kg_logpoly(f), z * -0.5);  // log(1+f) - f
  const float L = 0.44269504088896340736;        // log2(e) - 1
  return kg_logfix(x, fma(f, L, y * L) + y + f + e);
}
)"},
    {"kg_to_bf16", "", R"(// f32 <-> bf16 bits, rounding to nearest even (ir/half.h).
uint16_t kg_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if (isnan(f)) return uint16_t((u >> 16) | 0x40u);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
)"},
    {"kg_from_bf16", "", R"(float kg_from_bf16(uint16_t h) { return uintBitsToFloat(uint(h) << 16); }
)"},
    {"kg_fmod", "", R"(// C fmod, exact: in double the quotient's integer part, its product with b
// and the difference are exact for |a/b| < 2^24 (no reliance on a fused fma).
float kg_fmod(float a, float b) { double q = trunc(double(a) / double(b)); return float(double(a) - q * double(b)); }
)"},
    {"kg_fmod32", "", R"(// C fmod without f64 (exact only when the driver fuses fma).
float kg_fmod(float a, float b) { precise float q = trunc(a / b); precise float r = fma(-q, b, a); return r; }
)"},
    {"kg_pow", "", R"(// C pow special cases (GLSL pow is undefined for x < 0 and for x == 0, y <= 0).
float kg_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return x + y;
  float ax = abs(x);
  bool yint = trunc(y) == y, yodd = yint && trunc(y * 0.5) != y * 0.5;
  float r = ax == 0.0 ? (y < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0)
          : isinf(ax) ? (y < 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u))
          : isinf(y) ? ((ax < 1.0) == (y < 0.0) ? uintBitsToFloat(0x7f800000u) : (ax == 1.0 ? 1.0 : 0.0))
          : exp2(y * log2(ax));
  if (x < 0.0 && !yint) return uintBitsToFloat(0x7fc00000u);
  return (yodd && (floatBitsToUint(x) >> 31) != 0u) ? -r : r;
}
)"},
    {"kg_tanh", "kg_exp", R"(// tanh without the cancellation of (e^2x - 1) / (e^2x + 1) near 0.
float kg_tanh(float x) {
  float ax = abs(x), z = x * x;
  float p = -5.70498872745e-3;
  p = fma(p, z, 2.06390887954e-2); p = fma(p, z, -5.37397155531e-2);
  p = fma(p, z, 1.33314422036e-1); p = fma(p, z, -3.33332819422e-1);
  float small = fma(x * z, p, x);
  float big = 1.0 - 2.0 / (kg_exp(ax + ax) + 1.0);
  return ax < 0.625 ? small : (isnan(x) ? x : (x < 0.0 ? -big : big));
}
)"},
    {"kg_erf", "kg_exp", R"(// erf: the CPU prelude's fit (x + x*P(x^2) below 1, 1 - exp(-x^2) Q(x) above).
float kg_erf(float x) {
  float ax = abs(x), z = x * x;
  float p = 7.875875063e-5;
  p = fma(p, z, -8.016864287e-4); p = fma(p, z, 5.189087423e-3);
  p = fma(p, z, -2.685421201e-2); p = fma(p, z, 1.128359472e-1);
  p = fma(p, z, -3.761262667e-1); p = fma(p, z, 1.283791658e-1);
  float small = fma(x, p, x);
  float a = min(ax, 4.0);
  bool hi = a >= 2.0;
  float u = a - (hi ? 3.0 : 1.5);
  float q = hi ? -2.365032323e-5 : -6.994892742e-4;
  q = fma(q, u, hi ? 9.469385801e-5 : 2.001826988e-3);
  q = fma(q, u, hi ? -3.2242398e-4 : -5.140028842e-3);
  q = fma(q, u, hi ? 1.215908479e-3 : 1.335906669e-2);
  q = fma(q, u, hi ? -4.479774428e-3 : -3.293120293e-2);
  q = fma(q, u, hi ? 1.58858108e-2 : 7.615195751e-2);
  q = fma(q, u, hi ? -5.437224926e-2 : -1.636229154e-1);
  q = fma(q, u, hi ? 1.790011061e-1 : 3.215854093e-1);
  // a^2 = s + sl exactly (Dekker split: no fused fma needed).
  precise float s = a * a;
  precise float ah = a * 4097.0 - (a * 4097.0 - a), al = a - ah;
  precise float sl = ((ah * ah - s) + 2.0 * ah * al) + al * al;
  float ec = kg_exp(-s) * q;
  float big = 1.0 - (ec - sl * ec);
  return isnan(x) ? x : ax < 1.0 ? small : (x < 0.0 ? -big : big);
}
)"},
    KG_GLSL_DOT4("kg_dot4_ss", "int", "int") KG_GLSL_DOT4("kg_dot4_su", "int", "uint")
    KG_GLSL_DOT4("kg_dot4_us", "uint", "int") KG_GLSL_DOT4("kg_dot4_uu", "uint", "uint")
    {"kg_dot2_i16", "", R"(// dot2_i16 (ir/ops.h): bitfieldExtract sign-extends the low half; int
// arithmetic wraps.
int kg_dot2_i16(int a, int b, int c) {
  return c + bitfieldExtract(a, 0, 16) * bitfieldExtract(b, 0, 16) + (a >> 16) * (b >> 16);
}
)"},
    {"kg_dot2_bf16", "", R"(// dot2_bf16 (ir/ops.h): the halves as floats (a product of two bf16 is
// exact), a.1·b.1 added first; precise keeps the order.
float kg_dot2_bf16(uint a, uint b, float c) {
  precise float h = c + uintBitsToFloat(a & 0xffff0000u) * uintBitsToFloat(b & 0xffff0000u);
  precise float r = h + uintBitsToFloat(a << 16) * uintBitsToFloat(b << 16);
  return r;
}
)"},
};

}  // namespace

std::string GlslDialect::prelude() const { return prelude_for("kg_"); }

std::string GlslDialect::prelude_for(const std::string& body) const {
  std::string s = "// ---- kgen GLSL prelude ----\n";
  const bool f64 = used(used_, ScalarKind::F64);
  // Which helpers are called, closed over their dependencies.
  std::vector<bool> need(std::size(kHelpers));
  auto called = [&](const std::string& name) { return body.find(name + "(") != std::string::npos || body == "kg_"; };
  for (size_t i = 0; i < need.size(); ++i) {
    std::string n = kHelpers[i].name;
    if (n == "kg_min") need[i] = called("kg_min") || called("kg_max");
    else if (n == "kg_fmod") need[i] = called("kg_fmod") && f64;
    else if (n == "kg_fmod32") need[i] = called("kg_fmod") && !f64;
    else need[i] = called(n);
  }
  for (size_t i = need.size(); i-- > 0;)
    if (need[i] && *kHelpers[i].deps)
      for (size_t j = 0; j < need.size(); ++j)
        if (std::string(kHelpers[j].name) == kHelpers[i].deps) need[j] = true;
  for (size_t i = 0; i < need.size(); ++i)
    if (need[i]) s += kHelpers[i].text;
  if (called("kg_fma")) {
    if (f64) {
      // The f64 product of two floats is exact, so one f64 rounding of a*b+c
      // then the f32 rounding give fma's result except in the rare double-
      // rounding ties (~2^-29 of inputs); far closer than a split mul + add.
      s += "#define KG_FMA(T, D) T kg_fma(T a, T b, T c) { return T(D(a) * D(b) + D(c)); }\n"
           "KG_FMA(float, double) KG_FMA(vec2, dvec2) KG_FMA(vec3, dvec3) KG_FMA(vec4, dvec4)\n"
           "#define KG_FMAD(T) T kg_fma(T a, T b, T c) { return fma(a, b, c); }\n"
           "KG_FMAD(double) KG_FMAD(dvec2) KG_FMAD(dvec3) KG_FMAD(dvec4)\n";
    } else {
      s += "#define KG_FMAD(T) T kg_fma(T a, T b, T c) { precise T r = fma(a, b, c); return r; }\n"
           "KG_FMAD(float) KG_FMAD(vec2) KG_FMAD(vec3) KG_FMAD(vec4)\n";
    }
  }
  if (f64 && need[0]) s += "KG_MINMAX(double) KG_MINMAX(dvec2) KG_MINMAX(dvec3) KG_MINMAX(dvec4)\n";
  if (called("kg_div") || called("kg_rem")) {
    // Integer division: truncating (SPIR-V OpSDiv), INT_MIN / -1 wraps, % as a - (a/b)*b.
    s += "#define KG_SDIV(T) T kg_div(T a, T b) { return b == T(-1) ? -a : a / b; } \\\n"
         "  T kg_rem(T a, T b) { return b == T(-1) ? T(0) : a - (a / b) * b; }\n"
         "#define KG_UDIV(T) T kg_div(T a, T b) { return a / b; } T kg_rem(T a, T b) { return a % b; }\n";
    const struct { ScalarKind k; const char* name; bool is_signed; } ints[] = {
        {ScalarKind::I8, "int8_t", true},   {ScalarKind::I16, "int16_t", true}, {ScalarKind::I32, "int", true},
        {ScalarKind::I64, "int64_t", true}, {ScalarKind::U8, "uint8_t", false}, {ScalarKind::U16, "uint16_t", false},
        {ScalarKind::U32, "uint", false},   {ScalarKind::U64, "uint64_t", false}};
    for (const auto& i : ints)
      if (used(used_, i.k)) s += std::string(i.is_signed ? "KG_SDIV(" : "KG_UDIV(") + i.name + ")\n";
  }
  s += "// ---- end of prelude ----\n";
  return s;
}

}  // namespace kgen::codegen
