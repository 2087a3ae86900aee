// The "topk" op: the k best values along the middle axis of outer × n ×
// inner, sorted, with their int64 indices (ties: the lower index first).
//
// dims "outer n inner"; dtype any numeric type; attrs k=<1..n>, largest=0|1.
// Variants: impl=0 k selection passes, impl=1 one insertion pass (O(n) plus
// the moves of values that enter: far fewer than k·n unless the row is
// sorted the wrong way); wg, work-items per workgroup (one row each).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "ops/core/op.h"
#include "ops/select/topk.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace {

using ir::ScalarKind;

TopK topk_of(const Problem& p) {
  if (p.dims.size() != 3) throw std::invalid_argument("topk: expected dims outer n inner");
  TopK t;
  t.dtype = p.dtype;
  t.outer = p.dim(0), t.n = p.dim(1), t.inner = p.dim(2);
  t.k = p.attr("k", 1);
  t.largest = p.attr("largest", 1) != 0;
  return t;
}

void validate(const Problem& p) {
  const TopK t = topk_of(p);
  if (t.outer < 1 || t.n < 1 || t.inner < 1) throw std::invalid_argument("topk: outer, n and inner must be >= 1");
  if (t.k < 1 || t.k > t.n)
    throw std::invalid_argument("topk: k=" + std::to_string(t.k) + " outside 1..n=" + std::to_string(t.n));
  if (p.dtype == ScalarKind::Bool) throw std::invalid_argument("topk: bool has no order to select by");
  // Element offsets and index words are i32 in the kernel.
  if (double(t.outer) * double(t.n) * double(t.inner) >= 2e9 || 2.0 * double(t.outer) * double(t.k) * double(t.inner) >= 2e9)
    throw std::invalid_argument("topk: too large (offsets are 32-bit)");
}

// The rows of one element type, ranked by `key`: a stable sort of the
// indices keeps equal values in index order.
template <class T, class Key>
void select_rows(const TopK& t, const T* x, T* values, int64_t* indices, Key key) {
  std::vector<int64_t> order(size_t(t.n));
  for (int64_t o = 0; o < t.outer; ++o)
    for (int64_t q = 0; q < t.inner; ++q) {
      auto at = [&](int64_t i) { return key(x[(o * t.n + i) * t.inner + q]); };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return t.largest ? at(a) > at(b) : at(a) < at(b); });
      for (int64_t j = 0; j < t.k; ++j) {
        const int64_t dst = (o * t.k + j) * t.inner + q;
        values[dst] = x[(o * t.n + order[size_t(j)]) * t.inner + q];
        indices[dst] = order[size_t(j)];
      }
    }
}

template <class T>
void select_native(const TopK& t, const void* x, void* values, int64_t* indices) {
  select_rows(t, static_cast<const T*>(x), static_cast<T*>(values), indices, [](T v) { return v; });
}

}  // namespace

void reference_topk(const TopK& t, const void* x, void* values, int64_t* indices) {
  switch (t.dtype) {
    case ScalarKind::I8: return select_native<int8_t>(t, x, values, indices);
    case ScalarKind::I16: return select_native<int16_t>(t, x, values, indices);
    case ScalarKind::I32: return select_native<int32_t>(t, x, values, indices);
    case ScalarKind::I64: return select_native<int64_t>(t, x, values, indices);
    case ScalarKind::U8: return select_native<uint8_t>(t, x, values, indices);
    case ScalarKind::U16: return select_native<uint16_t>(t, x, values, indices);
    case ScalarKind::U32: return select_native<uint32_t>(t, x, values, indices);
    case ScalarKind::U64: return select_native<uint64_t>(t, x, values, indices);
    case ScalarKind::F32: return select_native<float>(t, x, values, indices);
    case ScalarKind::F64: return select_native<double>(t, x, values, indices);
    case ScalarKind::F16:
    case ScalarKind::BF16: {
      const ir::Type ty(t.dtype);  // 16-bit floats ranked by their exact double values
      return select_rows(t, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(values), indices,
                         [ty](uint16_t b) { return rt::scalar_value(ty, reinterpret_cast<const uint8_t*>(&b)); });
    }
    default: throw std::invalid_argument("topk: no reference for dtype " + ir::Type(t.dtype).str());
  }
}

