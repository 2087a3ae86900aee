// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. X is viewed as
// (N, C, D), D the trailing axes flattened, the target as (N, 1, D). The
// pick of x[n, target, d] is an elementwise one-hot: -x·w where c == target
// (and target != ignore_index), 0 elsewhere, summed over C. Reduction sum
// adds those up; mean divides the sum by the summed weights of the targets
// that count (their number without weights). SoftmaxCrossEntropyLoss takes
// log_softmax over C first (its optional second output).
#include <numeric>

#include "graph/nodes/reduce_more.h"
#include "graph/nodes/util.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;

struct LossShape {
  int64_t n, c, d;
};

LossShape loss_shape(const Shape& x) {
  return {x[0], x[1], std::accumulate(x.begin() + 2, x.end(), int64_t(1), std::multiplies<>())};
}

std::string reduction_of(const Node& n) { return n.attr_str("reduction", "mean"); }

void infer_loss(InferCtx& c, bool sce) {
  c.require_inputs(2, 3);
  const Shape& x = c.shape(0);
  if (x.size() < 2) c.invalid("X must be N x C x ...");
  Shape want = x;
  want.erase(want.begin() + 1);
  if (c.shape(1) != want) c.invalid("target shape " + shape_str(c.shape(1)) + " for X " + shape_str(x));
  if (c.dtype(1) != ScalarKind::I32 && c.dtype(1) != ScalarKind::I64) c.invalid("target must be int32 or int64");
  if (c.has_in(2) && c.shape(2) != Shape{x[1]}) c.invalid("weights must have C elements");
  const std::string r = reduction_of(c.node);
  if (r != "none" && r != "sum" && r != "mean") c.invalid("reduction '" + r + "'");
  c.set_out(0, c.dtype(0), r == "none" ? want : Shape{});
  if (sce) c.set_out(1, c.dtype(0), x);
}

// The one-hot of the target over (N, C, D), bool: c == target, target != ignore_index.
struct TargetHit {
  const LowerCtx& c;
  int iota;  // 0 .. C-1 down a (C, 1) column, in the target's type

  Expr hit(MapChain& ch) const {
    const LossShape s = loss_shape(c.in(0).shape);
    const ScalarKind tk = c.in(1).dtype;
    const Expr t = ch.in(c.in_slot(1), tk, {s.n, 1, s.d});
    Expr h = fz::eq(ch.in(iota, tk, {s.c, 1}), t);
    if (c.node.has("ignore_index")) h = fz::logical_and(h, fz::ne(t, fz::int_lit(c.node.attr_int("ignore_index", 0), tk)));
    return h;
  }
  Expr weight(MapChain& ch) const {
    const ScalarKind k = c.in(0).dtype;
    if (!c.has_in(2)) return fz::lit(1.0, fz::compute_kind(k));
    return ch.in(c.in_slot(2), c.in(2).dtype, {c.in(0).shape[1], 1});
  }
};

// Output 0 from log-probabilities logp (X's shape and type).
void lower_nll(LowerCtx& c, int logp) {
  const ScalarKind k = c.in(0).dtype;
  const LossShape s = loss_shape(c.in(0).shape);
  const Shape x3 = {s.n, s.c, s.d}, per_shape = {s.n * s.d};
  Tensor iota(c.in(1).dtype, {s.c, 1});
  for (int64_t i = 0; i < s.c; ++i) iota.set(i, double(i));
  const TargetHit th{c, c.constant_slot(std::move(iota))};
  MapChain pick;
  const Expr hit = th.hit(pick);
  const int picked = temp_of(c, x3, k);
  pick.write(c, "nll_pick", fz::where(hit, -(pick.in(logp, k, x3) * th.weight(pick)), fz::lit(0)), k, x3, picked);
  const std::string r = reduction_of(c.node);
  const int per = r == "none" ? c.out_slot(0) : temp_of(c, per_shape, k);
  lower_reduce_axes(c, picked, x3, k, {false, true, false}, Combine::Sum, per);
  if (r == "none") return;
  const int total = r == "sum" ? c.out_slot(0) : temp_of(c, {1}, k);
  lower_reduce_axes(c, per, per_shape, k, {true}, Combine::Sum, total);
  if (r == "sum") return;
  MapChain mean;
  Expr count = fz::lit(double(s.n * s.d));
  if (c.has_in(2) || c.node.has("ignore_index")) {
    MapChain w;
    const Expr h = th.hit(w);
    const int wt = temp_of(c, x3, k), wsum = temp_of(c, {1}, k);
    w.write(c, "nll_weight", fz::where(h, th.weight(w), fz::lit(0)), k, x3, wt);
    lower_reduce_axes(c, wt, x3, k, {true, true, true}, Combine::Sum, wsum);
    count = mean.in(wsum, k, {1});
  }
  mean.write(c, "nll_mean", mean.in(total, k, {1}) / count, k, {1}, c.out_slot(0));
}

void need_float(const LowerCtx& c) {
  if (!fz::is_float_kind(c.in(0).dtype)) c.unsupported(std::string(ir::scalar_name(c.in(0).dtype)) + " X");
}

// log_softmax over C: the rowwise kernel where C is the last axis (D = 1, f32),
// else max, exp(x - max) summed, x - max - log(sum).
int log_softmax_over_c(LowerCtx& c) {
  const ScalarKind k = c.in(0).dtype;
  const LossShape s = loss_shape(c.in(0).shape);
  const Shape x3 = {s.n, s.c, s.d}, col = {s.n, 1, s.d};
  const int lp = c.has_out(1) ? c.out_slot(1) : temp_of(c, x3, k);
  if (k == ScalarKind::F32 && s.d == 1) {
    ops::Problem p;
    p.op = "log_softmax";
    p.dims = {s.n, s.c};
    c.op(p, {c.in_slot(0), lp});
    return lp;
  }
  const int max = temp_of(c, col, k), e = temp_of(c, x3, k), sum = temp_of(c, col, k);
  lower_reduce_axes(c, c.in_slot(0), x3, k, {false, true, false}, Combine::Max, max);
  MapChain ex;
  ex.write(c, "exp_minus_max", fz::exp(ex.in(c.in_slot(0), k, x3) - ex.in(max, k, col)), k, x3, e);
  lower_reduce_axes(c, e, x3, k, {false, true, false}, Combine::Sum, sum);
  MapChain ls;
  ls.write(c, "log_softmax", ls.in(c.in_slot(0), k, x3) - ls.in(max, k, col) - fz::log(ls.in(sum, k, col)), k, x3, lp);
  return lp;
}

}  // namespace

void register_losses_nodes() {
  OpHandler nll;
  nll.op = "NegativeLogLikelihoodLoss";
  nll.infer = [](InferCtx& c) { infer_loss(c, false); };
  nll.lower = [](LowerCtx& c) {
    need_float(c);
    lower_nll(c, c.in_slot(0));
  };
  register_handler(std::move(nll));
  OpHandler sce;
  sce.op = "SoftmaxCrossEntropyLoss";
  sce.infer = [](InferCtx& c) { infer_loss(c, true); };
  sce.lower = [](LowerCtx& c) {
    need_float(c);
    lower_nll(c, log_softmax_over_c(c));
  };
  register_handler(std::move(sce));
}

}  // namespace kgen::graph
