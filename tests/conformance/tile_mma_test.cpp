// tile_mma_bf16 (ir/ops.h): the matrix-engine block product. The interpreter
// defines it; on a CPU with AMX-BF16 the JIT's tile code must give the same
// C for every block shape the GEMM uses (full 32×32, 16-row and 16-column
// halves, ragged edges, a K tail of 1-15 pairs, accumulating or not). The
// inputs are small integers, so every sum is exact in any order and the
// comparison is exact too. Elsewhere the op is refused by name.
#include <doctest/doctest.h>

#include "codegen/target.h"
#include "dsl/dsl.h"
#include "ir/interpreter.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

constexpr uint32_t kMaxPairs = 70, kMaxLd = 40;

// out = the block product of A (integers of a, as bf16) and B (integers of
// b, rows 2p and 2p + 1 joined into pair words), onto C's integers when
// accumulating, computed in shared arrays at offsets ci and ai.
ir::Kernel tile_kernel(bool acc) {
  return kernel(std::string("tile_mma_check_") + (acc ? "acc" : "set"), [&](KernelBuilder& kb) {
    auto a = kb.input("a", i32);
    auto b = kb.input("b", i32);
    auto c0 = kb.input("c0", i32);
    auto out = kb.output("out", f32);
    auto m = kb.scalar("m", u32), n = kb.scalar("n", u32), kp = kb.scalar("kp", u32);
    auto ldc = kb.scalar("ldc", u32), lda = kb.scalar("lda", u32), ldb = kb.scalar("ldb", u32);
    kb.workgroup(1);
    const uint32_t ci = 3, ai = 5;
    auto as = shared_array(bf16, 32 * (2 * kMaxPairs + 8) + ai);
    auto bs = shared_array(u32, kMaxPairs * kMaxLd);
    auto cs = shared_array(f32, 32 * kMaxLd + ci);
    for_range(0u, m * lda, [&](Value i) { as[i + ai] = cast(bf16, cast(f32, a[i])); });
    for_range(0u, kp * ldb, [&](Value i) {
      Value p = i / ldb, j = i % ldb;
      Value lo = cast(u32, bitcast(u16, cast(bf16, cast(f32, b[2u * p * ldb + j]))));
      Value hi = cast(u32, bitcast(u16, cast(bf16, cast(f32, b[(2u * p + 1u) * ldb + j]))));
      bs[i] = lo | (hi << 16u);
    });
    for_range(0u, m * ldc, [&](Value i) { cs[i + ci] = cast(f32, c0[i]); });
    tile_mma_bf16({cs, constant(u32, ci)}, {as, constant(u32, ai)}, {bs, constant(u32, 0u)}, m, n, kp, ldc, lda, ldb, acc);
    for_range(0u, m * ldc, [&](Value i) { out[i] = cs[i + ci]; });
  });
}

struct Block {
  uint32_t m, n, kp;
};

ir::Workload workload(const Block& s) {
  const uint32_t ldc = s.n + 3, lda = 2 * s.kp + 6, ldb = 32;
  ir::Workload w;
  w.dims.grid = {1, 1, 1};
  w.dims.workgroup = {1, 1, 1};
  w.buffers = {{size_t(s.m) * lda, -8, 8}, {size_t(2 * s.kp) * ldb, -8, 8}, {size_t(s.m) * ldc, -50, 50},
               {size_t(s.m) * ldc, -1, 1, false, true}};
  w.scalars = {ir::scalar_slot(s.m), ir::scalar_slot(s.n), ir::scalar_slot(s.kp), ir::scalar_slot(ldc), ir::scalar_slot(lda),
               ir::scalar_slot(ldb)};
  w.tolerance = 0;
  return w;
}

const Block kBlocks[] = {{32, 32, 16}, {32, 32, 37}, {16, 16, 16}, {17, 5, 1},  {1, 1, 3},
                         {20, 32, 33}, {32, 7, 50},  {5, 20, 64},  {16, 32, 15}, {32, 16, 70}};

}  // namespace

TEST_CASE("tile_mma_bf16 on the CPU matches the interpreter exactly on every block shape") {
  if (!codegen::cpu_caps().matrix_tiles) {
    MESSAGE("no matrix tiles (AMX-BF16) on this CPU: tile_mma_bf16 runs in the interpreter only");
    // The interpreter still runs it: the checks below then compare it with itself,
    // so only the refusal is tested here.
    CHECK_THROWS_WITH_AS(codegen::check_capabilities(tile_kernel(false), codegen::cpu_caps()),
                         doctest::Contains("matrix tiles"), ir::Error);
    return;
  }
  auto dev = rt::create_device("cpu");
  for (bool acc : {false, true})
    for (const Block& s : kBlocks) {
      CAPTURE(acc);
      CAPTURE(s.m);
      CAPTURE(s.n);
      CAPTURE(s.kp);
      rt::CheckOptions co;
      co.time = false;
      const rt::CheckResult r = rt::run_and_check(*dev, tile_kernel(acc), workload(s), co);
      CHECK_MESSAGE(r.ok, r.message);
    }
}

TEST_CASE("tile_mma_bf16 is refused by name on targets without matrix tiles") {
  for (const std::string& name : rt::available_devices()) {
    if (name == "cpu") continue;
    auto dev = rt::create_device(name);
    if (!dev->caps().i64) continue;  // refused first for the test kernel's u64 indices (WebGPU)
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(codegen::check_capabilities(tile_kernel(true), dev->caps()), doctest::Contains("has no matrix tiles"),
                         ir::Error);
  }
}

TEST_CASE("the interpreter rejects tile_mma_bf16 blocks over 32 and runs past a buffer, naming them") {
  // C straight into a buffer of m·ldc floats; A and B as the check kernel builds them.
  auto run = [](uint32_t m, uint32_t n, uint32_t kp, size_t c_elems) {
    const ir::Kernel k = kernel("tile_mma_bad", [&](KernelBuilder& kb) {
      auto a = kb.input("a", bf16);
      auto b = kb.input("b", u32);
      auto c = kb.output("c", f32);
      kb.workgroup(1);
      tile_mma_bf16({c, constant(u32, 0u)}, {a, constant(u32, 0u)}, {b, constant(u32, 0u)}, constant(u32, m), constant(u32, n),
                    constant(u32, kp), constant(u32, n), constant(u32, 2 * kp), constant(u32, n), false);
    });
    std::vector<uint16_t> a(size_t(m) * 2 * kp, 0x3f80);
    std::vector<uint32_t> b(size_t(kp) * n, 0x3f803f80u);
    std::vector<float> c(c_elems, -1.0f);
    const ir::InterpBuffer bufs[] = {{a.data(), a.size() * 2}, {b.data(), b.size() * 4}, {c.data(), c.size() * 4}};
    ir::LaunchDims dims;
    dims.grid = {1, 1, 1};
    dims.workgroup = {1, 1, 1};
    ir::interpret(k, dims, bufs, {});
    return c;
  };
  const std::vector<float> ok = run(3, 5, 4, 15);
  for (float v : ok) CHECK(v == 8.0f);  // 4 pairs of 1·1 + 1·1
  CHECK_THROWS_WITH_AS(run(33, 5, 4, 33 * 5), doctest::Contains("block must be 1..32 × 1..32, got 33 × 5"), ir::Error);
  CHECK_THROWS_WITH_AS(run(3, 5, 4, 14), doctest::Contains("tile_mma_bf16 C row 2 out of bounds"), ir::Error);
}
