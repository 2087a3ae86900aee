// Every registered sample kernel builds, verifies, has a consistent workload,
// and computes the same as a plain C++ reference loop in the interpreter.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "dsl/registry.h"
#include "ir/half.h"
#include "ir/verifier.h"
#include "samples/kernels/kernels.h"
#include "tests/dsl/host_buffers.h"

using namespace kgen;
using kgen::dsl::test::HostBuf;

namespace {

using Expected = std::map<size_t, std::vector<double>>;  // buffer index -> scalars
using Reference = std::function<Expected(const std::vector<HostBuf>& in, int64_t n)>;

std::vector<double> all(const HostBuf& b) {
  std::vector<double> v(b.scalars());
  for (size_t i = 0; i < v.size(); ++i) v[i] = b.get(i);
  return v;
}

Expected saxpy_ref(const std::vector<HostBuf>& in, int64_t, bool half) {
  auto x = all(in[0]), y = all(in[1]);
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = half ? ir::round_f16(ir::round_f16(1.5f * float(x[i])) + float(y[i])) : double(1.5f * float(x[i]) + float(y[i]));
  return {{1, y}};
}

Expected unary_ref(const std::vector<HostBuf>& in, const std::function<double(double)>& f) {
  auto x = all(in[0]);
  for (double& v : x) v = f(v);
  return {{1, x}};
}

Expected reduce_ref(const std::vector<HostBuf>& in, int64_t n) {
  const int wg = samples::kReduceWorkgroup, items = 4;
  auto x = all(in[0]);
  std::vector<double> partial(in[1].scalars());
  for (size_t g = 0; g < partial.size(); ++g) {
    std::vector<float> sh(wg);
    for (int t = 0; t < wg; ++t) {  // same order as the kernel: serial, then tree
      float acc = 0.0f;
      for (int k = 0; k < items; ++k) {
        size_t idx = g * wg * items + size_t(k) * wg + t;
        if (int64_t(idx) < n) acc += float(x[idx]);
      }
      sh[t] = acc;
    }
    for (int s = wg / 2; s > 0; s /= 2)
      for (int t = 0; t < s; ++t) sh[t] += sh[t + s];
    partial[g] = sh[0];
  }
  return {{1, partial}};
}

Expected histogram_ref(const std::vector<HostBuf>& in, int64_t) {
  auto x = all(in[0]);
  std::vector<double> h(in[1].scalars(), 0.0);
  for (double v : x) h[size_t(v)] += 1;
  return {{1, h}};
}

Expected matmul_ref(const std::vector<HostBuf>& in, int64_t n) {
  auto a = all(in[0]), b = all(in[1]);
  std::vector<double> c(size_t(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
  return {{2, c}};
}

Expected softmax_ref(const std::vector<HostBuf>& in, int64_t n) {
  auto x = all(in[0]);
  std::vector<double> y(x.size());
  for (int r = 0; r < samples::kSoftmaxRows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, x[r * n + j]);
    for (int64_t j = 0; j < n; ++j) s += std::exp(x[r * n + j] - m);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = std::exp(x[r * n + j] - m) / s;
  }
  return {{1, y}};
}

Expected dot_ref(const std::vector<HostBuf>& in, int lanes) {
  auto x = all(in[0]), y = all(in[1]);
  std::vector<double> out(x.size() / lanes);
  for (size_t i = 0; i < out.size(); ++i)
    for (int l = 0; l < lanes; ++l) out[i] += x[i * lanes + l] * y[i * lanes + l];
  return {{2, out}};
}

// Line y[4i + k] = c + Σ_j byte_j(a)·byte_j(b) lane by lane (lines of
// `lanes`), bytes signed per k: uu, us, su, ss.
Expected dot4_ref(const std::vector<HostBuf>& in, size_t lanes) {
  auto a = all(in[0]), b = all(in[1]), c = all(in[2]);
  std::vector<double> y(4 * a.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < 4; ++k) {
      int64_t sum = int64_t(c[i]);
      for (int j = 0; j < 4; ++j) {
        uint8_t ab = uint8_t(uint32_t(a[i]) >> (8 * j)), bb = uint8_t(uint32_t(b[i]) >> (8 * j));
        int64_t x = (k & 2) ? int8_t(ab) : ab, w = (k & 1) ? int8_t(bb) : bb;
        sum += x * w;
      }
      y[(4 * (i / lanes) + k) * lanes + i % lanes] = double(int32_t(uint32_t(uint64_t(sum))));  // wraps like i32
    }
  return {{3, y}};
}

// dot2_i16_l<lanes>: y[2i] = c + a.0·b.0 + a.1·b.1 (signed halves, wrapping),
// y[2i + 1] the same with a's halves swapped.
Expected dot2_i16_ref(const std::vector<HostBuf>& in, size_t lanes) {
  auto a = all(in[0]), b = all(in[1]), c = all(in[2]);
  std::vector<double> y(2 * a.size());
  auto half = [](double v, int j) { return int64_t(int16_t(uint32_t(int32_t(int64_t(v))) >> (16 * j))); };
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t line = i / lanes, l = i % lanes;
    const int64_t s0 = int64_t(c[i]) + half(a[i], 0) * half(b[i], 0) + half(a[i], 1) * half(b[i], 1);
    const int64_t s1 = int64_t(c[i]) + half(a[i], 1) * half(b[i], 0) + half(a[i], 0) * half(b[i], 1);
    y[2 * line * lanes + l] = double(int32_t(uint32_t(uint64_t(s0))));
    y[(2 * line + 1) * lanes + l] = double(int32_t(uint32_t(uint64_t(s1))));
  }
  return {{3, y}};
}

// dot2_bf16_l<lanes>: each lane's pair holds the upper halves of x[2i]
// (element 0) and x[2i + 1] (element 1); y[2i] = (c + a.1·b.1) + a.0·b.0 and
// y[2i + 1] = (-c + b.1·a.1) + b.0·a.0, each sum rounded to f32.
Expected dot2_bf16_ref(const std::vector<HostBuf>& in, size_t lanes) {
  auto x = all(in[0]), w = all(in[1]), c = all(in[2]);
  auto bf = [](double v) { return std::bit_cast<float>(std::bit_cast<uint32_t>(float(v)) & 0xffff0000u); };
  std::vector<double> y(2 * c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const size_t line = i / lanes, l = i % lanes;
    const size_t e0 = 2 * line * lanes + l, e1 = e0 + lanes;  // lane l of lines 2·line and 2·line + 1
    const float p1 = bf(x[e1]) * bf(w[e1]), p0 = bf(x[e0]) * bf(w[e0]);  // exact
    volatile float h = float(c[i]) + p1, hn = -float(c[i]) + p1;
    y[e0] = double(float(h + p0));
    y[e1] = double(float(hn + p0));
  }
  return {{3, y}};
}

// permute_bytes_t<tb>: y[2i] = bytes of a[i] ++ b[i] picked by idx[i]'s 64
// bytes (mod 2·tb), y[2i + 1] by the sample's constant index, z[i] = bytes of
// b[i] ++ a[i] by its first 16 entries.
Expected permute_ref(const std::vector<HostBuf>& in, int tb) {
  const size_t n = in[0].bytes.size() / size_t(tb);
  std::vector<double> y(2 * 16 * n), z(4 * n);
  auto pick = [&](size_t i, bool swap, int k, uint8_t index) {
    const int at = index % (2 * tb);
    const bool first = (at < tb) != swap;
    return in[first ? 0 : 1].bytes[i * size_t(tb) + size_t(at % tb)];
  };
  auto word = [&](auto byte_at) {
    uint32_t w = 0;
    for (int b = 0; b < 4; ++b) w |= uint32_t(byte_at(b)) << (8 * b);
    return double(w);
  };
  for (size_t i = 0; i < n; ++i) {
    for (int l = 0; l < 16; ++l) {
      y[(2 * i) * 16 + size_t(l)] = word([&](int b) { return pick(i, false, 4 * l + b, in[2].bytes[i * 64 + size_t(4 * l + b)]); });
      y[(2 * i + 1) * 16 + size_t(l)] = word([&](int b) { return pick(i, false, 4 * l + b, samples::permute_sample_index(4 * l + b, tb)); });
    }
    for (int l = 0; l < 4; ++l)
      z[i * 4 + size_t(l)] = word([&](int b) { return pick(i, true, 4 * l + b, samples::permute_sample_index(4 * l + b, tb)); });
  }
  return {{3, y}, {4, z}};
}

// dot4_small: y[6i + k] = c + Σ_j byte_j(a')·int8(byte_j(b)) with a' = a &
// 0x7f7f7f7f (k = 0, 1: either operand order) or (a >> 4) & 0x0f0f0f0f (k = 2,
// 3); k = 4, 5: Σ_j int8(byte_j(a))·max(int8(byte_j(b)), -127).
Expected dot4_small_ref(const std::vector<HostBuf>& in, size_t lanes) {
  auto a = all(in[0]), b = all(in[1]), c = all(in[2]);
  std::vector<double> y(6 * a.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < 6; ++k) {
      const uint32_t ua = uint32_t(a[i]), ub = uint32_t(b[i]), small = k < 2 ? ua & 0x7f7f7f7fu : (ua >> 4) & 0x0f0f0f0fu;
      int64_t sum = int64_t(c[i]);
      for (int j = 0; j < 4; ++j) {
        const int8_t sb = int8_t(uint8_t(ub >> (8 * j)));
        if (k < 4) sum += int64_t(uint8_t(small >> (8 * j))) * sb;
        else sum += int64_t(int8_t(uint8_t(ua >> (8 * j)))) * std::max<int>(sb, -127);
      }
      y[(6 * (i / lanes) + k) * lanes + i % lanes] = double(int32_t(uint32_t(uint64_t(sum))));
    }
  return {{3, y}};
}

// dot4_pair: y[2i] = c + Σ_j byte_j(a & 0x3f3f3f3f)·int8(byte_j(b)) +
// Σ_j byte_j((a >> 2) & 0x3f3f3f3f)·int8(byte_j(b >> 3)); y[2i + 1] the same
// with masks 0x7f7f7f7f and a >> 1.
Expected dot4_pair_ref(const std::vector<HostBuf>& in, size_t lanes) {
  auto a = all(in[0]), b = all(in[1]), c = all(in[2]);
  std::vector<double> y(2 * a.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < 2; ++k) {
      const uint32_t ua = uint32_t(a[i]), ub = uint32_t(b[i]), mask = k ? 0x7f7f7f7fu : 0x3f3f3f3fu;
      const uint32_t a1 = ua & mask, a2 = (ua >> (k ? 1 : 2)) & mask, b2 = ub >> 3;
      int64_t sum = int64_t(c[i]);
      for (int j = 0; j < 4; ++j)
        sum += int64_t(uint8_t(a1 >> (8 * j))) * int8_t(uint8_t(ub >> (8 * j))) +
               int64_t(uint8_t(a2 >> (8 * j))) * int8_t(uint8_t(b2 >> (8 * j)));
      y[(2 * (i / lanes) + k) * lanes + i % lanes] = double(int32_t(uint32_t(uint64_t(sum))));
    }
  return {{3, y}};
}

const std::map<std::string, Reference>& references() {
  static const std::map<std::string, Reference> refs = {
      {"saxpy", [](auto& in, int64_t n) { return saxpy_ref(in, n, false); }},
      {"saxpy_f16", [](auto& in, int64_t n) { return saxpy_ref(in, n, true); }},
      {"silu", [](auto& in, int64_t) { return unary_ref(in, [](double x) { return x / (1 + std::exp(-x)); }); }},
      {"gelu_tanh",
       [](auto& in, int64_t) {
         return unary_ref(in, [](double x) {
           return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
         });
       }},
      {"gelu_erf",
       [](auto& in, int64_t) { return unary_ref(in, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }); }},
      {"vec_add",
       [](auto& in, int64_t) {
         auto x = all(in[0]), y = all(in[1]);
         for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
         return Expected{{2, x}};
       }},
      {"reduce_sum_i4", reduce_ref},
      {"histogram256", histogram_ref},
      {"histogram256_shared", histogram_ref},
      {"matmul_tiled_t8", matmul_ref},
      {"matmul_tiled_t16", matmul_ref},
      {"softmax_rows", softmax_ref},
      {"saxpy_l16", [](auto& in, int64_t n) { return saxpy_ref(in, n, false); }},
      {"dot_l8", [](auto& in, int64_t) { return dot_ref(in, 8); }},
      {"dot4_l1", [](auto& in, int64_t) { return dot4_ref(in, 1); }},
      {"permute_bytes_t4", [](auto& in, int64_t) { return permute_ref(in, 4); }},
      {"permute_bytes_t16", [](auto& in, int64_t) { return permute_ref(in, 16); }},
      {"permute_bytes_t32", [](auto& in, int64_t) { return permute_ref(in, 32); }},
      {"permute_bytes_t64", [](auto& in, int64_t) { return permute_ref(in, 64); }},
      {"dot4_l4", [](auto& in, int64_t) { return dot4_ref(in, 4); }},
      {"dot4_l8", [](auto& in, int64_t) { return dot4_ref(in, 8); }},
      {"dot4_l16", [](auto& in, int64_t) { return dot4_ref(in, 16); }},
      {"dot2_i16_l1", [](auto& in, int64_t) { return dot2_i16_ref(in, 1); }},
      {"dot2_i16_l4", [](auto& in, int64_t) { return dot2_i16_ref(in, 4); }},
      {"dot2_i16_l8", [](auto& in, int64_t) { return dot2_i16_ref(in, 8); }},
      {"dot2_i16_l16", [](auto& in, int64_t) { return dot2_i16_ref(in, 16); }},
      {"dot2_bf16_l1", [](auto& in, int64_t) { return dot2_bf16_ref(in, 1); }},
      {"dot2_bf16_l4", [](auto& in, int64_t) { return dot2_bf16_ref(in, 4); }},
      {"dot2_bf16_l8", [](auto& in, int64_t) { return dot2_bf16_ref(in, 8); }},
      {"dot2_bf16_l16", [](auto& in, int64_t) { return dot2_bf16_ref(in, 16); }},
      {"dot4_small_l1", [](auto& in, int64_t) { return dot4_small_ref(in, 1); }},
      {"dot4_small_l4", [](auto& in, int64_t) { return dot4_small_ref(in, 4); }},
      {"dot4_small_l8", [](auto& in, int64_t) { return dot4_small_ref(in, 8); }},
      {"dot4_small_l16", [](auto& in, int64_t) { return dot4_small_ref(in, 16); }},
      {"dot4_pair_l1", [](auto& in, int64_t) { return dot4_pair_ref(in, 1); }},
      {"dot4_pair_l4", [](auto& in, int64_t) { return dot4_pair_ref(in, 4); }},
      {"dot4_pair_l8", [](auto& in, int64_t) { return dot4_pair_ref(in, 8); }},
      {"dot4_pair_l16", [](auto& in, int64_t) { return dot4_pair_ref(in, 16); }},
  };
  return refs;
}

