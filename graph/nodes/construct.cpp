// Ops that construct tensors from shapes or small constants: Trilu (a mask
// fixed by the shape, applied by one elementwise chain), EyeLike and Range
// (known at inference: host constants), CastLike (Cast to input 1's type),
// and the ops whose output shape depends on their data: Compress (a Gather
// once the condition is known), NonZero and Unique (constants when their
// input is). A data-dependent shape computed at run time is refused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "graph/onnx/tensor_proto.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace fz = ops::fusion;

namespace {

void copy_elem(Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  const size_t eb = dtype_bytes(src.dtype);
  std::memcpy(dst.mutable_data() + size_t(di) * eb, src.data() + size_t(si) * eb, eb);
}

// Output i is known from shapes or constants alone: set it, the node is done.
void set_constant_out(InferCtx& c, int i, Tensor t) {
  if (i < int(c.node.outputs.size()) && c.node.outputs[size_t(i)] >= 0) {
    c.set_out(i, t.dtype, t.shape);
    c.g.values[size_t(c.node.outputs[size_t(i)])].constant = std::move(t);
  }
}

// ---- Trilu: keep x[..., i, j] where j - i >= k (upper) or <= k (lower) ----
Tensor trilu_mask(const Node& n, int64_t rows, int64_t cols, int64_t k) {
  const bool upper = n.attr_int("upper", 1) != 0;
  Tensor m(ScalarKind::Bool, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m.set(i * cols + j, upper ? j - i >= k : j - i <= k);
  return m;
}

int64_t trilu_k(const InferCtx& c) { return c.has_in(1) ? c.need_constant(1, "k").get_int(0) : 0; }

OpHandler trilu_handler() {
  OpHandler h;
  h.op = "Trilu";
  h.infer = [](InferCtx& c) {
    c.require_inputs(1, 2);
    if (c.shape(0).size() < 2) c.invalid("input of rank below 2");
    trilu_k(c);
    c.set_out(0, c.dtype(0), c.shape(0));
  };
  h.eval = [](EvalCtx& e) {
    const Shape& s = e.in[0]->shape;
    const int64_t rows = s[s.size() - 2], cols = s.back();
    const Tensor m = trilu_mask(e.node, rows, cols, trilu_k(InferCtx{e.g, e.node}));
    for (int64_t i = 0; i < e.in[0]->numel(); ++i)
      if (m.get(i % (rows * cols)) != 0) copy_elem(e.out[0], i, *e.in[0], i);
  };
  h.lower = [](LowerCtx& c) {
    const Shape& s = c.in(0).shape;
    const int64_t rows = s[s.size() - 2], cols = s.back(), batch = numel(s) / std::max<int64_t>(rows * cols, 1);
    // bool moves as u8 (the same bytes): chains computing on bool values
    // and masks together do not compile on the CPU.
    const ScalarKind k = c.in(0).dtype == ScalarKind::Bool ? ScalarKind::U8 : c.in(0).dtype;
    fz::Chain ch;
    ch.name = "trilu";
    ch.shape = {batch, rows, cols};  // the batch axes as one
    ch.out_dtype = k;
    ch.inputs = {{"x", k, ch.shape}, {"mask", ScalarKind::Bool, {rows, cols}}};
    ch.out = fz::where(fz::in(1, ScalarKind::Bool), fz::in(0, k), fz::lit(0));
    InferCtx ic{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)};
    c.chain(ch, {c.in_slot(0), c.constant_slot(trilu_mask(c.node, rows, cols, trilu_k(ic)))}, c.out_slot(0));
  };
  return h;
}

// ---- EyeLike: ones on the k-th diagonal of a 2-D shape ----
void infer_eyelike(InferCtx& c) {
  c.require_inputs(1, 1);
  const Shape& s = c.shape(0);
  if (s.size() != 2) c.invalid("input of rank " + std::to_string(s.size()) + " (EyeLike takes 2-D)");
  const ScalarKind k = c.node.has("dtype") ? onnx_dtype(int(c.node.attr_int("dtype", 1)), c.node.where() + " attribute 'dtype'")
                                           : c.dtype(0);
  const int64_t diag = c.node.attr_int("k", 0);
  Tensor t(k, s);
  for (int64_t i = 0; i < s[0]; ++i)
    if (i + diag >= 0 && i + diag < s[1]) t.set(i * s[1] + i + diag, 1);
  set_constant_out(c, 0, std::move(t));
  c.node.dead = true;
}

// ---- Range: start + i·delta for i < max(ceil((limit - start) / delta), 0) ----
void infer_range(InferCtx& c) {
  c.require_inputs(3, 3);
  const Tensor& start = c.need_constant(0, "start");
  const Tensor& limit = c.need_constant(1, "limit");
  const Tensor& delta = c.need_constant(2, "delta");
  const ScalarKind k = start.dtype;
  if (limit.dtype != k || delta.dtype != k) c.invalid("start, limit and delta of different types");
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) c.invalid("start, limit and delta must be scalars");
  const bool is_int = ir::Type(k).is_int();
  const double s = start.get(0), l = limit.get(0), d = delta.get(0);
  if (d == 0) c.invalid("delta 0");
  const int64_t n = std::max<int64_t>(0, int64_t(std::ceil((l - s) / d)));
  Tensor t(k, {n});
  for (int64_t i = 0; i < n; ++i) {
    if (is_int) {
      const int64_t v = start.get_int(0) + i * delta.get_int(0);
      std::memcpy(t.mutable_data() + size_t(i) * dtype_bytes(k), Tensor::from_ints(k, {1}, {v}).data(), dtype_bytes(k));
    } else {
      t.set(i, s + double(i) * d);
    }
  }
  set_constant_out(c, 0, std::move(t));
  c.node.dead = true;
}

