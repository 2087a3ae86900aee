#include "ir/typing.h"

#include <cmath>
#include <limits>

namespace kgen::ir {

namespace {

[[noreturn]] void fail(const Instr& in, const std::string& msg) {
  throw Error(in.loc, std::string(op_name(in.op)) + ": " + msg);
}


std::string_view domain_text(Domain d) {
  switch (d) {
    case Domain::Any: return "a value type";
    case Domain::Numeric: return "an integer or float type";
    case Domain::Float: return "a float type";
    case Domain::Int: return "an integer type";
    case Domain::Bits: return "an integer or bool type";
  }
  return "?";
}

}  // namespace

bool domain_accepts(Domain d, Type t) {
  switch (d) {
    case Domain::Any: return !t.is_pointer() && !t.is_void();
    case Domain::Numeric: return t.is_numeric();
    case Domain::Float: return t.is_float();
    case Domain::Int: return t.is_int();
    case Domain::Bits: return t.is_int() || t.is_bool();
  }
  return false;
}

bool imm_fits(Type t, const Imm& v) {
  using L = std::numeric_limits<int64_t>;
  (void)L::max();
  switch (t.kind) {
    case ScalarKind::Bool: return v.i == 0 || v.i == 1;
    case ScalarKind::I8: return v.i >= -128 && v.i <= 127;
    case ScalarKind::I16: return v.i >= -32768 && v.i <= 32767;
    case ScalarKind::I32: return v.i >= INT32_MIN && v.i <= INT32_MAX;
    case ScalarKind::I64: return true;
    case ScalarKind::U8: return v.i >= 0 && v.i <= 255;
    case ScalarKind::U16: return v.i >= 0 && v.i <= 65535;
    case ScalarKind::U32: return v.i >= 0 && v.i <= int64_t(UINT32_MAX);
    case ScalarKind::U64: return true;  // bit pattern
    case ScalarKind::F16: return std::isnan(v.f) || std::isinf(v.f) || std::fabs(v.f) <= 65504.0;
    case ScalarKind::BF16:
    case ScalarKind::F32: return std::isnan(v.f) || std::isinf(v.f) || std::fabs(v.f) <= 3.4028234663852886e38;
    case ScalarKind::F64: return true;
    case ScalarKind::Void: return false;
  }
  return false;
}

namespace {

// The operands of one instruction and the checks its type rule is made of;
// each check throws an Error at the instruction's source location.
struct Operands {
  const Instr& in;
  const Kernel& k;
  const OpInfo& info;
  std::vector<ValueInfo> a;

