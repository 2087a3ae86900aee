// Small IR kernels built with ir::Builder, shared by the codegen golden tests
// and the runtime tests.
#pragma once
#include "ir/builder.h"

namespace kgen::test {

using namespace kgen::ir;

// y[i] = a * x[i] + y[i] for i < n.
inline Kernel saxpy() {
  Kernel k;
  k.name = "saxpy";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::ReadWrite}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(1)}));
  ValueId x = b.load(b.buffer(0), i), y = b.load(b.buffer(1), i);
  b.store(b.buffer(1), i, b.op(Op::Add, {b.op(Op::Mul, {b.param(0), x}), y}));
  b.end_if();
  return k;
}

// ~20 lines of C++: saxpy with a bounds check and an inner loop.
inline Kernel saxpy_loop() {
  Kernel k;
  k.name = "saxpy_loop";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::ReadWrite}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}, {"reps", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Ge, {i, b.param(1)}));
  b.return_();
  b.end_if();
  ValueId acc = b.var(b.load(b.buffer(1), i));
  ValueId x = b.load(b.buffer(0), i);
  b.begin_for(b.const_int(types::U32, 0), b.param(2), b.const_int(types::U32, 1));
  b.var_store(acc, b.op(Op::Fma, {b.param(0), x, b.var_load(acc)}));
  b.end_for();
  b.store(b.buffer(1), i, b.var_load(acc));
  return k;
}