// ---- CastLike: Cast to input 1's type. The type is fixed as a `to`
// attribute at inference, before f16 values inside the graph are computed
// in f32 (graph/passes.h upcast_f16), so a cast to f16 keeps its rounding
// as Cast's does; input 1 is then dropped ----
ScalarKind castlike_target(const Node& n) { return onnx_dtype(int(n.attr_int("to", 1)), n.where() + " target type"); }

OpHandler castlike_handler() {
  OpHandler h;
  h.op = "CastLike";
  h.infer = [](InferCtx& c) {
    if (c.has_in(1)) {  // input 1 becomes the `to` attribute (it may be empty: only its type counts)
      c.require_inputs(2, 2);
      Attribute to;
      to.kind = Attribute::Kind::Int;
      to.i = onnx_elem_type(c.dtype(1));
      c.node.attrs["to"] = to;
      c.node.inputs.resize(1);
    }
    c.set_out(0, castlike_target(c.node), c.shape(0));
  };
  h.eval = [](EvalCtx& e) {
    Tensor& o = e.out[0];
    const Tensor& x = *e.in[0];
    const bool int64_out = o.dtype == ScalarKind::I64 || o.dtype == ScalarKind::U64;
    for (int64_t i = 0; i < o.numel(); ++i) {
      if (int64_out) {
        const int64_t v = ir::Type(x.dtype).is_float() ? int64_t(x.get(i)) : x.get_int(i);
        std::memcpy(o.mutable_data() + 8 * i, &v, 8);
      } else {
        o.set(i, x.get(i));
      }
    }
  };
  h.chain = [](ChainCtx& c) {
    const ScalarKind to = castlike_target(c.node);
    if ((to == ScalarKind::F16 || to == ScalarKind::BF16) && c.out_dtype == ScalarKind::F32)
      return fz::round_to(to, fz::cast(ScalarKind::F32, c.in(0)));
    return fz::cast(c.out_dtype, c.in(0));
  };
  return h;
}

// ---- Compress: the slices along `axis` (the flattened input without one)
// where the constant condition holds: a Gather of their positions ----
struct CompressMove {
  ops::Gather gather;
  Shape out;
  Tensor positions;  // i64
};

CompressMove compress_move(const InferCtx& c) {
  c.require_inputs(2, 2);
  const Tensor& cond = c.need_constant(1, "condition");
  const Shape& in = c.shape(0);
  const bool flat = !c.node.has("axis");
  const int64_t axis = flat ? 0 : normalize_axis(c, c.node.attr_int("axis", 0), int64_t(in.size()));
  const int64_t len = flat ? numel(in) : in[size_t(axis)];
  if (cond.numel() > len) c.invalid("condition longer than the axis");
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.get(i) != 0) pos.push_back(i);
  CompressMove m;
  m.gather.elem_bytes = int(dtype_bytes(c.dtype(0)));
  m.gather.axis_len = len;
  m.gather.n_indices = int64_t(pos.size());
  m.gather.index_kind = ScalarKind::I64;
  if (flat) {
    m.out = {int64_t(pos.size())};
  } else {
    for (int64_t a = 0; a < axis; ++a) m.gather.outer *= in[size_t(a)];
    for (size_t a = size_t(axis) + 1; a < in.size(); ++a) m.gather.inner *= in[a];
    m.out = in;
    m.out[size_t(axis)] = int64_t(pos.size());
  }
  m.positions = Tensor::from_ints(ScalarKind::I64, {int64_t(pos.size())}, pos);
  return m;
}

OpHandler compress_handler() {
  OpHandler h;
  h.op = "Compress";
  h.infer = [](InferCtx& c) { c.set_out(0, c.dtype(0), compress_move(c).out); };
  h.eval = [](EvalCtx& e) {
    const CompressMove m = compress_move(InferCtx{e.g, e.node});
    ops::reference_gather(m.gather, e.in[0]->data(), m.positions.data(), e.out[0].mutable_data());
  };
  h.lower = [](LowerCtx& c) {
    CompressMove m = compress_move(InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)});
    ops::Plan plan;
    ops::plan_gather(plan, m.gather, 0, 1, 2, ops::move_variant_for(c.caps()));
    c.steps(plan, {c.in_slot(0), c.constant_slot(std::move(m.positions)), c.out_slot(0)});
  };
  return h;
}