  Operands(const Instr& in_, const Kernel& k_, const ValueLookup& lookup) : in(in_), k(k_), info(op_info(in_.op)) {
    a.reserve(in.args.size());
    for (size_t i = 0; i < in.args.size(); ++i) {
      ValueInfo vi = lookup(in.args[i]);
      if (!vi.valid) fail(in, "operand " + std::to_string(i) + " (%" + std::to_string(in.args[i]) + ") is not defined here");
      a.push_back(vi);
    }
  }
  void need_args(size_t n) const {
    if (a.size() != n)
      fail(in, "expects " + std::to_string(n) + " operands, got " + std::to_string(a.size()));
  }
  void need_value(size_t i) const {
    if (a[i].type.is_pointer() || a[i].type.is_void())
      fail(in, "operand " + std::to_string(i) + " must be a value, got " + a[i].type.str());
  }
  void need_same(size_t i, size_t j) const {
    if (a[i].type != a[j].type)
      fail(in, "operand types differ: " + a[i].type.str() + " vs " + a[j].type.str() +
                   " (convert one side with cast)");
  }
  void need_domain(size_t i) const {
    if (!domain_accepts(info.domain, a[i].type))
      fail(in, "needs " + std::string(domain_text(info.domain)) + ", got " + a[i].type.str());
  }
  void need_index(size_t i) const {
    if (!a[i].type.is_int() || a[i].type.is_vector())
      fail(in, "index must be a scalar integer, got " + a[i].type.str());
  }
  void need_pointer(size_t i) const {
    if (!a[i].type.is_pointer()) fail(in, "operand " + std::to_string(i) + " must be a buffer or shared array, got " + a[i].type.str());
  }
  std::string buffer_name(const ValueInfo& p) const {
    if (p.op == Op::Buffer && p.attr >= 0 && size_t(p.attr) < k.buffers.size()) return "buffer '" + k.buffers[p.attr].name + "'";
    return "shared array";
  }
  void need_writable(size_t i) const {
    const ValueInfo& p = a[i];
    if (p.op == Op::Buffer && size_t(p.attr) < k.buffers.size() && k.buffers[p.attr].access == Access::Read)
      fail(in, "write to read-only " + buffer_name(p) + " (declare it Write or ReadWrite)");
  }
  void need_readable(size_t i) const {
    const ValueInfo& p = a[i];
    if (p.op == Op::Buffer && size_t(p.attr) < k.buffers.size() && k.buffers[p.attr].access == Access::Write)
      fail(in, "read from write-only " + buffer_name(p) + " (declare it Read or ReadWrite)");
  }
  void need_axis() const {
    if (in.attr < 0 || in.attr > 2) fail(in, "axis must be 0, 1 or 2, got " + std::to_string(in.attr));
  }
};

// Constants, parameters, buffers and shared arrays: the type they declare.
Type leaf_type(const Operands& o) {
  const Instr& in = o.in;
  const Kernel& k = o.k;
  o.need_args(0);
  switch (in.op) {
    case Op::Const:
      if (in.type.is_pointer() || in.type.is_void()) fail(in, "constant must have a value type");
      if (!imm_fits(in.type.scalar(), in.imm)) fail(in, "literal does not fit in " + in.type.str());
      return in.type;
    case Op::Param:
      if (in.attr < 0 || size_t(in.attr) >= k.scalars.size()) fail(in, "no scalar parameter #" + std::to_string(in.attr));
      return k.scalars[in.attr].type;
    case Op::Buffer:
      if (in.attr < 0 || size_t(in.attr) >= k.buffers.size()) fail(in, "no buffer parameter #" + std::to_string(in.attr));
      return k.buffers[in.attr].elem.pointer_to(AddrSpace::Global);
    case Op::SharedAlloc:
      if (in.type.space != AddrSpace::Shared) fail(in, "type must be ptr<shared, T>, got " + in.type.str());
      if (in.attr <= 0) fail(in, "element count must be positive");
      return in.type;
    default: break;
  }
  fail(in, "unhandled op");
}

// Packed dot products: byte quads, i16 pairs and bf16 pairs into an accumulator.
Type dot_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  o.need_args(3);
  for (size_t i = 0; i < 3; ++i) o.need_value(i);
  if (in.op == Op::Dot2I16) {
    if (a[0].type.scalar() != types::I32 || a[1].type != a[0].type || a[2].type != a[0].type)
      fail(in, "needs i32 operands (two i16 each) and an i32 accumulator of one width, got " + a[0].type.str() + ", " +
                   a[1].type.str() + ", " + a[2].type.str());
    return a[2].type;
  }
  if (in.op == Op::Dot2Bf16) {
    if (a[0].type.scalar() != types::U32 || a[1].type != a[0].type || a[2].type != Type(ScalarKind::F32, a[0].type.lanes))
      fail(in, "needs two u32 operands (two bf16 each) and an f32 accumulator of one width, got " + a[0].type.str() +
                   ", " + a[1].type.str() + ", " + a[2].type.str());
    return a[2].type;
  }
  for (size_t i = 0; i < 2; ++i)
    if (a[i].type.scalar() != types::I32 && a[i].type.scalar() != types::U32)
      fail(in, "operand " + std::to_string(i) + " must be i32 or u32 (4 packed bytes; i32: signed), got " + a[i].type.str());
  if (a[0].type.lanes != a[1].type.lanes || a[2].type != Type(ScalarKind::I32, a[0].type.lanes))
    fail(in, "needs two packed operands and an i32 accumulator of one width, got " + a[0].type.str() + ", " +
                 a[1].type.str() + ", " + a[2].type.str());
  return a[2].type;
}

// A byte permute over a one- or two-register table.
Type permute_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  o.need_args(3);
  for (size_t i = 0; i < 3; ++i) o.need_value(i);
  o.need_same(0, 1);
  const int tb = a[0].type.bytes();
  if (a[0].type.is_bool() || tb < 4 || tb > 64 || (tb & (tb - 1)) != 0)
    fail(in, "tables must be 4, 8, 16, 32 or 64 bytes of a non-bool type, got " + a[0].type.str());
  if (!a[2].type.is_int())
    fail(in, "the index must be an integer line or scalar (one byte index per result byte), got " + a[2].type.str());
  return a[2].type;
}

