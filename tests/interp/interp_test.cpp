// The reference interpreter on kernels built with ir::Builder; expected
// results come from plain C++ loops.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ir/builder.h"
#include "ir/half.h"
#include "ir/interpreter.h"

using namespace kgen::ir;

namespace {

template <class T>
InterpBuffer buf(std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}
LaunchDims dims1(uint32_t groups, uint32_t wg) {
  LaunchDims d;
  d.grid = {groups, 1, 1};
  d.workgroup = {wg, 1, 1};
  return d;
}
ValueId u32(Builder& b, uint32_t v) { return b.const_int(types::U32, v); }

// out[i] = op(a[i], b[i]) over n items, one work-item each (no bounds check:
// the launch is exact).
template <class T>
std::vector<T> run_binary(Op op, Type t, std::vector<T> a, std::vector<T> bv) {
  Kernel k;
  k.name = "binary";
  k.buffers = {{"a", t, Access::Read}, {"b", t, Access::Read}, {"out", t, Access::Write}};
  Builder b(k);
  b.loc = SourceLoc{intern_file("binary.cpp"), 7, 3};
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.store(b.buffer(2), i, b.op(op, {b.load(b.buffer(0), i), b.load(b.buffer(1), i)}));
  std::vector<T> out(a.size());
  std::vector<InterpBuffer> bufs = {buf(a), buf(bv), buf(out)};
  interpret(k, dims1(uint32_t(a.size()), 1), bufs, {});
  return out;
}

// out[i] = cast<To>(in[i]).
template <class To, class From>
std::vector<To> run_cast(Type to, Type from, std::vector<From> in) {
  Kernel k;
  k.name = "cast";
  k.buffers = {{"in", from, Access::Read}, {"out", to, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.store(b.buffer(1), i, b.cast(to, b.load(b.buffer(0), i)));
  std::vector<To> out(in.size());
  std::vector<InterpBuffer> bufs = {buf(in), buf(out)};
  interpret(k, dims1(uint32_t(in.size()), 1), bufs, {});
  return out;
}

// y[i] = a*x[i] + y[i] for i < n.
Kernel saxpy_kernel() {
  Kernel k;
  k.name = "saxpy";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::ReadWrite}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  Builder b(k);
  ValueId x = b.buffer(0), y = b.buffer(1), a = b.param(0), n = b.param(1);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, n}));
  b.store(y, i, b.op(Op::Add, {b.op(Op::Mul, {a, b.load(x, i)}), b.load(y, i)}));
  b.end_if();
  return k;
}

}  // namespace

TEST_CASE("saxpy with a bounds check and odd n") {
  Kernel k = saxpy_kernel();
  const uint32_t n = 1001;
  std::vector<float> x(n), y(n + 7, -1.0f), ref;  // y longer than n: the tail must stay
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i) * 0.5f, y[i] = float(i % 13);
  ref = y;
  for (uint32_t i = 0; i < n; ++i) ref[i] = 3.0f * x[i] + y[i];
  std::vector<InterpBuffer> bufs = {buf(x), buf(y)};
  std::vector<uint64_t> sc = {scalar_slot(3.0f), scalar_slot(n)};
  interpret(k, dims1((n + 63) / 64, 64), bufs, sc);
  CHECK(y == ref);
}

TEST_CASE("a 1M-element saxpy interprets quickly") {
  Kernel k = saxpy_kernel();
  const uint32_t n = 1 << 20;
  std::vector<float> x(n, 2.0f), y(n, 1.0f);
  std::vector<InterpBuffer> bufs = {buf(x), buf(y)};
  std::vector<uint64_t> sc = {scalar_slot(0.5f), scalar_slot(n)};
  auto t0 = std::chrono::steady_clock::now();
  interpret(k, dims1(n / 256, 256), bufs, sc);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("1M saxpy: " << s * 1e3 << " ms");
  CHECK(y[0] == 2.0f);
  CHECK(y[n - 1] == 2.0f);
  CHECK(s < 2.0);
}

