// Hand-built kernels shared by the IR tests.
#pragma once
#include <bit>
#include <cmath>
#include <limits>

#include "ir/builder.h"

namespace kgen::ir::testing {

inline SourceLoc at(int line) { return SourceLoc{intern_file("t.cpp"), uint32_t(line), 1}; }

// An operand type the op's domain accepts: u32 for bit/int-only ops, else f32.
inline Type operand_type(Op op) {
  Domain d = op_info(op).domain;
  return (d == Domain::Int || d == Domain::Bits) ? types::U32 : types::F32;
}

// A kernel using every op of KGEN_IR_OPS, every scalar kind, vectors, shared
// memory, atomics, subgroup ops, variables and nested control flow. It does
// not verify (it returns early in a kernel with barriers); it exercises the
// printer, parser and hash.
inline Kernel kitchen_sink() {
  Kernel k;
  k.name = "sink";
  k.buffers = {{"x", types::F32, Access::Read},
               {"y", types::F32, Access::ReadWrite},
               {"v", Type(ScalarKind::F32, 4), Access::ReadWrite},
               {"c", types::U32, Access::ReadWrite},
               {"o", types::U32, Access::Write}};
  k.scalars = {{"n", types::U32}, {"a", types::F32}, {"flag", types::Bool}, {"w", types::U64}};
  k.workgroup_size = {64, 2, 1};
  Builder b(k);
  int line = 10;
  auto next = [&] { b.loc = at(line++); };
  next();
  ValueId x = b.buffer(0), y = b.buffer(1), v = b.buffer(2), c = b.buffer(3), o = b.buffer(4);
  ValueId n = b.param(0), a = b.param(1), flag = b.param(2);
  ValueId w = b.param(3);
  ValueId sh = b.shared(types::F32, 128);
  ValueId shb = b.shared(types::BF16, 64);
  next();
  // Every scalar kind, with awkward values.
  b.constant(types::Bool, Imm{1, 1});
  b.const_int(types::I8, -128);
  b.const_int(types::I16, -32768);
  b.const_int(types::I32, -1);
  b.const_int(types::I64, std::numeric_limits<int64_t>::min());
  b.const_int(types::U8, 255);
  b.const_int(types::U16, 65535);
  b.const_int(types::U32, 4294967295);
  b.constant(types::U64, Imm{-1, 0});  // 2^64-1
  b.const_float(types::F16, 65504.0);
  b.const_float(types::BF16, -0.0);
  b.const_float(types::F64, 5e-324);
  // NaNs via constant(): const_float converts to int64 first, undefined for NaN.
  b.constant(types::F64, Imm{0, std::bit_cast<double>(0xfff0000000000123ull)});  // NaN with a payload
  b.constant(types::F64, Imm{0, std::numeric_limits<double>::quiet_NaN()});
  for (double f : {0.1, 1e-45, -0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 1.0})
    b.constant(types::F32, Imm{0, f});
  ValueId line4 = b.constant(Type(ScalarKind::F32, 4), Imm{1, 1.5});
  next();
  // Builtins.
  ValueId gid = 0;
#define KGEN_X(Name, ...) { ValueId id = b.builtin(Op::Name, Op::Name == Op::GroupSize ? 2 : 0); if (Op::Name == Op::GlobalId) gid = id; }
  KGEN_BUILTIN_OPS(KGEN_X)
#undef KGEN_X
  next();
  ValueId f = b.load(x, gid);
  ValueId u = b.load(c, gid);
  // Every unary, binary and compare op on a type of its domain.
#define KGEN_X(Name, ...) b.op(Op::Name, {operand_type(Op::Name) == types::U32 ? u : f});
  KGEN_UNARY_OPS(KGEN_X)
#undef KGEN_X
#define KGEN_X(Name, ...) { ValueId s = operand_type(Op::Name) == types::U32 ? u : f; b.op(Op::Name, {s, s}); }
  KGEN_BINARY_OPS(KGEN_X)
  KGEN_COMPARE_OPS(KGEN_X)
#undef KGEN_X
  next();
  ValueId lt = b.op(Op::Lt, {f, a});
  b.op(Op::Select, {lt, f, a});
  b.op(Op::Fma, {f, a, f});
  ValueId i = b.cast(types::I32, f);
  b.op(Op::Bitcast, {i}, 0, types::F32);
  b.op(Op::Dot4, {u, i, i});
  b.op(Op::Dot2Bf16, {u, u, f});
  b.op(Op::Dot2I16, {i, i, i});
  b.op(Op::PermuteBytes, {f, f, u});
  b.op(Op::TileMmaBf16, {y, w, shb, w, c, w, u, u, u, u, u, u}, 1);
  ValueId sp = b.op(Op::Splat, {f}, 0, Type(ScalarKind::F32, 4));
  ValueId ct = b.op(Op::Construct, {f, a, f, a});
  b.op(Op::Extract, {ct}, 3);
  ValueId ins = b.op(Op::Insert, {sp, a}, 2);
#define KGEN_X(Name, ...) b.op(Op::Name, {ins});
  KGEN_REDUCE_OPS(KGEN_X)
#undef KGEN_X
  b.store(v, gid, b.op(Op::Add, {ins, line4}));
  next();
#define KGEN_X(Name, ...) b.op(Op::Name, Op::Name == Op::AtomicCas ? std::vector<ValueId>{c, gid, u, u} : std::vector<ValueId>{c, gid, u});
  KGEN_ATOMIC_OPS(KGEN_X)
#undef KGEN_X
  b.store(o, gid, u);
  b.op(Op::Prefetch, {y, gid});
  ValueId lid = b.builtin(Op::LocalId, 0);
  b.store(sh, lid, f);
  b.barrier();
  b.store(y, gid, b.load(sh, lid));
  next();
  b.op(Op::SubgroupShuffle, {f, lid});
  b.op(Op::SubgroupBroadcast, {f, b.const_int(types::U32, 0)});
#define KGEN_X(Name, ...) b.op(Op::Name, {f});
  KGEN_SUBGROUP_REDUCE_OPS(KGEN_X)
#undef KGEN_X
  next();
  ValueId acc = b.var(b.const_float(types::F32, 0.0));
  ValueId zero = b.const_int(types::U32, 0), one = b.const_int(types::U32, 1);
  ValueId j = b.begin_for(zero, n, one, 4);
  {
    next();
    ValueId ok = b.op(Op::Lt, {j, gid});
    b.begin_if(ok);
    b.var_store(acc, b.op(Op::Add, {b.var_load(acc), f}));
    b.begin_else();
    b.begin_loop();
    b.begin_if(flag);
    b.break_();
    b.end_if();
    b.continue_();
    b.end_loop();
    b.end_if();
    b.begin_if(flag);  // empty else
    b.var_store(acc, a);
    b.end_if();
  }
  b.end_for();
  next();
  b.store(y, gid, b.var_load(acc));
  b.begin_if(flag);
  b.return_();
  b.end_if();
  return k;
}

// saxpy: y[i] = a * x[i] + y[i] for i < n.
inline Kernel saxpy() {
  Kernel k;
  k.name = "saxpy";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::ReadWrite}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  k.workgroup_size = {256, 1, 1};
  Builder b(k);
  b.loc = at(1);
  ValueId x = b.buffer(0), y = b.buffer(1), a = b.param(0), n = b.param(1);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, n}));
  b.loc = at(2);
  b.store(y, i, b.op(Op::Fma, {a, b.load(x, i), b.load(y, i)}));
  b.end_if();
  return k;
}

}  // namespace kgen::ir::testing