// Casts (lane count kept) and bitcasts (size kept).
Type convert_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  o.need_args(1);
  o.need_value(0);
  if (in.type.is_pointer() || in.type.is_void()) fail(in, "target must be a value type");
  if (in.op == Op::Cast) {
    if (in.type.lanes != a[0].type.lanes)
      fail(in, "cannot change lane count (" + a[0].type.str() + " to " + in.type.str() + ")");
  } else {
    if (in.type.bytes() != a[0].type.bytes() || in.type.is_bool() || a[0].type.is_bool())
      fail(in, "bitcast needs equal sizes and no bool (" + a[0].type.str() + " to " + in.type.str() + ")");
  }
  return in.type;
}

// Lines: splat, construct, extract, insert.
Type vector_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  switch (in.op) {
    case Op::Splat:
      o.need_args(1);
      o.need_value(0);
      if (a[0].type.is_vector()) fail(in, "operand must be a scalar");
      if (in.type != a[0].type.with_lanes(in.type.lanes) || !in.type.is_vector() || !valid_lanes(in.type.lanes))
        fail(in, "result must be a line of " + a[0].type.str() + ", got " + in.type.str());
      return in.type;
    case Op::Construct: {
      if (!valid_lanes(int(a.size())) || a.size() < 2) fail(in, "needs 2, 3, 4, 8 or 16 scalars, got " + std::to_string(a.size()));
      for (size_t i = 0; i < a.size(); ++i) {
        o.need_value(i);
        if (a[i].type.is_vector()) fail(in, "operands must be scalars");
        o.need_same(0, i);
      }
      return a[0].type.with_lanes(int(a.size()));
    }
    case Op::Extract:
      o.need_args(1);
      if (!a[0].type.is_vector() || a[0].type.is_pointer()) fail(in, "operand must be a line, got " + a[0].type.str());
      if (in.attr < 0 || in.attr >= a[0].type.lanes) fail(in, "lane " + std::to_string(in.attr) + " out of range for " + a[0].type.str());
      return a[0].type.scalar();
    case Op::Insert:
      o.need_args(2);
      if (!a[0].type.is_vector() || a[0].type.is_pointer()) fail(in, "operand must be a line, got " + a[0].type.str());
      if (a[1].type != a[0].type.scalar()) fail(in, "inserted value must be " + a[0].type.scalar().str() + ", got " + a[1].type.str());
      if (in.attr < 0 || in.attr >= a[0].type.lanes) fail(in, "lane " + std::to_string(in.attr) + " out of range for " + a[0].type.str());
      return a[0].type;
    default: break;
  }
  fail(in, "unhandled op");
}

