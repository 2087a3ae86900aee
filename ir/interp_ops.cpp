// Pure per-work-item operations: math, conversions, vector (line) shuffling,
// variables and builtins. Every math entry point is generated from the
// X-macro lists of ir/ops.h and calls the sem_<Op> function of
// ir/semantics.h, so the interpreter cannot drift from the spec.
#include <algorithm>

#include "ir/interp_internal.h"
#include "ir/semantics.h"

namespace kgen::ir::interp {

namespace {

// One functor per op, forwarding to sem_<Name>: lets an op be a template
// argument of the lane loops below.
namespace fn {
KGEN_UNARY_OPS(KGEN_INTERP_SEM_FUNCTOR)
KGEN_BINARY_OPS(KGEN_INTERP_SEM_FUNCTOR)
KGEN_COMPARE_OPS(KGEN_INTERP_SEM_FUNCTOR)
KGEN_REDUCE_OPS(KGEN_INTERP_SEM_FUNCTOR)
}  // namespace fn

// Lane loops. Operands and results are packed lanes in the frame.
template <class T, class F>
int32_t exec_unary(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i) st<T>(f + c.dst, i, F::apply(ld<T>(f + c.a[0], i)));
  return int32_t(c.next);
}
template <class T, class F>
int32_t exec_binary(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<T>(f + c.dst, i, F::apply(ld<T>(f + c.a[0], i), ld<T>(f + c.a[1], i)));
  return int32_t(c.next);
}
template <class T, class F>
int32_t exec_compare(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<bool>(f + c.dst, i, F::apply(ld<T>(f + c.a[0], i), ld<T>(f + c.a[1], i)));
  return int32_t(c.next);
}
template <class T, class F>
int32_t exec_reduce(const Code& c, Item& it, Machine&) {
  T v[kMaxLanes]{};
  for (uint32_t i = 0; i < c.lanes; ++i) v[i] = ld<T>(it.frame + c.a[0], i);
  st<T>(it.frame + c.dst, 0, F::apply(std::span<const T>(v, c.lanes)));
  return int32_t(c.next);
}
template <class T>
int32_t exec_select(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<T>(f + c.dst, i, sem_Select(ld<bool>(f + c.a[0], c.cond_splat ? 0 : i), ld<T>(f + c.a[1], i), ld<T>(f + c.a[2], i)));
  return int32_t(c.next);
}
template <class T>
int32_t exec_fma(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<T>(f + c.dst, i, sem_Fma(ld<T>(f + c.a[0], i), ld<T>(f + c.a[1], i), ld<T>(f + c.a[2], i)));
  return int32_t(c.next);
}
template <class A, class B>
int32_t exec_dot4(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<int32_t>(f + c.dst, i, sem_Dot4(ld<A>(f + c.a[0], i), ld<B>(f + c.a[1], i), ld<int32_t>(f + c.a[2], i)));
  return int32_t(c.next);
}
int32_t exec_dot2_bf16(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<float>(f + c.dst, i, sem_Dot2Bf16(ld<uint32_t>(f + c.a[0], i), ld<uint32_t>(f + c.a[1], i), ld<float>(f + c.a[2], i)));
  return int32_t(c.next);
}
int32_t exec_dot2_i16(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i)
    st<int32_t>(f + c.dst, i, sem_Dot2I16(ld<int32_t>(f + c.a[0], i), ld<int32_t>(f + c.a[1], i), ld<int32_t>(f + c.a[2], i)));
  return int32_t(c.next);
}
// The dot4 lane loop for the operands' signedness.
ExecFn select_dot4(ScalarKind a, ScalarKind b) {
  bool sa = a == ScalarKind::I32, sb = b == ScalarKind::I32;
  if (sa) return sb ? &exec_dot4<int32_t, int32_t> : &exec_dot4<int32_t, uint32_t>;
  return sb ? &exec_dot4<uint32_t, int32_t> : &exec_dot4<uint32_t, uint32_t>;
}
template <class To, class From>
int32_t exec_cast(const Code& c, Item& it, Machine&) {
  std::byte* f = it.frame;
  for (uint32_t i = 0; i < c.lanes; ++i) st<To>(f + c.dst, i, sem_cast<To>(ld<From>(f + c.a[0], i)));
  return int32_t(c.next);
}