namespace {

enum Impl { kPasses = 0, kInsertion = 1 };

std::vector<Variant> candidates(const Problem&, const TargetCaps& caps) {
  std::vector<Variant> c;
  for (int impl : {kPasses, kInsertion})
    for (int wg : is_cpu(caps) ? std::vector<int>{1, 64} : std::vector<int>{64, 128, 256})
      if (!caps.max_workgroup_threads || uint32_t(wg) <= caps.max_workgroup_threads)
        c.push_back(Variant{}.set("impl", impl).set("wg", wg));
  return c;
}

// A row per work-item: the CPU runs a workgroup's items in a loop, so one
// per workgroup spreads rows over threads best; GPUs want full warps.
Variant heuristic(const Problem&, const TargetCaps& caps) {
  return Variant{}.set("impl", kInsertion).set("wg", is_cpu(caps) ? 1 : 64);
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps&) {
  const TopK t = topk_of(p);
  const int wg = int(v.get("wg", 64));
  if (wg < 1 || wg > 1024) throw std::invalid_argument("topk: wg must be in 1..1024");
  const int64_t impl = v.get("impl", kInsertion);
  if (impl != kPasses && impl != kInsertion) throw std::invalid_argument("topk: impl must be 0 or 1");
  const int64_t rows = t.outer * t.inner;
  Step st;
  st.kernel = topk_kernel(ir::Type(t.dtype), t.largest, impl == kInsertion, wg);
  st.dims.grid = wrapped_grid(groups_for(rows, wg));
  st.dims.workgroup = {uint32_t(wg), 1, 1};
  st.buffers = {0, 1, 2};
  st.scalars = {ir::scalar_slot(int32_t(t.n)), ir::scalar_slot(int32_t(t.inner)), ir::scalar_slot(int32_t(t.k)),
                ir::scalar_slot(int32_t(rows))};
  Plan pl;
  pl.steps.push_back(std::move(st));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  reference_topk(topk_of(p), in[0], out[0], static_cast<int64_t*>(out[1]));
}

// Every element drawn from a pool of about n/2 values, so rows hold ties;
// 64-bit integers over their whole range (signs, values past 2^63).
void make_input(const Problem& p, int, std::vector<uint8_t>& bytes, uint64_t seed) {
  const ir::Type ty(p.dtype);
  const size_t eb = size_t(ty.bytes()), count = bytes.size() / eb;
  const size_t pool_n = std::max<size_t>(2, size_t(p.dim(1)) / 2);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> pool;
  if (p.dtype == ScalarKind::I64 || p.dtype == ScalarKind::U64) {
    pool.resize(pool_n * 8);
    for (size_t i = 0; i < pool_n; ++i) {
      const uint64_t v = rng();
      std::memcpy(pool.data() + i * 8, &v, 8);
    }
  } else {
    ir::BufferSpec spec;
    spec.elems = pool_n;
    const bool is_unsigned = p.dtype == ScalarKind::U8 || p.dtype == ScalarKind::U16 || p.dtype == ScalarKind::U32;
    const bool is_float = ty.is_float();
    spec.lo = is_float ? -1.0 : is_unsigned ? 0.0 : -1e9;
    spec.hi = is_float ? 1.0 : 1e9;
    rt::fill_random(ty, spec, pool, rng);
  }
  for (size_t i = 0; i < count; ++i) std::memcpy(bytes.data() + i * eb, pool.data() + (rng() % pool_n) * eb, eb);
}

Problem prob(std::vector<int64_t> dims, int64_t k, bool largest, ScalarKind dt = ScalarKind::F32) {
  Problem p;
  p.op = "topk";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = {{"k", k}, {"largest", largest}};
  return p;
}

std::vector<Problem> test_problems() {
  using K = ScalarKind;
  return {
      prob({1, 1, 1}, 1, true),                 // a single element
      prob({3, 4, 1}, 3, true),                 // the ONNX example's shape
      prob({1, 37, 1}, 37, true),               // k = n: a full sort
      prob({2, 33, 5}, 1, false),               // k = 1 (argmin), strided rows
      prob({3, 17, 7}, 4, true),                // odd sizes along every axis
      prob({5, 100, 3}, 10, false),             // a longer axis, smallest
      prob({1, 5, 150}, 2, true),               // many rows: several workgroups of 64
      prob({4, 9, 1}, 9, false, K::I32),        // ints, k = n, smallest
      prob({2, 13, 3}, 5, true, K::I64),        // signed 64-bit over the whole range
      prob({3, 4, 1}, 3, true, K::U64),         // values past 2^63 rank above small ones
      prob({1, 300, 1}, 7, true, K::U8),        // many ties among 256 values
      prob({3, 50, 2}, 50, false, K::I8),
      prob({2, 20, 1}, 6, true, K::F64),
      prob({2, 19, 3}, 5, false, K::F16),
      prob({2, 21, 1}, 8, true, K::BF16),
      prob({3, 11, 2}, 3, true, K::U16),
  };
}

}  // namespace

void register_select_ops() {
  OpDef d;
  d.name = "topk";
  d.description = "the k largest or smallest values along an axis and their int64 indices, sorted, ties by lower index";
  d.dims_help = "outer n inner";
  d.attrs_help = "k=<1..n> largest=0|1";
  d.attr_defaults = {{"largest", 1}};
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    const TopK t = topk_of(p);
    return std::vector<TensorSpec>{tensor("x", ir::Type(t.dtype), {t.outer, t.n, t.inner})};
  };
  d.outputs = [](const Problem& p) {
    const TopK t = topk_of(p);
    return std::vector<TensorSpec>{tensor("values", ir::Type(t.dtype), {t.outer, t.k, t.inner}),
                                   tensor("indices", ir::Type(ScalarKind::I64), {t.outer, t.k, t.inner})};
  };
  d.candidates = candidates;
  d.heuristic = heuristic;
  d.variant_keys = {key_set("impl", "implementation", {kPasses, kInsertion}, "0 k selection passes, 1 one insertion pass"),
                    key_range("wg", "workgroup", 1, 1024, "work-items per workgroup, a row each")};
  d.plan = plan;
  d.reference = reference;
  d.make_input = make_input;
  d.tolerance = [](const Problem&) { return 0.0; };  // a selection copies values exactly
  d.flops = [](const Problem& p) {
    const TopK t = topk_of(p);
    return double(t.outer * t.inner) * double(t.k) * double(t.n);
  };
  d.bytes = [](const Problem& p) {
    const TopK t = topk_of(p);
    const double eb = double(ir::Type(t.dtype).bytes());
    return double(t.outer * t.inner) * (double(t.n) * eb + double(t.k) * (eb + 8));
  };
  d.test_problems = test_problems();
  d.bench_problems = {prob({1, 1000, 4096}, 10, true), prob({64, 32000, 1}, 40, true)};
  register_op(std::move(d));
}

}  // namespace kgen::ops
