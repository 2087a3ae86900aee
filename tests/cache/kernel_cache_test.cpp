// In-process behaviour of the composite cache: sharing between structurally
// equal kernels, corrupt entries, concurrent writers, the disabled disk layer.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>
#include <vector>

#include "dsl/dsl.h"
#include "dsl/registry.h"
#include "ir/hash.h"
#include "runtimes/cache_file.h"
#include "runtimes/check.h"
#include "runtimes/kernel_cache.h"
#include "runtimes/runtime.h"
#include "samples/kernels/kernels.h"
#include "tests/cache/temp_cache.h"

using namespace kgen;
namespace fs = std::filesystem;

namespace {

// saxpy under any name; `dead_first` records an unused value first, so the
// raw IR is numbered differently while the optimised IR is the same.
ir::Kernel saxpy_like(const std::string& name, const std::string& xname, bool dead_first) {
  using namespace kgen::dsl;
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input(xname, f32);
    auto y = kb.inout("y", f32);
    auto a = kb.scalar("a", f32);
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if (dead_first) {
      auto unused = i * 7 + 3;
      (void)unused;
    }
    if_(i < n, [&] { y[i] = a * x[i] + y[i]; });
  });
}

rt::KernelCache make_cache(const fs::path& dir, bool disk = true) { return rt::KernelCache(rt::CacheConfig{disk, dir}); }

std::unique_ptr<rt::Device> cpu_with(rt::KernelCache& c) {
  rt::DeviceOptions o;
  o.threads = 1;
  o.cache = &c;
  return rt::create_device("cpu", o);
}

// Runs the registered saxpy on `dev` and checks it against the interpreter.
rt::CheckResult run_saxpy(rt::Device& dev) {
  samples::register_all();
  const dsl::KernelEntry* e = dsl::find_kernel("saxpy");
  REQUIRE(e);
  rt::CheckOptions co;
  co.time = false;
  return rt::run_and_check(dev, e->build(), e->workload(4099), co);
}

std::vector<fs::path> entry_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (auto& f : fs::recursive_directory_iterator(dir))
    if (f.is_regular_file() && f.path().extension() == ".kgc") out.push_back(f.path());
  return out;
}

}  // namespace

TEST_CASE("cache: structurally identical kernels compile once") {
  test::TempCacheDir tmp;
  auto cache = make_cache(tmp.path);
  auto dev = cpu_with(cache);
  ir::Kernel base = saxpy_like("saxpy_a", "x", false);
  ir::Kernel renamed = saxpy_like("saxpy_b", "input", false);
  ir::Kernel renumbered = saxpy_like("saxpy_c", "x", true);
  CHECK(ir::structural_hash(renumbered) != ir::structural_hash(base));  // equal only after the pipeline

  auto k1 = dev->compile(base);
  auto k2 = dev->compile(base);
  auto k3 = dev->compile(renamed);
  auto k4 = dev->compile(renumbered);
  CHECK_FALSE(k1->cache_hit());
  CHECK(k2->cache_hit());
  CHECK(k3->cache_hit());
  CHECK(k4->cache_hit());
  CHECK(k3->entry() == k1->entry());
  CHECK(k3->kernel().name == "saxpy_b");
  rt::CacheStats s = cache.stats();
  CHECK(s.misses == 1);
  CHECK(s.memory_hits == 3);
  CHECK(entry_files(tmp.path).size() == 1);

  // Different options are a different binary.
  rt::CompileOptions o2;
  o2.opt_level = 3;  // differs from the default (-O2)
  CHECK_FALSE(dev->compile(base, o2)->cache_hit());
  CHECK(cache.stats().misses == 2);
  // A second device on the same cache shares the loaded module.
  auto dev2 = cpu_with(cache);
  CHECK(dev2->compile(renamed)->cache_hit());
  CHECK(run_saxpy(*dev2).ok);
}

TEST_CASE("cache: a fresh cache on the same directory loads from disk") {
  test::TempCacheDir tmp;
  {
    auto c1 = make_cache(tmp.path);
    CHECK_FALSE(cpu_with(c1)->compile(saxpy_like("s1", "x", false))->cache_hit());
  }
  auto c2 = make_cache(tmp.path);
  auto dev = cpu_with(c2);
  auto k = dev->compile(saxpy_like("other_name", "z", true));
  CHECK(k->cache_hit());
  CHECK(c2.stats().disk_hits == 1);
  CHECK(c2.stats().misses == 0);
  CHECK(k->source().find("extern \"C\" void " + k->entry()) != std::string::npos);
}

TEST_CASE("cache: corrupt or truncated entries are detected and rebuilt") {
  enum Damage { Truncate, FlipPayload, FlipHeader, Empty, OtherKey };
  for (Damage d : {Truncate, FlipPayload, FlipHeader, Empty, OtherKey}) {
    CAPTURE(int(d));
    test::TempCacheDir tmp;
    {
      auto c = make_cache(tmp.path);
      REQUIRE(run_saxpy(*cpu_with(c)).ok);
    }
    auto files = entry_files(tmp.path);
    REQUIRE(files.size() == 1);
    std::string bytes = *rt::read_file_bytes(files[0]);
    if (d == Truncate) bytes.resize(bytes.size() / 2);
    if (d == FlipPayload) bytes[bytes.size() * 3 / 4] ^= 0x10;  // inside the object code
    if (d == FlipHeader) bytes[9] ^= 0x01;                      // the payload size
    if (d == Empty) bytes.clear();
    if (d == OtherKey) {  // a valid file for another key under this name
      rt::CacheEntry e = *rt::decode_cache_entry(bytes).entry;
      e.key_text += "something else\n";
      bytes = rt::encode_cache_entry(e);
    }
    { std::ofstream(files[0], std::ios::binary | std::ios::trunc) << bytes; }

    auto c = make_cache(tmp.path);
    auto dev = cpu_with(c);
    rt::CheckResult r = run_saxpy(*dev);
    CHECK(r.ok);
    CHECK_FALSE(r.cache_hit);
    CHECK(c.stats().misses == 1);
    CHECK(c.stats().corrupt == (d == OtherKey ? 0u : 1u));
    CHECK(c.stats().stores == 1);

    // The rebuilt entry is whole again.
    auto fresh = make_cache(tmp.path);
    rt::CheckResult again = run_saxpy(*cpu_with(fresh));
    CHECK(again.ok);
    CHECK(again.cache_hit);
    CHECK(fresh.stats().disk_hits == 1);
  }
}