// Loads, prefetches and stores through a pointer and an index.
Type memory_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  if (in.op == Op::Load) {
    o.need_args(2);
    o.need_pointer(0);
    o.need_index(1);
    o.need_readable(0);
    return a[0].type.element();
  }
  if (in.op == Op::Prefetch) {
    o.need_args(2);
    o.need_pointer(0);
    o.need_index(1);
    if (in.attr != kPrefetchL1 && in.attr != kPrefetchL2 && in.attr != kPrefetchWrite)
      fail(in, "unknown prefetch hint " + std::to_string(in.attr) + " (0: every level, 1: l2, 2: w)");
    return types::Void;
  }
  o.need_args(3);
  o.need_pointer(0);
  o.need_index(1);
  o.need_writable(0);
  if (in.attr != kStorePlain && in.attr != kStoreNonTemporal)
    fail(in, "unknown store hint " + std::to_string(in.attr) + " (0: plain, 1: nontemporal)");
  if (in.attr == kStoreNonTemporal && a[0].type.space != AddrSpace::Global)
    fail(in, "a nontemporal store needs a global buffer (shared memory is on-chip)");
  if (a[2].type != a[0].type.element())
    fail(in, "stored value is " + a[2].type.str() + " but " + o.buffer_name(a[0]) + " holds " + a[0].type.element().str());
  return types::Void;
}

// Atomic read-modify-writes on scalar elements of 32 or 64 bits.
Type atomic_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  const OpInfo& info = o.info;
  o.need_args(in.op == Op::AtomicCas ? 4 : 3);
  o.need_pointer(0);
  o.need_index(1);
  o.need_writable(0);
  Type e = a[0].type.element();
  if (e.is_vector()) fail(in, "atomics need scalar elements, got " + e.str());
  if (!domain_accepts(info.domain, e)) fail(in, "needs " + std::string(domain_text(info.domain)) + " elements, got " + e.str());
  if (e.bits() < 32) fail(in, "atomics need 32- or 64-bit elements, got " + e.str());
  for (size_t i = 2; i < a.size(); ++i)
    if (a[i].type != e) fail(in, "operand is " + a[i].type.str() + " but the array holds " + e.str());
  return e;
}

// tile_mma_bf16: (c, ci, a, ai, b, bi, m, n, kp, ldc, lda, ldb), see ir/ops.h.
Type tile_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  // (c, ci, a, ai, b, bi, m, n, kp, ldc, lda, ldb): see ir/ops.h.
  o.need_args(12);
  for (size_t i : {0, 2, 4}) o.need_pointer(i);
  o.need_writable(0);
  if (in.attr) o.need_readable(0);
  o.need_readable(2);
  o.need_readable(4);
  auto elem_is = [&](size_t i, std::initializer_list<ScalarKind> kinds, const char* what) {
    const Type e = a[i].type.element();
    bool ok = false;
    for (ScalarKind kd : kinds) ok = ok || e == Type(kd);
    if (!ok) fail(in, std::string(what) + " must hold " + (kinds.size() > 1 ? "bf16 (or u16 bits)" : Type(*kinds.begin()).str()) + ", got " + e.str());
  };
  elem_is(0, {ScalarKind::F32}, "C");
  elem_is(2, {ScalarKind::BF16, ScalarKind::U16}, "A");
  elem_is(4, {ScalarKind::U32}, "B (bf16 pair words)");
  for (size_t i : {1, 3, 5})
    if (a[i].type != Type(ScalarKind::U64)) fail(in, "operand " + std::to_string(i) + " (an index) must be u64, got " + a[i].type.str());
  for (size_t i = 6; i < 12; ++i)
    if (a[i].type != Type(ScalarKind::U32)) fail(in, "operand " + std::to_string(i) + " (a size or stride) must be u32, got " + a[i].type.str());
  if (in.attr != 0 && in.attr != 1) fail(in, "attr must be 0 (C overwritten) or 1 (accumulated), got " + std::to_string(in.attr));
  return types::Void;
}

// Per-work-item variables: declare, read, assign.
Type local_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  if (in.op == Op::Var) {
    o.need_args(1);
    o.need_value(0);
    return a[0].type;
  }
  if (a.empty() || a[0].op != Op::Var) fail(in, "first operand must be a variable");
  if (in.op == Op::VarLoad) {
    o.need_args(1);
    return a[0].type;
  }
  o.need_args(2);
  if (a[1].type != a[0].type) fail(in, "variable holds " + a[0].type.str() + ", assigned " + a[1].type.str());
  return types::Void;
}