const Reference* reference_for(const std::string& name) {
  auto& refs = references();
  auto it = refs.find(name);
  if (it == refs.end() && name.rfind("vec_add", 0) == 0) it = refs.find("vec_add");
  return it == refs.end() ? nullptr : &it->second;
}

}  // namespace

TEST_CASE("register_all is idempotent and names are unique") {
  samples::register_all();
  size_t count = dsl::registered_kernels().size();
  samples::register_all();
  CHECK(dsl::registered_kernels().size() == count);
  CHECK(count >= 14);
  std::set<std::string> names;
  for (auto& e : dsl::registered_kernels()) CHECK(names.insert(e.name).second);
  CHECK(dsl::find_kernel("matmul_tiled_t16") != nullptr);
  CHECK(dsl::find_kernel("no_such_kernel") == nullptr);
  CHECK_THROWS_AS(dsl::register_kernel(dsl::registered_kernels().front()), std::invalid_argument);
}

TEST_CASE("every sample kernel builds and its workload fits its signature") {
  samples::register_all();
  for (const auto& e : dsl::registered_kernels()) {
    INFO("kernel ", e.name);
    ir::Kernel k = e.build();
    CHECK(k.name == e.name);
    CHECK(ir::lint(k).empty());  // no unused results, dead vars, unreachable code
    CHECK(!e.description.empty());
    CHECK(e.default_n > 0);
    CHECK(!e.test_sizes.empty());
    for (int64_t n : {e.default_n, int64_t(1)}) {
      ir::Workload w = e.workload(n);
      CHECK(w.buffers.size() == k.buffers.size());
      CHECK(w.scalars.size() == k.scalars.size());
      CHECK(w.dims.total_groups() > 0);
      if (k.fixed_workgroup())
        CHECK(w.dims.workgroup == k.workgroup_size);
      bool checks = false;
      for (auto& b : w.buffers) checks |= b.check;
      CHECK(checks);
    }
  }
}

