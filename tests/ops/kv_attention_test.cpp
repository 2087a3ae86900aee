// The kv_attention op: outputs against the C++ reference and the in-place
// cache update (rows [pos, pos + T) replaced, every other row untouched) on
// the CPU (1 and 2 threads) and the GPU devices present; one compiled plan
// reused across positions; T decode steps equal to one prefill of T tokens;
// positions outside the caller's contract; the kernels in the interpreter.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "runtimes/check.h"
#include "tests/ops/op_test_util.h"

using namespace kgen;
using namespace kgen::test;

namespace {

enum Slot { kQ = 0, kKNew, kVNew, kPos, kKCache, kVCache };

ops::Problem kv(std::vector<int64_t> dims) { return problem("kv_attention", std::move(dims)); }

// CPU at 1 and 2 threads, then the GPU devices present.
std::vector<std::unique_ptr<rt::Device>> devices() {
  std::vector<std::unique_ptr<rt::Device>> d;
  d.push_back(cpu(1));
  d.push_back(cpu(2));
  for (const std::string& name : gpu_device_names()) {
    if (have_device(name)) d.push_back(rt::create_device(name));
    else MESSAGE("no " << name << " device: kv_attention on " << name << " skipped");
  }
  return d;
}

void set_pos(ops::HostTensors& t, int32_t pos) { std::memcpy(t.in[kPos].data(), &pos, 4); }

// One run of a prepared plan on the host tensors (output poisoned first):
// returns the output and the caches as the device left them.
struct Result {
  std::vector<uint8_t> o, k_cache, v_cache;
};
Result run(rt::Device& dev, ops::PreparedPlan& pp, const ops::HostTensors& t) {
  ops::HostTensors h = t;
  for (auto& o : h.out) std::fill(o.begin(), o.end(), uint8_t(0xff));
  ops::DeviceTensors dt = ops::upload(dev, h);
  ops::execute(dev, pp, dt.io());
  dev.synchronize();
  Result r{h.out[0], h.in[kKCache], h.in[kVCache]};
  dt.bufs[kKCache]->download(r.k_cache.data(), r.k_cache.size());
  dt.bufs[kVCache]->download(r.v_cache.data(), r.v_cache.size());
  dt.bufs[h.in.size()]->download(r.o.data(), r.o.size());
  return r;
}

// The cache as the op must leave it, computed here independently of the op:
// rows pos .. pos + T - 1 (those inside [0, C)) of each kv head replaced by
// the new rows, every other byte as before.
std::vector<uint8_t> expected_cache(const ops::Problem& p, const std::vector<uint8_t>& cache,
                                    const std::vector<uint8_t>& fresh, int32_t pos) {
  const int64_t T = p.dim(0), D = p.dim(2), Hkv = p.dim(3), C = p.dim(4);
  std::vector<uint8_t> want = cache;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < Hkv; ++g)
      if (pos + t >= 0 && pos + t < C)
        std::memcpy(want.data() + size_t((g * C + pos + t) * D) * 4, fresh.data() + size_t((t * Hkv + g) * D) * 4, size_t(D) * 4);
  return want;
}

// The run's output against the op's reference and its caches byte for byte.
void check_result(const ops::Problem& p, const ops::HostTensors& t, const Result& got) {
  int32_t pos;
  std::memcpy(&pos, t.in[kPos].data(), 4);
  CAPTURE(pos);
  ops::HostTensors want = t;
  ops::run_reference(p, want);
  ops::HostTensors g = t;
  g.out[0] = got.o;
  const ops::OpDef& d = ops::op_for(p);
  const ops::Comparison c = ops::compare_outputs(p, g, want, d.tolerance(p));
  INFO(c.worst);
  CHECK(c.mismatches == 0);
  CHECK(got.k_cache == expected_cache(p, t.in[kKCache], t.in[kKNew], pos));
  CHECK(got.v_cache == expected_cache(p, t.in[kVCache], t.in[kVNew], pos));
}

}  // namespace

