// Softmax/LogSoftmax on any axis, LayerNormalization, the Reduce ops, ArgMax
// and LRN onto ops/rowwise, ops/reduce and ops/conv (LRN's channel window
// sum is an average pool over the channel axis).
#include <cmath>
#include <numeric>

#include "graph/lower.h"
#include "graph/nodes/util.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;

bool float_kind(ScalarKind k) { return k == ScalarKind::F32 || k == ScalarKind::F16 || k == ScalarKind::BF16; }

void same_as_input(InferCtx& c) { c.set_out(0, c.dtype(0), c.shape(0)); }

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

// Moves `axis` last (a transpose) or back: the copy and the permuted shape.
void plan_transpose(LowerCtx& c, const Shape& in, const std::vector<int64_t>& perm, ScalarKind k, int from, int to) {
  ops::Problem p;
  p.op = "transpose";
  p.dims = in;
  p.dtype = k;
  int64_t digits = 0;
  for (int64_t a : perm) digits = digits * 10 + a;
  p.attrs["perm"] = digits;
  c.op(p, {from, to});
}

void lower_softmax(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (!float_kind(k)) c.unsupported("type " + std::string(ir::scalar_name(k)));
  const int64_t r = int64_t(x.size());
  InferCtx ic = ctx_of(c);
  const int64_t axis = normalize_axis(ic, c.node.attr_int("axis", c.node.opset < 13 ? 1 : -1), std::max<int64_t>(r, 1));
  const std::string op = c.node.op == "Softmax" ? "softmax" : "log_softmax";
  ops::Problem p;
  p.op = op;
  p.dtype = k;
  if (c.node.opset < 13 || axis == r - 1) {
    // Before opset 13 the input is a 2-D (outer, inner) matrix around the axis.
    const int64_t rows = std::accumulate(x.begin(), x.begin() + axis, int64_t(1), std::multiplies<>());
    p.dims = {rows, numel(x) / std::max<int64_t>(rows, 1)};
    if (c.node.opset >= 13) p.dims = {numel(x) / std::max<int64_t>(x.back(), 1), x.back()};
    c.op(p, {c.in_slot(0), c.out_slot(0)});
    return;
  }
  std::vector<int64_t> perm, inv(static_cast<size_t>(r));
  for (int64_t a = 0; a < r; ++a)
    if (a != axis) perm.push_back(a);
  perm.push_back(axis);
  Shape moved;
  for (int64_t a : perm) moved.push_back(x[size_t(a)]);
  for (int64_t i = 0; i < r; ++i) inv[size_t(perm[size_t(i)])] = i;
  const size_t bytes = size_t(numel(x)) * dtype_bytes(k);
  const int t0 = c.temp(bytes), t1 = c.temp(bytes);
  plan_transpose(c, x, perm, k, c.in_slot(0), t0);
  p.dims = {numel(x) / moved.back(), moved.back()};
  c.op(p, {t0, t1});
  plan_transpose(c, moved, inv, k, t1, c.out_slot(0));
}

void lower_layernorm(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  InferCtx ic = ctx_of(c);
  const int64_t axis = normalize_axis(ic, c.node.attr_int("axis", -1), int64_t(x.size()));
  if (axis != int64_t(x.size()) - 1) c.unsupported("normalising over more than the last axis");
  const double eps = c.node.attr_float("epsilon", 1e-5);
  const double millionths = eps * 1e6;
  if (std::fabs(millionths - std::round(millionths)) > 1e-6 * std::max(1.0, millionths))
    c.unsupported("epsilon " + std::to_string(eps) + " (kgen's layernorm takes whole millionths)");
  for (size_t i = 1; i < c.node.outputs.size(); ++i)
    if (c.has_out(int(i))) c.unsupported("the Mean / InvStdDev outputs");
  if (c.in(1).dtype != k || (c.has_in(2) && c.in(2).dtype != k)) c.unsupported("scale or bias of another type than X");
  ops::Problem p;
  p.op = "layernorm";
  p.dtype = k;
  p.dims = {numel(x) / x.back(), x.back()};
  p.attrs["eps"] = int64_t(std::llround(millionths));
  int bias = -1;
  if (c.has_in(2)) bias = c.in_slot(2);
  else bias = c.constant_slot(Tensor(k, {x.back()}));
  c.op(p, {c.in_slot(0), c.in_slot(1), bias, c.out_slot(0)});
}

// ---- Reduce ----
struct ReduceSpec {
  std::vector<bool> reduced;
  Shape out;
};

ReduceSpec reduce_spec(const InferCtx& c) {
  const Shape& x = c.shape(0);
  auto axes = axes_attr_or_input(c, "axes", 1);
  const bool keep = c.node.attr_int("keepdims", 1) != 0;
  ReduceSpec s;
  s.reduced.assign(x.size(), false);
  if (!axes || axes->empty()) {
    if (c.node.attr_int("noop_with_empty_axes", 0)) s.reduced.assign(x.size(), false);
    else s.reduced.assign(x.size(), true);
  } else {
    for (int64_t a : *axes) s.reduced[size_t(normalize_axis(c, a, int64_t(x.size())))] = true;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (!s.reduced[i]) s.out.push_back(x[i]);
    else if (keep) s.out.push_back(1);
  }
  return s;
}

int reduce_kind(const std::string& op) {
  if (op == "ReduceSum") return 0;
  if (op == "ReduceMax") return 1;
  if (op == "ReduceMin") return 2;
  return 3;  // ReduceMean
}