// Byte movers: bitcast, variables, lines. c.bytes is the moved value's size.
int32_t exec_copy(const Code& c, Item& it, Machine&) {  // bitcast, var, var_load, var_store
  std::memmove(it.frame + c.dst, it.frame + c.a[0], c.bytes);
  return int32_t(c.next);
}
int32_t exec_splat(const Code& c, Item& it, Machine&) {
  for (uint32_t i = 0; i < c.lanes; ++i) std::memcpy(it.frame + c.dst + i * c.esize, it.frame + c.a[0], c.esize);
  return int32_t(c.next);
}
int32_t exec_construct(const Code& c, Item& it, Machine&) {
  for (uint32_t i = 0; i < c.lanes; ++i) std::memcpy(it.frame + c.dst + i * c.esize, it.frame + c.many[i], c.esize);
  return int32_t(c.next);
}
int32_t exec_extract(const Code& c, Item& it, Machine&) {
  std::memcpy(it.frame + c.dst, it.frame + c.a[0] + c.attr * c.esize, c.esize);
  return int32_t(c.next);
}
int32_t exec_insert(const Code& c, Item& it, Machine&) {
  std::memcpy(it.frame + c.dst, it.frame + c.a[0], c.bytes);
  std::memcpy(it.frame + c.dst + c.attr * c.esize, it.frame + c.a[1], c.esize);
  return int32_t(c.next);
}

// permute_bytes: c.attr is one table's size in bytes (a power of two), c.bytes the result's.
int32_t exec_permute_bytes(const Code& c, Item& it, Machine&) {
  std::byte table[128], out[64];
  const uint32_t tb = uint32_t(c.attr);
  std::memcpy(table, it.frame + c.a[0], tb);
  std::memcpy(table + tb, it.frame + c.a[1], tb);
  for (uint32_t i = 0; i < c.bytes; ++i) out[i] = table[uint32_t(it.frame[c.a[2] + i]) & (2 * tb - 1)];
  std::memcpy(it.frame + c.dst, out, c.bytes);
  return int32_t(c.next);
}

// Builtins (u32; the id arithmetic wraps like any u32 math).
int32_t exec_local_id(const Code& c, Item& it, Machine&) {
  st<uint32_t>(it.frame + c.dst, 0, it.local[c.attr]);
  return int32_t(c.next);
}
int32_t exec_group_id(const Code& c, Item& it, Machine& m) {
  st<uint32_t>(it.frame + c.dst, 0, m.group[c.attr]);
  return int32_t(c.next);
}
int32_t exec_global_id(const Code& c, Item& it, Machine& m) {
  uint32_t g = sem_Add(sem_Mul(m.group[c.attr], m.dims.workgroup[c.attr]), it.local[c.attr]);
  st<uint32_t>(it.frame + c.dst, 0, g);
  return int32_t(c.next);
}
int32_t exec_num_groups(const Code& c, Item& it, Machine& m) {
  st<uint32_t>(it.frame + c.dst, 0, m.dims.grid[c.attr]);
  return int32_t(c.next);
}
int32_t exec_group_size(const Code& c, Item& it, Machine& m) {
  st<uint32_t>(it.frame + c.dst, 0, m.dims.workgroup[c.attr]);
  return int32_t(c.next);
}
int32_t exec_subgroup_size(const Code& c, Item& it, Machine& m) {
  st<uint32_t>(it.frame + c.dst, 0, m.opt.subgroup_size);
  return int32_t(c.next);
}
int32_t exec_subgroup_lane(const Code& c, Item& it, Machine& m) {
  st<uint32_t>(it.frame + c.dst, 0, it.lin % m.opt.subgroup_size);
  return int32_t(c.next);
}

// Picks make.operator()<T>() for the C++ type of kind k if the op's domain
// admits it (the type rules already guarantee that; nullptr otherwise).
template <Domain D, class Make>
ExecFn by_kind(ScalarKind k, Make make) {
  return visit_kind(k, [&]<class T>(std::type_identity<T>) -> ExecFn {
    if constexpr (domain_accepts<T>(D)) return make.template operator()<T>();
    else return nullptr;
  });
}

