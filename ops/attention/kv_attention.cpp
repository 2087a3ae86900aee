// The "kv_attention" op: one decode or prefill step of a llama layer's
// attention over a KV cache, f32 throughout.
//
// dims "T H D Hkv C": T new tokens, H query heads of size D, Hkv kv heads
// (H % Hkv == 0; query head h reads kv head h / (H/Hkv)), C cache rows.
// attrs: scale_milli (scale = scale_milli / 1000; default 1/sqrt(D));
// test_pos (the value the default input generator writes into `pos`, for
// checks and `kgen op`; default random in [0, C - T]; no kernel reads it).
// Inputs, in order: q [T, H, D], k_new [T, Hkv, D], v_new [T, Hkv, D],
// pos i32 [1], k_cache [Hkv, C, D], v_cache [Hkv, C, D]; output o [T, H, D].
//
// First the caches are updated in place (the plan writes into the k_cache and
// v_cache input buffers): k_cache[g, pos + t, :] = k_new[t, g, :], the same
// for v. Then query t, at position pos + t, attends causally over cache rows
// 0 .. pos + t of its kv head:
//   o[t, h, :] = Σ_j softmax_j(scale · q[t, h, :]·k_cache[g, j, :]) v_cache[g, j, :].
// Cache rows from pos + T on are neither read nor written. The caller keeps
// 0 <= pos and pos + T <= C; should it not, rows outside [0, C) are skipped
// (never written, never read) and a query sees at most the C cache rows.
// pos is read from its buffer at run time, so one compiled plan serves every
// position (a decode loop reuses it token after token).
//
// Plan: a cache-write launch, then the attention launch. Variants: impl=0
// (CPU: a work-item per rg query heads of one kv head, D as lines, kb keys
// per block) or impl=1 (GPUs, also runs on the CPU: a workgroup of wg
// work-items per query row); kernels in
// ops/attention/kv_attention_kernels.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "ops/attention/kv_attention.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace kv_attention_detail {

KvShape kv_shape_of(const Problem& p) {
  KvShape s{p.dim(0), p.dim(1), p.dim(2), p.dim(3), p.dim(4), 0.0f};
  s.scale = p.attrs.count("scale_milli") ? float(p.attr("scale_milli")) / 1000.0f : 1.0f / std::sqrt(float(s.d));
  return s;
}

std::vector<uint64_t> kv_scalars(const KvShape& s) {
  return {ir::scalar_slot(int32_t(s.t)), ir::scalar_slot(int32_t(s.h)), ir::scalar_slot(int32_t(s.g())),
          ir::scalar_slot(int32_t(s.c)), ir::scalar_slot(s.scale),       ir::scalar_slot(int32_t(s.rows()))};
}

}  // namespace kv_attention_detail

