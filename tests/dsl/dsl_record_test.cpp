// The DSL records the expected IR: op sequences, types, literal typing and
// source locations.
#include <doctest/doctest.h>

#include "dsl/dsl.h"
#include "ir/printer.h"
#include "tests/dsl/test_util.h"

using namespace kgen;
using namespace kgen::dsl;
using kgen::dsl::test::ops_of;
using ir::Op;

namespace {
// The instructions of the top-level block.
const std::vector<ir::Instr>& top(const ir::Kernel& k) { return k.body.instrs; }
}  // namespace

TEST_CASE("a[i] + 5 records load, const<f32>(5), add, each at the user's line") {
  int line = 0;
  ir::Kernel k = kernel("k", [&](KernelBuilder& kb) {
    auto a = kb.input("a", f32);
    auto out = kb.output("out", f32);
    auto i = global_id(0);
    line = __LINE__; out[i] = a[i] + 5;
  });
  auto& in = top(k);
  std::vector<Op> expect{Op::Buffer, Op::Buffer, Op::GlobalId, Op::Load, Op::Const, Op::Add, Op::Store};
  REQUIRE(in.size() == expect.size());
  for (size_t j = 0; j < in.size(); ++j) CHECK(in[j].op == expect[j]);
  CHECK(in[3].type == f32);
  CHECK(in[4].type == f32);
  CHECK(in[4].imm.f == 5.0);
  CHECK(in[5].type == f32);
  CHECK(in[5].args == std::vector<ir::ValueId>{in[3].id, in[4].id});
  CHECK(k.buffers[0].access == ir::Access::Read);
  CHECK(k.buffers[1].access == ir::Access::Write);
  for (size_t j = 3; j < in.size(); ++j) {
    CHECK(std::string(in[j].loc.file) == __FILE__);
    CHECK(in[j].loc.line == uint32_t(line));
  }
}