void lower_reduce(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("types other than f32");
  InferCtx ic = ctx_of(c);
  const ReduceSpec s = reduce_spec(ic);
  // The reduced axes must be one contiguous run (size-1 axes count as either).
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < x.size(); ++i)
    if (s.reduced[i] && x[i] != 1) {
      if (first < 0) first = int64_t(i);
      last = int64_t(i);
    }
  if (first < 0) {  // nothing to reduce: a copy
    fz::Chain ch;
    ch.inputs = {{"x", ScalarKind::F32, {std::max<int64_t>(numel(x), 1)}}};
    ch.shape = {std::max<int64_t>(numel(x), 1)};
    ch.out = fz::in(0);
    c.chain(ch, {c.in_slot(0)}, c.out_slot(0));
    return;
  }
  for (int64_t i = first; i <= last; ++i)
    if (!s.reduced[size_t(i)] && x[size_t(i)] != 1) c.unsupported("reducing axes that are not adjacent");
  const int64_t outer = std::accumulate(x.begin(), x.begin() + first, int64_t(1), std::multiplies<>());
  const int64_t n = std::accumulate(x.begin() + first, x.begin() + last + 1, int64_t(1), std::multiplies<>());
  const int64_t inner = numel(x) / (outer * n);
  ops::Problem p;
  p.op = "reduce";
  p.dims = {outer, n, inner};
  p.attrs = {{"axis", 1}, {"kind", reduce_kind(c.node.op)}};
  c.op(p, {c.in_slot(0), c.out_slot(0)});
}

void lower_argmax(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("types other than f32");
  if (c.node.attr_int("select_last_index", 0)) c.unsupported("select_last_index=1");
  InferCtx ic = ctx_of(c);
  const int64_t axis = normalize_axis(ic, c.node.attr_int("axis", 0), int64_t(x.size()));
  const int64_t outer = std::accumulate(x.begin(), x.begin() + axis, int64_t(1), std::multiplies<>());
  const int64_t n = x[size_t(axis)], inner = numel(x) / (outer * n);
  ops::Problem p;
  p.op = "reduce";
  p.dims = {outer, n, inner};
  p.attrs = {{"axis", 1}, {"kind", 4}, {"idx", 1}};
  c.op(p, {c.in_slot(0), c.out_slot(0)});
}

// LRN: y = x / (bias + alpha/size · Σ_window x²)^beta over `size` channels.
void lower_lrn(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  if (c.in(0).dtype != ScalarKind::F32 || x.size() < 3) c.unsupported("inputs other than f32 N×C×...");
  const int64_t size = c.node.attr_int("size", 0);
  if (size < 1 || size % 2 == 0) c.unsupported("an even window (asymmetric channel padding)");
  const double alpha = c.node.attr_float("alpha", 1e-4), beta = c.node.attr_float("beta", 0.75),
               bias = c.node.attr_float("bias", 1.0);
  const int64_t n = x[0], ch = x[1], hw = numel(x) / (n * ch);
  const Shape flat = {n, ch, hw};
  const size_t bytes = size_t(numel(x)) * 4;
  const int sq = c.temp(bytes), avg = c.temp(bytes);
  fz::Chain square;
  square.name = "lrn_square";
  square.inputs = {{"x", ScalarKind::F32, flat}};
  square.shape = flat;
  square.out = fz::in(0) * fz::in(0);
  c.chain(square, {c.in_slot(0)}, sq);
  ops::Problem pool;
  pool.op = "avgpool2d";
  pool.dims = {n, 1, ch, hw};
  pool.attrs = {{"kernel_h", size}, {"kernel_w", 1}, {"stride_h", 1}, {"stride_w", 1},
                {"pad_h", (size - 1) / 2}, {"pad_w", 0}, {"count_include_pad", 1}};
  c.op(pool, {sq, avg});
  fz::Chain out;
  out.name = "lrn";
  out.inputs = {{"x", ScalarKind::F32, flat}, {"a", ScalarKind::F32, flat}};
  out.shape = flat;
  out.out = fz::in(0) / fz::apply(ir::Op::Pow, {fz::lit(bias) + fz::lit(alpha) * fz::in(1), fz::lit(beta)});
  c.chain(out, {c.in_slot(0), avg}, c.out_slot(0));
}

}  // namespace

void register_rowwise_nodes() {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    OpHandler h;
    h.op = op;
    h.infer = same_as_input;
    h.lower = lower_softmax;
    register_handler(std::move(h));
  }
  OpHandler ln;
  ln.op = "LayerNormalization";
  ln.infer = [](InferCtx& c) {
    c.require_inputs(2, 3);
    same_as_input(c);
  };
  ln.lower = lower_layernorm;
  register_handler(std::move(ln));
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"}) {
    OpHandler h;
    h.op = op;
    h.infer = [](InferCtx& c) {
      c.require_inputs(1, 2);
      c.set_out(0, c.dtype(0), reduce_spec(c).out);
    };
    h.lower = lower_reduce;
    register_handler(std::move(h));
  }
  OpHandler am;
  am.op = "ArgMax";
  am.infer = [](InferCtx& c) {
    const Shape& x = c.shape(0);
    const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(x.size()));
    Shape out;
    for (size_t i = 0; i < x.size(); ++i)
      if (int64_t(i) != axis) out.push_back(x[i]);
      else if (c.node.attr_int("keepdims", 1)) out.push_back(1);
    c.set_out(0, ScalarKind::I64, out);
  };
  am.lower = lower_argmax;
  register_handler(std::move(am));
  OpHandler lrn;
  lrn.op = "LRN";
  lrn.infer = same_as_input;
  lrn.lower = lower_lrn;
  register_handler(std::move(lrn));
}

}  // namespace kgen::graph