namespace {

using namespace kv_attention_detail;

enum Impl { kCpu = 0, kGpu = 1 };
enum Slot { kQ = 0, kKNew, kVNew, kPos, kKCache, kVCache, kOut };

void validate(const Problem& p) {
  if (p.dims.size() != 5) throw std::invalid_argument("expected dims T H D Hkv C");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("only f32");
  const KvShape s = kv_shape_of(p);
  if (s.t < 1 || s.h < 1 || s.d < 1 || s.hkv < 1 || s.c < 1) throw std::invalid_argument("every size must be >= 1");
  if (s.h % s.hkv) throw std::invalid_argument("H must be a multiple of Hkv (grouped-query attention)");
  if (s.t > s.c) throw std::invalid_argument("T new tokens must fit the cache's C rows");
  if (s.d > 256) throw std::invalid_argument("D > 256 is not supported (accumulators live in registers)");
  if (double(s.hkv) * double(s.c) * double(s.d) >= 2e9 || double(s.rows()) * double(s.d) >= 2e9)
    throw std::invalid_argument("too large: indices are 32-bit");
  if (p.attrs.count("test_pos") && (p.attr("test_pos") < 0 || p.attr("test_pos") > s.c - s.t))
    throw std::invalid_argument("test_pos must be in [0, C - T]");
}

// The CPU kernels' view of D: the widest line (16, 8, 4, 2 or 1 f32) that
// divides it and fits a vector register, so that a line's value is one
// register (AVX2: 8).
int cpu_lanes(int64_t d, const TargetCaps& caps) {
  const int widest = std::max(4, int(caps.vector_bits / 32));
  for (int l : {16, 8, 4, 2})
    if (l <= widest && d % l == 0) return l;
  return 1;
}

// The position the checks' inputs hold: test_pos, else (for work estimates)
// the last one that fits, the most keys.
int64_t nominal_pos(const Problem& p) { return p.attr("test_pos", p.dim(4) - p.dim(0)); }

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  const KvShape s = kv_shape_of(p);
  std::vector<Variant> c;
  if (is_cpu(caps)) {
    for (int rg : {1, 2, 4, 8})
      if (s.g() % rg == 0)
        for (int kb : {8, 16}) c.push_back(Variant{}.set("impl", kCpu).set("kb", kb).set("rg", rg));
    return c;
  }
  for (int wg : {32, 64, 128})
    if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads) c.push_back(Variant{}.set("impl", kGpu).set("wg", wg));
  return c;
}

// CPU: the query heads of a kv head taken together, up to 4 (each K and V
// line then feeds 4 rows and is read from memory once instead of 4 times),
// fewer where the work-items would not cover the threads; 16-key blocks. GPUs: 64
// work-items per row.
Variant heuristic(const Problem& p, const TargetCaps& caps) {
  const KvShape s = kv_shape_of(p);
  if (is_cpu(caps)) {
    int rg = 1;
    for (int r : {2, 4})
      if (s.g() % r == 0 && s.rows() / r >= std::max<int64_t>(1, caps.threads)) rg = r;
    return Variant{}.set("impl", kCpu).set("kb", 16).set("rg", rg);
  }
  const int64_t wg = caps.max_workgroup_threads ? std::min<int64_t>(64, caps.max_workgroup_threads) : 64;
  return Variant{}.set("impl", kGpu).set("wg", wg >= 64 ? 64 : 32);
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  const KvShape s = kv_shape_of(p);
  const int d = int(s.d);
  const auto sc = kv_scalars(s);
  const bool cpu = is_cpu(caps);
  Plan pl;
  // The cache rows: a work-item per (t, g) row on the CPU, per value on GPUs.
  Step w{cpu ? kv_cache_write_kernel(d, cpu_lanes(d, caps), true, 1) : kv_cache_write_kernel(d, 1, false, 64), {},
         {kKNew, kVNew, kPos, kKCache, kVCache}, sc};
  w.dims.grid = cpu ? wrapped_grid(s.t * s.hkv) : wrapped_grid(groups_for(s.t * s.hkv * s.d, 64));
  w.dims.workgroup = {cpu ? 1u : 64u, 1, 1};
  pl.steps.push_back(std::move(w));
  Step a;
  switch (v.get("impl")) {
    case kCpu: {
      const int kb = int(v.get("kb", 16)), rg = int(v.get("rg", 1));
      if (kb != 8 && kb != 16) throw std::invalid_argument("kv_attention (cpu): kb must be 8 or 16: " + v.str());
      if (rg < 1 || rg > 8 || s.g() % rg)
        throw std::invalid_argument("kv_attention (cpu): rg must divide H/Hkv = " + std::to_string(s.g()) + " (at most 8): " + v.str());
      a.kernel = kv_attention_cpu_kernel(d, cpu_lanes(d, caps), kb, rg);
      a.dims.workgroup = {1, 1, 1};
      a.dims.grid = wrapped_grid(s.rows() / rg);
      break;
    }
    case kGpu: {
      const int wg = int(v.get("wg", 64));
      if (wg < 1 || wg > 1024 || (caps.max_workgroup_threads && uint32_t(wg) > caps.max_workgroup_threads))
        throw std::invalid_argument("kv_attention (gpu): wg must be in 1..1024 and within the target's workgroup size: " + v.str());
      a.kernel = kv_attention_gpu_kernel(d, wg);
      a.dims.workgroup = {uint32_t(wg), 1, 1};
      a.dims.grid = wrapped_grid(s.rows());
      break;
    }
    default:
      throw std::invalid_argument("kv_attention: unknown impl " + std::to_string(v.get("impl")));
  }
  a.buffers = {kQ, kKCache, kVCache, kPos, kOut};
  a.scalars = sc;
  pl.steps.push_back(std::move(a));
  return pl;
}

