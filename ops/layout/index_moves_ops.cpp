// The index moves (ops/layout/index_moves.h) as OpDefs of the layout family:
// "gather_elements", "gather_nd", "scatter_elements", "scatter_nd". A
// problem's dims are the data's shape; attributes give the indices' shape
// and type and the reduction. Indices are drawn in [-len, len) of their axis
// (oob=1 mixes in ones outside, which gathers turn into zeros and scatters
// skip); scatters draw them with repeats, so reductions meet.
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>

#include "ops/elementwise/fusion.h"
#include "ops/layout/data_movement_ops.h"
#include "ops/layout/index_moves.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace {

using move_ops::any_tensor;
using K = ir::ScalarKind;

K index_kind(const Problem& p) { return p.attr("i64", 1) ? K::I64 : K::I32; }

// The indices' shape on every axis: n<k>, default the data's.
std::vector<int64_t> elements_index_shape(const Problem& p) {
  std::vector<int64_t> s = p.dims;
  for (size_t k = 0; k < s.size(); ++k) s[k] = p.attr("n" + std::to_string(k), s[k]);
  return s;
}

// ND indices: the data's first b axes, q tuples (each) of k components.
std::vector<int64_t> nd_index_shape(const Problem& p) {
  const int64_t b = p.attr("b", 0), k = p.attr("k", 1), q = p.attr("q", 4);
  if (b < 0 || b >= int64_t(p.dims.size())) throw std::invalid_argument("b (batch_dims) out of range");
  std::vector<int64_t> s(p.dims.begin(), p.dims.begin() + b);
  s.push_back(q);
  s.push_back(k);
  return s;
}

ScatterReduce reduce_of(const Problem& p) {
  const int64_t r = p.attr("reduce", 0);
  if (r < 0 || r > 4) throw std::invalid_argument("reduce must be 0 none, 1 add, 2 mul, 3 max or 4 min");
  return ScatterReduce(r);
}

GatherElements gather_elements_of(const Problem& p) {
  GatherElements g;
  g.elem_bytes = move_ops::elem_bytes(p);
  g.data_shape = p.dims;
  g.index_shape = elements_index_shape(p);
  g.axis = p.attr("axis", 0);
  g.index_kind = index_kind(p);
  return g;
}

GatherND gather_nd_of(const Problem& p) {
  GatherND g;
  g.elem_bytes = move_ops::elem_bytes(p);
  g.data_shape = p.dims;
  g.index_shape = nd_index_shape(p);
  g.batch_dims = p.attr("b", 0);
  g.index_kind = index_kind(p);
  return g;
}

ScatterElements scatter_elements_of(const Problem& p) {
  ScatterElements s;
  s.dtype = p.dtype;
  s.data_shape = p.dims;
  s.index_shape = elements_index_shape(p);
  s.axis = p.attr("axis", 0);
  s.index_kind = index_kind(p);
  s.reduce = reduce_of(p);
  return s;
}

ScatterND scatter_nd_of(const Problem& p) {
  ScatterND s;
  s.dtype = p.dtype;
  s.data_shape = p.dims;
  if (p.attr("b", 0) != 0) throw std::invalid_argument("scatter_nd has no batch axes (b must be 0)");
  s.index_shape = nd_index_shape(p);
  s.index_kind = index_kind(p);
  s.reduce = reduce_of(p);
  return s;
}

// The axis length index j is drawn for (its component's axis).
using LenFn = std::function<int64_t(int64_t j)>;

// Index values: uniform in [-len, len) (scatters: in a few values, so
// targets repeat); with oob every fifth one outside.
void make_indices(const Problem& p, std::vector<uint8_t>& bytes, uint64_t seed, const LenFn& len, bool repeats) {
  std::mt19937_64 rng(seed);
  const bool i64 = index_kind(p) == K::I64, oob = p.attr("oob", 0) != 0;
  const size_t n = bytes.size() / (i64 ? 8 : 4);
  for (size_t j = 0; j < n; ++j) {
    const int64_t L = len(int64_t(j));
    int64_t v;
    if (L == 0 || (oob && j % 5 == 4)) {
      const int64_t bad[] = {L, -L - 1, L + 3, i64 ? (int64_t(1) << 32) + L / 2 : int64_t(INT32_MAX)};
      v = bad[rng() % 4];
    } else {
      const int64_t span = repeats ? std::min<int64_t>(L, 3) : L;
      v = int64_t(rng() % uint64_t(span)) - (rng() % 2 ? L : 0);
    }
    if (i64) std::memcpy(bytes.data() + 8 * j, &v, 8);
    else {
      const int32_t w = int32_t(v);
      std::memcpy(bytes.data() + 4 * j, &w, 4);
    }
  }
}

