#include <doctest/doctest.h>

#include <random>

#include "codegen/cpp.h"
#include "ir/half.h"
#include "jit/jit.h"
#include "runtimes/compile_all.h"
#include "tests/codegen/test_kernels.h"
#include "tests/runtime/harness.h"

using namespace kgen;
using kgen::test::bytes_of;

namespace {

rt::Device& cpu() {
  static std::unique_ptr<rt::Device> d = rt::create_device("cpu", {2});
  return *d;
}

std::vector<float> randf(size_t n, float lo, float hi, unsigned seed = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

ir::LaunchDims dims1(uint64_t n, uint32_t wg) {
  ir::LaunchDims d;
  d.workgroup = {wg, 1, 1};
  d.grid = {uint32_t((n + wg - 1) / wg), 1, 1};
  return d;
}

}  // namespace

TEST_CASE("cpu: saxpy with odd n") {
  const uint32_t n = 100003;
  auto x = randf(n, -1, 1, 1), y = randf(n, -1, 1, 2);
  test::run_and_compare(cpu(), test::saxpy(), dims1(n, 256), {bytes_of(x), bytes_of(y)},
                        {ir::scalar_slot(2.5f), ir::scalar_slot(n)});
}

TEST_CASE("cpu: saxpy_loop (return, var, loop, fma)") {
  const uint32_t n = 1001;
  auto x = randf(n, -1, 1, 3), y = randf(n, -1, 1, 4);
  test::run_and_compare(cpu(), test::saxpy_loop(), dims1(n, 64), {bytes_of(x), bytes_of(y)},
                        {ir::scalar_slot(0.5f), ir::scalar_slot(n), ir::scalar_slot(uint32_t(7))}, 1e-5);
}

TEST_CASE("cpu: shared-memory reduction with barriers, workgroup 64") {
  const uint32_t n = 10000;
  auto x = randf(n, -1, 1, 5);
  auto d = dims1(n, 64);
  test::run_and_compare(cpu(), test::reduce_sum(), d, {bytes_of(x), std::vector<uint8_t>(d.grid[0] * 4)},
                        {ir::scalar_slot(n)}, 1e-5);
}

TEST_CASE("cpu: tiled matmul with barriers in a loop, workgroup 8x8") {
  const uint32_t n = 32;
  auto a = randf(n * n, -1, 1, 6), b = randf(n * n, -1, 1, 7);
  ir::LaunchDims d;
  d.workgroup = {8, 8, 1};
  d.grid = {n / 8, n / 8, 1};
  test::run_and_compare(cpu(), test::matmul_tiled(), d, {bytes_of(a), bytes_of(b), std::vector<uint8_t>(n * n * 4)},
                        {ir::scalar_slot(n)}, 1e-5);
}

TEST_CASE("cpu: atomic histogram") {
  const uint32_t n = 100000;
  std::vector<uint32_t> data(n);
  std::mt19937 g(8);
  for (auto& v : data) v = g();
  test::run_and_compare(cpu(), test::histogram(), dims1(n, 128), {bytes_of(data), std::vector<uint8_t>(16 * 4, 0)},
                        {ir::scalar_slot(n)});
}

TEST_CASE("cpu: vector lines f32x8 and f32x16") {
  for (int L : {8, 16}) {
    const uint32_t n = 1001;
    auto x = randf(n * L, -2, 2, 9);
    test::run_and_compare(cpu(), test::lines(L), dims1(n, 32),
                          {bytes_of(x), std::vector<uint8_t>(n * L * 4), std::vector<uint8_t>(n * 4)},
                          {ir::scalar_slot(1.5f), ir::scalar_slot(n)}, 1e-5);
  }
}

TEST_CASE("cpu: exp, tanh, erf (vectorised through libmvec)") {
  const uint32_t n = 4099;
  auto x = randf(n, -4, 4, 10);
  test::run_and_compare(cpu(), test::transcendental(), dims1(n, 256), {bytes_of(x), std::vector<uint8_t>(n * 4)},
                        {ir::scalar_slot(n)}, 2e-6);
}

TEST_CASE("cpu: f16 inputs, per-op rounding") {
  const uint32_t n = 2000;
  auto xf = randf(n, -8, 8, 11);
  std::vector<uint16_t> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = ir::f32_to_f16(xf[i]);
  test::run_and_compare(cpu(), test::half_math(), dims1(n, 64),
                        {bytes_of(x), std::vector<uint8_t>(n * 2), std::vector<uint8_t>(n * 4)}, {ir::scalar_slot(n)}, 0);
}

TEST_CASE("cpu: saturating casts") {
  std::vector<float> x = {0.f, -0.f, 1.5f, -1.5f, 3.99f, -3.99f, 127.5f, 128.f, 255.9f, 256.f, -129.f,
                          1e10f, -1e10f, 2147483520.f, 2147483648.f, -2147483648.f, 4294967296.f,
                          __builtin_nanf(""), __builtin_inff(), -__builtin_inff(), 0.4f, -0.4f};
  const uint32_t n = uint32_t(x.size());
  test::run_and_compare(cpu(), test::casts(), dims1(n, 8),
                        {bytes_of(x), std::vector<uint8_t>(n * 4), std::vector<uint8_t>(n), std::vector<uint8_t>(n),
                         std::vector<uint8_t>(n * 4), std::vector<uint8_t>(n * 4)},
                        {ir::scalar_slot(n)}, 0);
}

TEST_CASE("cpu: compile cache hit") {
  auto a = cpu().compile(test::saxpy());
  auto b = cpu().compile(test::saxpy());
  CHECK(b->cache_hit());
  // The entry symbol derives from the structural hash (names don't split the cache).
  CHECK(b->entry().rfind("kgen_k", 0) == 0);
  CHECK(b->entry() == a->entry());
}

TEST_CASE("cpu: capability refusal and launch validation") {
  CHECK_THROWS_WITH(cpu().compile(test::subgroup_sum()), doctest::Contains("has no subgroups"));
  auto ck = cpu().compile(test::saxpy());
  auto buf = cpu().alloc(64);
  rt::LaunchArgs a;
  a.buffers = {buf.get()};
  a.scalars = {ir::scalar_slot(1.f), ir::scalar_slot(16u)};
  CHECK_THROWS_WITH_AS(cpu().launch(*ck, a), doctest::Contains("expects 2 buffers, got 1"), std::invalid_argument);
  auto r = cpu().compile(test::reduce_sum());
  a.buffers = {buf.get(), buf.get()};
  a.scalars = {ir::scalar_slot(16u)};
  a.dims.workgroup = {32, 1, 1};
  CHECK_THROWS_WITH_AS(cpu().launch(*r, a), doctest::Contains("fixed 64x1x1"), std::invalid_argument);
}

TEST_CASE("jit: trivial function and compile errors") {
  auto m = jit::compile_cpp("extern \"C\" int kg_add(int a, int b) { return a + b; }");
  CHECK(m->lookup_fn<int (*)(int, int)>("kg_add")(2, 40) == 42);
  CHECK(m->stats().total_ms() > 0);
  try {
    jit::compile_cpp("extern \"C\" int broken( { return x; }");
    FAIL("expected a compile error");
  } catch (const jit::CompileError& e) {
    CHECK(e.diagnostics.find("error") != std::string::npos);
    CHECK(std::string(e.what()).find("   1| extern") != std::string::npos);
  }
  CHECK(jit::jit_toolchain_id().find("clang 19") == 0);
}

TEST_CASE("cpu: saxpy item loop is vectorised with the host's streaming vector width") {
  rt::CompileOptions o;
  o.keep_ir = true;
  auto s = cpu().compile(test::saxpy(), o);
  const codegen::TargetCaps& caps = cpu().caps();
  const uint32_t bits = caps.cpu.streaming_vector_bits ? caps.cpu.streaming_vector_bits : caps.vector_bits;
  MESSAGE("host vector registers: " << bits << " bits");
  const std::string vec = "<" + std::to_string(bits / 32) + " x float>";
  CHECK_MESSAGE(s->debug_ir().find(vec) != std::string::npos, s->debug_ir());
  CHECK(s->debug_asm().find(bits >= 512 ? "zmm" : bits >= 256 ? "ymm" : "xmm") != std::string::npos);
}

TEST_CASE("cpu: only cheap scalar kernels take the family's streaming vector width") {
  codegen::TargetCaps caps = cpu().caps();
  caps.vector_bits = 512;
  caps.cpu.streaming_vector_bits = 256;
  CHECK(codegen::auto_vector_bits(test::saxpy(), caps) == 256);
  CHECK(codegen::auto_vector_bits(test::transcendental(), caps) == 512);  // exp chains want zmm in flight
  CHECK(codegen::auto_vector_bits(test::lines(16), caps) == 512);         // explicit lines keep their width
  CHECK(codegen::auto_vector_bits(test::matmul_tiled(), caps) == 512);    // loops and indexed walks
  CHECK(codegen::auto_vector_bits(test::histogram(), caps) == 512);       // atomics
  caps.cpu.streaming_vector_bits = 0;
  CHECK(codegen::auto_vector_bits(test::saxpy(), caps) == 512);
}

TEST_CASE("cpu: straight-line scalar kernels compile with the lean pass list, loops and lines with -O2's") {
  CHECK(codegen::lean_passes_suffice(test::saxpy()));
  CHECK(codegen::lean_passes_suffice(test::transcendental()));
  CHECK(codegen::lean_passes_suffice(test::casts()));
  CHECK_FALSE(codegen::lean_passes_suffice(test::saxpy_loop()));     // a loop inside the item
  CHECK_FALSE(codegen::lean_passes_suffice(test::lines(8)));         // lines: their lane loops want unrolling
  CHECK_FALSE(codegen::lean_passes_suffice(test::reduce_sum()));     // barriers, workgroup memory
  CHECK_FALSE(codegen::lean_passes_suffice(test::histogram()));      // atomics
}

TEST_CASE("cpu: the lean pass list vectorises the item loop; AVX-512 folds its tail into one masked step") {
  rt::CompileOptions o;
  o.keep_ir = true;
  auto s = cpu().compile(test::transcendental(), o);
  const std::string& ir = s->debug_ir();
  CHECK_MESSAGE(ir.find(" x float>") != std::string::npos, ir);
  if (cpu().caps().vector_bits >= 512) CHECK_MESSAGE(ir.find("@llvm.masked.store") != std::string::npos, ir);
}

namespace {

// out[i] = a * x[i] for global x ids below n: `if (i < n) {...}` when
// early_return is false, `if (i >= n) return; ...` when true (the item loop's
// bound takes either test over); extra_store adds a store after the guard,
// which keeps an `if (i < n)` inside the loop.
ir::Kernel guarded_scale(bool early_return, bool extra_store) {
  using namespace ir;
  Kernel k;
  k.name = std::string("guarded_scale") + (early_return ? "_ret" : "") + (extra_store ? "_extra" : "");
  k.buffers = {{"x", types::F32, Access::Read}, {"out", types::F32, Access::Write}, {"last", types::U32, Access::Write}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  if (early_return) {
    b.begin_if(b.op(Op::Ge, {i, b.param(1)}));
    b.return_();
    b.end_if();
    b.store(b.buffer(1), i, b.op(Op::Mul, {b.param(0), b.load(b.buffer(0), i)}));
  } else {
    b.begin_if(b.op(Op::Lt, {i, b.param(1)}));
    b.store(b.buffer(1), i, b.op(Op::Mul, {b.param(0), b.load(b.buffer(0), i)}));
    b.end_if();
  }
  if (extra_store) {
    b.begin_if(b.op(Op::Eq, {i, b.const_int(types::U32, 0)}));
    b.store(b.buffer(2), b.const_int(types::U32, 0), b.param(1));
    b.end_if();
  }
  return k;
}

}  // namespace

TEST_CASE("cpu: item loops bounded by a global-id guard: tails, groups past n, 2-D grids and workgroups") {
  const uint32_t n = 1000;
  auto x = randf(2048, -1, 1, 11);
  auto launch = [](uint32_t gx, uint32_t gy, uint32_t wx, uint32_t wy) {
    ir::LaunchDims d;
    d.grid = {gx, gy, 1};
    d.workgroup = {wx, wy, 1};
    return d;
  };
  for (bool ret : {false, true})
    for (bool extra : {false, true}) {
      const ir::Kernel k = guarded_scale(ret, extra);
      CAPTURE(k.name);
      // The guard is the loop bound, unless a store follows an `if (i < n)`.
      CHECK((codegen::emit_cpp(k).find("if (kg_xe_0 > p1) kg_xe_0 = p1;") != std::string::npos) == (ret || !extra));
      // Whole groups and a tail; groups wholly past n; rows of a 2-D grid
      // repeating the x ids; a 2-D workgroup; n = 0.
      for (auto [d, m] : {std::pair{launch(16, 1, 64, 1), n}, std::pair{launch(20, 1, 64, 1), n},
                          std::pair{launch(8, 3, 128, 1), n}, std::pair{launch(64, 1, 16, 2), n},
                          std::pair{launch(4, 1, 64, 1), 0u}}) {
        CAPTURE(m);
        test::run_and_compare(cpu(), k, d, {bytes_of(x), std::vector<uint8_t>(2048 * 4), std::vector<uint8_t>(4)},
                              {ir::scalar_slot(1.5f), ir::scalar_slot(m)});
      }
    }
}

namespace {

// out[gid] = 2 x[gid] for the items whose local x id is below u: `if (lid <
// u) {...}`, or `if (lid >= u) return; ...` (the item loop's bound takes
// either over); u is a parameter, or the constant 24 when `constant`.
ir::Kernel local_guard(bool early_return, bool constant, uint32_t fixed_wg) {
  using namespace ir;
  Kernel k;
  k.name = std::string("local_guard") + (early_return ? "_ret" : "") + (constant ? "_const" : "");
  k.buffers = {{"x", types::F32, Access::Read}, {"out", types::F32, Access::ReadWrite}};
  k.scalars = {{"u", types::U32}};
  k.workgroup_size = {fixed_wg, fixed_wg ? 1u : 0u, fixed_wg ? 1u : 0u};
  Builder b(k);
  ValueId lid = b.builtin(Op::LocalId, 0), gid = b.builtin(Op::GlobalId, 0);
  ValueId u = constant ? b.const_int(types::U32, 24) : b.param(0);
  auto body = [&] { b.store(b.buffer(1), gid, b.op(Op::Add, {b.load(b.buffer(0), gid), b.load(b.buffer(0), gid)})); };
  if (early_return) {
    b.begin_if(b.op(Op::Ge, {lid, u}));
    b.return_();
    b.end_if();
    body();
  } else {
    b.begin_if(b.op(Op::Lt, {lid, u}));
    body();
    b.end_if();
  }
  return k;
}

}  // namespace

TEST_CASE("cpu: item loops bounded by a local-id guard (tree reduction levels): below, at and past the group") {
  auto x = randf(640, -1, 1, 12);
  for (bool ret : {false, true})
    for (bool constant : {false, true})
      for (uint32_t fixed : {0u, 64u}) {
        const ir::Kernel k = local_guard(ret, constant, fixed);
        CAPTURE(k.name);
        CAPTURE(fixed);
        CHECK(codegen::emit_cpp(k).find(") kg_xe_0 = kg_x0_0 + ") != std::string::npos);  // the bound, not a test
        for (uint32_t u : {0u, 5u, 63u, 64u, 1000u}) {
          CAPTURE(u);
          test::run_and_compare(cpu(), k, dims1(640, 64), {bytes_of(x), bytes_of(randf(640, 5, 6, 13))}, {ir::scalar_slot(u)});
        }
      }
}

TEST_CASE("cpu: a launch past 2^32 work-items on an axis is refused (global ids are 32-bit)") {
  auto& dev = cpu();
  auto k = dev.compile(test::saxpy());
  auto bx = dev.alloc(16), by = dev.alloc(16);
  ir::LaunchDims d;
  d.grid = {uint32_t(1) << 24, 1, 1};
  d.workgroup = {256, 1, 1};
  CHECK_THROWS_WITH_AS(dev.launch(*k, {d, {bx.get(), by.get()}, {ir::scalar_slot(1.0f), ir::scalar_slot(4u)}}),
                       doctest::Contains("global ids are 32-bit"), std::invalid_argument);
}

TEST_CASE("cpu: compile_all compiles concurrently, each result as a compile on its own") {
  // keep_ir bypasses the cache, so every kernel really compiles, on two threads.
  rt::CompileOptions opt;
  opt.keep_ir = true;
  const std::vector<ir::Kernel> ks = {test::saxpy(), test::saxpy_loop(), test::reduce_sum(), test::matmul_tiled(),
                                      test::histogram(), test::saxpy()};
  std::vector<const ir::Kernel*> ptrs;
  for (const ir::Kernel& k : ks) ptrs.push_back(&k);
  auto all = rt::compile_all(cpu(), ptrs, opt, 2);
  REQUIRE(all.size() == ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    CAPTURE(ks[i].name);
    CHECK(all[i]->kernel().name == ks[i].name);
    CHECK(all[i]->debug_ir() == cpu().compile(ks[i], opt)->debug_ir());  // the same code, whatever ran beside it
  }
  // The compiled saxpy runs: y = 2x + y.
  const uint32_t n = 1000;
  auto x = randf(n, -1, 1, 11), y = randf(n, -1, 1, 12);
  auto bx = cpu().alloc(n * 4), by = cpu().alloc(n * 4);
  bx->upload(x.data(), n * 4);
  by->upload(y.data(), n * 4);
  rt::LaunchArgs a;
  a.buffers = {bx.get(), by.get()};
  a.scalars = {ir::scalar_slot(2.f), ir::scalar_slot(n)};
  a.dims = dims1(n, 64);
  cpu().launch(*all[5], a);
  std::vector<float> got(n);
  by->download(got.data(), n * 4);
  for (uint32_t i = 0; i < n; ++i) REQUIRE(got[i] == 2.f * x[i] + y[i]);
  // A failing kernel among them: its error, after the others ended.
  ptrs.insert(ptrs.begin() + 2, nullptr);
  const ir::Kernel sub = test::subgroup_sum();
  ptrs[2] = &sub;
  CHECK_THROWS_WITH(rt::compile_all(cpu(), ptrs, opt, 2), doctest::Contains("has no subgroups"));
}