ExecFn select_math(Op op, ScalarKind k) {
  switch (op) {
#define KGEN_X(Name, m, C, Dom) \
  case Op::Name: return by_kind<Domain::Dom>(k, []<class T>() { return &exec_unary<T, fn::Name>; });
    KGEN_UNARY_OPS(KGEN_X)
#undef KGEN_X
#define KGEN_X(Name, m, C, Dom) \
  case Op::Name: return by_kind<Domain::Dom>(k, []<class T>() { return &exec_binary<T, fn::Name>; });
    KGEN_BINARY_OPS(KGEN_X)
#undef KGEN_X
#define KGEN_X(Name, m, C, Dom) \
  case Op::Name: return by_kind<Domain::Dom>(k, []<class T>() { return &exec_compare<T, fn::Name>; });
    KGEN_COMPARE_OPS(KGEN_X)
#undef KGEN_X
#define KGEN_X(Name, m, C, Dom) \
  case Op::Name: return by_kind<Domain::Dom>(k, []<class T>() { return &exec_reduce<T, fn::Name>; });
    KGEN_REDUCE_OPS(KGEN_X)
#undef KGEN_X
    case Op::Select: return by_kind<Domain::Any>(k, []<class T>() { return &exec_select<T>; });
    case Op::Fma: return by_kind<Domain::Float>(k, []<class T>() { return &exec_fma<T>; });
    default: return nullptr;
  }
}

ExecFn select_cast(ScalarKind to, ScalarKind from) {
  return visit_kind(to, [&]<class To>(std::type_identity<To>) {
    return visit_kind(from, [&]<class From>(std::type_identity<From>) -> ExecFn { return &exec_cast<To, From>; });
  });
}

ExecFn select_builtin(Op op) {
  switch (op) {
    case Op::GlobalId: return exec_global_id;
    case Op::LocalId: return exec_local_id;
    case Op::GroupId: return exec_group_id;
    case Op::NumGroups: return exec_num_groups;
    case Op::GroupSize: return exec_group_size;
    case Op::SubgroupSize: return exec_subgroup_size;
    case Op::SubgroupLane: return exec_subgroup_lane;
    default: return nullptr;
  }
}

}  // namespace

void select_compute(Code& c, const Instr& in, const ValueIndex& vi) {
  // The shape of the value operated on: the first operand for reductions,
  // compares and casts (the source), the result otherwise.
  Type operand = in.args.empty() ? in.type : vi.type(in.args[0]);
  Type shape = in.type;
  switch (op_class(in.op)) {
    case OpClass::Compare:
    case OpClass::Reduce:
    case OpClass::Convert: shape = operand; break;
    case OpClass::Local: shape = in.op == Op::VarStore ? vi.type(in.args[1]) : vi.type(in.args[0]); break;
    default: break;
  }
  c.lanes = shape.lanes;
  c.esize = uint8_t(shape.scalar_bytes());
  c.bytes = uint32_t(shape.bytes());

  switch (op_class(in.op)) {
    case OpClass::Builtin: c.fn = select_builtin(in.op); break;
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Reduce:
    case OpClass::Fma: c.fn = select_math(in.op, shape.kind); break;
    case OpClass::Dot:
      c.fn = in.op == Op::Dot2Bf16 ? &exec_dot2_bf16
             : in.op == Op::Dot2I16 ? &exec_dot2_i16
                                    : select_dot4(operand.kind, vi.type(in.args[1]).kind);
      break;
    case OpClass::Permute:
      c.attr = vi.type(in.args[0]).bytes();
      c.fn = exec_permute_bytes;
      break;
    case OpClass::Select:
      c.fn = select_math(in.op, shape.kind);
      c.cond_splat = vi.type(in.args[0]).lanes == 1 && shape.lanes > 1;
      break;
    case OpClass::Convert:
      c.fn = in.op == Op::Bitcast ? exec_copy : select_cast(in.type.kind, operand.kind);
      break;
    case OpClass::Vector:
      if (in.op == Op::Splat) {
        c.lanes = in.type.lanes;
        c.fn = exec_splat;
      } else if (in.op == Op::Construct) {
        c.fn = exec_construct;
      } else if (in.op == Op::Extract) {
        c.lanes = operand.lanes;
        c.esize = uint8_t(operand.scalar_bytes());
        c.fn = exec_extract;
      } else {
        c.bytes = uint32_t(in.type.bytes());
        c.fn = exec_insert;
      }
      break;
    case OpClass::Local: c.fn = exec_copy; break;
    default: break;
  }
  if (!c.fn) throw Error(in.loc, "interpreter: cannot execute " + std::string(op_name(in.op)) + " on " + shape.str());
}

}  // namespace kgen::ir::interp