TEST_CASE("integer wraparound and shifts by >= width") {
  CHECK(run_binary<int32_t>(Op::Add, types::I32, {INT32_MAX, -5}, {1, 3}) == std::vector<int32_t>{INT32_MIN, -2});
  CHECK(run_binary<uint8_t>(Op::Mul, types::U8, {200, 16}, {2, 16}) == std::vector<uint8_t>{144, 0});
  CHECK(run_binary<int8_t>(Op::Sub, types::I8, {-128}, {1}) == std::vector<int8_t>{127});
  CHECK(run_binary<uint32_t>(Op::Shl, types::U32, {1, 1, 3}, {31, 32, 35}) == std::vector<uint32_t>{0x80000000u, 1, 24});
  CHECK(run_binary<int32_t>(Op::Shr, types::I32, {-16, -16, 1 << 30}, {2, 34, 62}) == std::vector<int32_t>{-4, -4, 1});
  CHECK(run_binary<uint32_t>(Op::Shr, types::U32, {0x80000000u}, {63}) == std::vector<uint32_t>{1});
  CHECK(run_binary<int32_t>(Op::Div, types::I32, {-7, INT32_MIN, 7}, {2, -1, -2}) == std::vector<int32_t>{-3, INT32_MIN, -3});
  CHECK(run_binary<int32_t>(Op::Rem, types::I32, {-7, INT32_MIN}, {2, -1}) == std::vector<int32_t>{-1, 0});
  CHECK(run_binary<uint64_t>(Op::Max, types::U64, {UINT64_MAX, 3}, {1, 4}) == std::vector<uint64_t>{UINT64_MAX, 4});
}

TEST_CASE("integer division by zero is an error at the instruction") {
  CHECK_THROWS_WITH_AS(run_binary<int32_t>(Op::Div, types::I32, {4, 1}, {2, 0}),
                       doctest::Contains("binary.cpp:7:3: error: kernel 'binary': integer division by zero"), Error);
  CHECK_THROWS_WITH_AS(run_binary<uint16_t>(Op::Rem, types::U16, {4}, {0}), doctest::Contains("division by zero"), Error);
  // Float division by zero is IEEE, not an error.
  auto r = run_binary<float>(Op::Div, types::F32, {1.0f, 0.0f}, {0.0f, 0.0f});
  CHECK(std::isinf(r[0]));
  CHECK(std::isnan(r[1]));
}

TEST_CASE("float to int casts saturate and map NaN to 0") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(run_cast<int32_t, float>(types::I32, types::F32, {nan, 3e9f, -3e9f, -7.9f, 7.9f, INFINITY}) ==
        std::vector<int32_t>{0, INT32_MAX, INT32_MIN, -7, 7, INT32_MAX});
  CHECK(run_cast<uint8_t, float>(types::U8, types::F32, {-1.0f, 255.9f, 256.0f, nan}) == std::vector<uint8_t>{0, 255, 255, 0});
  CHECK(run_cast<uint8_t, int32_t>(types::U8, types::I32, {257, -1}) == std::vector<uint8_t>{1, 255});
  CHECK(run_cast<int64_t, int8_t>(types::I64, types::I8, {-3}) == std::vector<int64_t>{-3});
  CHECK(run_cast<uint8_t, float>(types::Bool, types::F32, {0.0f, -0.0f, 2.0f, nan}) == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(run_cast<float, uint8_t>(types::F32, types::Bool, {0, 1}) == std::vector<float>{0.0f, 1.0f});
}

