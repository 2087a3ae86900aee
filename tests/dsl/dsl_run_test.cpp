// DSL constructs run in the interpreter compute what the C++ they mirror
// computes: control flow lowering, lines, conversions, atomics, subgroups.
#include <doctest/doctest.h>

#include <cstring>

#include "dsl/dsl.h"
#include "tests/dsl/host_buffers.h"
#include "tests/dsl/test_util.h"

using namespace kgen;
using namespace kgen::dsl;
using kgen::dsl::test::HostBuf;

namespace {
ir::LaunchDims dims1(uint32_t groups, uint32_t wg) {
  ir::LaunchDims d;
  d.grid = {groups, 1, 1};
  d.workgroup = {wg, 1, 1};
  return d;
}
}  // namespace

TEST_CASE("while_, else_if_, loop_/break_/continue_ and vars") {
  ir::Kernel k = kernel("control", [](KernelBuilder& kb) {
    auto steps = kb.output("steps", u32);
    auto cls = kb.output("cls", u32);
    auto odd_sum = kb.output("odd_sum", u32);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i >= n, [&] { return_(); });
    // Collatz steps of i + 1.
    Var v = var(i + 1);
    Var s = var(0u);
    while_([&] { return v != 1; }, [&] {
      if_(v % 2 == 0, [&] { v = v / 2; }).else_([&] { v = v * 3 + 1; });
      s += 1;
    });
    steps[i] = s;
    Var c = var(0u);
    Value r = i % 3;
    if_(r == 0, [&] { c = 10; }).else_if_([&] { return r == 1; }, [&] { c = 20; }).else_([&] { c = 30; });
    cls[i] = c;
    // Sum of odd j < i, stopping past 20, via loop_/continue_/break_.
    Var j = var(0u);
    Var acc = var(0u);
    loop_([&] {
      Value cur = j.get();
      j += 1;
      if_(cur >= i || cur > 20, [&] { break_(); });
      if_(cur % 2 == 0, [&] { continue_(); });
      acc += cur;
    });
    odd_sum[i] = acc;
  });
  const uint32_t n = 100;
  std::vector<HostBuf> bufs{HostBuf(u32, n), HostBuf(u32, n), HostBuf(u32, n)};
  dsl::test::run(k, dims1(2, 64), bufs, {ir::scalar_slot(n)});
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t v = i + 1, s = 0;
    while (v != 1) v = v % 2 == 0 ? v / 2 : 3 * v + 1, ++s;
    CHECK(bufs[0].get(i) == s);
    CHECK(bufs[1].get(i) == (i % 3 == 0 ? 10 : i % 3 == 1 ? 20 : 30));
    uint32_t acc = 0;
    for (uint32_t j = 0; j < i && j <= 20; ++j)
      if (j % 2) acc += j;
    CHECK(bufs[2].get(i) == acc);
  }
}

TEST_CASE("lines, conversions, select, atomics and subgroup reductions") {
  ir::Kernel k = kernel("features", [](KernelBuilder& kb) {
    auto x = kb.input("x", line(f32, 4));
    auto out = kb.output("out", f32);
    auto ints = kb.output("ints", i32);
    auto counters = kb.inout("counters", u32);
    auto sg = kb.output("sg", u32);
    kb.workgroup(64);
    auto i = global_id(0);
    Value v = x[i];
    Value w = insert(v * 2.0f, 3, v.lane(0));                   // (2x0, 2x1, 2x2, x0)
    Value m = make_line(reduce_max(w), reduce_min(w), w.lane(3), reduce_add(splat(1.0f, 8)));
    out[i] = reduce_add(m * make_line(1.0f, 10.0f, 100.0f, 1000.0f));
    ints[i] = select(v.lane(0) > 0, cast<i32>(floor(v.lane(1) * 10)), -1);
    atomic_add(counters[0], 1);
    atomic_max(counters[1], i);
    atomic_min(counters[2], i);
    sg[i] = subgroup_add(local_id(0)) + select(bitcast<u32>(1.0f) == 0x3f800000u, 0u, 1000u);
  });
  const uint32_t groups = 2, wg = 64, n = groups * wg;
  std::vector<HostBuf> bufs{HostBuf(line(f32, 4), n), HostBuf(f32, n), HostBuf(i32, n), HostBuf(u32, 3),
                            HostBuf(u32, n)};
  for (size_t j = 0; j < 4 * n; ++j) bufs[0].set(j, std::sin(double(j)));
  bufs[3].set(0, 0), bufs[3].set(1, 0), bufs[3].set(2, 1000);
  ir::LaunchDims d = dims1(groups, wg);
  dsl::test::run(k, d, bufs, {});
  for (uint32_t i = 0; i < n; ++i) {
    float x0 = float(bufs[0].get(4 * i)), x1 = float(bufs[0].get(4 * i + 1)), x2 = float(bufs[0].get(4 * i + 2));
    float w[4] = {2 * x0, 2 * x1, 2 * x2, x0};
    float mx = std::max({w[0], w[1], w[2], w[3]}), mn = std::min({w[0], w[1], w[2], w[3]});
    double expect = mx * 1 + mn * 10 + x0 * 100 + 8 * 1000;
    CHECK(bufs[1].get(i) == doctest::Approx(expect).epsilon(1e-6));
    CHECK(bufs[2].get(i) == (x0 > 0 ? std::floor(x1 * 10.0f) : -1));
    uint32_t lane_base = (i % wg) / 32 * 32, sum = 0;
    for (uint32_t l = 0; l < 32; ++l) sum += lane_base + l;
    CHECK(bufs[4].get(i) == sum);
  }
  CHECK(bufs[3].get(0) == n);
  CHECK(bufs[3].get(1) == n - 1);
  CHECK(bufs[3].get(2) == 0);
}

TEST_CASE("interpreter errors point at the DSL line") {
  int line = 0;
  ir::Kernel k = kernel("oob", [&](KernelBuilder& kb) {
    auto x = kb.inout("x", f32);
    auto i = global_id(0);
    line = __LINE__; x[i + 1] = 0.0f;  // no bounds check: the last item writes past the end
  });
  std::vector<HostBuf> bufs{HostBuf(f32, 64)};
  ir::Error e = dsl::test::error_of([&] { dsl::test::run(k, dims1(1, 64), bufs, {}); });
  CHECK(e.loc.line == uint32_t(line));
  CHECK(std::string(e.loc.file) == __FILE__);
}
