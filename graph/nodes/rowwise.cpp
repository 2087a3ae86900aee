// Softmax/LogSoftmax on any axis; the normalisations LayerNormalization,
// RMSNormalization, LpNormalization, MeanVarianceNormalization; Hardmax; LRN.
// The rowwise kernels where they fit (parameters of X's float type, one per
// column, epsilon in whole millionths);
// else composed from reductions (graph/nodes/reduce_more.h) and chains. LRN's
// channel window sum is an average pool over the channel axis.
#include <cmath>
#include <numeric>
#include <optional>

#include "graph/lower.h"
#include "graph/nodes/reduce_more.h"
#include "graph/nodes/util.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;

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

// ---- normalisations over the trailing axes [axis, rank) ----
// X viewed as rows x cols; the per-row statistics have X's leading axes and
// 1s (ONNX's Mean / InvStdDev shape).
struct NormAxes {
  int64_t rows = 1, cols = 1;
  Shape stat;
};

NormAxes norm_axes(const InferCtx& c) {
  const Shape& x = c.shape(0);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", -1), int64_t(x.size()));
  NormAxes n;
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    (i < axis ? n.rows : n.cols) *= x[size_t(i)];
    n.stat.push_back(i < axis ? x[size_t(i)] : 1);
  }
  return n;
}

// kgen's rowwise kernels take epsilon in whole millionths.
std::optional<int64_t> eps_millionths(double eps) {
  const double m = eps * 1e6;
  if (std::fabs(m - std::round(m)) > 1e-6 * std::max(1.0, m)) return std::nullopt;
  return std::llround(m);
}

void need_float_stash(const LowerCtx& c) {
  if (c.node.attr_int("stash_type", 1) != 1) c.unsupported("stash_type other than 1 (float)");
}

// The rowwise kernel applies: weight and bias of X's float type, one value per column.
bool fused_norm_fits(const LowerCtx& c, const NormAxes& n, int last_param) {
  const ScalarKind k = c.in(0).dtype;
  if (!float_kind(k)) return false;
  for (int i = 1; i <= last_param; ++i)
    if (c.has_in(i) && (c.in(i).dtype != k || numel(c.in(i).shape) != n.cols)) return false;
  return eps_millionths(c.node.attr_float("epsilon", 1e-5)).has_value();
}

// mean_slot = the mean of each row of x (rows x cols); inv_slot = 1 / sqrt(var + eps)
// (var: the mean square of x - mean, or of x itself where `centre` is false).
void row_stats(LowerCtx& c, const NormAxes& n, bool centre, int mean_slot, int inv_slot) {
  const ScalarKind k = c.in(0).dtype;
  const Shape x2 = {n.rows, n.cols}, col = {n.rows, 1};
  const int sq = temp_of(c, x2, k), var = temp_of(c, col, k);
  MapChain dev;
  Expr d = dev.in(c.in_slot(0), k, x2);
  if (centre) {
    lower_reduce_axes(c, c.in_slot(0), x2, k, {false, true}, Combine::Mean, mean_slot);
    d = d - dev.in(mean_slot, k, col);
  }
  dev.write(c, "square", d * d, k, x2, sq);
  lower_reduce_axes(c, sq, x2, k, {false, true}, Combine::Mean, var);
  MapChain inv;
  inv.write(c, "inv_std", fz::lit(1) / fz::sqrt(inv.in(var, k, col) + fz::lit(c.node.attr_float("epsilon", 1e-5))), k, col,
            inv_slot);
}

void infer_layernorm(InferCtx& c) {
  c.require_inputs(2, 3);
  same_as_input(c);
  const NormAxes n = norm_axes(c);
  c.set_out(1, ScalarKind::F32, n.stat);
  c.set_out(2, ScalarKind::F32, n.stat);
}