// Data and updates: the default generator over their TensorSpec's range.
void make_values(const TensorSpec& t, std::vector<uint8_t>& bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ir::BufferSpec spec;
  spec.elems = bytes.size() / t.elem.bytes();
  spec.lo = t.lo;
  spec.hi = t.hi;
  rt::fill_random(t.elem, spec, bytes, rng);
}

Problem prob(const char* op, std::vector<int64_t> dims, K dt, std::map<std::string, int64_t> attrs) {
  Problem p;
  p.op = op;
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = std::move(attrs);
  return p;
}

// What the four OpDefs share: variants (the element form), exact checks, bytes.
OpDef base(const char* name, std::string description, std::string attrs_help) {
  OpDef d;
  d.name = name;
  d.family = "layout";
  d.description = std::move(description);
  d.dims_help = "the data's shape (rank 1..8)";
  d.attrs_help = std::move(attrs_help) + " i64=0|1 (index type, default 1) oob=0|1 (mix in out-of-range indices)";
  d.candidates = [](const Problem&, const TargetCaps&) { return std::vector<Variant>{Variant{}.set("impl", 0)}; };
  d.heuristic = [](const Problem&, const TargetCaps&) { return Variant{}.set("impl", 0); };
  d.variant_keys = {key_set("impl", "implementation", {0}, "0 one work-item per output word (scatters: per line or column)")};
  d.tolerance = [](const Problem&) { return 0.0; };
  d.flops = [](const Problem&) { return 0.0; };
  d.memory_bound = true;
  return d;
}

void register_gather_elements() {
  OpDef d = base("gather_elements", "ONNX GatherElements: y[c] = data[c with c[axis] = idx[c]]",
                 "axis=k n0..n7=the indices' shape (default the data's)");
  d.validate = [](const Problem& p) {
    Plan probe;
    plan_gather_elements(probe, gather_elements_of(p), 0, 1, 2, MoveVariant{});
  };
  d.inputs = [](const Problem& p) {
    const GatherElements g = gather_elements_of(p);
    return std::vector<TensorSpec>{any_tensor("data", p.dtype, g.data_shape), any_tensor("indices", g.index_kind, g.index_shape)};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, gather_elements_of(p).index_shape)}; };
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    const GatherElements g = gather_elements_of(p);
    if (input == 0) return make_values(any_tensor("data", p.dtype, g.data_shape), bytes, seed);
    make_indices(p, bytes, seed, [&](int64_t) { return g.data_shape[size_t(g.axis)]; }, false);
  };
  d.plan = [](const Problem& p, const Variant&, const TargetCaps& caps) {
    Plan pl;
    plan_gather_elements(pl, gather_elements_of(p), 0, 1, 2, move_variant_for(caps));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_gather_elements(gather_elements_of(p), in[0], in[1], out[0]);
  };
  d.bytes = [](const Problem& p) { return 2.0 * double(fusion::numel(gather_elements_of(p).index_shape)) * move_ops::elem_bytes(p); };
  d.test_problems = {prob("gather_elements", {3, 4}, K::F32, {{"axis", 0}, {"n0", 2}, {"oob", 1}}),
                     prob("gather_elements", {3, 4}, K::F32, {{"axis", 1}, {"n1", 6}, {"i64", 0}}),
                     prob("gather_elements", {2, 5, 3, 4}, K::F16, {{"axis", 2}, {"n0", 1}, {"n2", 7}}),
                     prob("gather_elements", {4, 6, 5}, K::U8, {{"axis", 1}, {"n1", 3}, {"n2", 2}, {"oob", 1}}),
                     prob("gather_elements", {5, 7}, K::F64, {{"axis", 1}, {"i64", 0}, {"oob", 1}}),
                     prob("gather_elements", {2, 3, 2, 2, 2, 2, 2, 3}, K::I64, {{"axis", 7}}),
                     prob("gather_elements", {300, 40}, K::F32, {{"axis", 0}, {"n0", 500}})};
  d.bench_problems = {prob("gather_elements", {1024, 1024}, K::F32, {{"axis", 1}})};
  register_op(std::move(d));
}