TEST_CASE("f16 and bf16 round to the narrow type after every op") {
  auto h = [](float f) { return f32_to_f16(f); };
  // 1 + 2^-11 is a tie in f16 -> even (1.0); 2048 + 1 -> 2048; 300*300 overflows.
  auto sum = run_binary<uint16_t>(Op::Add, types::F16, {h(1.0f), h(2048.0f), h(0.1f)}, {h(1.0f / 2048), h(1.0f), h(0.2f)});
  CHECK(sum[0] == h(1.0f));
  CHECK(sum[1] == h(2048.0f));
  CHECK(sum[2] == h(f16_to_f32(h(0.1f)) + f16_to_f32(h(0.2f))));
  auto prod = run_binary<uint16_t>(Op::Mul, types::F16, {h(300.0f)}, {h(300.0f)});
  CHECK(prod[0] == 0x7c00);
  auto bf = [](float f) { return f32_to_bf16(f); };
  auto bsum = run_binary<uint16_t>(Op::Add, types::BF16, {bf(1.0f), bf(256.0f)}, {bf(1.0f / 256), bf(1.0f)});
  CHECK(bsum[0] == bf(1.0f));    // tie -> even
  CHECK(bsum[1] == bf(256.0f));  // 257 needs 9 bits
  auto c = run_cast<uint16_t, float>(types::F16, types::F32, {65504.0f, 65520.0f, 1e-8f, -2.5f});
  CHECK(c == std::vector<uint16_t>{0x7bff, 0x7c00, 0x0000, h(-2.5f)});
  auto back = run_cast<int32_t, uint16_t>(types::I32, types::F16, {h(-2.75f), 0x7e00 /* NaN */, 0x7c00});
  CHECK(back == std::vector<int32_t>{-2, 0, INT32_MAX});
}

TEST_CASE("shared-memory tree reduction with barriers (workgroup 64, odd n)") {
  Kernel k;
  k.name = "block_sum";
  k.workgroup_size = {64, 1, 1};
  k.buffers = {{"x", types::F32, Access::Read}, {"partial", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId s = b.shared(types::F32, 64);
  ValueId x = b.buffer(0), out = b.buffer(1), n = b.param(0);
  ValueId lid = b.builtin(Op::LocalId, 0), gid = b.builtin(Op::GlobalId, 0);
  ValueId acc = b.var(b.const_float(types::F32, 0.0));
  b.begin_if(b.op(Op::Lt, {gid, n}));
  b.var_store(acc, b.load(x, gid));
  b.end_if();
  b.store(s, lid, b.var_load(acc));
  b.barrier();
  ValueId k6 = b.begin_for(u32(b, 0), u32(b, 6), u32(b, 1));
  ValueId stride = b.op(Op::Shr, {u32(b, 32), k6});
  b.begin_if(b.op(Op::Lt, {lid, stride}));
  b.store(s, lid, b.op(Op::Add, {b.load(s, lid), b.load(s, b.op(Op::Add, {lid, stride}))}));
  b.end_if();
  b.barrier();
  b.end_for();
  b.begin_if(b.op(Op::Eq, {lid, u32(b, 0)}));
  b.store(out, b.builtin(Op::GroupId, 0), b.load(s, u32(b, 0)));
  b.end_if();

  const uint32_t count = 1001, groups = (count + 63) / 64;
  std::vector<float> xs(count), partial(groups, -1.0f);
  for (uint32_t i = 0; i < count; ++i) xs[i] = float(i % 17) - 8.0f;
  std::vector<InterpBuffer> bufs = {buf(xs), buf(partial)};
  std::vector<uint64_t> sc = {scalar_slot(count)};
  interpret(k, dims1(groups, 64), bufs, sc);
  for (uint32_t g = 0; g < groups; ++g) {
    double ref = 0;
    for (uint32_t i = g * 64; i < std::min(count, g * 64 + 64); ++i) ref += xs[i];
    CHECK(partial[g] == doctest::Approx(ref));
  }
  // A fixed-size kernel rejects another workgroup size.
  CHECK_THROWS_WITH_AS(interpret(k, dims1(groups * 2, 32), bufs, sc), doctest::Contains("fixed to (64,1,1)"), Error);
}

TEST_CASE("barrier divergence is detected") {
  Kernel k;
  k.name = "diverge";
  k.buffers = {{"out", types::U32, Access::Write}};
  Builder b(k);
  ValueId lid = b.builtin(Op::LocalId, 0);
  b.begin_if(b.op(Op::Lt, {lid, u32(b, 3)}));
  b.loc = SourceLoc{intern_file("div.cpp"), 12, 5};
  b.barrier();
  b.loc = {};
  b.end_if();
  b.store(b.buffer(0), lid, lid);
  std::vector<uint32_t> out(8);
  std::vector<InterpBuffer> bufs = {buf(out)};
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 8), bufs, {}),
                       doctest::Contains("div.cpp:12:5: error: kernel 'diverge': barrier divergence"), Error);
  // With every item inside the branch it is fine.
  interpret(k, dims1(2, 3), bufs, {});
  CHECK(out[2] == 2);
}

