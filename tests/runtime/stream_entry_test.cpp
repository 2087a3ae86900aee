// The CPU runtime's streaming entry: a plain SIMT kernel whose launch writes
// past the cache runs a second compile of its item loop whose aligned vector
// stores are nontemporal (codegen::CppOptions::stream_item_stores).
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "codegen/cpp.h"
#include "codegen/target.h"
#include "ir/builder.h"
#include "jit/jit.h"
#include "runtimes/kernel_cache.h"
#include "runtimes/runtime.h"
#include "tests/cache/temp_cache.h"
#include "tests/codegen/test_kernels.h"

using namespace kgen;

namespace {

// out[i] = a * x[i] for i < n (exact in f32, so any reference agrees).
ir::Kernel scale() {
  using namespace ir;
  Kernel k;
  k.name = "stream_scale";
  k.buffers = {{"x", types::F32, Access::Read}, {"out", types::F32, Access::Write}};
  k.scalars = {{"a", types::F32}, {"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(1)}));
  b.store(b.buffer(1), i, b.op(Op::Mul, {b.param(0), b.load(b.buffer(0), i)}));
  b.end_if();
  return k;
}

// Kernels whose store lands somewhere other than the item's own x id.
ir::Kernel store_at(bool neighbour) {
  using namespace ir;
  Kernel k;
  k.name = "store_elsewhere";
  k.buffers = {{"x", types::F32, Access::Read}, {"out", types::F32, Access::Write}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId at = neighbour ? b.op(Op::Add, {i, b.const_int(types::U32, 1)}) : b.builtin(Op::GlobalId, 1);
  b.store(b.buffer(1), at, b.load(b.buffer(0), i));
  return k;
}

size_t entries_named(rt::KernelCache& cache, const std::string& what) {
  size_t n = 0;
  for (const rt::CacheEntryInfo& e : cache.list()) n += e.meta.find(what) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("stream entry: which kernels have one, and the bytes they write per item") {
  CHECK(codegen::item_stream_store_bytes(scale()) == 4);
  CHECK(codegen::item_stream_store_bytes(test::transcendental()) == 4);
  CHECK(codegen::item_stream_store_bytes(test::saxpy()) == 0);        // y = a·x + y: its lines are in cache
  CHECK(codegen::item_stream_store_bytes(store_at(true)) == 0);       // a neighbour's slot
  CHECK(codegen::item_stream_store_bytes(store_at(false)) == 0);      // indexed by the y id
  CHECK(codegen::item_stream_store_bytes(test::saxpy_loop()) == 0);   // loops: not the lean list
  CHECK(codegen::item_stream_store_bytes(test::lines(16)) == 0);      // lines choose their own stores
  ir::Kernel fixed = scale();
  fixed.workgroup_size = {32, 1, 1};  // half a 64-item step
  CHECK(codegen::item_stream_store_bytes(fixed) == 0);
  fixed.workgroup_size = {128, 1, 1};
  CHECK(codegen::item_stream_store_bytes(fixed) == 4);
}

#if defined(__x86_64__)
TEST_CASE("stream entry: its item loop stores aligned vectors nontemporally and fences; the plain entry does not") {
  const ir::Kernel k = scale();
  for (bool stream : {false, true}) {
    CAPTURE(stream);
    codegen::CppOptions co;
    co.stream_item_stores = stream;
    jit::JitOptions jo;
    jo.opt_level = 2;
    jo.lean_passes = true;
    jo.stream_aligned_stores = stream;
    jo.keep_asm = jo.keep_ir = true;
    const std::string src = codegen::emit_cpp(k, co);
    CHECK((src.find("__builtin_assume(wgx % 64u == 0)") != std::string::npos) == stream);
    const jit::ObjectCode obj = jit::compile_to_object(src, jo);
    CHECK_MESSAGE((obj.assembly.find("movntps") != std::string::npos) == stream, obj.assembly);
    CHECK((obj.assembly.find("sfence") != std::string::npos) == stream);
  }
}
#endif

TEST_CASE("stream entry: launches past the cache run it, from a fresh compile and from the disk cache") {
  test::TempCacheDir dir;
  const ir::Kernel k = scale();
  // An odd n past the bound: whole 64-item steps and a tail.
  const uint32_t n = uint32_t(codegen::stream_min_output_bytes(rt::create_device("cpu", {1})->caps()) / 4) + 1001;
  std::vector<float> x(n);
  std::mt19937 g(5);
  std::uniform_real_distribution<float> u(-2, 2);
  for (float& v : x) v = u(g);
  auto run = [&](rt::Device& dev, rt::Buffer& out, uint32_t wg) {
    auto bx = dev.alloc(x.size() * 4);
    bx->upload(x.data(), x.size() * 4);
    std::vector<float> got(n, std::nanf(""));
    out.upload(got.data(), got.size() * 4);  // poisoned
    ir::LaunchDims d;
    d.workgroup = {wg, 1, 1};
    d.grid = {(n + wg - 1) / wg, 1, 1};
    rt::LaunchArgs a;
    a.dims = d;
    a.buffers = {bx.get(), &out};
    a.scalars = {ir::scalar_slot(1.5f), ir::scalar_slot(n)};
    dev.launch(*dev.compile(k), a);
    out.download(got.data(), got.size() * 4);
    size_t wrong = 0;
    for (uint32_t i = 0; i < n; ++i) wrong += got[i] != 1.5f * x[i];
    CHECK(wrong == 0);
  };
  {
    rt::KernelCache cache(rt::CacheConfig{true, dir.path});
    auto dev = rt::create_device("cpu", {2, &cache});
    auto out = dev->alloc(size_t(n) * 4);
    run(*dev, *out, 96);  // not whole 64-item steps: the plain entry
    CHECK(entries_named(cache, "_stream") == 0);
    run(*dev, *out, 64);
    CHECK(entries_named(cache, "_stream") == 1);
    // Caller memory 4 bytes off a 64-byte boundary: the plain entry, still right.
    std::vector<float> host(size_t(n) + 16 + 1);
    float* at = host.data() + (16 - (reinterpret_cast<uintptr_t>(host.data()) % 64) / 4) % 16 + 1;
    auto wrapped = dev->wrap(at, size_t(n) * 4);
    run(*dev, *wrapped, 64);
  }
  // A new process's view: both entries come from disk, streaming_bytes with them.
  rt::KernelCache cache(rt::CacheConfig{true, dir.path});
  auto dev = rt::create_device("cpu", {2, &cache});
  auto out = dev->alloc(size_t(n) * 4);
  run(*dev, *out, 256);
  CHECK(cache.stats().disk_hits == 2);
  CHECK(cache.stats().misses == 0);
}