void register_gather_nd() {
  OpDef d = base("gather_nd", "ONNX GatherND: y[b, q, :] = data[b, idx[b, q, 0..k), :]",
                 "b=batch_dims k=tuple length q=tuples per batch (the indices: data[:b] x q x k)");
  d.validate = [](const Problem& p) { gather_nd_out_shape(gather_nd_of(p)); };
  d.inputs = [](const Problem& p) {
    const GatherND g = gather_nd_of(p);
    return std::vector<TensorSpec>{any_tensor("data", p.dtype, g.data_shape), any_tensor("indices", g.index_kind, g.index_shape)};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, gather_nd_out_shape(gather_nd_of(p)))}; };
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    const GatherND g = gather_nd_of(p);
    if (input == 0) return make_values(any_tensor("data", p.dtype, g.data_shape), bytes, seed);
    const int64_t k = g.index_shape.back();
    make_indices(p, bytes, seed, [&](int64_t j) { return g.data_shape[size_t(g.batch_dims + j % k)]; }, false);
  };
  d.plan = [](const Problem& p, const Variant&, const TargetCaps& caps) {
    Plan pl;
    plan_gather_nd(pl, gather_nd_of(p), 0, 1, 2, move_variant_for(caps));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_gather_nd(gather_nd_of(p), in[0], in[1], out[0]);
  };
  d.bytes = [](const Problem& p) { return 2.0 * double(fusion::numel(gather_nd_out_shape(gather_nd_of(p)))) * move_ops::elem_bytes(p); };
  d.test_problems = {prob("gather_nd", {2, 2}, K::F32, {{"k", 2}, {"q", 2}}),
                     prob("gather_nd", {4, 3, 5}, K::F32, {{"k", 1}, {"q", 6}, {"i64", 0}, {"oob", 1}}),
                     prob("gather_nd", {3, 4, 5, 2}, K::F16, {{"b", 1}, {"k", 2}, {"q", 3}, {"oob", 1}}),
                     prob("gather_nd", {2, 3, 3}, K::U8, {{"b", 1}, {"k", 1}, {"q", 5}}),
                     prob("gather_nd", {5, 6, 7}, K::F64, {{"k", 3}, {"q", 9}, {"oob", 1}}),
                     prob("gather_nd", {2, 3, 4, 5}, K::I32, {{"b", 2}, {"k", 2}, {"q", 2}, {"i64", 0}}),
                     prob("gather_nd", {64, 300}, K::F32, {{"k", 1}, {"q", 40}})};
  d.bench_problems = {prob("gather_nd", {4096, 1024}, K::F32, {{"k", 1}, {"q", 2048}})};
  register_op(std::move(d));
}

void register_scatter_elements() {
  OpDef d = base("scatter_elements", "ONNX ScatterElements: y = data; y[c with c[axis] = idx[c]] = reduce(., updates[c]) in order",
                 "axis=k n0..n7=the indices' shape (default the data's) reduce=0 none|1 add|2 mul|3 max|4 min");
  d.validate = [](const Problem& p) {
    Plan probe;
    plan_scatter_elements(probe, scatter_elements_of(p), 0, 1, 2, 3, MoveVariant{});
  };
  d.inputs = [](const Problem& p) {
    const ScatterElements s = scatter_elements_of(p);
    return std::vector<TensorSpec>{any_tensor("data", p.dtype, s.data_shape), any_tensor("indices", s.index_kind, s.index_shape),
                                   any_tensor("updates", p.dtype, s.index_shape)};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, p.dims)}; };
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    const ScatterElements s = scatter_elements_of(p);
    if (input != 1) return make_values(any_tensor("values", p.dtype, {}), bytes, seed);
    make_indices(p, bytes, seed, [&](int64_t) { return s.data_shape[size_t(s.axis)]; }, true);
  };
  d.plan = [](const Problem& p, const Variant&, const TargetCaps& caps) {
    Plan pl;
    plan_scatter_elements(pl, scatter_elements_of(p), 0, 1, 2, 3, move_variant_for(caps));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_scatter_elements(scatter_elements_of(p), in[0], in[1], in[2], out[0]);
  };
  d.bytes = [](const Problem& p) { return 2.0 * double(fusion::numel(p.dims)) * move_ops::elem_bytes(p); };
  d.test_problems = {prob("scatter_elements", {3, 4}, K::F32, {{"axis", 0}, {"n0", 5}, {"oob", 1}}),
                     prob("scatter_elements", {3, 4}, K::F32, {{"axis", 1}, {"n1", 6}, {"reduce", 1}, {"i64", 0}}),
                     prob("scatter_elements", {2, 5, 3}, K::F16, {{"axis", 1}, {"n0", 1}, {"reduce", 2}}),
                     prob("scatter_elements", {4, 6}, K::I32, {{"axis", 0}, {"n0", 9}, {"reduce", 3}, {"oob", 1}}),
                     prob("scatter_elements", {4, 6}, K::I8, {{"axis", 1}, {"reduce", 4}}),
                     prob("scatter_elements", {5, 7}, K::F64, {{"axis", 1}, {"n1", 3}, {"reduce", 1}}),
                     prob("scatter_elements", {6, 5}, K::U8, {{"axis", 0}, {"n0", 4}}),
                     prob("scatter_elements", {3, 4}, K::I64, {{"axis", 1}, {"oob", 1}}),
                     prob("scatter_elements", {2, 3, 2, 2, 2, 2, 2, 3}, K::BF16, {{"axis", 3}, {"reduce", 1}}),
                     prob("scatter_elements", {300, 40}, K::F32, {{"axis", 1}, {"n1", 60}, {"reduce", 1}})};
  d.bench_problems = {prob("scatter_elements", {1024, 1024}, K::F32, {{"axis", 1}})};
  register_op(std::move(d));
}