TEST_CASE("barriers in a loop with a varying trip count diverge") {
  Kernel k;
  k.name = "loop_barrier";
  Builder b(k);
  ValueId lid = b.builtin(Op::LocalId, 0);
  b.begin_for(u32(b, 0), b.op(Op::Add, {lid, u32(b, 1)}), u32(b, 1));
  b.barrier();
  b.end_for();
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 4), {}, {}), doctest::Contains("barrier divergence"), Error);
}

TEST_CASE("out-of-bounds load names the buffer and the index") {
  Kernel k;
  k.name = "oob";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.loc = SourceLoc{intern_file("oob.cpp"), 3, 9};
  ValueId v = b.load(b.buffer(0), i);
  b.loc = {};
  b.store(b.buffer(1), i, v);
  std::vector<float> x(10), y(16);
  std::vector<InterpBuffer> bufs = {buf(x), buf(y)};
  CHECK_THROWS_WITH_AS(interpret(k, dims1(4, 4), bufs, {}),
                       doctest::Contains("oob.cpp:3:9: error: kernel 'oob': load out of bounds: buffer 'x' index 10 (size 10)"),
                       Error);
  // Negative indices are out of bounds too.
  Kernel k2;
  k2.name = "neg";
  k2.buffers = {{"x", types::F32, Access::ReadWrite}};
  Builder b2(k2);
  b2.store(b2.buffer(0), b2.const_int(types::I32, -1), b2.const_float(types::F32, 1.0));
  std::vector<InterpBuffer> bufs2 = {buf(x)};
  CHECK_THROWS_WITH_AS(interpret(k2, dims1(1, 1), bufs2, {}), doctest::Contains("store out of bounds: buffer 'x' index -1"), Error);
}

TEST_CASE("atomic histogram") {
  Kernel k;
  k.name = "histogram";
  k.buffers = {{"data", types::U32, Access::Read}, {"hist", types::U32, Access::ReadWrite}, {"old", types::U32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId bin = b.op(Op::Rem, {b.load(b.buffer(0), i), u32(b, 16)});
  ValueId old = b.op(Op::AtomicAdd, {b.buffer(1), bin, u32(b, 1)});
  b.store(b.buffer(2), i, old);
  b.end_if();
  const uint32_t n = 999;
  std::vector<uint32_t> data(n), hist(16, 0), old_v(n), ref(16, 0);
  for (uint32_t j = 0; j < n; ++j) data[j] = (j * 2654435761u) >> 7, ref[data[j] % 16]++;
  std::vector<InterpBuffer> bufs = {buf(data), buf(hist), buf(old_v)};
  std::vector<uint64_t> sc = {scalar_slot(n)};
  interpret(k, dims1((n + 31) / 32, 32), bufs, sc);
  CHECK(hist == ref);
  // Items run in linear order between rendezvous, so the returned old values
  // are each bin's running count.
  std::vector<uint32_t> seen(16, 0);
  for (uint32_t j = 0; j < n; ++j) CHECK(old_v[j] == seen[data[j] % 16]++);
}

TEST_CASE("loop with break and continue") {
  // sum of odd i in [0, n) with i*i < limit, via loop { if i >= n break; ... }
  Kernel k;
  k.name = "loop";
  k.buffers = {{"out", types::I32, Access::Write}};
  k.scalars = {{"n", types::I32}, {"limit", types::I32}};
  Builder b(k);
  ValueId zero = b.const_int(types::I32, 0), one = b.const_int(types::I32, 1);
  ValueId i = b.var(zero), sum = b.var(zero);
  b.begin_loop();
  ValueId iv = b.var_load(i);
  b.begin_if(b.op(Op::Ge, {iv, b.param(0)}));
  b.break_();
  b.end_if();
  b.var_store(i, b.op(Op::Add, {iv, one}));
  b.begin_if(b.op(Op::Eq, {b.op(Op::And, {iv, one}), zero}));
  b.continue_();
  b.end_if();
  b.begin_if(b.op(Op::Ge, {b.op(Op::Mul, {iv, iv}), b.param(1)}));
  b.break_();
  b.end_if();
  b.var_store(sum, b.op(Op::Add, {b.var_load(sum), iv}));
  b.end_loop();
  b.store(b.buffer(0), b.builtin(Op::GlobalId, 0), b.var_load(sum));
  std::vector<int32_t> out(1);
  std::vector<InterpBuffer> bufs = {buf(out)};
  auto ref = [](int n, int limit) {
    int s = 0;
    for (int j = 0; j < n; ++j) {
      if (j % 2 == 0) continue;
      if (j * j >= limit) break;
      s += j;
    }
    return s;
  };
  for (auto [n, limit] : {std::pair{10, 1000}, {10, 30}, {0, 5}}) {
    std::vector<uint64_t> sc = {scalar_slot(int32_t(n)), scalar_slot(int32_t(limit))};
    interpret(k, dims1(1, 1), bufs, sc);
    CHECK(out[0] == ref(n, limit));
  }
}

TEST_CASE("a runaway loop hits the step limit") {
  Kernel k;
  k.name = "forever";
  Builder b(k);
  b.begin_loop();
  b.end_loop();
  InterpOptions opt;
  opt.max_steps = 10000;
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 1), {}, {}, opt), doctest::Contains("step limit of 10000"), Error);
}

