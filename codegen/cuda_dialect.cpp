#include "codegen/cuda_dialect.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ir/half.h"

namespace kgen::codegen {

using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

// One row per math op, scalar formats only: lines have no operators in CUDA,
// so the shared emitter computes them lane by lane with these rows. Floats
// see f32/f64 only (f16/bf16 are widened by compute_type and rounded back).
// CUDA's libdevice math keeps C semantics: fminf/fmaxf return the non-NaN
// operand, rintf rounds ties to even; NVRTC runs with --fmad=false.
constexpr OpRule kRules[] = {
    // op       scalar float               float line  scalar int                   int line  bool
    {Op::Neg, "-{0}", nullptr, "kg_neg({0})"},
    {Op::Not, nullptr, nullptr, "~{0}", nullptr, "!{0}"},
    {Op::Abs, "fabs{f}({0})", nullptr, "kg_abs({0})"},
    {Op::Floor, "floor{f}({0})"},
    {Op::Ceil, "ceil{f}({0})"},
    {Op::Round, "rint{f}({0})"},
    {Op::Trunc, "trunc{f}({0})"},
    {Op::Sqrt, "sqrt{f}({0})"},
    {Op::Rsqrt, "({E})1 / sqrt{f}({0})"},  // two roundings, like the spec (not rsqrtf)
    {Op::Exp, "exp{f}({0})"},
    {Op::Exp2, "exp2{f}({0})"},
    {Op::Log, "log{f}({0})"},
    {Op::Log2, "log2{f}({0})"},
    {Op::Sin, "sin{f}({0})"},
    {Op::Cos, "cos{f}({0})"},
    {Op::Tanh, "tanh{f}({0})"},
    {Op::Erf, "erf{f}({0})"},

    {Op::Add, "{0} + {1}", nullptr, "kg_add({0}, {1})"},
    {Op::Sub, "{0} - {1}", nullptr, "kg_sub({0}, {1})"},
    {Op::Mul, "{0} * {1}", nullptr, "kg_mul({0}, {1})"},
    {Op::Div, "{0} / {1}", nullptr, "kg_div({0}, {1})"},
    {Op::Rem, "fmod{f}({0}, {1})", nullptr, "kg_rem({0}, {1})"},
    {Op::And, nullptr, nullptr, "{0} & {1}", nullptr, "{0} && {1}"},
    {Op::Or, nullptr, nullptr, "{0} | {1}", nullptr, "{0} || {1}"},
    {Op::Xor, nullptr, nullptr, "{0} ^ {1}", nullptr, "{0} != {1}"},
    {Op::Shl, nullptr, nullptr, "kg_shl({0}, {1})"},
    {Op::Shr, nullptr, nullptr, "{0} >> ({1} & {B})"},
    {Op::Min, "fmin{f}({0}, {1})", nullptr, "({1} < {0} ? {1} : {0})"},
    {Op::Max, "fmax{f}({0}, {1})", nullptr, "({0} < {1} ? {1} : {0})"},
    {Op::Pow, "pow{f}({0}, {1})"},

    {Op::Eq, "{0} == {1}", nullptr, "{0} == {1}", nullptr, "{0} == {1}"},
    {Op::Ne, "{0} != {1}", nullptr, "{0} != {1}", nullptr, "{0} != {1}"},
    {Op::Lt, "{0} < {1}", nullptr, "{0} < {1}"},
    {Op::Le, "{0} <= {1}", nullptr, "{0} <= {1}"},
    {Op::Gt, "{0} > {1}", nullptr, "{0} > {1}"},
    {Op::Ge, "{0} >= {1}", nullptr, "{0} >= {1}"},

    {Op::Fma, "fma{f}({0}, {1}, {2})"},
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

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// Shortest decimal that reads back to the same value; NaN and inf by bits.
std::string float_literal(double v, bool single) {
  if (!std::isfinite(v)) {
    if (single) return "__int_as_float((int)" + hex(ir::f32_bits(float(v))) + "u)";
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return "__longlong_as_double((long long)" + hex(b) + "ull)";
  }
  char buf[64];
  for (int p = single ? 6 : 15; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (single ? float(std::strtod(buf, nullptr)) == float(v) : std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

bool is_narrow(Type t) { return t.kind == ScalarKind::F16 || t.kind == ScalarKind::BF16; }

bool is_name(const std::string& x) {
  for (char c : x)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.')) return false;
  return true;
}
std::string paren(const std::string& x) { return is_name(x) ? x : "(" + x + ")"; }

}  // namespace

CudaDialect::CudaDialect() : table_(kRules) {}

std::string CudaDialect::type_name(Type t) const {
  std::string s(ir::scalar_name(t.kind));
  if (t.lanes > 1) s += "x" + std::to_string(t.lanes);
  return s;
}

Type CudaDialect::compute_type(Type t) const {
  if (is_narrow(t)) return Type(ScalarKind::F32, t.lanes);
  return t;
}

std::string CudaDialect::literal(Type t, const ir::Imm& v) const {
  std::string s;
  switch (t.kind) {
    case ScalarKind::Bool: s = v.i ? "true" : "false"; break;
    case ScalarKind::F32: s = float_literal(v.f, true); break;
    case ScalarKind::F64: s = float_literal(v.f, false); break;
    // Exact bits: no conversion (and no rounding question) at run time.
    case ScalarKind::F16: s = "__ushort_as_half((unsigned short)" + hex(ir::f32_to_f16(float(v.f))) + ")"; break;
    case ScalarKind::BF16: s = "__ushort_as_bfloat16((unsigned short)" + hex(ir::f32_to_bf16(float(v.f))) + ")"; break;
    default: s = int_literal(t.scalar(), v.i); break;
  }
  if (t.is_vector()) return splat(t, s);
  return s;
}

// Scalar conversion with the IR's semantics (ir::sem_cast): one rounding for
// every conversion to f16/bf16, saturating float->int with NaN -> 0.
std::string CudaDialect::scalar_cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  if (is_narrow(from)) {  // exact widening to f32 first
    std::string f = (from.kind == ScalarKind::F16 ? "__half2float(" : "__bfloat162float(") + x + ")";
    return to.kind == ScalarKind::F32 ? f : scalar_cast(to, Type(ScalarKind::F32), f);
  }
  if (to.is_bool()) return "(" + x + ") != 0";
  const bool half = to.kind == ScalarKind::F16;
  if (from.is_bool()) {
    if (is_narrow(to)) return std::string(half ? "__float2half_rn" : "__float2bfloat16_rn") + "((" + x + ") ? 1.0f : 0.0f)";
    return "(" + type_name(to) + ")(" + x + ")";
  }
  if (is_narrow(to)) {
    const std::string n = half ? "half" : "bfloat16";
    switch (from.kind) {
      case ScalarKind::F32: return "__float2" + n + "_rn(" + x + ")";
      case ScalarKind::F64: return "__double2" + n + "(" + x + ")";
      case ScalarKind::I32: return "__int2" + n + "_rn(" + x + ")";
      case ScalarKind::U32: return "__uint2" + n + "_rn(" + x + ")";
      case ScalarKind::I64: return "__ll2" + n + "_rn(" + x + ")";
      case ScalarKind::U64: return "__ull2" + n + "_rn(" + x + ")";
      default: return "__float2" + n + "_rn((f32)(" + x + "))";  // 8/16-bit ints are exact in f32
    }
  }
  if (from.is_float() && to.is_int()) {
    const bool single = from.kind == ScalarKind::F32;
    const char* suf = single ? "f" : "";
    const int bits = to.bits();
    std::string lo, hi, imin, imax;
    if (to.is_signed()) {
      lo = "-0x1p" + std::to_string(bits - 1) + suf;
      hi = "0x1p" + std::to_string(bits - 1) + suf;
      imin = int_literal(to, bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)));
      imax = int_literal(to, bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1);
    } else {
      lo = std::string("0.0") + suf;
      hi = "0x1p" + std::to_string(bits) + suf;
      imin = int_literal(to, 0);
      imax = int_literal(to, bits == 64 ? -1 : (int64_t(1) << bits) - 1);
    }
    return "kg_sat<" + type_name(to) + ">(" + x + ", " + lo + ", " + hi + ", " + imin + ", " + imax + ")";
  }
  return "(" + type_name(to) + ")(" + x + ")";
}

std::string CudaDialect::cast(Type to, Type from, const std::string& x) const {
  if (to == from) return x;
  if (!to.is_vector()) return scalar_cast(to, from, x);
  std::vector<std::string> lanes;
  for (int l = 0; l < to.lanes; ++l) lanes.push_back(scalar_cast(to.scalar(), from.scalar(), extract(from, x, l)));
  return construct(to, lanes);
}

std::string CudaDialect::bitcast(Type to, Type from, const std::string& x) const {
  return "kg_bitcast<" + type_name(to) + ">(" + x + ")";
}

std::string CudaDialect::splat(Type to, const std::string& x) const {
  return "kg_splat<" + type_name(to) + ">(" + x + ")";
}

std::string CudaDialect::construct(Type to, std::span<const std::string> lanes) const {
  std::string s = "kg_make<" + type_name(to) + ">(";
  for (size_t i = 0; i < lanes.size(); ++i) s += (i ? ", " : "") + lanes[i];
  return s + ")";
}

std::string CudaDialect::extract(Type vec, const std::string& x, int lane) const {
  return paren(x) + "[" + std::to_string(lane) + "]";
}

std::string CudaDialect::insert_lane(const std::string& target, int lane, const std::string& x) const {
  return target + "[" + std::to_string(lane) + "] = " + x;
}

std::string CudaDialect::select(Type cond, Type val, const std::string& c, const std::string& a,
                                const std::string& b) const {
  if (!cond.is_vector()) return paren(c) + " ? " + paren(a) + " : " + paren(b);
  std::vector<std::string> lanes;
  for (int l = 0; l < val.lanes; ++l)
    lanes.push_back(extract(cond, c, l) + " ? " + extract(val, a, l) + " : " + extract(val, b, l));
  return construct(val, lanes);
}

static const char* fold_functor(Op op) {
  switch (op) {
    case Op::ReduceAdd:
    case Op::SubgroupAdd: return "kg_fadd()";
    case Op::ReduceMul: return "kg_fmul()";
    case Op::ReduceMin:
    case Op::SubgroupMin: return "kg_fmin()";
    default: return "kg_fmax()";
  }
}

std::string CudaDialect::reduce(Op op, Type vec, const std::string& x) const {
  return "kg_reduce(" + x + ", " + fold_functor(op) + ")";
}

std::string CudaDialect::subgroup(Op op, Type t, std::span<const std::string> a) const {
  if (op == Op::SubgroupShuffle || op == Op::SubgroupBroadcast) return "kg_sg_shuffle(" + a[0] + ", " + a[1] + ")";
  return "kg_sg_fold(" + a[0] + ", " + fold_functor(op) + ")";
}

std::string CudaDialect::load(Type elem, const std::string& ptr, const std::string& idx) const {
  return ptr + "[" + idx + "]";
}

std::string CudaDialect::store(Type elem, const std::string& ptr, const std::string& idx, const std::string& v) const {
  return ptr + "[" + idx + "] = " + v;
}

// __stcs (st.global.cs: evict-first, "streaming") where CUDA overloads it:
// the 32/64-bit scalars. Lines (kg_line structs) and narrow types store plainly.
std::string CudaDialect::store_nontemporal(Type elem, const std::string& ptr, const std::string& idx,
                                           const std::string& v) const {
  const bool overloaded = !elem.is_vector() && !elem.is_bool() && (elem.bits() == 32 || elem.bits() == 64);
  if (!overloaded) return store(elem, ptr, idx, v);
  return "__stcs(&" + ptr + "[" + idx + "], " + v + ")";
}

std::string CudaDialect::atomic(Op op, Type elem, const std::string& ptr, const std::string& idx,
                                std::span<const std::string> a) const {
  std::string p = "&" + ptr + "[" + idx + "]";
  switch (op) {
    case Op::AtomicAdd: return "kg_atomic_add(" + p + ", " + a[0] + ")";
    case Op::AtomicMin: return "kg_atomic_min(" + p + ", " + a[0] + ")";
    case Op::AtomicMax: return "kg_atomic_max(" + p + ", " + a[0] + ")";
    case Op::AtomicExch: return "kg_atomic_exch(" + p + ", " + a[0] + ")";
    case Op::AtomicCas: return "kg_atomic_cas(" + p + ", " + a[0] + ", " + a[1] + ")";
    default: break;
  }
  throw ir::Error({}, "cuda dialect: unknown atomic " + std::string(ir::op_name(op)));
}

std::string CudaDialect::shared_decl(Type elem, int64_t count, const std::string& name) const {
  return "__shared__ " + type_name(elem) + " " + name + "[" + std::to_string(count) + "]";
}

std::string CudaDialect::unroll_hint(int factor) const {
  if (factor <= 1) return {};
  return "#pragma unroll " + std::to_string(factor);
}

}  // namespace kgen::codegen