TEST_CASE("sample kernels match C++ references in the interpreter") {
  samples::register_all();
  for (const auto& e : dsl::registered_kernels()) {
    const Reference* ref = reference_for(e.name);
    INFO("kernel ", e.name);
    REQUIRE_MESSAGE(ref, "no reference for ", e.name);
    ir::Kernel k = e.build();
    for (int64_t n : e.test_sizes) {
      if (n > 4100) continue;
      INFO("n = ", n);
      ir::Workload w = e.workload(n);
      auto bufs = dsl::test::make_buffers(k, w, uint32_t(n));
      auto inputs = bufs;
      dsl::test::run(k, w.dims, bufs, w.scalars);
      Expected exp = (*ref)(inputs, n);
      for (size_t b = 0; b < bufs.size(); ++b) {
        if (!w.buffers[b].check) continue;
        REQUIRE(exp.count(b));
        const auto& want = exp[b];
        REQUIRE(want.size() == bufs[b].scalars());
        size_t bad = 0;
        double tol = std::max(w.tolerance, 0.0);
        for (size_t i = 0; i < want.size(); ++i) {
          double got = bufs[b].get(i);
          if (!(std::fabs(got - want[i]) <= tol * std::max(1.0, std::fabs(want[i])))) {
            if (bad++ < 3) MESSAGE("buffer ", b, "[", i, "] = ", got, ", expected ", want[i]);
          }
        }
        CHECK(bad == 0);
      }
    }
  }
}