// Structured control flow: for, if, loop and the statements without operands.
Type control_type(const Operands& o) {
  const Instr& in = o.in;
  const std::vector<ValueInfo>& a = o.a;
  switch (in.op) {
    case Op::For:
      o.need_args(3);
      for (size_t i = 0; i < 3; ++i) o.need_index(i);
      o.need_same(0, 1);
      o.need_same(0, 2);
      if (in.blocks.size() != 1) fail(in, "needs one body block");
      if (in.attr < 0) fail(in, "unroll factor must be >= 0");
      return a[0].type;
    case Op::If:
      o.need_args(1);
      if (a[0].type != types::Bool) fail(in, "condition must be bool, got " + a[0].type.str());
      if (in.blocks.size() != 2) fail(in, "needs then and else blocks");
      return types::Void;
    case Op::Loop:
      o.need_args(0);
      if (in.blocks.size() != 1) fail(in, "needs one body block");
      return types::Void;
    default:
      o.need_args(0);
      return types::Void;
  }
}

}  // namespace

Type infer_type(const Instr& in, const Kernel& k, const ValueLookup& lookup) {
  const Operands o(in, k, lookup);
  const std::vector<ValueInfo>& a = o.a;
  switch (o.info.cls) {
    case OpClass::Leaf:
      return leaf_type(o);
    case OpClass::Builtin:
      o.need_args(0);
      if (in.op != Op::SubgroupSize && in.op != Op::SubgroupLane) o.need_axis();
      return types::U32;
    case OpClass::Unary:
      o.need_args(1);
      o.need_value(0);
      o.need_domain(0);
      if (in.op == Op::Neg && a[0].type.is_int() && !a[0].type.is_signed())
        fail(in, "cannot negate unsigned " + a[0].type.str());
      return a[0].type;
    case OpClass::Binary:
      o.need_args(2);
      o.need_value(0);
      o.need_value(1);
      o.need_same(0, 1);
      o.need_domain(0);
      return a[0].type;
    case OpClass::Compare:
      o.need_args(2);
      o.need_value(0);
      o.need_same(0, 1);
      o.need_domain(0);
      return Type(ScalarKind::Bool, a[0].type.lanes);
    case OpClass::Select:
      o.need_args(3);
      o.need_value(1);
      o.need_same(1, 2);
      if (!a[0].type.is_bool() || (a[0].type.lanes != 1 && a[0].type.lanes != a[1].type.lanes))
        fail(in, "condition must be bool (or a bool line of the same width), got " + a[0].type.str());
      return a[1].type;
    case OpClass::Fma:
      o.need_args(3);
      o.need_value(0);
      o.need_same(0, 1);
      o.need_same(0, 2);
      o.need_domain(0);
      return a[0].type;
    case OpClass::Dot:
      return dot_type(o);
    case OpClass::Permute:
      return permute_type(o);
    case OpClass::Convert:
      return convert_type(o);
    case OpClass::Vector:
      return vector_type(o);
    case OpClass::Reduce:
      o.need_args(1);
      o.need_value(0);
      o.need_domain(0);
      if (!a[0].type.is_vector()) fail(in, "operand must be a line, got " + a[0].type.str());
      return a[0].type.scalar();
    case OpClass::Memory:
      return memory_type(o);
    case OpClass::Atomic:
      return atomic_type(o);
    case OpClass::Tile:
      return tile_type(o);
    case OpClass::Sync:
      o.need_args(0);
      return types::Void;
    case OpClass::Subgroup:
      o.need_args(2);
      o.need_value(0);
      if (a[1].type != types::U32) fail(in, "lane must be u32, got " + a[1].type.str());
      return a[0].type;
    case OpClass::SubgroupReduce:
      o.need_args(1);
      o.need_value(0);
      o.need_domain(0);
      return a[0].type;
    case OpClass::Local:
      return local_type(o);
    case OpClass::Control:
      return control_type(o);
  }
  fail(in, "unhandled op");
}

}  // namespace kgen::ir