TEST_CASE("vector lines: load f32x4, lane-wise mul, reduce_add, extract/insert/construct") {
  Kernel k;
  k.name = "lines";
  Type f4(ScalarKind::F32, 4);
  k.buffers = {{"x", f4, Access::Read}, {"y", f4, Access::Write}, {"sums", types::F32, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId v = b.load(b.buffer(0), i);
  ValueId two = b.op(Op::Splat, {b.const_float(types::F32, 2.0)}, 0, f4);
  ValueId p = b.op(Op::Mul, {v, two});
  b.store(b.buffer(2), i, b.op(Op::ReduceAdd, {p}));
  // y = (p.w, p.z, p.y, p.x) with lane 0 then replaced by p.z + 100.
  ValueId rev = b.op(Op::Construct, {b.op(Op::Extract, {p}, 3), b.op(Op::Extract, {p}, 2), b.op(Op::Extract, {p}, 1),
                                     b.op(Op::Extract, {p}, 0)});
  ValueId z100 = b.op(Op::Add, {b.op(Op::Extract, {p}, 2), b.const_float(types::F32, 100.0)});
  b.store(b.buffer(1), i, b.op(Op::Insert, {rev, z100}, 0));
  const int n = 5;
  std::vector<float> x(4 * n), y(4 * n), sums(n);
  for (int j = 0; j < 4 * n; ++j) x[j] = float(j) * 0.25f;
  std::vector<InterpBuffer> bufs = {buf(x), buf(y), buf(sums)};
  interpret(k, dims1(n, 1), bufs, {});
  for (int j = 0; j < n; ++j) {
    const float* q = &x[4 * j];
    CHECK(sums[j] == ((2 * q[0] + 2 * q[1]) + 2 * q[2]) + 2 * q[3]);
    CHECK(y[4 * j + 0] == 2 * q[2] + 100.0f);
    CHECK(y[4 * j + 1] == 2 * q[2]);
    CHECK(y[4 * j + 2] == 2 * q[1]);
    CHECK(y[4 * j + 3] == 2 * q[0]);
  }
}

TEST_CASE("subgroup reduce, shuffle and lane with subgroup size 8") {
  Kernel k;
  k.name = "subgroups";
  k.buffers = {{"x", types::I32, Access::Read}, {"sum", types::I32, Access::Write}, {"rot", types::I32, Access::Write},
               {"lane", types::U32, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId v = b.load(b.buffer(0), i);
  b.store(b.buffer(1), i, b.op(Op::SubgroupAdd, {v}));
  ValueId lane = b.builtin(Op::SubgroupLane);
  ValueId size = b.builtin(Op::SubgroupSize);
  ValueId from = b.op(Op::Rem, {b.op(Op::Add, {lane, u32(b, 1)}), size});
  b.store(b.buffer(2), i, b.op(Op::SubgroupShuffle, {v, from}));
  b.store(b.buffer(3), i, lane);
  const uint32_t n = 64;
  std::vector<int32_t> x(n), sum(n), rot(n);
  std::vector<uint32_t> lanes(n);
  for (uint32_t j = 0; j < n; ++j) x[j] = int32_t(j * j) - 100;
  std::vector<InterpBuffer> bufs = {buf(x), buf(sum), buf(rot), buf(lanes)};
  InterpOptions opt;
  opt.subgroup_size = 8;
  interpret(k, dims1(2, 32), bufs, {}, opt);
  for (uint32_t j = 0; j < n; ++j) {
    uint32_t base = j / 8 * 8;
    int32_t ref = 0;
    for (uint32_t l = 0; l < 8; ++l) ref += x[base + l];
    CHECK(sum[j] == ref);
    CHECK(rot[j] == x[base + (j % 8 + 1) % 8]);
    CHECK(lanes[j] == j % 8);
  }
}

TEST_CASE("subgroup shuffle from outside the subgroup is an error") {
  Kernel k;
  k.name = "bad_shuffle";
  k.buffers = {{"out", types::U32, Access::Write}};
  Builder b(k);
  ValueId lane = b.builtin(Op::SubgroupLane);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.store(b.buffer(0), i, b.op(Op::SubgroupShuffle, {lane, b.op(Op::Add, {lane, u32(b, 4)})}));
  std::vector<uint32_t> out(8);
  std::vector<InterpBuffer> bufs = {buf(out)};
  InterpOptions opt;
  opt.subgroup_size = 8;
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 8), bufs, {}, opt), doctest::Contains("from lane 8 outside the subgroup"), Error);
  // A partial subgroup: lanes past the workgroup's end are not active.
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 6), bufs, {}, opt), doctest::Contains("not active"), Error);
}