// The layernorm kernel where it fits and no statistics are asked for; else
// composed: reduce-mean, the variance, then one chain for Y.
void lower_layernorm(LowerCtx& c) {
  need_float_stash(c);
  InferCtx ic = ctx_of(c);
  const NormAxes n = norm_axes(ic);
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  const bool stats = c.has_out(1) || c.has_out(2);
  if (!stats && fused_norm_fits(c, n, 2)) {
    ops::Problem p;
    p.op = "layernorm";
    p.dtype = k;
    p.dims = {n.rows, n.cols};
    p.attrs["eps"] = *eps_millionths(c.node.attr_float("epsilon", 1e-5));
    const int bias = c.has_in(2) ? c.in_slot(2) : c.constant_slot(Tensor(k, {n.cols}));
    c.op(p, {c.in_slot(0), c.in_slot(1), bias, c.out_slot(0)});
    return;
  }
  if (stats && k != ScalarKind::F32) c.unsupported("Mean / InvStdDev of a non-f32 X");
  const int mean = c.has_out(1) ? c.out_slot(1) : temp_of(c, n.stat, k);
  const int inv = c.has_out(2) ? c.out_slot(2) : temp_of(c, n.stat, k);
  row_stats(c, n, true, mean, inv);
  MapChain y;
  Expr v = (y.in(c.in_slot(0), k, x) - y.in(mean, k, n.stat)) * y.in(inv, k, n.stat) * y.in(c.in_slot(1), c.in(1).dtype, c.in(1).shape);
  if (c.has_in(2)) v = v + y.in(c.in_slot(2), c.in(2).dtype, c.in(2).shape);
  y.write(c, "layernorm", v, k, x, c.out_slot(0));
}

// RMSNormalization (opset 23): x / sqrt(mean(x²) + eps) · scale.
void lower_rmsnorm(LowerCtx& c) {
  need_float_stash(c);
  InferCtx ic = ctx_of(c);
  const NormAxes n = norm_axes(ic);
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (!fz::is_float_kind(k)) c.unsupported(std::string(ir::scalar_name(k)) + " X");
  if (fused_norm_fits(c, n, 1)) {
    ops::Problem p;
    p.op = "rmsnorm";
    p.dtype = k;
    p.dims = {n.rows, n.cols};
    p.attrs["eps"] = *eps_millionths(c.node.attr_float("epsilon", 1e-5));
    c.op(p, {c.in_slot(0), c.in_slot(1), c.out_slot(0)});
    return;
  }
  const int inv = temp_of(c, n.stat, k);
  row_stats(c, n, false, -1, inv);
  MapChain y;
  y.write(c, "rmsnorm", y.in(c.in_slot(0), k, x) * y.in(inv, k, n.stat) * y.in(c.in_slot(1), c.in(1).dtype, c.in(1).shape), k,
          x, c.out_slot(0));
}

// LpNormalization: x / ||x||_p along one axis (p 1 or 2); 0 where the norm is 0.
void lower_lpnorm(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (!fz::is_float_kind(k)) c.unsupported(std::string(ir::scalar_name(k)) + " X");
  const int64_t p = c.node.attr_int("p", 2);
  if (p != 1 && p != 2) c.unsupported("p = " + std::to_string(p) + " (1 and 2 only)");
  InferCtx ic = ctx_of(c);
  std::vector<bool> reduced(x.size(), false);
  reduced[size_t(normalize_axis(ic, c.node.attr_int("axis", -1), int64_t(x.size())))] = true;
  const Shape kept = keepdims_shape(x, reduced);
  const int pw = temp_of(c, x, k), sum = temp_of(c, kept, k);
  MapChain pre;
  const Expr e = pre.in(c.in_slot(0), k, x);
  pre.write(c, "lp_power", p == 2 ? e * e : fz::abs(e), k, x, pw);
  lower_reduce_axes(c, pw, x, k, reduced, Combine::Sum, sum);
  MapChain y;
  const Expr s = y.in(sum, k, kept), norm = p == 2 ? fz::sqrt(s) : s;
  y.write(c, "lp_normalize", fz::where(fz::eq(norm, fz::lit(0)), fz::lit(0), y.in(c.in_slot(0), k, x) / norm), k, x,
          c.out_slot(0));
}

// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`.
void lower_mvn(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (!fz::is_float_kind(k)) c.unsupported(std::string(ir::scalar_name(k)) + " X");
  InferCtx ic = ctx_of(c);
  std::vector<bool> reduced(x.size(), false);
  for (int64_t a : c.node.attr_ints("axes", {0, 2, 3})) reduced[size_t(normalize_axis(ic, a, int64_t(x.size())))] = true;
  const Shape kept = keepdims_shape(x, reduced);
  const int mean = temp_of(c, kept, k), sq = temp_of(c, x, k), var = temp_of(c, kept, k);
  lower_reduce_axes(c, c.in_slot(0), x, k, reduced, Combine::Mean, mean);
  MapChain dev;
  const Expr d = dev.in(c.in_slot(0), k, x) - dev.in(mean, k, kept);
  dev.write(c, "square", d * d, k, x, sq);
  lower_reduce_axes(c, sq, x, k, reduced, Combine::Mean, var);
  MapChain y;
  y.write(c, "mvn", (y.in(c.in_slot(0), k, x) - y.in(mean, k, kept)) / (fz::sqrt(y.in(var, k, kept)) + fz::lit(1e-9)), k, x,
          c.out_slot(0));
}

// Hardmax: 1 at the first maximum along the axis (before opset 13: of each
// row of X flattened around the axis), 0 elsewhere.
void lower_hardmax(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("types other than f32");
  InferCtx ic = ctx_of(c);
  const bool legacy = c.node.opset < 13;
  const int64_t axis = normalize_axis(ic, c.node.attr_int("axis", legacy ? 1 : -1), std::max<int64_t>(1, int64_t(x.size())));
  Shape x3 = {1, 1, 1};
  for (int64_t i = 0; i < int64_t(x.size()); ++i) x3[i < axis ? 0 : i == axis || legacy ? 1 : 2] *= x[size_t(i)];
  const Shape idx_shape = {x3[0], 1, x3[2]};
  const int idx = temp_of(c, idx_shape, ScalarKind::I32);
  ops::Problem p;
  p.op = "reduce";
  p.dims = x3;
  p.attrs = {{"axis", 1}, {"kind", 4}};
  c.op(p, {c.in_slot(0), idx});
  Tensor iota(ScalarKind::I32, {x3[1], 1});
  for (int64_t i = 0; i < x3[1]; ++i) iota.set(i, double(i));
  MapChain y;
  const Expr hit = fz::eq(y.in(c.constant_slot(std::move(iota)), ScalarKind::I32, {x3[1], 1}), y.in(idx, ScalarKind::I32, idx_shape));
  y.write(c, "hardmax", fz::where(hit, fz::lit(1), fz::lit(0)), ScalarKind::F32, x3, c.out_slot(0));
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
  ln.infer = infer_layernorm;
  ln.lower = lower_layernorm;
  register_handler(std::move(ln));
  OpHandler rms;
  rms.op = "RMSNormalization";
  rms.infer = [](InferCtx& c) {
    c.require_inputs(2, 2);
    same_as_input(c);
  };
  rms.lower = lower_rmsnorm;
  register_handler(std::move(rms));
  const std::pair<const char*, void (*)(LowerCtx&)> unary[] = {
      {"LpNormalization", lower_lpnorm}, {"MeanVarianceNormalization", lower_mvn}, {"Hardmax", lower_hardmax}};
  for (const auto& [op, lower] : unary) {
    OpHandler h;
    h.op = op;
    h.infer = [](InferCtx& c) {
      c.require_inputs(1, 1);
      same_as_input(c);
    };
    h.lower = lower;
    register_handler(std::move(h));
  }
  OpHandler lrn;
  lrn.op = "LRN";
  lrn.infer = same_as_input;
  lrn.lower = lower_lrn;
  register_handler(std::move(lrn));
}

}  // namespace kgen::graph