TEST_CASE("the saxpy example records a guarded fused expression") {
  ir::Kernel k = kernel("saxpy", [](KernelBuilder& kb) {
    auto x = kb.buffer("x", f32, Access::Read);
    auto y = kb.buffer("y", f32, Access::ReadWrite);
    auto a = kb.scalar("a", f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(256);
    auto i = global_id(0);
    if_(i < n, [&] { y[i] = a * x[i] + y[i]; });
  });
  CHECK(k.workgroup_size == std::array<uint32_t, 3>{256, 1, 1});
  REQUIRE(k.scalars.size() == 2);
  CHECK(k.scalars[1].type == u32);
  auto ops = ops_of(k.body);
  CHECK(std::count(ops.begin(), ops.end(), Op::Load) == 2);
  CHECK(std::count(ops.begin(), ops.end(), Op::Store) == 1);
  const ir::Instr& iff = top(k).back();
  REQUIRE(iff.op == Op::If);
  CHECK(iff.blocks[0].instrs.back().op == Op::Store);
  CHECK(iff.blocks[1].instrs.empty());
}

TEST_CASE("literals take the other operand's type") {
  ir::Kernel k = kernel("lits", [](KernelBuilder& kb) {
    auto h = kb.scalar("h", f16);
    auto u = kb.scalar("u", u8);
    auto v = kb.scalar("v", line(f32, 4));
    auto o = kb.output("o", f16);
    o[0] = h + 1;         // int literal -> f16
    auto b = u * 255;     // fits u8
    auto w = v * 2.0f;    // literal against a line: const<f32x4>
    auto m = 0.5 * h;     // double literal -> f16 (rounds)
    (void)b, (void)w, (void)m;
  });
  std::vector<ir::Type> const_types;
  ir::walk(k.body, [&](const ir::Instr& in) {
    if (in.op == Op::Const) const_types.push_back(in.type);
  });
  // o[0] (recorded after its right-hand side) has a literal index: natural type i32.
  std::vector<ir::Type> expect{f16, i32, u8, line(f32, 4), f16};
  CHECK(const_types == expect);
}

TEST_CASE("natural types where no operand gives one") {
  ir::Kernel k = kernel("nat", [](KernelBuilder& kb) {
    auto n = kb.scalar("n", u32);
    Var a = var(0.0f);
    Var b = var(0.0);
    Var c = var(0);
    Var d = var(7u);
    Var e = var(f16, 1);
    Var f = var(true);
    CHECK(a.type() == f32);
    CHECK(b.type() == f64);
    CHECK(c.type() == i32);
    CHECK(d.type() == u32);
    CHECK(e.type() == f16);
    CHECK(f.type() == bool_);
    for_range(0, 10, [&](Value i) { CHECK(i.type() == i32); });
    for_range(0, n, [&](Value i) { CHECK(i.type() == u32); });
    for_range(int64_t(0), int64_t(5), [&](Value i) { CHECK(i.type() == i64); }, 2, 4);
    CHECK(select(n > 3, 1, 2).type() == i32);
    CHECK(select(n > 3, n, 0).type() == u32);
    CHECK(cast<f16>(n).type() == f16);
    CHECK(cast(f32, 2).type() == f32);
    CHECK(bitcast<f32>(n).type() == f32);
  });
  const ir::Instr* last_for = nullptr;
  ir::walk(k.body, [&](const ir::Instr& in) {
    if (in.op == Op::For) last_for = &in;
  });
  REQUIRE(last_for);
  CHECK(last_for->attr == 4);  // unroll hint
}

TEST_CASE("vars and buffer elements: assignment and compound assignment") {
  ir::Kernel k = kernel("vars", [](KernelBuilder& kb) {
    auto y = kb.inout("y", f32);
    auto i = global_id(0);
    Var acc = var(f32, 0);
    acc += y[i];          // load, var_load, add, var_store
    acc = acc * 2;        // var_load, const, mul, var_store
    y[i] += acc;          // var_load (operand), load, add, store
    y[i + 1] = y[i];      // load, store
  });
  // Operands are evaluated before the operation that uses them; the right
  // side of an assignment before the left (C++17).
  std::vector<Op> expect{Op::Buffer,   Op::GlobalId, Op::Const,   Op::Var,   Op::Load,    Op::VarLoad, Op::Add,
                         Op::VarStore, Op::VarLoad,  Op::Const,   Op::Mul,   Op::VarStore, Op::VarLoad, Op::Load,
                         Op::Add,      Op::Store,    Op::Const,   Op::Add,   Op::Load,    Op::Store};
  auto ops = ops_of(k.body);
  CHECK(ops == expect);
}

TEST_CASE("control flow: if/else_if/else nest, while_ lowers to loop { if !c break }") {
  ir::Kernel k = kernel("cf", [](KernelBuilder& kb) {
    auto o = kb.output("o", i32);
    auto n = kb.scalar("n", i32);
    Var r = var(0);
    if_(n < 0, [&] { r = -1; }).else_if_([&] { return n == 0; }, [&] { r = 0; }).else_([&] { r = 1; });
    Var j = var(0);
    while_([&] { return j < n; }, [&] { j += 1; });
    loop_([&] {
      if_(j > 100, [&] { break_(); });
      j += 2;
      if_(j == 50, [&] { continue_(); });
    });
    o[0] = r;
  });
  const ir::Instr* iff = nullptr;
  for (auto& in : top(k))
    if (in.op == Op::If) iff = &in;
  REQUIRE(iff);
  // else branch holds the nested if of else_if_
  REQUIRE(!iff->blocks[1].instrs.empty());
  CHECK(iff->blocks[1].instrs.back().op == Op::If);
  const ir::Instr& nested = iff->blocks[1].instrs.back();
  CHECK(!nested.blocks[0].instrs.empty());
  CHECK(!nested.blocks[1].instrs.empty());

  const ir::Instr* loop = nullptr;
  for (auto& in : top(k))
    if (in.op == Op::Loop && !loop) loop = &in;
  REQUIRE(loop);
  auto body = ops_of(loop->blocks[0]);
  // var_load j, var_load n? (n is a param) -> lt, not, if{break}, body
  auto it = std::find(body.begin(), body.end(), Op::Not);
  REQUIRE(it != body.end());
  CHECK(*(it + 1) == Op::If);
  CHECK(*(it + 2) == Op::Break);
}

TEST_CASE("vector lines, shared arrays, atomics, subgroups record with the right types") {
  ir::Kernel k = kernel("misc", [](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 16));
    auto h = kb.inout("h", u32);
    auto o = kb.output("o", f32);
    kb.workgroup(64);
    auto sh = shared_array(line(f32, 4), 64);
    auto i = global_id(0);
    Value v = x[i];
    CHECK(v.type() == line(f32, 16));
    CHECK(reduce_add(v).type() == f32);
    CHECK(v.lane(3).type() == f32);
    Value q = make_line(v.lane(0), 1, 2.5f, v.lane(1));
    CHECK(q.type() == line(f32, 4));
    CHECK(insert(q, 2, 7).type() == line(f32, 4));
    CHECK(splat(v.lane(0), 8).type() == line(f32, 8));
    sh[local_id(0)] = q;
    barrier();
    CHECK(atomic_add(h[0], 1).type() == u32);
    CHECK(atomic_cas(h, 1, 0, 5).type() == u32);
    CHECK(subgroup_add(v.lane(0)).type() == f32);
    CHECK(subgroup_shuffle(i, 3).type() == u32);
    CHECK(subgroup_size().type() == u32);
    o[i] = reduce_max(sh[local_id(0)]);
  });
  auto ops = ops_of(k.body);
  CHECK(std::count(ops.begin(), ops.end(), Op::SharedAlloc) == 1);
  CHECK(std::count(ops.begin(), ops.end(), Op::Construct) == 1);
  CHECK(std::count(ops.begin(), ops.end(), Op::Barrier) == 1);
}

TEST_CASE("plain C++ parameters make kernel variants") {
  auto make = [](ir::Type dt, int unroll) {
    return kernel("scale_" + dt.str(), [&](KernelBuilder& kb) {
      auto x = kb.inout("x", dt);
      auto i = global_id(0);
      for (int u = 0; u < unroll; ++u) x[i * unroll + u] *= 3;  // C++ loop: unrolled at record time
    });
  };
  ir::Kernel a = make(f32, 1), b = make(i16, 4);
  CHECK(a.buffers[0].elem == f32);
  CHECK(b.buffers[0].elem == i16);
  auto ops = ops_of(b.body);
  CHECK(std::count(ops.begin(), ops.end(), Op::Store) == 4);
}

TEST_CASE("the printed IR of a small kernel") {
  ir::Kernel k = kernel("p", [](KernelBuilder& kb) {
    auto x = kb.inout("x", f32);
    auto i = global_id(0);
    x[i] = sqrt(x[i]) * 2;
  });
  std::string s = ir::print(k);
  INFO(s);
  CHECK(s ==
        "kernel p(x: ptr<global, f32> read_write) workgroup(dynamic) {\n"
        "  %0 = buffer 0 : ptr<global, f32>\n"
        "  %1 = global_id 0 : u32\n"
        "  %2 = load %0, %1 : f32\n"
        "  %3 = sqrt %2 : f32\n"
        "  %4 = const 2.0 : f32\n"
        "  %5 = mul %3, %4 : f32\n"
        "  store %0, %1, %5\n"
        "}\n");
}