TEST_CASE("for loops with unsigned bounds, and iv overflow ends the loop") {
  Kernel k;
  k.name = "ufor";
  k.buffers = {{"out", types::U64, Access::Write}};
  k.scalars = {{"start", types::U32}, {"end", types::U32}, {"step", types::U32}};
  Builder b(k);
  ValueId sum = b.var(b.const_int(types::U64, 0));
  ValueId count = b.var(b.const_int(types::U64, 0));
  ValueId iv = b.begin_for(b.param(0), b.param(1), b.param(2));
  b.var_store(sum, b.op(Op::Add, {b.var_load(sum), b.cast(types::U64, iv)}));
  b.var_store(count, b.op(Op::Add, {b.var_load(count), b.const_int(types::U64, 1)}));
  b.end_for();
  b.store(b.buffer(0), u32(b, 0), b.var_load(sum));
  b.store(b.buffer(0), u32(b, 1), b.var_load(count));
  std::vector<uint64_t> out(2);
  std::vector<InterpBuffer> bufs = {buf(out)};
  auto run = [&](uint32_t s, uint32_t e, uint32_t st) {
    std::vector<uint64_t> sc = {scalar_slot(s), scalar_slot(e), scalar_slot(st)};
    interpret(k, dims1(1, 1), bufs, sc);
  };
  run(5, 100, 3);
  uint64_t ref = 0, cnt = 0;
  for (uint32_t j = 5; j < 100; j += 3) ref += j, ++cnt;
  CHECK(out[0] == ref);
  CHECK(out[1] == cnt);
  // Bounds above INT32_MAX compare unsigned; 0xFFFFFFFC + 4 would wrap to 0.
  run(0xFFFFFFF0u, 0xFFFFFFFFu, 4);
  CHECK(out[1] == 4);
  CHECK(out[0] == 4ull * 0xFFFFFFF0u + 0 + 4 + 8 + 12);
  run(7, 3, 1);
  CHECK(out[1] == 0);
  CHECK_THROWS_WITH_AS(run(0, 10, 0), doctest::Contains("step must be positive"), Error);
}