// Random q, k_new, v_new and caches in [-1, 1]; pos = test_pos or random in [0, C - T].
void make_input(const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (input == kPos) {
    const int64_t c = p.dim(4), t = p.dim(0);
    int32_t pos = int32_t(p.attrs.count("test_pos") ? p.attr("test_pos") : std::uniform_int_distribution<int64_t>(0, c - t)(rng));
    std::memcpy(bytes.data(), &pos, 4);
    return;
  }
  ir::BufferSpec spec;
  spec.elems = bytes.size() / 4;
  std::vector<uint8_t> r;
  rt::fill_random(ir::types::F32, spec, r, rng);
  bytes = std::move(r);
}

// The caches updated on a copy, then plain loops in double.
void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const KvShape s = kv_shape_of(p);
  const int64_t D = s.d, C = s.c;
  auto f = [&](int i) { return static_cast<const float*>(in[size_t(i)]); };
  const float *q = f(kQ), *kn = f(kKNew), *vn = f(kVNew);
  int32_t pos;
  std::memcpy(&pos, in[kPos], 4);
  std::vector<float> k(f(kKCache), f(kKCache) + s.hkv * C * D), v(f(kVCache), f(kVCache) + s.hkv * C * D);
  for (int64_t t = 0; t < s.t; ++t)
    for (int64_t g = 0; g < s.hkv; ++g) {
      const int64_t row = int64_t(pos) + t;
      if (row < 0 || row >= C) continue;
      std::copy_n(kn + (t * s.hkv + g) * D, D, k.begin() + (g * C + row) * D);
      std::copy_n(vn + (t * s.hkv + g) * D, D, v.begin() + (g * C + row) * D);
    }
  float* o = static_cast<float*>(out[0]);
  std::vector<double> sc(static_cast<size_t>(C)), acc(static_cast<size_t>(D));
  for (int64_t t = 0; t < s.t; ++t)
    for (int64_t h = 0; h < s.h; ++h) {
      const float* qi = q + (t * s.h + h) * D;
      const float* kh = k.data() + (h / s.g()) * C * D;
      const float* vh = v.data() + (h / s.g()) * C * D;
      const int64_t n = std::clamp<int64_t>(int64_t(pos) + t + 1, 0, C);
      double mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t dd = 0; dd < D; ++dd) dot += double(qi[dd]) * kh[j * D + dd];
        sc[size_t(j)] = dot * s.scale;
        mx = std::max(mx, sc[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += (sc[size_t(j)] = std::exp(sc[size_t(j)] - mx));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t dd = 0; dd < D; ++dd) acc[size_t(dd)] += sc[size_t(j)] * vh[j * D + dd];
      for (int64_t dd = 0; dd < D; ++dd) o[(t * s.h + h) * D + dd] = n ? float(acc[size_t(dd)] / sum) : 0.0f;
    }
}

Problem prob(std::vector<int64_t> dims, int64_t pos = -1) {
  Problem p;
  p.op = "kv_attention";
  p.dims = std::move(dims);
  if (pos >= 0) p.attrs["test_pos"] = pos;
  return p;
}

}  // namespace