// ---- NonZero: the coordinates (rank x count, i64) of the non-zero elements ----
void infer_nonzero(InferCtx& c) {
  c.require_inputs(1, 1);
  const Tensor& x = c.need_constant(0, "input (its non-zero count fixes the output's shape)");
  const Shape& s = x.shape;
  const auto st = strides_of(s);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.get(i) != 0) hits.push_back(i);
  const int64_t n = int64_t(hits.size()), r = int64_t(s.size());
  Tensor t(ScalarKind::I64, {r, n});
  for (int64_t j = 0; j < n; ++j)
    for (int64_t a = 0; a < r; ++a) {
      const int64_t v = hits[size_t(j)] / st[size_t(a)] % s[size_t(a)];
      std::memcpy(t.mutable_data() + 8 * size_t(a * n + j), &v, 8);
    }
  set_constant_out(c, 0, std::move(t));
  c.node.dead = true;
}

// ---- Unique: distinct elements (or slices along `axis`), sorted or in
// order of first occurrence, with first indices, inverse indices and counts ----
void infer_unique(InferCtx& c) {
  c.require_inputs(1, 1);
  const Tensor& x = c.need_constant(0, "input (its distinct values fix the output's shape)");
  const bool flat = !c.node.has("axis");
  const Shape& s = x.shape;
  const int64_t axis = flat ? 0 : normalize_axis(c, c.node.attr_int("axis", 0), int64_t(s.size()));
  const int64_t len = flat ? x.numel() : s[size_t(axis)];
  int64_t outer = 1, inner = 1;
  if (!flat) {
    for (int64_t a = 0; a < axis; ++a) outer *= s[size_t(a)];
    for (size_t a = size_t(axis) + 1; a < s.size(); ++a) inner *= s[a];
  }
  // Slice i as its elements in order (outer-major), compared by value.
  auto slice = [&](int64_t i) {
    std::vector<double> v;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < inner; ++r) v.push_back(x.get((o * len + i) * inner + r));
    return v;
  };
  std::vector<std::vector<double>> slices;
  for (int64_t i = 0; i < len; ++i) slices.push_back(slice(i));
  std::vector<int64_t> first;  // distinct slices by first occurrence
  std::vector<int64_t> inverse(static_cast<size_t>(len));
  std::map<std::vector<double>, int64_t> seen;  // slice -> its rank in `first`
  for (int64_t i = 0; i < len; ++i) {
    auto [it, added] = seen.emplace(slices[size_t(i)], int64_t(first.size()));
    if (added) first.push_back(i);
    inverse[size_t(i)] = it->second;
  }
  std::vector<int64_t> order(first.size());  // output position -> first-occurrence rank
  std::iota(order.begin(), order.end(), 0);
  if (c.node.attr_int("sorted", 1))
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slices[size_t(first[size_t(a)])] < slices[size_t(first[size_t(b)])]; });
  std::vector<int64_t> rank_of(order.size()), indices, counts(order.size(), 0);
  for (size_t p = 0; p < order.size(); ++p) {
    rank_of[size_t(order[p])] = int64_t(p);
    indices.push_back(first[size_t(order[p])]);
  }
  for (int64_t& v : inverse) counts[size_t(v = rank_of[size_t(v)])]++;
  const int64_t u = int64_t(indices.size());
  Shape ys = flat ? Shape{u} : s;
  if (!flat) ys[size_t(axis)] = u;
  Tensor y(x.dtype, ys);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < u; ++p)
      for (int64_t r = 0; r < inner; ++r) copy_elem(y, (o * u + p) * inner + r, x, (o * len + indices[size_t(p)]) * inner + r);
  set_constant_out(c, 0, std::move(y));
  set_constant_out(c, 1, Tensor::from_ints(ScalarKind::I64, {u}, indices));
  set_constant_out(c, 2, Tensor::from_ints(ScalarKind::I64, {len}, inverse));
  set_constant_out(c, 3, Tensor::from_ints(ScalarKind::I64, {u}, counts));
  c.node.dead = true;
}

OpHandler constant_handler(const char* op, std::function<void(InferCtx&)> infer) {
  OpHandler h;
  h.op = op;
  h.fold_always = true;
  h.infer = std::move(infer);
  return h;
}

}  // namespace

void register_construct_nodes() {
  register_handler(trilu_handler());
  register_handler(castlike_handler());
  register_handler(compress_handler());
  register_handler(constant_handler("EyeLike", infer_eyelike));
  register_handler(constant_handler("Range", infer_range));
  register_handler(constant_handler("NonZero", infer_nonzero));
  register_handler(constant_handler("Unique", infer_unique));
}

}  // namespace kgen::graph