TEST_CASE("shared memory starts poisoned") {
  Kernel k;
  k.name = "uninit";
  k.buffers = {{"out", types::F32, Access::Write}, {"iout", types::I32, Access::Write}};
  Builder b(k);
  ValueId s = b.shared(types::F32, 4);
  ValueId si = b.shared(types::I32, 4);
  ValueId lid = b.builtin(Op::LocalId, 0);
  b.store(b.buffer(0), lid, b.load(s, lid));
  b.store(b.buffer(1), lid, b.load(si, lid));
  std::vector<float> out(4, 0.0f);
  std::vector<int32_t> iout(4, 0);
  std::vector<InterpBuffer> bufs = {buf(out), buf(iout)};
  interpret(k, dims1(1, 4), bufs, {});
  for (float f : out) CHECK(std::isnan(f));
  for (int32_t v : iout) CHECK(uint32_t(v) == 0xCDCDCDCDu);
}

TEST_CASE("argument checks") {
  Kernel k = saxpy_kernel();
  std::vector<float> x(4), y(4);
  std::vector<InterpBuffer> bufs = {buf(x), buf(y)};
  std::vector<uint64_t> sc = {scalar_slot(1.0f), scalar_slot(4u)};
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 4), std::span(bufs).first(1), sc), doctest::Contains("expects 2 buffers"), Error);
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 4), bufs, std::span(sc).first(1)), doctest::Contains("expects 2 scalar"), Error);
  std::vector<uint64_t> wide = {scalar_slot(1.0), scalar_slot(4u)};  // f64 bits for an f32 parameter
  CHECK_THROWS_WITH_AS(interpret(k, dims1(1, 4), bufs, wide), doctest::Contains("scalar 'a'"), Error);
}