void register_scatter_nd() {
  OpDef d = base("scatter_nd", "ONNX ScatterND: y = data; y[idx[q, 0..k), :] = reduce(., updates[q, :]) in order",
                 "k=tuple length q=tuples (the indices: q x k) reduce=0 none|1 add|2 mul|3 max|4 min");
  d.validate = [](const Problem& p) { scatter_nd_updates_shape(scatter_nd_of(p)); };
  d.inputs = [](const Problem& p) {
    const ScatterND s = scatter_nd_of(p);
    return std::vector<TensorSpec>{any_tensor("data", p.dtype, s.data_shape), any_tensor("indices", s.index_kind, s.index_shape),
                                   any_tensor("updates", p.dtype, scatter_nd_updates_shape(s))};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, p.dims)}; };
  d.make_input = [](const Problem& p, int input, std::vector<uint8_t>& bytes, uint64_t seed) {
    const ScatterND s = scatter_nd_of(p);
    if (input != 1) return make_values(any_tensor("values", p.dtype, {}), bytes, seed);
    const int64_t k = s.index_shape.back();
    make_indices(p, bytes, seed, [&](int64_t j) { return s.data_shape[size_t(j % k)]; }, true);
  };
  d.plan = [](const Problem& p, const Variant&, const TargetCaps& caps) {
    Plan pl;
    plan_scatter_nd(pl, scatter_nd_of(p), 0, 1, 2, 3, move_variant_for(caps));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_scatter_nd(scatter_nd_of(p), in[0], in[1], in[2], out[0]);
  };
  d.bytes = [](const Problem& p) { return 2.0 * double(fusion::numel(p.dims)) * move_ops::elem_bytes(p); };
  d.test_problems = {prob("scatter_nd", {4, 4, 4}, K::F32, {{"k", 1}, {"q", 2}}),
                     prob("scatter_nd", {8}, K::F32, {{"k", 1}, {"q", 6}, {"reduce", 1}, {"oob", 1}}),
                     prob("scatter_nd", {4, 5, 3}, K::F16, {{"k", 2}, {"q", 7}, {"reduce", 2}, {"i64", 0}}),
                     prob("scatter_nd", {3, 4, 5}, K::I32, {{"k", 3}, {"q", 10}, {"reduce", 3}}),
                     prob("scatter_nd", {6, 3}, K::U16, {{"k", 1}, {"q", 4}, {"reduce", 4}, {"oob", 1}}),
                     prob("scatter_nd", {5, 7}, K::F64, {{"k", 1}, {"q", 3}}),
                     prob("scatter_nd", {5, 3}, K::U8, {{"k", 1}, {"q", 8}, {"i64", 0}}),
                     prob("scatter_nd", {64, 300}, K::F32, {{"k", 1}, {"q", 20}, {"reduce", 1}})};
  d.bench_problems = {prob("scatter_nd", {4096, 1024}, K::F32, {{"k", 1}, {"q", 512}})};
  register_op(std::move(d));
}

}  // namespace

void register_index_move_ops() {
  if (find_op("gather_elements")) return;
  register_gather_elements();
  register_gather_nd();
  register_scatter_elements();
  register_scatter_nd();
}

}  // namespace kgen::ops