TEST_CASE("cache: atomic writes - readers never see a partial file") {
  test::TempCacheDir tmp;
  fs::path dest = tmp.path / "v1" / "ab" / "entry.kgc";
  // Large, distinct payloads make a torn write likely if writes were not atomic.
  std::vector<std::string> payloads;
  for (int w = 0; w < 3; ++w) payloads.push_back(rt::encode_cache_entry({"key", "meta", std::string(1 << 20, char('a' + w)), "obj"}));
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, bad{0};
  std::thread reader([&] {
    while (!stop) {
      if (auto b = rt::read_file_bytes(dest)) {
        ++reads;
        if (!rt::decode_cache_entry(*b).entry) ++bad;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 20; ++i) CHECK(rt::write_file_atomically(dest, payloads[w]));
    });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  CHECK(bad == 0);
  MESSAGE("reads during writes: " << reads.load());
  for (auto& f : fs::directory_iterator(dest.parent_path())) CHECK_FALSE(rt::is_cache_temp_file(f.path()));
}

TEST_CASE("cache: concurrent compiles of one kernel into one directory") {
  test::TempCacheDir tmp;
  // One cache per thread: separate memory layers, like separate processes.
  std::vector<std::unique_ptr<rt::KernelCache>> caches;
  for (int t = 0; t < 4; ++t) caches.push_back(std::make_unique<rt::KernelCache>(rt::CacheConfig{true, tmp.path}));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        if (!run_saxpy(*cpu_with(*caches[t])).ok) ++failures;
      } catch (...) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  auto files = entry_files(tmp.path);
  REQUIRE(files.size() == 1);
  CHECK(rt::decode_cache_entry(*rt::read_file_bytes(files[0])).entry.has_value());
  auto fresh = make_cache(tmp.path);
  CHECK(run_saxpy(*cpu_with(fresh)).cache_hit);
  CHECK(fresh.stats().corrupt == 0);
}

TEST_CASE("cache: the disk layer can be disabled") {
  test::TempCacheDir tmp;
  ::setenv("KGEN_CACHE", "0", 1);
  ::setenv("KGEN_CACHE_DIR", tmp.path.c_str(), 1);
  rt::CacheConfig cfg = rt::CacheConfig::from_env();
  ::setenv("KGEN_CACHE", "off", 1);
  CHECK_FALSE(rt::CacheConfig::from_env().disk);
  ::unsetenv("KGEN_CACHE");
  CHECK(rt::CacheConfig::from_env().disk);
  CHECK(rt::CacheConfig::from_env().dir == tmp.path);
  CHECK_FALSE(cfg.disk);

  rt::KernelCache c(cfg);
  auto k1 = cpu_with(c)->compile(saxpy_like("s", "x", false));
  CHECK_FALSE(k1->cache_hit());
  CHECK(cpu_with(c)->compile(saxpy_like("s", "x", false))->cache_hit());  // the memory layer still works
  CHECK(entry_files(tmp.path).empty());
  rt::KernelCache other(cfg);
  CHECK_FALSE(cpu_with(other)->compile(saxpy_like("s", "x", false))->cache_hit());
}

TEST_CASE("cache: key covers target, caps, options, toolchain and build") {
  rt::CacheKeyParts p{0x1234, "cpu-c++-orc", "cpu f16=1", "O3", "clang 19"};
  rt::CacheKey base = rt::make_cache_key(p);
  CHECK(base.text.find(rt::kgen_build_id()) != std::string::npos);
  for (int field = 0; field < 5; ++field) {
    rt::CacheKeyParts q = p;
    if (field == 0) q.ir_hash ^= 1;
    if (field == 1) q.target = "cuda";
    if (field == 2) q.caps = "cpu f16=0";
    if (field == 3) q.options = "O2";
    if (field == 4) q.toolchain = "clang 20";
    CHECK(rt::make_cache_key(q).hash != base.hash);
  }
}

TEST_CASE("cache: cold compile vs disk hit vs memory hit (timings)") {
  samples::register_all();
  for (std::string name : {"saxpy", "matmul_tiled_t16"}) {
    test::TempCacheDir tmp;
    ir::Kernel k = dsl::find_kernel(name)->build();
    auto a = make_cache(tmp.path);
    double cold = cpu_with(a)->compile(k)->compile_ms();
    auto b = make_cache(tmp.path);  // empty memory layer: reads the disk entry
    auto dev = cpu_with(b);
    auto disk = dev->compile(k);
    auto mem = dev->compile(k);
    CHECK(disk->cache_hit());
    CHECK(mem->cache_hit());
    CHECK(b.stats().disk_hits == 1);
    CHECK(disk->compile_ms() < cold);
    MESSAGE(name << ": cold " << cold << " ms, disk hit " << disk->compile_ms() << " ms, memory hit " << mem->compile_ms()
                 << " ms (JIT already initialised)");
  }
}