TEST_CASE("2D grid builtins and a 64x64x64 matmul in reasonable time") {
  // C[r][c] = sum_k A[r][k] * B[k][c], one work-item per output, 8x8 groups.
  Kernel k;
  k.name = "matmul";
  k.buffers = {{"A", types::F32, Access::Read}, {"B", types::F32, Access::Read}, {"C", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId n = b.param(0);
  ValueId col = b.builtin(Op::GlobalId, 0), row = b.builtin(Op::GlobalId, 1);
  ValueId acc = b.var(b.const_float(types::F32, 0.0));
  ValueId kk = b.begin_for(u32(b, 0), n, u32(b, 1));
  ValueId a = b.load(b.buffer(0), b.op(Op::Add, {b.op(Op::Mul, {row, n}), kk}));
  ValueId bb = b.load(b.buffer(1), b.op(Op::Add, {b.op(Op::Mul, {kk, n}), col}));
  b.var_store(acc, b.op(Op::Fma, {a, bb, b.var_load(acc)}));
  b.end_for();
  b.store(b.buffer(2), b.op(Op::Add, {b.op(Op::Mul, {row, n}), col}), b.var_load(acc));
  const uint32_t N = 64;
  std::vector<float> A(N * N), B(N * N), C(N * N);
  for (uint32_t j = 0; j < N * N; ++j) A[j] = float(j % 7) - 3.0f, B[j] = float(j % 5) * 0.5f;
  std::vector<InterpBuffer> bufs = {buf(A), buf(B), buf(C)};
  std::vector<uint64_t> sc = {scalar_slot(N)};
  LaunchDims d;
  d.grid = {N / 8, N / 8, 1};
  d.workgroup = {8, 8, 1};
  auto t0 = std::chrono::steady_clock::now();
  interpret(k, d, bufs, sc);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("64^3 matmul: " << s * 1e3 << " ms");
  CHECK(s < 2.0);
  for (uint32_t r = 0; r < N; ++r)
    for (uint32_t c = 0; c < N; ++c) {
      float ref = 0;
      for (uint32_t j = 0; j < N; ++j) ref = std::fma(A[r * N + j], B[j * N + c], ref);
      CHECK(C[r * N + c] == ref);
    }
}

TEST_CASE("select per lane, line compares, bitcast and subgroup broadcast") {
  Kernel k;
  k.name = "misc";
  Type i4(ScalarKind::I32, 4), u4(ScalarKind::U32, 4), f4(ScalarKind::F32, 4);
  k.buffers = {{"a", i4, Access::Read}, {"b", i4, Access::Read}, {"mx", i4, Access::Write},
               {"pick", i4, Access::Write}, {"bits", u4, Access::Write}, {"bc", types::I32, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId a = b.load(b.buffer(0), i), bv = b.load(b.buffer(1), i);
  b.store(b.buffer(2), i, b.op(Op::Select, {b.op(Op::Gt, {a, bv}), a, bv}));     // bool line
  b.store(b.buffer(3), i, b.op(Op::Select, {b.op(Op::Eq, {i, b.const_int(types::U32, 0)}), a, bv}));  // one bool
  b.store(b.buffer(4), i, b.op(Op::Bitcast, {b.cast(f4, a)}, 0, u4));
  ValueId first = b.op(Op::Extract, {a}, 0);
  b.store(b.buffer(5), i, b.op(Op::SubgroupBroadcast, {first, b.const_int(types::U32, 1)}));
  std::vector<int32_t> av = {1, -5, 7, 0, 2, 2, -9, 4}, bvv = {3, -6, 7, -1, 0, 5, -8, 4};
  std::vector<int32_t> mx(8), pick(8), bc(2);
  std::vector<uint32_t> bits(8);
  std::vector<InterpBuffer> bufs = {buf(av), buf(bvv), buf(mx), buf(pick), buf(bits), buf(bc)};
  interpret(k, dims1(1, 2), bufs, {});
  for (int j = 0; j < 8; ++j) {
    CHECK(mx[j] == std::max(av[j], bvv[j]));
    CHECK(pick[j] == (j < 4 ? av[j] : bvv[j]));
    float f = float(av[j]);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    CHECK(bits[j] == u);
  }
  CHECK(bc == std::vector<int32_t>{2, 2});
}

TEST_CASE("permute_bytes picks bytes of a ++ b by the index's bytes, wrapping past the table") {
  // Tables of 16 bytes (u32x4): a = bytes 0..15, b = bytes 100..115.
  const Type T(ScalarKind::U32, 4), I(ScalarKind::U32, 4);
  Kernel k;
  k.name = "permute";
  k.buffers = {{"a", T, Access::Read}, {"b", T, Access::Read}, {"idx", I, Access::Read}, {"out", I, Access::Write}};
  Builder b(k);
  ValueId z = u32(b, 0);
  b.store(b.buffer(3), z, b.op(Op::PermuteBytes, {b.load(b.buffer(0), z), b.load(b.buffer(1), z), b.load(b.buffer(2), z)}));
  std::vector<uint8_t> a(16), bb(16), idx = {0, 15, 16, 31, 32, 47, 255, 3, 20, 20, 1, 2, 17, 18, 33, 0}, out(16, 0xEE);
  for (int i = 0; i < 16; ++i) a[size_t(i)] = uint8_t(i), bb[size_t(i)] = uint8_t(100 + i);
  std::vector<InterpBuffer> bufs = {buf(a), buf(bb), buf(idx), buf(out)};
  interpret(k, dims1(1, 1), bufs, {});
  // index mod 32: 0 -> a0, 15 -> a15, 16 -> b0, 31 -> b15, 32 -> a0, 47 -> a15, 255 -> b15, ...
  std::vector<uint8_t> want = {0, 15, 100, 115, 0, 15, 115, 3, 104, 104, 1, 2, 101, 102, 1, 0};
  CHECK(out == want);

  Kernel bad;
  Builder bb2(bad);
  ValueId f = bb2.const_float(Type(ScalarKind::F32, 4), 1.0), three = bb2.const_int(Type(ScalarKind::U32, 3), 1);
  ValueId ix = bb2.const_int(I, 1), fx = bb2.const_float(types::F32, 1.0);
  CHECK(bb2.type_of(bb2.op(Op::PermuteBytes, {f, f, ix})) == I);  // any non-bool table type
  CHECK_THROWS_WITH_AS(bb2.op(Op::PermuteBytes, {three, three, ix}), doctest::Contains("4, 8, 16, 32 or 64 bytes"), Error);
  CHECK_THROWS_WITH_AS(bb2.op(Op::PermuteBytes, {f, f, fx}), doctest::Contains("index must be an integer"), Error);
  CHECK_THROWS_WITH_AS(bb2.op(Op::PermuteBytes, {f, ix, ix}), doctest::Contains("operand types differ"), Error);
}