TEST_CASE("kv_attention: outputs and the cache update on every device, each CPU candidate") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("kv_attention");
  REQUIRE(d);
  std::vector<ops::Problem> ps = d->test_problems;
  ps.push_back(kv({1, 8, 128, 2, 70}));  // decode, G = 4, D = 128
  ps.push_back(kv({7, 6, 32, 2, 9}));    // G = 3: rows per work-item 1 or 3
  for (auto& dev : devices()) {
    const bool gpu = !ops::is_cpu(dev->caps());
    for (const auto& p : ps) {
      std::vector<ops::Variant> vs = gpu ? std::vector<ops::Variant>{d->heuristic(p, dev->caps())} : d->candidates(p, dev->caps());
      if (!gpu) vs.push_back(ops::Variant{}.set("impl", 1).set("wg", 16));  // the GPU kernel on the CPU too
      for (const auto& v : vs) {
        const uint64_t seed = fresh_seed();
        CAPTURE(dev->name());
        CAPTURE(p.str());
        CAPTURE(v.str());
        CAPTURE(seed);
        ops::PreparedPlan pp = ops::prepare(*dev, p, v);
        const ops::HostTensors t = ops::make_host_tensors(p, seed);
        check_result(p, t, run(*dev, pp, t));
      }
    }
  }
}

TEST_CASE("kv_attention: one compiled plan serves every position") {
  ops::register_all_ops();
  const ops::Problem p = kv({3, 4, 24, 2, 40});
  // The plan does not depend on the position the inputs hold: the same
  // kernels and scalars whatever test_pos says.
  ops::Problem p9 = p;
  p9.attrs["test_pos"] = 9;
  const auto caps = codegen::cpu_caps();
  const ops::OpDef& d = ops::op_for(p);
  const ops::Plan a = d.plan(p, d.heuristic(p, caps), caps), b = d.plan(p9, d.heuristic(p9, caps), caps);
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t s = 0; s < a.steps.size(); ++s) {
    CHECK(a.steps[s].kernel.name == b.steps[s].kernel.name);
    CHECK(a.steps[s].scalars == b.steps[s].scalars);
  }
  for (auto& dev : devices()) {
    CAPTURE(dev->name());
    const ops::Variant v = ops::choose_variant(*dev, p);
    ops::PreparedPlan pp = ops::prepare(*dev, p, v);
    for (int32_t pos : {0, 1, 16, 22, 37}) {
      ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
      set_pos(t, pos);
      check_result(p, t, run(*dev, pp, t));
    }
    // Preparing it again for another position compiles nothing new.
    CHECK(ops::prepare(*dev, p9, v).cache_hits == int(pp.kernels.size()));
  }
}

TEST_CASE("kv_attention: T decode steps equal one prefill of T tokens") {
  ops::register_all_ops();
  const int64_t N = 6, H = 4, D = 16, Hkv = 2, C = 20;
  const ops::Problem prefill = kv({N, H, D, Hkv, C}), step = kv({1, H, D, Hkv, C});
  for (auto& dev : devices()) {
    CAPTURE(dev->name());
    const uint64_t seed = fresh_seed();
    CAPTURE(seed);
    ops::PreparedPlan pre = ops::prepare(*dev, prefill, ops::choose_variant(*dev, prefill));
    ops::PreparedPlan one = ops::prepare(*dev, step, ops::choose_variant(*dev, step));
    ops::HostTensors t = ops::make_host_tensors(prefill, seed);
    set_pos(t, 0);
    const Result all = run(*dev, pre, t);
    check_result(prefill, t, all);
    // Token by token, each step's cache feeding the next.
    ops::HostTensors s = ops::make_host_tensors(step, seed);
    s.in[kKCache] = t.in[kKCache];
    s.in[kVCache] = t.in[kVCache];
    const size_t q_row = size_t(H * D) * 4, kv_row = size_t(Hkv * D) * 4;
    std::vector<uint8_t> o;
    for (int32_t pos = 0; pos < N; ++pos) {
      set_pos(s, pos);
      s.in[kQ].assign(t.in[kQ].begin() + pos * q_row, t.in[kQ].begin() + (pos + 1) * q_row);
      s.in[kKNew].assign(t.in[kKNew].begin() + pos * kv_row, t.in[kKNew].begin() + (pos + 1) * kv_row);
      s.in[kVNew].assign(t.in[kVNew].begin() + pos * kv_row, t.in[kVNew].begin() + (pos + 1) * kv_row);
      const Result r = run(*dev, one, s);
      check_result(step, s, r);
      o.insert(o.end(), r.o.begin(), r.o.end());
      s.in[kKCache] = r.k_cache;
      s.in[kVCache] = r.v_cache;
    }
    CHECK(s.in[kKCache] == all.k_cache);
    CHECK(s.in[kVCache] == all.v_cache);
    // The same sums in the same order per query: equal up to rounding.
    ops::HostTensors a = t, b = t;
    a.out[0] = all.o;
    b.out[0] = o;
    CHECK(ops::compare_outputs(prefill, a, b, 1e-5).mismatches == 0);
  }
}