// out[group] = sum of x[group*64 .. +64) (zero past n): shared-memory tree reduction.
inline Kernel reduce_sum() {
  Kernel k;
  k.name = "reduce_sum";
  k.buffers = {{"x", types::F32, Access::Read}, {"out", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  k.workgroup_size = {64, 1, 1};
  Builder b(k);
  ValueId s = b.shared(types::F32, 64);
  ValueId lid = b.builtin(Op::LocalId, 0), gid = b.builtin(Op::GlobalId, 0);
  ValueId in = b.op(Op::Lt, {gid, b.param(0)});
  ValueId v = b.var(b.const_float(types::F32, 0.0));
  b.begin_if(in);
  b.var_store(v, b.load(b.buffer(0), gid));
  b.end_if();
  b.store(s, lid, b.var_load(v));
  b.barrier();
  ValueId t = b.begin_for(b.const_int(types::U32, 0), b.const_int(types::U32, 6), b.const_int(types::U32, 1));
  ValueId stride = b.op(Op::Shr, {b.const_int(types::U32, 32), t});
  b.begin_if(b.op(Op::Lt, {lid, stride}));
  b.store(s, lid, b.op(Op::Add, {b.load(s, lid), b.load(s, b.op(Op::Add, {lid, stride}))}));
  b.end_if();
  b.barrier();
  b.end_for();
  b.begin_if(b.op(Op::Eq, {lid, b.const_int(types::U32, 0)}));
  b.store(b.buffer(1), b.builtin(Op::GroupId, 0), b.load(s, b.const_int(types::U32, 0)));
  b.end_if();
  return k;
}

// bins[data[i] % 16] += 1 atomically.
inline Kernel histogram() {
  Kernel k;
  k.name = "histogram";
  k.buffers = {{"data", types::U32, Access::Read}, {"bins", types::U32, Access::ReadWrite}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId bin = b.op(Op::Rem, {b.load(b.buffer(0), i), b.const_int(types::U32, 16)});
  b.op(Op::AtomicAdd, {b.buffer(1), bin, b.const_int(types::U32, 1)});
  b.end_if();
  return k;
}

// Lines: y[i] = sqrt(x*x + 1) * a (f32xL), sum[i] = reduce_add(y[i]).
inline Kernel lines(int L) {
  Kernel k;
  k.name = "lines" + std::to_string(L);
  Type t(ScalarKind::F32, uint8_t(L));
  k.buffers = {{"x", t, Access::Read}, {"y", t, Access::Write}, {"sum", types::F32, Access::Write}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(1)}));
  ValueId x = b.load(b.buffer(0), i);
  ValueId one = b.op(Op::Splat, {b.const_float(types::F32, 1.0)}, 0, t);
  ValueId r = b.op(Op::Sqrt, {b.op(Op::Add, {b.op(Op::Mul, {x, x}), one})});
  ValueId y = b.op(Op::Mul, {r, b.op(Op::Splat, {b.param(0)}, 0, t)});
  ValueId th = b.op(Op::Tanh, {x});  // no vector builtin: lane-wise fallback
  y = b.op(Op::Add, {y, th});
  b.store(b.buffer(1), i, y);
  b.store(b.buffer(2), i, b.op(Op::ReduceAdd, {y}));
  b.end_if();
  return k;
}

// Lines rebuilt from lanes of loaded lines: y[i] from two sources (a
// shuffle), z[i] from three (an initializer list).
inline Kernel lane_shuffles() {
  Kernel k;
  k.name = "lane_shuffles";
  Type t(ScalarKind::F32, 4);
  k.buffers = {{"x", t, Access::Read}, {"y", t, Access::Write}, {"z", t, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId i3 = b.op(Op::Mul, {i, b.const_int(types::U32, 3)});
  ValueId a = b.load(b.buffer(0), i3);
  ValueId c = b.load(b.buffer(0), b.op(Op::Add, {i3, b.const_int(types::U32, 1)}));
  ValueId d = b.load(b.buffer(0), b.op(Op::Add, {i3, b.const_int(types::U32, 2)}));
  auto lane = [&](ValueId v, int l) { return b.op(Op::Extract, {v}, l, types::F32); };
  b.store(b.buffer(1), i, b.op(Op::Construct, {lane(c, 3), lane(a, 0), lane(a, 2), lane(c, 1)}, 0, t));
  b.store(b.buffer(2), i, b.op(Op::Construct, {lane(a, 0), lane(c, 1), lane(d, 2), lane(a, 3)}, 0, t));
  return k;
}

// y[i] = exp(x) + tanh(x) + erf(x) (f32).
inline Kernel transcendental() {
  Kernel k;
  k.name = "transcendental";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId x = b.load(b.buffer(0), i);
  ValueId s = b.op(Op::Add, {b.op(Op::Add, {b.op(Op::Exp, {x}), b.op(Op::Tanh, {x})}), b.op(Op::Erf, {x})});
  b.store(b.buffer(1), i, s);
  b.end_if();
  return k;
}

// f16 math: h[i] = x*x + c (f16, rounded per op), f[i] = f32(h[i]).
inline Kernel half_math() {
  Kernel k;
  k.name = "half_math";
  k.buffers = {{"x", types::F16, Access::Read}, {"h", types::F16, Access::Write}, {"f", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId x = b.load(b.buffer(0), i);
  ValueId h = b.op(Op::Add, {b.op(Op::Mul, {x, x}), b.const_float(types::F16, 0.1)});
  b.store(b.buffer(1), i, h);
  b.store(b.buffer(2), i, b.cast(types::F32, b.op(Op::Sqrt, {h})));
  b.end_if();
  return k;
}

// Saturating casts: f32 -> i32, u8, i8, u32; i32 -> bool -> u32.
inline Kernel casts() {
  Kernel k;
  k.name = "casts";
  k.buffers = {{"x", types::F32, Access::Read}, {"i32", types::I32, Access::Write}, {"u8", types::U8, Access::Write},
               {"i8", types::I8, Access::Write}, {"u32", types::U32, Access::Write}, {"nz", types::U32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId x = b.load(b.buffer(0), i);
  b.store(b.buffer(1), i, b.cast(types::I32, x));
  b.store(b.buffer(2), i, b.cast(types::U8, x));
  b.store(b.buffer(3), i, b.cast(types::I8, x));
  b.store(b.buffer(4), i, b.cast(types::U32, x));
  b.store(b.buffer(5), i, b.cast(types::U32, b.cast(types::Bool, b.cast(types::I32, x))));
  b.end_if();
  return k;
}

// C = A * B (n x n, n a multiple of 8) with 8x8 tiles in shared memory.
inline Kernel matmul_tiled() {
  Kernel k;
  k.name = "matmul_tiled";
  k.buffers = {{"A", types::F32, Access::Read}, {"B", types::F32, Access::Read}, {"C", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  k.workgroup_size = {8, 8, 1};
  Builder b(k);
  auto u = [&](int64_t v) { return b.const_int(types::U32, v); };
  ValueId As = b.shared(types::F32, 64), Bs = b.shared(types::F32, 64);
  ValueId tx = b.builtin(Op::LocalId, 0), ty = b.builtin(Op::LocalId, 1);
  ValueId col = b.builtin(Op::GlobalId, 0), row = b.builtin(Op::GlobalId, 1);
  ValueId n = b.param(0);
  ValueId acc = b.var(b.const_float(types::F32, 0.0));
  ValueId kt = b.begin_for(u(0), n, u(8));
  ValueId lidx = b.op(Op::Add, {b.op(Op::Mul, {ty, u(8)}), tx});
  b.store(As, lidx, b.load(b.buffer(0), b.op(Op::Add, {b.op(Op::Mul, {row, n}), b.op(Op::Add, {kt, tx})})));
  b.store(Bs, lidx, b.load(b.buffer(1), b.op(Op::Add, {b.op(Op::Mul, {b.op(Op::Add, {kt, ty}), n}), col})));
  b.barrier();
  ValueId kk = b.begin_for(u(0), u(8), u(1), 8);
  ValueId av = b.load(As, b.op(Op::Add, {b.op(Op::Mul, {ty, u(8)}), kk}));
  ValueId bv = b.load(Bs, b.op(Op::Add, {b.op(Op::Mul, {kk, u(8)}), tx}));
  b.var_store(acc, b.op(Op::Add, {b.var_load(acc), b.op(Op::Mul, {av, bv})}));
  b.end_for();
  b.barrier();
  b.end_for();
  b.store(b.buffer(2), b.op(Op::Add, {b.op(Op::Mul, {row, n}), col}), b.var_load(acc));
  return k;
}

// Uses a subgroup reduction (for capability refusal on the CPU).
inline Kernel subgroup_sum() {
  Kernel k;
  k.name = "subgroup_sum";
  k.buffers = {{"x", types::F32, Access::ReadWrite}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.store(b.buffer(0), i, b.op(Op::SubgroupAdd, {b.load(b.buffer(0), i)}));
  return k;
}

}  // namespace kgen::test
