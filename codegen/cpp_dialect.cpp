#include "codegen/cpp_dialect.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string_view>

namespace kgen::codegen {

using ir::Op;
using ir::ScalarKind;
using ir::Type;

namespace {

// One row per math op. Scalar float formats see f32/f64 only (f16/bf16 are
// widened by compute_type); clang's __builtin_elementwise_* cover lines, and a
// missing line format falls back to lane-wise scalar code. Transcendentals on
// lines go through kg_map1/kg_map2 (prelude): a lane loop over the scalar
// helper that the loop vectoriser turns into one vector evaluation, where
// __builtin_elementwise_exp & co. became 16 scalar libm calls.
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
    {Op::Exp, "kg_exp{f}({0})", "kg_map1({0}, [](auto v) { return kg_exp{f}(v); })"},
    {Op::Exp2, "kg_exp2{f}({0})", "kg_map1({0}, [](auto v) { return kg_exp2{f}(v); })"},
    {Op::Log, "kg_log{f}({0})", "kg_map1({0}, [](auto v) { return kg_log{f}(v); })"},
    {Op::Log2, "kg_log2{f}({0})", "kg_map1({0}, [](auto v) { return kg_log2{f}(v); })"},
    {Op::Sin, "kg_sin{f}({0})", "kg_map1({0}, [](auto v) { return kg_sin{f}(v); })"},
    {Op::Cos, "kg_cos{f}({0})", "kg_map1({0}, [](auto v) { return kg_cos{f}(v); })"},
    {Op::Tanh, "kg_tanh{f}({0})", "kg_map1({0}, [](auto v) { return kg_tanh{f}(v); })"},
    {Op::Erf, "kg_erf{f}({0})", "kg_map1({0}, [](auto v) { return kg_erf{f}(v); })"},

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
    {Op::Pow, "kg_pow{f}({0}, {1})", "kg_map2({0}, {1}, [](auto a, auto b) { return kg_pow{f}(a, b); })"},

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
    // Typed through the prelude's i64/u64 (long on LP64), not long long: a
    // literal must deduce the same template argument as a u64 value
    // (kg_div(x, 16) with x: u64).
    case ScalarKind::I64:
      if (v == INT64_MIN) return "((i64)(-0x7fffffffffffffffLL - 1))";
      return "((i64)" + std::to_string(v) + "LL)";
    case ScalarKind::U64: return "((u64)" + std::to_string(uint64_t(v)) + "ULL)";
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
  if (to.kind == ScalarKind::BF16 && from.kind == ScalarKind::F32) return "kg_f32_to_bf16(" + x + ")";
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

// A shufflevector, not an initializer list of extracts: clang folds a chain
// of such lists (a 16×16 transpose's 4 butterfly stages) into one list per
// output line over all 16 sources and builds each line one lane at a time
// (15 vpermt2ps a line); shufflevectors of two sources stay one shuffle each.
std::string CppDialect::shuffle(Type to, const std::string& a, const std::string& b, std::span<const int> pattern) const {
  std::string s = "__builtin_shufflevector(" + a + ", " + b;
  for (int i : pattern) s += ", " + std::to_string(i);
  return s + ")";
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
  // Vector ?: tests each mask lane's sign bit (OpenCL semantics) and a bool
  // lane converts to 1, not -1: `!= 0` turns it into an all-ones mask.
  const std::string mask = "(__builtin_convertvector(" + c + ", " + type_name(Type(mk, val.lanes)) + ") != 0)";
  if (val.kind == ScalarKind::Bool) {
    // Bool lines are i1 vectors, which clang's vector ?: mis-compiles against
    // an i8 mask (a broken module): select on i8 lines and convert back.
    const std::string i8 = type_name(Type(ScalarKind::I8, val.lanes));
    return "__builtin_convertvector(" + mask + " ? __builtin_convertvector(" + a + ", " + i8 + ") : __builtin_convertvector(" +
           b + ", " + i8 + "), " + type_name(val) + ")";
  }
  return mask + " ? " + a + " : " + b;
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

// An unaligned vector load/store (memcpy of the line: one vmovups). Without
// it, a line built from element loads and taken apart lane by lane, as a
// transpose does, folds back into scalar loads and stores.
std::string CppDialect::load_line(Type line, const std::string& ptr, const std::string& idx) const {
  return "kg_loadu<" + type_name(line) + ">(&" + ptr + "[" + idx + "])";
}

std::string CppDialect::store_line(Type line, const std::string& ptr, const std::string& idx, const std::string& v) const {
  (void)line;
  return "kg_storeu(&" + ptr + "[" + idx + "], " + v + ")";
}

// A streaming line store at any element offset: nontemporal where the
// address is aligned to the line's (power-of-two) size at run time, else an
// unaligned plain store (x86 has no unaligned NT vector store).
std::string CppDialect::store_line_nontemporal(Type line, const std::string& ptr, const std::string& idx,
                                               const std::string& v) const {
  (void)line;
  return "kg_streamu(&" + ptr + "[" + idx + "], " + v + ")";
}

// Streaming stores for whole lines of 16, 32 or 64 bytes (movntps/vmovntps
// xmm/ymm/zmm). These need the address aligned to the store's size, which a
// line buffer has by construction: CPU buffers are 64-byte aligned and a line
// of 2^k lanes is aligned to its size (the ext_vector type's alignment, which
// clang also assumes for a plain line store). Scalars and other lines store
// plainly: a nontemporal scalar store keeps the loop vectoriser from widening
// the work-item loop (x86 has no legal unaligned NT vector store), and a
// scalar movnti per element gains nothing over the cache.
std::string CppDialect::store_nontemporal(Type elem, const std::string& ptr, const std::string& idx,
                                          const std::string& v) const {
  const int bytes = elem.bytes();
  const bool streams = elem.is_vector() && !elem.is_bool() && (bytes == 16 || bytes == 32 || bytes == 64);
  if (!streams) return store(elem, ptr, idx, v);
  return "__builtin_nontemporal_store(" + v + ", &" + ptr + "[" + idx + "])";
}

std::string CppDialect::prefetch(const std::string& ptr, const std::string& idx, int64_t hint) const {
  // Into all cache levels (prefetcht0), or from the second level on
  // (locality 2: prefetcht1), or for writing (rw 1: prefetchw); an address
  // past the buffer is harmless (x86's prefetch never faults), which the
  // IR's meaning allows.
  const char* locality = hint == ir::kPrefetchL2 ? "2" : "3";
  const char* rw = hint == ir::kPrefetchWrite ? "1" : "0";
  return "__builtin_prefetch((const char*)" + ptr + " + (u64)(" + idx + ") * sizeof(*" + ptr + "), " + rw + ", " +
         locality + ")";
}

std::string CppDialect::tile_mma_bf16(std::span<const std::string> a, bool acc) const {
  std::string s = "kg_tile_mma_bf16(" + a[0] + " + " + a[1] + ", (const u16*)" + a[2] + " + " + a[3] + ", " + a[4] + " + " + a[5];
  for (size_t i = 6; i < 12; ++i) s += ", " + a[i];
  return s + ", " + (acc ? "1" : "0") + ")";
}

// Shared memory belongs to one workgroup, and the CPU runs all work-items of a
// workgroup in sequence on one thread: a plain read-modify-write is atomic
// there, and avoids a locked instruction per update.
std::string CppDialect::atomic_in(ir::AddrSpace space, Op op, Type elem, const std::string& ptr,
                                  const std::string& idx, std::span<const std::string> a) const {
  if (space != ir::AddrSpace::Shared) return atomic(op, elem, ptr, idx, a);
  std::string p = "&" + ptr + "[" + idx + "]";
  switch (op) {
    case Op::AtomicAdd: return "kg_rmw_add(" + p + ", " + a[0] + ")";
    case Op::AtomicMin: return "kg_rmw_min(" + p + ", " + a[0] + ")";
    case Op::AtomicMax: return "kg_rmw_max(" + p + ", " + a[0] + ")";
    case Op::AtomicExch: return "kg_rmw_xchg(" + p + ", " + a[0] + ")";
    case Op::AtomicCas: return "kg_rmw_cas(" + p + ", " + a[0] + ", " + a[1] + ")";
    default: break;
  }
  return atomic(op, elem, ptr, idx, a);
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

std::string CppDialect::dot4(Type a, Type b, std::span<const std::string> args, Dot4Form form) const {
  auto sign = [](Type t) { return t.kind == ScalarKind::I32 ? "true" : "false"; };
  const std::string f = form == Dot4Form::Exact ? "" : ", " + std::to_string(int(form));
  return std::string("kg_dot4<") + sign(a) + ", " + sign(b) + f + ">(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string CppDialect::dot4_pair(Type a, Type b, std::span<const std::string> args) const {
  auto sign = [](Type t) { return t.kind == ScalarKind::I32 ? "true" : "false"; };
  return std::string("kg_dot4_pair<") + sign(a) + ", " + sign(b) + ">(" + args[0] + ", " + args[1] + ", " + args[2] + ", " +
         args[3] + ", " + args[4] + ")";
}

std::string CppDialect::dot2_i16(Type, std::span<const std::string> args) const {
  return "kg_dot2_i16(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string CppDialect::dot2_bf16(Type, std::span<const std::string> args) const {
  return "kg_dot2_bf16(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string CppDialect::permute_bytes(Type table, Type result, std::span<const std::string> args,
                                      std::span<const int> pattern) const {
  if (pattern.empty())
    return "kg_permute_bytes(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
  // A constant pattern is a shufflevector: LLVM picks the cheapest shuffles
  // for it (vpermb / vpermi2b with VBMI, else byte shuffles and blends).
  const std::string bytes = "kg_u8v" + std::to_string(table.bytes());
  std::string a = "__builtin_bit_cast(" + bytes + ", " + args[0] + ")", b = "__builtin_bit_cast(" + bytes + ", " + args[1] + ")";
  // One 64-byte table (a quad's f16 scales or first codes from its first 64
  // bytes): LLVM narrows the table's load to two 32-byte halves and a
  // two-source vpermi2w (3 uops on Intel: 2 cycles of port 5), or folds a
  // select of the result and another line into one two-source permute,
  // where the whole line in a register takes one vpermw / vpermb (1 uop)
  // and the select one blend. kg_in_reg around the table and the result
  // keeps both as written (an empty asm, no instruction; the identity
  // where 64-byte lines are not registers).
  const bool pinned = args[0] == args[1] && table.bytes() == 64;
  if (pinned) a = b = "kg_in_reg(" + a + ")";
  std::string s = "__builtin_shufflevector(" + a + ", " + b;
  for (int p : pattern) s += ", " + std::to_string(p);
  s += ")";
  if (pinned && result.bytes() == 64) s = "kg_in_reg(" + s + ")";
  return "__builtin_bit_cast(" + type_name(result) + ", " + s + ")";
}

std::string CppDialect::unroll_hint(int factor) const {
  if (factor <= 1) return {};
  return "#pragma clang loop unroll_count(" + std::to_string(factor) + ")";
}

namespace {

// The prelude's helpers, emitted per kernel for what it calls: parsing all of
// them cost every kernel ~1 ms of its compile, the f32 math a few ms more.
// The f32 math is branch-free and call-free, so the loop vectoriser can
// if-convert it under the work-item guard. Against glibc
// (tests/runtime/math_accuracy_test.cpp): tanh bit-exact; erf bit-exact below
// 1/0.35, else <= 1 ulp; exp, exp2, log, log2, sin, cos, pow <= 1 ulp.
struct HelperChunk {
  const char* key;
  const char* calls;  // space-separated tokens of the kernel's text that pull the chunk in
  const char* needs;  // key of the chunk it builds on ("" for none)
  const char* code;
};
constexpr HelperChunk kHelpers[] = {
    {"lines", "", "", R"(#define KG_LINE(T, N) typedef T T##x##N __attribute__((ext_vector_type(N)));
#define KG_LINES(T) KG_LINE(T, 2) KG_LINE(T, 3) KG_LINE(T, 4) KG_LINE(T, 8) KG_LINE(T, 16)
KG_LINES(bool) KG_LINES(i8) KG_LINES(i16) KG_LINES(i32) KG_LINES(i64) KG_LINES(u8) KG_LINES(u16) KG_LINES(u32)
KG_LINES(u64) KG_LINES(f16) KG_LINES(bf16) KG_LINES(f32) KG_LINES(f64)
)"},
    {"u8_lines", "kg_u8v", "", R"(// Byte vectors of every permute_bytes table size (IR lines stop at 16 lanes).
typedef u8 kg_u8v4 __attribute__((ext_vector_type(4))); typedef u8 kg_u8v8 __attribute__((ext_vector_type(8)));
typedef u8 kg_u8v16 __attribute__((ext_vector_type(16))); typedef u8 kg_u8v32 __attribute__((ext_vector_type(32)));
typedef u8 kg_u8v64 __attribute__((ext_vector_type(64)));
)"},
    {"libm", "kg_exp( kg_exp2( kg_log( kg_log2( kg_sin( kg_cos( kg_tanh( kg_erf( kg_pow(", "", R"(// f64 math is libm through glibc's vector ABI: `declare simd` gives the loop
// vectoriser the libmvec variants (_ZGVeN8v_exp...); the asm labels keep clang
// from turning the calls back into intrinsics. Those variants are unmasked, so
// calls under the work-item guard stay scalar; f32 (and f16/bf16, which compute
// in f32) therefore uses inline, branch-free helpers (kHelpers' f32 math).
extern "C" {
#define KG_LIBM1(n) _Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f64 kg_##n(f64) __asm__(#n);
KG_LIBM1(exp) KG_LIBM1(exp2) KG_LIBM1(log) KG_LIBM1(log2) KG_LIBM1(sin) KG_LIBM1(cos) KG_LIBM1(tanh) KG_LIBM1(erf)
_Pragma("omp declare simd notinbranch") __attribute__((const, nothrow)) f64 kg_pow(f64, f64) __asm__("pow");
}
)"},
    {"sat", "kg_sat", "", R"(// float -> int: saturate, NaN -> 0 (lo/hi are exact powers of two).
template <class I, class F> static inline I kg_sat(F x, F lo, F hi, I imin, I imax) {
  return x != x ? (I)0 : x <= lo ? imin : x >= hi ? imax : (I)x;
}
)"},
    {"satv", "kg_satv", "sat", R"(// Lines: where the float type holds imin and imax exactly (8- and 16-bit
// targets; 32-bit from f64), a clamp, a NaN select and one conversion, all on
// whole vectors (a lane loop over an ext_vector stays scalar: quantizing
// stores ran ~100x slower); else lane by lane.
template <class IV, int N, class FV, class F, class I> static inline IV kg_satv(FV x, F lo, F hi, I imin, I imax) {
  if constexpr (sizeof(I) <= 2 || (sizeof(I) == 4 && sizeof(F) == 8)) {
    FV c = __builtin_elementwise_min(__builtin_elementwise_max(x, (FV)(F)imin), (FV)(F)imax);
    c = (x != x) ? (FV)(F)0 : c;
    return __builtin_convertvector(c, IV);
  } else {
    IV r; for (int l = 0; l < N; ++l) r[l] = kg_sat<I>((F)x[l], lo, hi, imin, imax); return r;
  }
}
)"},
    {"map", "kg_map1 kg_map2", "", R"(// Lane-wise math on a line: the scalar helper in a loop over the lanes, which
// the loop vectoriser turns into one vector evaluation (the helpers are
// branch-free). The lanes go through an array: the vectoriser does not see
// through a loop over ext_vector elements.
template <class V, class F> KG_MATH V kg_map1(V x, F f) {
  typedef __typeof__(x[0]) E; constexpr int N = sizeof(V) / sizeof(E);
  E a[N]; __builtin_memcpy(a, &x, sizeof a);
#pragma clang loop vectorize(enable) interleave(disable)
  for (int l = 0; l < N; ++l) a[l] = f(a[l]);
  V r; __builtin_memcpy(&r, a, sizeof a); return r;
}
template <class V, class F> KG_MATH V kg_map2(V x, V y, F f) {
  typedef __typeof__(x[0]) E; constexpr int N = sizeof(V) / sizeof(E);
  E a[N], b[N]; __builtin_memcpy(a, &x, sizeof a); __builtin_memcpy(b, &y, sizeof b);
#pragma clang loop vectorize(enable) interleave(disable)
  for (int l = 0; l < N; ++l) a[l] = f(a[l], b[l]);
  V r; __builtin_memcpy(&r, a, sizeof a); return r;
}
)"},
    {"memory", "kg_loadu kg_storeu kg_streamu", "", R"(template <class V, class E> static inline V kg_loadu(const E* p) { V r; __builtin_memcpy(&r, p, sizeof(V)); return r; }
template <class V, class E> static inline void kg_storeu(E* p, V v) { __builtin_memcpy(p, &v, sizeof(V)); }
template <class V, class E> static inline void kg_streamu(E* p, V v) {
  if constexpr ((sizeof(V) & (sizeof(V) - 1)) == 0 && sizeof(V) >= 16 && sizeof(V) <= 64) {
    if (((u64)p & (sizeof(V) - 1)) == 0) { __builtin_nontemporal_store(v, (V*)p); return; }
  }
  kg_storeu(p, v);
}
)"},
    {"divrem", "kg_div kg_rem", "", R"(template <class T> static inline T kg_div(T a, T b) { if constexpr ((T)-1 < (T)0) { if (b == (T)-1) return (T)(0 - a); } return (T)(a / b); }
template <class T> static inline T kg_rem(T a, T b) { if constexpr ((T)-1 < (T)0) { if (b == (T)-1) return (T)0; } return (T)(a % b); }
)"},
    {"atomics", "kg_xchg kg_cas kg_atomic_min kg_atomic_max", "", R"(template <class T> static inline T kg_xchg(T* p, T v) { T r; __atomic_exchange(p, &v, &r, __ATOMIC_RELAXED); return r; }
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
)"},
    {"rmw", "kg_rmw_", "", R"(// Shared-memory "atomics": one thread runs a workgroup, so plain RMW suffices.
template <class T> static inline T kg_rmw_add(T* p, T v) { T old = *p; *p = (T)(old + v); return old; }
template <class T> static inline T kg_rmw_min(T* p, T v) { T old = *p; *p = __builtin_elementwise_min(old, v); return old; }
template <class T> static inline T kg_rmw_max(T* p, T v) { T old = *p; *p = __builtin_elementwise_max(old, v); return old; }
template <class T> static inline T kg_rmw_xchg(T* p, T v) { T old = *p; *p = v; return old; }
template <class T> static inline T kg_rmw_cas(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
)"},
    {"stream_fence", "kg_stream_fence", "", R"(// Streaming (non-temporal) stores are weakly ordered: the launch's release
// (the pool's join) does not order them. An sfence at the end of a call that
// used them makes them visible before the call reports done.
static inline void kg_stream_fence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
)"},
    {"base", "", "", R"(KG_MATH f32 kg_fbits(u32 b) { return __builtin_bit_cast(f32, b); }
KG_MATH u32 kg_ubits(f32 x) { return __builtin_bit_cast(u32, x); }
// p * 2^n for n in [-151, 128] (two normal factors: one rounding, also for denormal results).
KG_MATH f32 kg_scalef(f32 p, i32 n) {
  i32 a = n >> 1, b = n - a;
  return p * kg_fbits((u32)(a + 127) << 23) * kg_fbits((u32)(b + 127) << 23);
}
KG_MATH f32 kg_copysignf(f32 a, f32 s) { return kg_fbits((kg_ubits(a) & 0x7fffffffu) | (kg_ubits(s) & 0x80000000u)); }
)"},
    {"exp", "kg_expf(", "base", R"(KG_MATH f32 kg_expf(f32 x) {
  x = x > 88.8f ? 88.8f : x; x = x < -104.0f ? -104.0f : x;  // NaN passes through
  f32 k = x * 1.44269504f + 0x1.8p23f;                           // rint(x / ln2) in the low bits
  i32 n = (i32)(kg_ubits(k) - 0x4b400000u);
  k -= 0x1.8p23f;
  f32 r = __builtin_fmaf(k, -0.693359375f, x);
  r = __builtin_fmaf(k, 2.12194440e-4f, r);
  f32 p = 1.9875691500e-4f;
  p = __builtin_fmaf(p, r, 1.3981999507e-3f); p = __builtin_fmaf(p, r, 8.3334519073e-3f);
  p = __builtin_fmaf(p, r, 4.1665795894e-2f); p = __builtin_fmaf(p, r, 1.6666665459e-1f);
  p = __builtin_fmaf(p, r, 5.0000001201e-1f);
  p = __builtin_fmaf(p, r * r, r) + 1.0f;
  return kg_scalef(p, n);
}
)"},
    {"exp2", "kg_exp2f(", "base", R"(KG_MATH f32 kg_exp2f(f32 x) {
  x = x > 128.5f ? 128.5f : x; x = x < -151.0f ? -151.0f : x;
  f32 k = x + 0x1.8p23f;
  i32 n = (i32)(kg_ubits(k) - 0x4b400000u);
  k -= 0x1.8p23f;
  f32 r = x - k;  // exact, |r| <= 1/2
  f32 p = 1.535336188319500e-4f;
  p = __builtin_fmaf(p, r, 1.339887440266574e-3f); p = __builtin_fmaf(p, r, 9.618437357674640e-3f);
  p = __builtin_fmaf(p, r, 5.550332471162809e-2f); p = __builtin_fmaf(p, r, 2.402264791363012e-1f);
  p = __builtin_fmaf(p, r, 6.931472028550421e-1f);
  p = __builtin_fmaf(p, r, 1.0f);
  return kg_scalef(p, n);
}
)"},
    {"logr", "", "base", R"(// x = m * 2^e, m in [sqrt(1/2), sqrt(2)); returns m - 1 (exact) and e.
KG_MATH f32 kg_logredf(f32 x, f32* e) {
  bool sub = x < 0x1p-126f;
  u32 ix = kg_ubits(sub ? x * 0x1p23f : x);
  i32 k = (i32)(ix - 0x3f3504f3u) >> 23;
  *e = (f32)(k - (sub ? 23 : 0));
  return kg_fbits(ix - ((u32)k << 23)) - 1.0f;
}
KG_MATH f32 kg_logpolyf(f32 f) {  // (log(1+f) - f + f^2/2) / f^3
  f32 p = 7.0376836292e-2f;
  p = __builtin_fmaf(p, f, -1.1514610310e-1f); p = __builtin_fmaf(p, f, 1.1676998740e-1f);
  p = __builtin_fmaf(p, f, -1.2420140846e-1f); p = __builtin_fmaf(p, f, 1.4249322787e-1f);
  p = __builtin_fmaf(p, f, -1.6668057665e-1f); p = __builtin_fmaf(p, f, 2.0000714765e-1f);
  p = __builtin_fmaf(p, f, -2.4999993993e-1f); p = __builtin_fmaf(p, f, 3.3333331174e-1f);
  return p;
}
KG_MATH f32 kg_logfix(f32 x, f32 r) {  // log(0) = -inf, log(<0) = NaN, log(inf) = inf, NaN -> NaN
  r = x == __builtin_inff() ? x : r;
  r = x > 0.0f ? r : (x == 0.0f ? -__builtin_inff() : __builtin_nanf(""));
  return x != x ? x : r;
}
)"},
    {"log", "kg_logf(", "logr", R"(KG_MATH f32 kg_logf(f32 x) {
  f32 e, f = kg_logredf(x, &e), z = f * f;
  f32 y = f * z * kg_logpolyf(f);
  y = __builtin_fmaf(e, -2.12194440e-4f, y);
  y = __builtin_fmaf(z, -0.5f, y);
  f32 r = __builtin_fmaf(e, 0.693359375f, f + y);
  return kg_logfix(x, r);
}
)"},
    {"log2", "kg_log2f(", "logr", R"(KG_MATH f32 kg_log2f(f32 x) {
  f32 e, f = kg_logredf(x, &e), z = f * f;
  f32 y = __builtin_fmaf(f * z, kg_logpolyf(f), z * -0.5f);  // log(1+f) - f
  const f32 L = 0.44269504088896340736f;                       // log2(e) - 1
  f32 r = __builtin_fmaf(f, L, y * L) + y + f + e;
  return kg_logfix(x, r);
}
)"},
    {"tanh", "kg_tanhf(", "base", R"(// glibc's (fdlibm) expm1f for finite |x| < 88, branch-free: same operations in the same order.
KG_MATH f32 kg_expm1f_fd(f32 x) {
  u32 hx = kg_ubits(x) & 0x7fffffffu;
  bool neg = kg_ubits(x) >> 31;
  f32 kf = __builtin_truncf(1.4426950216e+00f * x + (neg ? -0.5f : 0.5f));
  kf = hx < 0x3f851592u ? (neg ? -1.0f : 1.0f) : kf;
  kf = hx > 0x3eb17218u ? kf : 0.0f;
  f32 hi = x - kf * 6.9313812256e-01f, lo = kf * 9.0580006145e-06f;
  f32 xr = hi - lo, c = (hi - xr) - lo;
  f32 hfx = 0.5f * xr, hxs = xr * hfx;
  f32 r1 = 1.0f + hxs * (-3.3333335072e-02f + hxs * (1.5873016091e-03f + hxs * (-7.9365076090e-05f + hxs * (4.0082177293e-06f + hxs * -2.0109921195e-07f))));
  f32 t = 3.0f - r1 * hfx;
  f32 e = hxs * ((r1 - t) / (6.0f - xr * t));
  f32 r0 = xr - (xr * e - hxs);
  e = (xr * (e - c) - c) - hxs;
  i32 k = (i32)kf;
  u32 ks = (u32)k << 23, kc = (u32)(k < 2 ? 2 : k > 22 ? 22 : k), kd = (u32)(k < 23 ? 23 : k > 56 ? 56 : k);
  f32 ra = kg_fbits(kg_ubits(1.0f - (e - xr)) + ks) - 1.0f;
  f32 rb = kg_fbits(kg_ubits(kg_fbits(0x3f800000u - (0x1000000u >> kc)) - (e - xr)) + ks);
  f32 rc = kg_fbits(kg_ubits((xr - (e + kg_fbits((0x7fu - kd) << 23))) + 1.0f) + ks);
  f32 r = k < 23 ? rb : rc;
  r = k <= -2 || k > 56 ? ra : r;
  r = k == 1 ? (xr < -0.25f ? -2.0f * (e - (xr + 0.5f)) : 1.0f + 2.0f * (xr - e)) : r;
  r = k == -1 ? 0.5f * (xr - e) - 0.5f : r;
  r = k == 0 ? r0 : r;
  return hx < 0x33000000u ? x : r;
}
// tanh: glibc's algorithm (fdlibm), so results match glibc bit for bit: near +-1, 1 + tanh(x)
// cancels and any 1-ulp difference would show (e.g. in GELU).
KG_MATH f32 kg_tanhf(f32 x) {
  f32 ax = __builtin_fabsf(x);
  f32 as = ax < 22.0f ? ax : 0.0f;
  bool ge1 = as >= 1.0f;
  f32 t = kg_expm1f_fd(ge1 ? 2.0f * as : -2.0f * as);
  f32 q = (ge1 ? 2.0f : -t) / (t + 2.0f);  // one division for both of glibc's branches
  f32 z = ge1 ? 1.0f - q : q;
  z = x < 0.0f ? -z : z;
  z = ax < 0x1p-55f ? x * (1.0f + x) : z;
  z = ax >= 22.0f ? kg_copysignf(1.0f, x) : z;
  return x != x ? x + x : z;
}
)"},
    {"erf", "kg_erff(", "exp", R"(// glibc's expf (double evaluation, 32-entry table, its FMA variant): bit-exact for |x| < 88.
static constexpr u64 kg_exp2f_tab[32] = {
  0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b, 0x3fef54873168b9aa,
  0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
  0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74,
  0x3feea11473eb0187, 0x3feea589994cce13, 0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
  0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
  0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
KG_MATH f32 kg_expf_gl(f32 x) {
  f64 xd = x;
  f64 kd = __builtin_fma(0x1.71547652b82fep+5, xd, 0x1.8p52);
  u64 ki = __builtin_bit_cast(u64, kd);
  kd -= 0x1.8p52;
  f64 r = __builtin_fma(0x1.71547652b82fep+5, xd, -kd);
  f64 s = __builtin_bit_cast(f64, kg_exp2f_tab[ki % 32] + (ki << 47));
  f64 y = __builtin_fma(__builtin_fma(0x1.c6af84b912394p-20, r, 0x1.ebfce50fac4f3p-13), r * r, __builtin_fma(0x1.62e42ff0c52d6p-6, r, 1.0));
  return (f32)(y * s);
}
// erf: glibc's algorithm (fdlibm) below 1/0.35, all ranges evaluated and selected, bit-exact with
// glibc there: near +-1, 1 + erf(x) cancels and any 1-ulp difference would show (e.g. in GELU).
KG_MATH f32 kg_erff(f32 x) {
  u32 ix = kg_ubits(x) & 0x7fffffffu;
  bool neg = kg_ubits(x) >> 31;
  f32 ax = __builtin_fabsf(x);
  f32 z = x * x;  // |x| < 0.84375
  f32 r = 1.2837916613e-01f + z * (-3.2504209876e-01f + z * (-2.8481749818e-02f + z * (-5.7702702470e-03f + z * -2.3763017452e-05f)));
  f32 s = 1.0f + z * (3.9791721106e-01f + z * (6.5022252500e-02f + z * (5.0813062117e-03f + z * (1.3249473704e-04f + z * -3.9602282413e-06f))));
  f32 d = ax - 1.0f;  // 0.84375 <= |x| < 1.25
  f32 P = -2.3621185683e-03f + d * (4.1485610604e-01f + d * (-3.7220788002e-01f + d * (3.1834661961e-01f + d * (-1.1089469492e-01f + d * (3.5478305072e-02f + d * -2.1663755178e-03f)))));
  f32 Q = 1.0f + d * (1.0642088205e-01f + d * (5.4039794207e-01f + d * (7.1828655899e-02f + d * (1.2617121637e-01f + d * (1.3637083583e-02f + d * 1.1984500103e-02f)))));
  bool lo = ix < 0x3f580000u;
  f32 pq = (lo ? r : P) / (lo ? s : Q);  // one division for both ranges
  f32 v0 = x + x * pq;
  v0 = ix < 0x31800000u ? x + 1.2837916613e-01f * x : v0;
  v0 = ix < 0x04000000u ? 0.0625f * (16.0f * x + (16.0f * 1.2837916613e-01f) * x) : v0;
  f32 v1 = neg ? -8.4506291151e-01f - pq : 8.4506291151e-01f + pq;
  f32 xa = ix < 0x40c00000u ? ax : 6.0f;  // 1.25 <= |x| < 6
  f32 w = 1.0f / (xa * xa);
  bool a = ix < 0x4036db6eu;
  f32 R = -9.8649440333e-03f + w * (-6.9385856390e-01f + w * (-1.0558626175e+01f + w * (-6.2375331879e+01f + w * (-1.6239666748e+02f + w * (-1.8460508728e+02f + w * (-8.1287437439e+01f + w * -9.8143291473e+00f))))));
  f32 S = 1.0f + w * (1.9651271820e+01f + w * (1.3765776062e+02f + w * (4.3456588745e+02f + w * (6.4538726807e+02f + w * (4.2900814819e+02f + w * (1.0863500214e+02f + w * (6.5702495575e+00f + w * -6.0424413532e-02f)))))));
  f32 zt = kg_fbits(kg_ubits(xa) & 0xfffff000u);
  f32 e = kg_expf_gl(-zt * zt - 0.5625f) * kg_expf_gl((zt - xa) * (zt + xa) + R / S);
  f32 v2 = neg ? e / xa - 1.0f : 1.0f - e / xa;
  // [1/0.35, 6): glibc 2.36 is correctly rounded here and fdlibm's fit is not, so use
  // erfc = exp(-x^2) * Q(x), Q = erfc * exp(x^2) fitted on [2, 4] (relative error 4e-7).
  f32 u = xa - 3.0f, q = -2.365032323e-5f;
  q = __builtin_fmaf(q, u, 9.469385801e-5f); q = __builtin_fmaf(q, u, -3.2242398e-4f);
  q = __builtin_fmaf(q, u, 1.215908479e-3f); q = __builtin_fmaf(q, u, -4.479774428e-3f);
  q = __builtin_fmaf(q, u, 1.58858108e-2f); q = __builtin_fmaf(q, u, -5.437224926e-2f);
  q = __builtin_fmaf(q, u, 1.790011061e-1f);
  f32 sq = xa * xa, ec = kg_expf(-sq) * q;
  ec = __builtin_fmaf(-__builtin_fmaf(xa, xa, -sq), ec, ec);  // exp(-(sq + sl)) ~ exp(-sq) * (1 - sl)
  v2 = a ? v2 : (neg ? ec - 1.0f : 1.0f - ec);
  f32 v = ix < 0x40c00000u ? v2 : (neg ? -1.0f : 1.0f);
  v = ix < 0x3fa00000u ? v1 : v;
  v = lo ? v0 : v;
  return x != x ? x + x : v;
}
)"},
    {"sincos", "kg_sinf( kg_cosf(", "base", R"(// sin/cos: reduction and polynomials in f64, one final rounding. |x| < 2^20: Cody-Waite by pi/2
// in three parts with FMA (first step exact); larger: glibc's Payne-Hanek with a 96-byte table of 2/pi.
static constexpr u32 kg_inv_pio4[24] = {
  0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
  0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
  0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};
KG_MATH f32 kg_sincosf(f32 xf, u64 qoff) {
  f64 x = xf;
  f64 k = __builtin_fma(x, 0x1.45f306dc9c883p-1, 0x1.8p52);
  u64 q = __builtin_bit_cast(u64, k);
  k -= 0x1.8p52;
  f64 r = __builtin_fma(k, -0x1.921fb54442d18p+0, x);
  r = __builtin_fma(k, -0x1.1a62633145c07p-54, r);
  r = __builtin_fma(k, 0x1.f1976b7ed8fbcp-110, r);
  u32 xi = kg_ubits(xf);
  const u32* t = kg_inv_pio4 + ((xi >> 26) & 15);
  u32 m = ((xi & 0xffffffu) | 0x800000u) << ((xi >> 23) & 7);
  u64 a = (u64)(u32)(m * t[0]) << 32 | (u64)m * t[8] >> 32;
  a += (u64)m * t[4];
  u64 n = (a + (1ull << 61)) >> 62;
  f64 rl = (f64)(i64)(a - (n << 62)) * 0x1.921fb54442d18p-62;
  bool neg = xi >> 31, big = __builtin_fabsf(xf) >= 0x1p20f && __builtin_fabsf(xf) < __builtin_inff();
  r = big ? (neg ? -rl : rl) : r;
  q = (big ? (neg ? 0 - n : n) : q) + qoff;
  f64 s = r * r;
  f64 ps = -0x1.ae64567f544e4p-26;
  ps = __builtin_fma(ps, s, 0x1.71de3a556c734p-19); ps = __builtin_fma(ps, s, -0x1.a01a01a01a01ap-13);
  ps = __builtin_fma(ps, s, 0x1.1111111111111p-7); ps = __builtin_fma(ps, s, -0x1.5555555555555p-3);
  ps = __builtin_fma(ps * s, r, r);
  f64 pc = 0x1.1eed8eff8d898p-29;
  pc = __builtin_fma(pc, s, -0x1.27e4fb7789f5cp-22); pc = __builtin_fma(pc, s, 0x1.a01a01a01a01ap-16);
  pc = __builtin_fma(pc, s, -0x1.6c16c16c16c17p-10); pc = __builtin_fma(pc, s, 0x1.5555555555555p-5);
  pc = __builtin_fma(pc, s, -0.5); pc = __builtin_fma(pc, s, 1.0);
  f64 v = (q & 1) ? pc : ps;
  v = (q & 2) ? -v : v;
  return (f32)v;
}
KG_MATH f32 kg_sinf(f32 x) { return kg_sincosf(x, 0); }
KG_MATH f32 kg_cosf(f32 x) { return kg_sincosf(x, 1); }
)"},
    {"pow", "kg_powf(", "base", R"(// pow: log2 and exp2 in f64 (~2^-35 relative), C99 special cases by selects.
KG_MATH f32 kg_powf(f32 x, f32 y) {
  f64 ax = __builtin_fabsf(x), yd = y;
  u64 ib = __builtin_bit_cast(u64, ax);
  i64 e = (i64)(ib - 0x3fe6a09e667f3bcdull) >> 52;
  f64 m = __builtin_bit_cast(f64, ib - ((u64)e << 52));
  f64 s = (m - 1.0) / (m + 1.0), s2 = s * s;
  f64 l = 0x1.1111111111111p-4;
  l = __builtin_fma(l, s2, 0x1.3b13b13b13b14p-4); l = __builtin_fma(l, s2, 0x1.745d1745d1746p-4);
  l = __builtin_fma(l, s2, 0x1.c71c71c71c71cp-4); l = __builtin_fma(l, s2, 0x1.2492492492492p-3);
  l = __builtin_fma(l, s2, 0x1.999999999999ap-3); l = __builtin_fma(l, s2, 0x1.5555555555555p-2);
  l = __builtin_fma(l * s2, s, s);  // atanh(s) = log(m) / 2
  f64 lg = __builtin_fma(l, 2.0 * 0x1.71547652b82fep+0, (f64)e);
  lg = ax == 0 ? -__builtin_inf() : lg;
  lg = ax == __builtin_inf() ? __builtin_inf() : lg;
  f64 t = yd * lg;
  t = t > 130.0 ? 130.0 : t; t = t < -160.0 ? -160.0 : t;
  f64 k = t + 0x1.8p52;
  u64 n = __builtin_bit_cast(u64, k) - 0x4338000000000000ull;
  k -= 0x1.8p52;
  f64 r = t - k;
  f64 p = 0x1.e4cf5158b8ecap-28;
  p = __builtin_fma(p, r, 0x1.b5253d395e7c4p-24); p = __builtin_fma(p, r, 0x1.62c0223a5c824p-20);
  p = __builtin_fma(p, r, 0x1.ffcbfc588b0c7p-17); p = __builtin_fma(p, r, 0x1.430912f86c787p-13);
  p = __builtin_fma(p, r, 0x1.5d87fe78a6731p-10); p = __builtin_fma(p, r, 0x1.3b2ab6fba4e77p-7);
  p = __builtin_fma(p, r, 0x1.c6b08d704a0c0p-5); p = __builtin_fma(p, r, 0x1.ebfbdff82c58fp-3);
  p = __builtin_fma(p, r, 0x1.62e42fefa39efp-1); p = __builtin_fma(p, r, 1.0);
  f32 v = (f32)(p * __builtin_bit_cast(f64, (n + 1023) << 52));
  f32 yh = y * 0.5f;
  bool yint = __builtin_truncf(y) == y, yodd = yint && __builtin_truncf(yh) != yh;
  v = (yodd && (kg_ubits(x) >> 31)) ? -v : v;
  v = (x < 0.0f && ax != __builtin_inf() && !yint) || x != x || y != y ? __builtin_nanf("") : v;
  return x == 1.0f || y == 0.0f || (x == -1.0f && __builtin_fabsf(y) == __builtin_inff()) ? 1.0f : v;
}
)"},
    // Not math, but the same pull-in-when-called mechanism: dot4 (ir/ops.h).
    {"dot4", "kg_dot4< kg_dot4_pair<", "", R"(// dot4: c + the 4 byte products of each 32-bit lane (SA/SB: bytes signed),
// wrapping. With AVX512-VNNI the u8 x i8 case of 4/8/16 lanes is one vpdpbusd;
// everything else is lane arithmetic on the line (clang vectorises it).
typedef int kg_v4si __attribute__((__vector_size__(16)));
typedef int kg_v8si __attribute__((__vector_size__(32)));
typedef int kg_v16si __attribute__((__vector_size__(64)));
#if defined(__AVX2__)
// Without VNNI: the even bytes (0, 2) and the odd bytes (1, 3) of each lane,
// zero- or sign-extended in place to 16 bits, then vpmaddwd adds each lane's
// two 16-bit products into one 32-bit sum: exact for every signedness (a
// product is below 2^16 in magnitude), two multiplies per line of lanes
// instead of four 32-bit ones plus the byte extraction.
typedef short kg_v8hi __attribute__((__vector_size__(16)));
typedef short kg_v16hi __attribute__((__vector_size__(32)));
typedef unsigned short kg_v8hu __attribute__((__vector_size__(16)));
typedef unsigned short kg_v16hu __attribute__((__vector_size__(32)));
template <bool S, class H, class HU> KG_MATH H kg_even_bytes(H x) {
  if constexpr (S) return (H)(x << 8) >> 8; else return x & (short)0xff;
}
template <bool S, class H, class HU> KG_MATH H kg_odd_bytes(H x) {
  if constexpr (S) return x >> 8; else return (H)((HU)x >> 8);
}
template <bool SA, bool SB, class V> KG_MATH V kg_dot4_x(V a, V b) {
  if constexpr (sizeof(V) == 16) {
    const kg_v8hi x = (kg_v8hi)a, y = (kg_v8hi)b;
    return (V)(__builtin_ia32_pmaddwd128(kg_even_bytes<SA, kg_v8hi, kg_v8hu>(x), kg_even_bytes<SB, kg_v8hi, kg_v8hu>(y)) +
               __builtin_ia32_pmaddwd128(kg_odd_bytes<SA, kg_v8hi, kg_v8hu>(x), kg_odd_bytes<SB, kg_v8hi, kg_v8hu>(y)));
  } else {
    const kg_v16hi x = (kg_v16hi)a, y = (kg_v16hi)b;
    return (V)(__builtin_ia32_pmaddwd256(kg_even_bytes<SA, kg_v16hi, kg_v16hu>(x), kg_even_bytes<SB, kg_v16hi, kg_v16hu>(y)) +
               __builtin_ia32_pmaddwd256(kg_odd_bytes<SA, kg_v16hi, kg_v16hu>(x), kg_odd_bytes<SB, kg_v16hi, kg_v16hu>(y)));
  }
}
// FORM 1: codegen proved the unsigned operand's bytes below 128 (the other is
// signed), so vpmaddubsw's 16-bit pair sums cannot saturate (2·127·128 <
// 2^15) and a vpmaddwd by ones widens them: two instructions per line.
typedef char kg_v16qi __attribute__((__vector_size__(16)));
typedef char kg_v32qi __attribute__((__vector_size__(32)));
template <bool SA, class V> KG_MATH V kg_dot4_small_x(V a, V b) {
  const V u = SA ? b : a, s = SA ? a : b;
  if constexpr (sizeof(V) == 16)
    return (V)__builtin_ia32_pmaddwd128(__builtin_ia32_pmaddubsw128((kg_v16qi)u, (kg_v16qi)s), (kg_v8hi)((kg_v8hi){} + 1));
  else
    return (V)__builtin_ia32_pmaddwd256(__builtin_ia32_pmaddubsw256((kg_v32qi)u, (kg_v32qi)s), (kg_v16hi)((kg_v16hi){} + 1));
}
// FORM 2/3 (codegen::Dot4Form): both signed, a's (2) or b's (3) bytes never
// -128: vpsignb moves the other's sign onto them and vpabsb makes the other
// unsigned (<= 128), so vpmaddubsw's pair sums stay within 2·128·127 < 2^15:
// four instructions per line instead of six.
template <bool B_NOMIN, class V> KG_MATH V kg_dot4_sign_x(V a, V b) {
  const V s = B_NOMIN ? b : a, o = B_NOMIN ? a : b;
  if constexpr (sizeof(V) == 16)
    return (V)__builtin_ia32_pmaddwd128(
        __builtin_ia32_pmaddubsw128(__builtin_elementwise_abs((kg_v16qi)o), __builtin_ia32_psignb128((kg_v16qi)s, (kg_v16qi)o)),
        (kg_v8hi)((kg_v8hi){} + 1));
  else
    return (V)__builtin_ia32_pmaddwd256(
        __builtin_ia32_pmaddubsw256(__builtin_elementwise_abs((kg_v32qi)o), __builtin_ia32_psignb256((kg_v32qi)s, (kg_v32qi)o)),
        (kg_v16hi)((kg_v16hi){} + 1));
}
template <bool SA, bool SB, int FORM, class V> KG_MATH V kg_dot4_v(V a, V b) {
  if constexpr (FORM == 1 && SA != SB) return kg_dot4_small_x<SA>(a, b);
  else if constexpr (FORM >= 2 && SA && SB) return kg_dot4_sign_x<FORM == 3>(a, b);
  else return kg_dot4_x<SA, SB>(a, b);
}
#endif
template <bool SA, bool SB, int FORM = 0, class A, class B, class C> KG_MATH C kg_dot4(A a, B b, C c) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  // vpdpbusd(acc, unsigned bytes, signed bytes)
#define KG_VNNI(BYTES, V, F) \
  if constexpr (SA != SB && sizeof(C) == BYTES) return SA ? (C)F((V)c, (V)b, (V)a) : (C)F((V)c, (V)a, (V)b);
  KG_VNNI(64, kg_v16si, __builtin_ia32_vpdpbusd512)
  KG_VNNI(32, kg_v8si, __builtin_ia32_vpdpbusd256)
  KG_VNNI(16, kg_v4si, __builtin_ia32_vpdpbusd128)
#undef KG_VNNI
#endif
#if defined(__AVX2__)
  if constexpr (sizeof(C) == 16) {  // 4 lanes (3 lanes are padded to 16 bytes too)
    if constexpr (__builtin_vectorelements(C) == 4) return (C)((kg_v4si)c + kg_dot4_v<SA, SB, FORM>((kg_v4si)a, (kg_v4si)b));
  }
  if constexpr (sizeof(C) == 32) return (C)((kg_v8si)c + kg_dot4_v<SA, SB, FORM>((kg_v8si)a, (kg_v8si)b));
  if constexpr (sizeof(C) == 64) {
    const kg_v16si a16 = (kg_v16si)a, b16 = (kg_v16si)b;
    const kg_v8si lo = kg_dot4_v<SA, SB, FORM>(__builtin_shufflevector(a16, a16, 0, 1, 2, 3, 4, 5, 6, 7),
                                         __builtin_shufflevector(b16, b16, 0, 1, 2, 3, 4, 5, 6, 7));
    const kg_v8si hi = kg_dot4_v<SA, SB, FORM>(__builtin_shufflevector(a16, a16, 8, 9, 10, 11, 12, 13, 14, 15),
                                         __builtin_shufflevector(b16, b16, 8, 9, 10, 11, 12, 13, 14, 15));
    return (C)((kg_v16si)c + __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  }
#endif
  C r = c;
#pragma clang loop unroll(full)
  for (int j = 0; j < 32; j += 8) {
    C x, y;
    if constexpr (sizeof(C) == 4) {  // scalars: byte casts (what the work-item loop vectorises)
      x = SA ? (C)(i8)(u8)((u32)a >> j) : (C)(u8)((u32)a >> j);
      y = SB ? (C)(i8)(u8)((u32)b >> j) : (C)(u8)((u32)b >> j);
    } else {
      if constexpr (SA) x = (C)(a << (24 - j)) >> 24; else x = (C)((a >> j) & 255);
      if constexpr (SB) y = (C)(b << (24 - j)) >> 24; else y = (C)((b >> j) & 255);
    }
    r += x * y;
  }
  return r;
}
// dot4_pair (CppDialect::dot4_pair): dot4(a, b, dot4(a2, b2, c)), the
// unsigned operands' bytes below 64. Without VNNI the two vpmaddubsw pair
// sums add in 16 bits before one vpmaddwd: three multiplies instead of four.
template <bool SA, bool SB, class A, class B, class C> KG_MATH C kg_dot4_pair(A a, B b, A a2, B b2, C c) {
#if defined(__AVX2__) && !(defined(__AVX512VNNI__) && defined(__AVX512VL__))
  if constexpr (SA != SB && sizeof(C) == 32 && sizeof(A) == 32) {
    const kg_v32qi u = (kg_v32qi)(SA ? (kg_v8si)b : (kg_v8si)a), s = (kg_v32qi)(SA ? (kg_v8si)a : (kg_v8si)b);
    const kg_v32qi u2 = (kg_v32qi)(SA ? (kg_v8si)b2 : (kg_v8si)a2), s2 = (kg_v32qi)(SA ? (kg_v8si)a2 : (kg_v8si)b2);
    const kg_v16hi p = __builtin_ia32_pmaddubsw256(u, s) + __builtin_ia32_pmaddubsw256(u2, s2);
    return (C)((kg_v8si)c + __builtin_ia32_pmaddwd256(p, (kg_v16hi)((kg_v16hi){} + 1)));
  }
  if constexpr (SA != SB && sizeof(C) == 16 && sizeof(A) == 16) {
    if constexpr (__builtin_vectorelements(C) == 4) {  // (3 lanes are padded to 16 bytes too)
      const kg_v16qi u = (kg_v16qi)(SA ? (kg_v4si)b : (kg_v4si)a), s = (kg_v16qi)(SA ? (kg_v4si)a : (kg_v4si)b);
      const kg_v16qi u2 = (kg_v16qi)(SA ? (kg_v4si)b2 : (kg_v4si)a2), s2 = (kg_v16qi)(SA ? (kg_v4si)a2 : (kg_v4si)b2);
      const kg_v8hi p = __builtin_ia32_pmaddubsw128(u, s) + __builtin_ia32_pmaddubsw128(u2, s2);
      return (C)((kg_v4si)c + __builtin_ia32_pmaddwd128(p, (kg_v8hi)((kg_v8hi){} + 1)));
    }
  }
#endif
  return kg_dot4<SA, SB, 1>(a, b, kg_dot4<SA, SB, 1>(a2, b2, c));
}
)"},
    {"dot2_bf16", "kg_dot2_bf16(", "", R"(// dot2_bf16 (ir/ops.h): c + a.1·b.1 + a.0·b.0 over each 32-bit lane's two
// bf16. Where the host has AVX512-BF16 (KG_HOST_DPBF16, set by the JIT) a line
// of 16 lanes (8, 4 with VL) is one vdpbf16ps, which adds the products in that
// order, rounding each sum. It is inline asm because the JIT leaves the
// feature off (its conversions flush subnormals). Register operands only: a
// "vm" operand makes clang store every B line to the stack to pass it as
// memory (1024³ bf16 ran 1.6x slower). Elsewhere a half becomes an f32 by a
// shift or a mask, and two fmas round only the sums (a product of two bf16
// is exact in f32).
template <class U, class C> KG_MATH C kg_dot2_bf16(U a, U b, C c) {
  if constexpr (sizeof(C) == 4)
    return __builtin_fmaf(__builtin_bit_cast(f32, a << 16), __builtin_bit_cast(f32, b << 16),
                          __builtin_fmaf(__builtin_bit_cast(f32, a & 0xffff0000u), __builtin_bit_cast(f32, b & 0xffff0000u), c));
  else {
#if defined(KG_HOST_DPBF16)
#if defined(__AVX512VL__)
    constexpr bool width = sizeof(C) == 64 || sizeof(C) == 32 || sizeof(C) == 16;
#else
    constexpr bool width = sizeof(C) == 64;
#endif
    if constexpr (width && __builtin_vectorelements(C) * 4 == sizeof(C)) {  // not 3 lanes padded to 4
      __asm__("vdpbf16ps %2, %1, %0" : "+v"(c) : "v"(a), "v"(b));
      return c;
    }
#endif
    return __builtin_elementwise_fma(
        __builtin_bit_cast(C, a << 16), __builtin_bit_cast(C, b << 16),
        __builtin_elementwise_fma(__builtin_bit_cast(C, a & 0xffff0000u), __builtin_bit_cast(C, b & 0xffff0000u), c));
  }
}
)"},
    {"f32_to_bf16", "kg_f32_to_bf16(", "", R"(// f32 lines cast to bf16 (nearest even, a NaN quieted: ir::f32_to_bf16).
// Where the host has AVX512-BF16 (KG_HOST_DPBF16) a line of 16 is one
// vcvtneps2bf16, inline asm because the JIT leaves the feature off: it reads
// subnormal inputs as zero, so a line holding one takes the integer path.
// That path (elsewhere, other widths) is lane arithmetic: clang's own
// conversion calls a libgcc routine per element.
template <class V> KG_MATH auto kg_f32_to_bf16(V x) {
  constexpr int N = __builtin_vectorelements(V);
  typedef u32 U __attribute__((ext_vector_type(N)));
  typedef u16 H __attribute__((ext_vector_type(N)));
  typedef bf16 B __attribute__((ext_vector_type(N)));
  const U b = __builtin_bit_cast(U, x);
#if defined(KG_HOST_DPBF16) && defined(__AVX512F__)
  if constexpr (N == 16) {
#if defined(__AVX512DQ__)
    typedef float kg_v16sf __attribute__((__vector_size__(64)));
    const bool subnormal = __builtin_ia32_fpclassps512_mask(__builtin_bit_cast(kg_v16sf, x), 0x20, (unsigned short)0xffff) != 0;
#else
    const bool subnormal = __builtin_reduce_or((b & 0x7fffffffu) - 1u < 0x007fffffu);
#endif
    if (!subnormal) {
      H r;
      __asm__("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(x));
      return __builtin_bit_cast(B, r);
    }
  }
#endif
  const U r = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16, q = (b >> 16) | 0x40u;
  return __builtin_bit_cast(B, __builtin_convertvector(((b & 0x7fffffffu) > 0x7f800000u) ? q : r, H));
}
)"},
    {"tile_mma_bf16", "kg_tile_mma_bf16(", "dot2_bf16", R"(// tile_mma_bf16 (ir/ops.h): a block of up to 32×32 f32 of C, += the
// product of up to 32 rows of bf16 A and kp rows of B's bf16 pair words, as
// x86 AMX tiles: 2×2 accumulators of 16×16, two A tiles (16 rows × 32 bf16)
// and two B tiles (16 pair rows × 16 columns) per 32 k, all 8 tile
// registers.
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
struct alignas(64) kg_tilecfg { u8 palette, start_row, pad[14]; u16 colsb[16]; u8 rows[16]; };
// Tiles 0-3: C (rows m0, m1 × column bytes n0, n1); 4, 5: A (16 rows ×
// 4·pairs bytes); 6, 7: B (pairs rows × n0, n1 bytes). Explicit tile numbers
// and our own configuration: LLVM's automatic configuration (the _internal
// builtins) failed on run-time shapes ("please define the shape earlier").
// The K tail (other A and B shapes) is a second call that reloads C.
// Loading a configuration costs ~50 ns and drains the tile pipeline, so a
// call loads it only where the thread's current one differs (reading it back
// costs ~5 ns), and the tiles stay configured until the kernel's end
// (kg_tile_release, emitted after the workgroup loop): the 32 × 32 blocks of
// a bf16 2048³ at 1 thread 879 -> 1051 GFLOP/s in a model of the walk. Other
// tile users on the thread (oneDNN) load their own configuration and the
// check sees it.
static inline void kg_tile_configure(const kg_tilecfg& want) {
  kg_tilecfg now;
  __builtin_ia32_tile_storeconfig(&now);
  const u64 *x = (const u64*)&now, *y = (const u64*)&want;
  u64 diff = 0;
  for (int i = 0; i < 8; ++i) diff |= x[i] ^ y[i];
  if (diff) __builtin_ia32_tile_loadconfig(&want);
}
static inline void kg_tile_release() { __builtin_ia32_tilerelease(); }
template <int R, int C, bool ACC>
static __attribute__((noinline)) void kg_tile_steps(char* c, const char* a, const char* b, u32 m0, u32 m1, u32 n0, u32 n1,
                                                    u32 steps, u32 pairs, long sc, long sa, long sb) {
  kg_tilecfg cfg = {};
  cfg.palette = 1;
  const u32 ka = 4 * pairs;
  cfg.rows[0] = (u8)m0, cfg.colsb[0] = (u16)n0, cfg.rows[4] = (u8)m0, cfg.colsb[4] = (u16)ka;
  cfg.rows[6] = (u8)pairs, cfg.colsb[6] = (u16)n0;
  if (C == 2) cfg.rows[1] = (u8)m0, cfg.colsb[1] = (u16)n1, cfg.rows[7] = (u8)pairs, cfg.colsb[7] = (u16)n1;
  if (R == 2) cfg.rows[2] = (u8)m1, cfg.colsb[2] = (u16)n0, cfg.rows[5] = (u8)m1, cfg.colsb[5] = (u16)ka;
  if (R == 2 && C == 2) cfg.rows[3] = (u8)m1, cfg.colsb[3] = (u16)n1;
  kg_tile_configure(cfg);
  if constexpr (ACC) {
    __builtin_ia32_tileloadd64(0, c, sc);
    if constexpr (C == 2) __builtin_ia32_tileloadd64(1, c + 64, sc);
    if constexpr (R == 2) __builtin_ia32_tileloadd64(2, c + 16 * sc, sc);
    if constexpr (R == 2 && C == 2) __builtin_ia32_tileloadd64(3, c + 16 * sc + 64, sc);
  } else {
    __builtin_ia32_tilezero(0);
    if constexpr (C == 2) __builtin_ia32_tilezero(1);
    if constexpr (R == 2) __builtin_ia32_tilezero(2);
    if constexpr (R == 2 && C == 2) __builtin_ia32_tilezero(3);
  }
  for (u32 s = 0; s < steps; ++s, a += ka, b += pairs * sb) {
    __builtin_ia32_tileloadd64(4, a, sa);
    __builtin_ia32_tileloadd64(6, b, sb);
    __builtin_ia32_tdpbf16ps(0, 4, 6);
    if constexpr (C == 2) {
      __builtin_ia32_tileloadd64(7, b + 64, sb);
      __builtin_ia32_tdpbf16ps(1, 4, 7);
    }
    if constexpr (R == 2) {
      __builtin_ia32_tileloadd64(5, a + 16 * sa, sa);
      __builtin_ia32_tdpbf16ps(2, 5, 6);
      if constexpr (C == 2) __builtin_ia32_tdpbf16ps(3, 5, 7);
    }
  }
  __builtin_ia32_tilestored64(0, c, sc);
  if constexpr (C == 2) __builtin_ia32_tilestored64(1, c + 64, sc);
  if constexpr (R == 2) __builtin_ia32_tilestored64(2, c + 16 * sc, sc);
  if constexpr (R == 2 && C == 2) __builtin_ia32_tilestored64(3, c + 16 * sc + 64, sc);
}
template <int R, int C>
KG_MATH void kg_tile_block(char* c, const char* a, const char* b, u32 m0, u32 m1, u32 n0, u32 n1, u32 kp, long sc, long sa,
                           long sb, int acc) {
  auto run = [&](bool add, const char* ak, const char* bk, u32 steps, u32 pairs) {
    if (add) kg_tile_steps<R, C, true>(c, ak, bk, m0, m1, n0, n1, steps, pairs, sc, sa, sb);
    else kg_tile_steps<R, C, false>(c, ak, bk, m0, m1, n0, n1, steps, pairs, sc, sa, sb);
  };
  const u32 steps = kp / 16, tail = kp % 16;
  const long p = 16l * steps;
  if (steps) run(acc, a, b, steps, 16);
  if (tail) run(acc || steps, a + 4 * p, b + p * sb, 1, tail);  // onto the full steps' sums
}
#else
static inline void kg_tile_release() {}
#endif
static inline void kg_tile_mma_bf16(f32* c, const u16* a, const u32* b, u32 m, u32 n, u32 kp, u32 ldc, u32 lda, u32 ldb,
                                    int acc) {
#if defined(__AMX_BF16__) && defined(__AMX_TILE__)
  const u32 m0 = m < 16 ? m : 16, m1 = m - m0, n0 = 4 * (n < 16 ? n : 16), n1 = 4 * n - n0;
  char* cb = (char*)c;
  const char *ab = (const char*)a, *bb = (const char*)b;
  const long sc = 4l * ldc, sa = 2l * lda, sb = 4l * ldb;
  if (m1 && n1) kg_tile_block<2, 2>(cb, ab, bb, m0, m1, n0, n1, kp, sc, sa, sb, acc);
  else if (m1) kg_tile_block<2, 1>(cb, ab, bb, m0, m1, n0, n1, kp, sc, sa, sb, acc);
  else if (n1) kg_tile_block<1, 2>(cb, ab, bb, m0, m1, n0, n1, kp, sc, sa, sb, acc);
  else kg_tile_block<1, 1>(cb, ab, bb, m0, m1, n0, n1, kp, sc, sa, sb, acc);
#else
  // No tile unit: the same sums, pair by pair (what the interpreter does).
  for (u32 i = 0; i < m; ++i)
    for (u32 j = 0; j < n; ++j) {
      f32 s = acc ? c[(u64)i * ldc + j] : 0.0f;
      for (u32 p = 0; p < kp; ++p)
        s = kg_dot2_bf16((u32)a[(u64)i * lda + 2 * p] | ((u32)a[(u64)i * lda + 2 * p + 1] << 16), b[(u64)p * ldb + j], s);
      c[(u64)i * ldc + j] = s;
    }
#endif
}
)"},
    {"dot2_i16", "kg_dot2_i16(", "", R"(// dot2_i16 (ir/ops.h): c + a.0·b.0 + a.1·b.1 over each 32-bit lane's two
// signed 16-bit halves, wrapping. AVX512-VNNI: one vpdpwssd per line (16
// lanes; 8, 4 with VL); else vpmaddwd (exact products and pair sum, which
// wraps only at 2·(-2^15)², as the sum does; two per 16-lane line on AVX2)
// and an add; else lane
// arithmetic (the JIT's -fwrapv makes the sums wrap).
typedef short kg_w8 __attribute__((__vector_size__(16)));
typedef short kg_w16 __attribute__((__vector_size__(32)));
typedef short kg_w32 __attribute__((__vector_size__(64)));
typedef int kg_d4 __attribute__((__vector_size__(16)));
typedef int kg_d8 __attribute__((__vector_size__(32)));
typedef int kg_d16 __attribute__((__vector_size__(64)));
template <class A, class C> KG_MATH C kg_dot2_i16(A a, A b, C c) {
  if constexpr (sizeof(C) == 4) {
    return (C)((u32)c + (u32)((i32)(i16)a * (i32)(i16)b) + (u32)((i32)(i16)((u32)a >> 16) * (i32)(i16)((u32)b >> 16)));
  } else {
    constexpr bool four = sizeof(C) == 16 && __builtin_vectorelements(C) == 4;  // not 3 lanes padded to 4
    (void)four;
#if defined(__AVX512VNNI__)
    if constexpr (sizeof(C) == 64) return (C)__builtin_ia32_vpdpwssd512((kg_d16)c, (kg_d16)a, (kg_d16)b);
#if defined(__AVX512VL__)
    if constexpr (sizeof(C) == 32) return (C)__builtin_ia32_vpdpwssd256((kg_d8)c, (kg_d8)a, (kg_d8)b);
    if constexpr (four) return (C)__builtin_ia32_vpdpwssd128((kg_d4)c, (kg_d4)a, (kg_d4)b);
#endif
#endif
#if defined(__AVX512BW__)
    if constexpr (sizeof(C) == 64) return (C)((kg_d16)c + __builtin_ia32_pmaddwd512((kg_w32)a, (kg_w32)b));
#endif
#if defined(__AVX2__)
    if constexpr (sizeof(C) == 64) {  // a 16-lane line on AVX2: two vpmaddwd on its halves
      const kg_w32 aw = (kg_w32)a, bw = (kg_w32)b;
      const kg_d8 lo = __builtin_ia32_pmaddwd256(__builtin_shufflevector(aw, aw, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 __builtin_shufflevector(bw, bw, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
      const kg_d8 hi = __builtin_ia32_pmaddwd256(__builtin_shufflevector(aw, aw, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31),
                                                 __builtin_shufflevector(bw, bw, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31));
      return (C)((kg_d16)c + __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    }
    if constexpr (sizeof(C) == 32) return (C)((kg_d8)c + __builtin_ia32_pmaddwd256((kg_w16)a, (kg_w16)b));
    if constexpr (four) return (C)((kg_d4)c + __builtin_ia32_pmaddwd128((kg_w8)a, (kg_w8)b));
#endif
    return c + ((a << 16) >> 16) * ((b << 16) >> 16) + (a >> 16) * (b >> 16);
  }
}
)"},
    {"in_reg", "kg_in_reg(", "u8_lines", R"(KG_MATH kg_u8v64 kg_in_reg(kg_u8v64 x) {
#if defined(__AVX512BW__)
  __asm__("" : "+v"(x));
#endif
  return x;
}
)"},
    // permute_bytes with an index computed at run time (a constant one is a
    // __builtin_shufflevector, see CppDialect::permute_bytes).
    {"permute_bytes", "kg_permute_bytes(", "", R"(template <class T, class R> KG_MATH R kg_permute_bytes(T a, T b, R idx) {
#if defined(__AVX512VBMI__)
  if constexpr (sizeof(T) == 64 && sizeof(R) == 64)
    return (R)__builtin_ia32_vpermi2varqi512((__attribute__((__vector_size__(64))) char)a,
                                             (__attribute__((__vector_size__(64))) char)idx,
                                             (__attribute__((__vector_size__(64))) char)b);
#endif
  u8 t[2 * sizeof(T)], ix[sizeof(R)], r[sizeof(R)];
  __builtin_memcpy(t, &a, sizeof(T));
  __builtin_memcpy(t + sizeof(T), &b, sizeof(T));
  __builtin_memcpy(ix, &idx, sizeof(R));
  for (unsigned i = 0; i < sizeof(R); ++i) r[i] = t[ix[i] & (2 * sizeof(T) - 1)];
  R out;
  __builtin_memcpy(&out, r, sizeof(R));
  return out;
}
)"},
};

}  // namespace

std::string CppDialect::prelude() const {
  // Deliberately no #include: a bare kernel compiles in ~15 ms, <cmath> alone
  // costs ~250 ms. Math is __builtin_* (LLVM intrinsics with -fno-math-errno).
  return R"(// ---- kgen C++ prelude (no standard headers) ----
typedef __INT8_TYPE__ i8; typedef __INT16_TYPE__ i16; typedef __INT32_TYPE__ i32; typedef __INT64_TYPE__ i64;
typedef __UINT8_TYPE__ u8; typedef __UINT16_TYPE__ u16; typedef __UINT32_TYPE__ u32; typedef __UINT64_TYPE__ u64;
typedef _Float16 f16; typedef __bf16 bf16; typedef float f32; typedef double f64;
struct KgenArgs { void* const* buffers; const unsigned long long* scalars; unsigned grid[3]; unsigned wg[3]; };
template <class T> static inline T kg_slot(const unsigned long long* s, int i) { T v; __builtin_memcpy(&v, s + i, sizeof(T)); return v; }
// The f32 math helpers are forced inline: a call (kg_tanhf, kg_erff are past
// the inliner's budget) would keep kg_map1's lane loop from vectorising.
#define KG_MATH static inline __attribute__((always_inline))
// ---- end of prelude ----
)";
}

namespace {

// Whether `body` names a line type (f32x16, boolx4...): the chunk of line
// typedefs has no call token of its own.
bool names_line_type(std::string_view body) {
  static constexpr std::string_view kScalars[] = {"bool", "i8", "i16", "i32", "i64", "u8",  "u16",
                                                  "u32",  "u64", "f16", "bf16", "f32", "f64"};
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::string_view t : kScalars)
    for (size_t at = body.find(t); at != std::string_view::npos; at = body.find(t, at + 1)) {
      const size_t x = at + t.size();
      if ((at == 0 || !ident(body[at - 1])) && x + 1 < body.size() && body[x] == 'x' &&
          std::isdigit(static_cast<unsigned char>(body[x + 1])))
        return true;
    }
  return false;
}

}  // namespace

std::string CppDialect::with_helpers(std::string src) const {
  static constexpr std::string_view kEnd = "// ---- end of prelude ----";
  size_t at = src.find(kEnd);
  if (at == std::string::npos) return src;
  std::string_view body = std::string_view(src).substr(at);
  constexpr size_t n = std::size(kHelpers);
  bool need[n] = {};
  for (size_t i = 0; i < n; ++i) {
    std::string_view calls = kHelpers[i].calls;
    need[i] = std::string_view(kHelpers[i].key) == "lines" && names_line_type(body);
    while (!calls.empty() && !need[i]) {
      size_t sp = calls.find(' ');
      need[i] = body.find(calls.substr(0, sp)) != std::string_view::npos;
      calls = sp == std::string_view::npos ? std::string_view() : calls.substr(sp + 1);
    }
  }
  for (size_t i = n; i-- > 0;)  // a chunk only builds on earlier ones
    if (need[i])
      for (size_t j = 0; j < i; ++j)
        if (std::string_view(kHelpers[j].key) == kHelpers[i].needs) need[j] = true;
  std::string helpers;
  for (size_t i = 0; i < n; ++i)
    if (need[i]) helpers += kHelpers[i].code;
  src.insert(at, helpers);
  return src;
}

}  // namespace kgen::codegen