void register_kv_attention_op() {
  OpDef d;
  d.name = "kv_attention";
  d.description = "attention step over a KV cache updated in place (decode/prefill), f32, grouped-query, causal, pos read at run time";
  d.dims_help = "T H D Hkv C";
  d.attrs_help = "scale_milli=<scale*1000> (default 1/sqrt(D)) test_pos=<pos the generated inputs hold> (default random in [0, C-T])";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    const KvShape s = kv_shape_of(p);
    const ir::Type f = ir::types::F32;
    return std::vector<TensorSpec>{tensor("q", f, {s.t, s.h, s.d}),          tensor("k_new", f, {s.t, s.hkv, s.d}),
                                   tensor("v_new", f, {s.t, s.hkv, s.d}),     tensor("pos", ir::types::I32, {1}, 0, double(s.c - s.t)),
                                   tensor("k_cache", f, {s.hkv, s.c, s.d}),   tensor("v_cache", f, {s.hkv, s.c, s.d})};
  };
  d.outputs = [](const Problem& p) {
    const KvShape s = kv_shape_of(p);
    return std::vector<TensorSpec>{tensor("o", ir::types::F32, {s.t, s.h, s.d})};
  };
  d.candidates = candidates;
  d.heuristic = heuristic;
  d.plan = plan;
  d.make_input = make_input;
  d.reference = reference;
  d.variant_keys = {
      key_set("impl", "implementation", {kCpu, kGpu}, "0 CPU (a work-item per rg query heads of a kv head, D as lines), 1 GPU (a workgroup per query row)"),
      key_set("kb", "key_block", {8, 16}, "CPU: keys scored per block (lines of scores)"),
      key_range("rg", "rows_per_item", 1, 8, "CPU: query heads of one kv head per work-item (each K and V line loaded once for them)"),
      key_range("wg", "workgroup", 1, 1024, "GPU: work-items per query row (keys per block)"),
  };
  // As "attention": scores sum D products, outputs average up to C rows.
  d.tolerance = [](const Problem& p) {
    const KvShape s = kv_shape_of(p);
    return 2e-5 * std::max(1.0, std::sqrt(double(s.d) * double(s.c)) / 16.0);
  };
  d.flops = [](const Problem& p) {
    const KvShape s = kv_shape_of(p);
    const double pos = double(nominal_pos(p));
    return 4.0 * double(s.h) * double(s.d) * (double(s.t) * (pos + 1) + double(s.t) * double(s.t - 1) / 2);
  };
  d.bytes = [](const Problem& p) {  // q, o, the new rows, and the visible K and V rows read once
    const KvShape s = kv_shape_of(p);
    const double seen = double(std::min(nominal_pos(p) + s.t, s.c));
    return 4.0 * double(s.d) * (2.0 * double(s.rows()) + 2.0 * double(s.t * s.hkv) + 2.0 * double(s.hkv) * seen);
  };
  d.test_problems = {
      prob({1, 4, 16, 2, 32}, 20),    // decode at pos > 0, GQA 4/2
      prob({5, 4, 8, 2, 16}, 0),      // prefill at pos 0, D = 8
      prob({5, 4, 24, 2, 20}, 7),     // prefill at pos 7, D = 24 (lines of 8)
      prob({3, 8, 64, 2, 40}, 30),    // D = 64, G = 4, C > pos + T
      prob({1, 2, 64, 2, 100}),       // decode at a random position
      prob({4, 3, 5, 3, 11}, 3),      // odd D (scalars), H = Hkv
      prob({2, 2, 128, 1, 300}, 298), // D = 128, the cache's last rows (pos + T = C)
  };
  d.bench_problems = {prob({1, 32, 128, 8, 2048}, 2047), prob({16, 32, 128, 8, 2048}, 1024)};
  d.memory_bound = true;
  register_op(std::move(d));
}

}  // namespace kgen::ops