TEST_CASE("kv_attention: positions outside the contract neither write nor read outside the cache") {
  ops::register_all_ops();
  // pos + T past C: the rows past the cache are skipped; a negative pos: the
  // rows before it too, and queries that see no row give zeros. The caches
  // sit in guarded buffers: a write past their end shows.
  const ops::Problem p = kv({4, 2, 8, 1, 6});
  for (auto& dev : devices()) {
    CAPTURE(dev->name());
    ops::PreparedPlan pp = ops::prepare(*dev, p, ops::choose_variant(*dev, p));
    for (int32_t pos : {4, 5, 6, 100, -2, -4, -50}) {
      CAPTURE(pos);
      ops::HostTensors t = ops::make_host_tensors(p, fresh_seed());
      set_pos(t, pos);
      std::vector<std::vector<uint8_t>> host = t.in;
      host.push_back(t.out[0]);
      std::vector<std::unique_ptr<rt::Buffer>> bufs;
      std::vector<rt::Buffer*> io;
      for (const auto& b : host) {
        bufs.push_back(rt::guarded_buffer(*dev, b, b.size(), 0x5a));
        io.push_back(bufs.back().get());
      }
      ops::execute(*dev, pp, io);
      dev->synchronize();
      Result r{t.out[0], t.in[kKCache], t.in[kVCache]};
      bufs[kKCache]->download(r.k_cache.data(), r.k_cache.size());
      bufs[kVCache]->download(r.v_cache.data(), r.v_cache.size());
      bufs.back()->download(r.o.data(), r.o.size());
      check_result(p, t, r);
      for (size_t i = 0; i < bufs.size(); ++i) CHECK(rt::guard_overrun(*bufs[i], host[i].size(), 0x5a, "buffer " + std::to_string(i)) == "");
    }
  }
}

TEST_CASE("kv_attention: the kernels in the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  const ops::OpDef* d = ops::find_op("kv_attention");
  for (const auto& p : {kv({3, 4, 16, 2, 21}), kv({2, 2, 5, 1, 7})}) {
    std::vector<ops::Variant> vs = d->candidates(p, caps);
    vs.push_back(ops::Variant{}.set("impl", 1).set("wg", 8));
    for (const auto& v : vs) {
      CAPTURE(p.str());
      CAPTURE(v.str());
      ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
      INFO(c.message);
      CHECK(c.ok);
    }
  }
}

TEST_CASE("kv_attention: malformed problems and variants") {
  ops::register_all_ops();
  CHECK_THROWS_WITH_AS(ops::op_for(kv({1, 3, 16, 2, 8})), doctest::Contains("multiple of Hkv"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(ops::op_for(kv({9, 2, 16, 2, 8})), doctest::Contains("fit the cache"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(ops::op_for(kv({1, 2, 16, 2})), doctest::Contains("T H D Hkv C"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(ops::op_for(problem("kv_attention", {2, 2, 16, 2, 8}, {{"test_pos", 7}})), doctest::Contains("test_pos"),
                       std::invalid_argument);
  auto dev = cpu(1);
  CHECK_THROWS_WITH_AS(ops::prepare(*dev, kv({1, 6, 16, 2, 8}), ops::Variant{}.set("impl", 0).set("rg", 2)),
                       doctest::Contains("rg must divide"), std::invalid_argument);
}

TEST_CASE("kv_attention: the heuristic groups a kv head's query heads while the work-items cover the threads") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("kv_attention");
  auto caps = codegen::cpu_caps();
  caps.threads = 2;
  CHECK(d->heuristic(kv({1, 32, 128, 8, 2048}), caps).get("rg") == 4);
  CHECK(d->heuristic(kv({1, 6, 64, 2, 64}), caps).get("rg") == 1);  // G = 3
  caps.threads = 16;
  CHECK(d->heuristic(kv({1, 32, 128, 8, 2048}), caps).get("rg") == 2);
  CHECK(d->heuristic(kv({1, 8, 64, 1, 64}), caps).get("rg") == 1);
}
