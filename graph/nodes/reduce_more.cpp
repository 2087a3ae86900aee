// The Reduce ops (Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum,
// LogSumExp), ArgMax/ArgMin and CumSum, over any axes and, where exact, any
// dtype. f32 sums, maxima, minima and means run the reduce op; products and
// other dtypes a tree of elementwise chains (each level combines up to 8
// slices cut out by Pad, which fills a short last slice with the identity).
// CumSum runs the scan op (f32, i32) or, for other dtypes, log2(n) chain
// passes adding a copy shifted by 1, 2, 4... (Hillis-Steele).
#include "graph/nodes/reduce_more.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>

#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace fz = ops::fusion;
using fz::Expr;

// ---- shared pieces (graph/nodes/reduce_more.h) ----
int temp_of(LowerCtx& c, const Shape& s, ScalarKind k) {
  return c.temp(size_t(std::max<int64_t>(numel(s), 1)) * dtype_bytes(k));
}

Expr MapChain::in(int slot, ScalarKind k, const Shape& shape) {
  chain.inputs.push_back({"in" + std::to_string(slots.size()), k, shape.empty() ? Shape{1} : shape});
  slots.push_back(slot);
  return fz::in(int(slots.size()) - 1, k);
}

void MapChain::write(LowerCtx& c, const char* name, const Expr& out, ScalarKind out_k, const Shape& shape, int dst) {
  chain.name = name;
  chain.out = out;
  chain.out_dtype = out_k;
  chain.shape = shape.empty() ? Shape{1} : shape;
  c.chain(chain, slots, dst);
}

Shape keepdims_shape(const Shape& x, const std::vector<bool>& reduced) {
  Shape s = x;
  for (size_t i = 0; i < s.size(); ++i)
    if (reduced[i]) s[i] = 1;
  return s;
}

namespace {

void copy_slot(LowerCtx& c, int src, int64_t n, ScalarKind k, int dst) {
  MapChain ch;
  ch.write(c, "copy", ch.in(src, k, {n}), k, {n}, dst);
}

// The axes that matter: size-1 axes dropped, neighbours of one kind (both
// reduced or both kept) merged.
struct AxisGroup {
  int64_t size;
  bool reduced;
};

std::vector<AxisGroup> merged_axes(const Shape& x, const std::vector<bool>& reduced) {
  std::vector<AxisGroup> g;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1) continue;
    if (!g.empty() && g.back().reduced == reduced[i]) g.back().size *= x[i];
    else g.push_back({x[i], bool(reduced[i])});
  }
  return g;
}

// The groups permuted so that the reduced ones come first (or last).
void gather_reduced(LowerCtx& c, int src, const std::vector<AxisGroup>& g, ScalarKind k, bool reduced_first, int dst) {
  Shape shape;
  std::vector<int64_t> first, last;
  for (size_t i = 0; i < g.size(); ++i) {
    shape.push_back(g[i].size);
    (g[i].reduced == reduced_first ? first : last).push_back(int64_t(i));
  }
  first.insert(first.end(), last.begin(), last.end());
  lower_permute(c, src, shape, k, first, dst);
}

Expr combine(const Expr& a, const Expr& b, Combine how) {
  const bool logical = a.kind() == ScalarKind::Bool;
  switch (how) {
    case Combine::Max: return logical ? fz::logical_or(a, b) : fz::max(a, b);
    case Combine::Min: return logical ? fz::logical_and(a, b) : fz::min(a, b);
    case Combine::Prod: return a * b;
    default: return a + b;
  }
}

template <class T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

template <class T>
uint64_t int_identity(Combine how) {
  if (how == Combine::Max) return bits_of(std::numeric_limits<T>::lowest());
  if (how == Combine::Min) return bits_of(std::numeric_limits<T>::max());
  return bits_of(T(how == Combine::Prod ? 1 : 0));
}

// The bit pattern of `how`'s identity in dtype k: the value of an empty reduction.
uint64_t identity_bits(ScalarKind k, Combine how) {
  switch (k) {
    case ScalarKind::Bool: return how == Combine::Min ? 1 : 0;  // all() of nothing is true, any() false
    case ScalarKind::I8: return int_identity<int8_t>(how);
    case ScalarKind::I16: return int_identity<int16_t>(how);
    case ScalarKind::I32: return int_identity<int32_t>(how);
    case ScalarKind::I64: return int_identity<int64_t>(how);
    case ScalarKind::U8: return int_identity<uint8_t>(how);
    case ScalarKind::U16: return int_identity<uint16_t>(how);
    case ScalarKind::U32: return int_identity<uint32_t>(how);
    case ScalarKind::U64: return int_identity<uint64_t>(how);
    default: break;
  }
  Tensor t(k, {1});
  const double inf = std::numeric_limits<double>::infinity();
  t.set(0, how == Combine::Max ? -inf : how == Combine::Min ? inf : how == Combine::Prod ? 1.0 : 0.0);
  uint64_t b = 0;
  std::memcpy(&b, t.data(), dtype_bytes(k));
  return b;
}

// src (m, rest) -> dst (rest), 8 slices combined per level.
void tree_reduce(LowerCtx& c, int src, int64_t m, int64_t rest, ScalarKind k, Combine how, int dst) {
  ops::Pad slice;
  slice.elem_bytes = int(dtype_bytes(k));
  slice.value_bits = identity_bits(k, how);
  while (m > 1) {
    const int64_t rows = (m + 7) / 8, parts = (m + rows - 1) / rows;
    MapChain ch;
    Expr acc;
    for (int64_t j = 0; j < parts; ++j) {
      slice.in_shape = {m, rest};
      slice.pads_begin = {-j * rows, 0};
      slice.pads_end = {(j + 1) * rows - m, 0};
      const int part = temp_of(c, {rows, rest}, k);
      ops::Plan plan;
      ops::plan_pad(plan, slice, 0, 1, ops::move_variant_for(c.caps()));
      c.steps(plan, {src, part});
      const Expr e = ch.in(part, k, {rows, rest});
      acc = j ? combine(acc, e, how) : e;
    }
    const int out = rows == 1 ? dst : temp_of(c, {rows, rest}, k);
    ch.write(c, "reduce_tree", acc, k, {rows, rest}, out);
    src = out;
    m = rows;
  }
}

int reduce_op_kind(Combine how) {
  switch (how) {
    case Combine::Max: return 1;
    case Combine::Min: return 2;
    case Combine::Mean: return 3;
    default: return 0;
  }
}

}  // namespace

void lower_permute(LowerCtx& c, int src, const Shape& x, ScalarKind k, const std::vector<int64_t>& perm, int dst) {
  const auto st = strides_of(x);
  ops::StridedCopy cp;
  cp.elem_bytes = int(dtype_bytes(k));
  for (int64_t a : perm) {
    cp.shape.push_back(x[size_t(a)]);
    cp.in_strides.push_back(st[size_t(a)]);
  }
  c.strided_copy(cp, src, dst);
}

void lower_reduce_axes(LowerCtx& c, int src, const Shape& x, ScalarKind k, const std::vector<bool>& reduced, Combine how,
                       int dst) {
  const auto g = merged_axes(x, reduced);
  int64_t n = 1, red_groups = 0;
  for (const AxisGroup& a : g)
    if (a.reduced) n *= a.size, ++red_groups;
  const int64_t rest = numel(x) / n;
  if (n == 1) return copy_slot(c, src, rest, k, dst);  // one value per output: itself
  if (k == ScalarKind::Bool && how != Combine::Max && how != Combine::Min) c.unsupported("bool X (only Max and Min)");
  if (how == Combine::Mean && !fz::is_float_kind(k)) c.unsupported("the mean of integers (a rounded quotient)");
  if (k == ScalarKind::F32 && how != Combine::Prod) {
    int64_t outer = 1, inner = 1;
    int from = src;
    if (red_groups == 1) {
      bool after = false;
      for (const AxisGroup& a : g)
        if (a.reduced) after = true;
        else (after ? inner : outer) *= a.size;
    } else {  // kept axes first, the reduced ones together last
      from = temp_of(c, x, k);
      gather_reduced(c, src, g, k, false, from);
      outer = rest;
    }
    ops::Problem p;
    p.op = "reduce";
    p.dims = {outer, n, inner};
    p.attrs = {{"axis", 1}, {"kind", reduce_op_kind(how)}};
    c.op(p, {from, dst});
    return;
  }
  int from = src;
  if (!(red_groups == 1 && g.front().reduced)) {  // the tree reads (reduced, kept) rows
    from = temp_of(c, x, k);
    gather_reduced(c, src, g, k, true, from);
  }
  if (how != Combine::Mean) return tree_reduce(c, from, n, rest, k, how, dst);
  const int sum = temp_of(c, {rest}, k);
  tree_reduce(c, from, n, rest, k, Combine::Sum, sum);
  MapChain ch;
  ch.write(c, "mean", ch.in(sum, k, {rest}) / fz::lit(double(n)), k, {rest}, dst);
}

namespace {

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

bool is_float(ScalarKind k) { return fz::is_float_kind(k); }

// ---- the Reduce ops ----
struct ReduceSpec {
  std::vector<bool> reduced;
  Shape out;
};

ReduceSpec reduce_spec(const InferCtx& c) {
  const Shape& x = c.shape(0);
  auto axes = axes_attr_or_input(c, "axes", 1);
  const bool keep = c.node.attr_int("keepdims", 1) != 0;
  ReduceSpec s;
  const bool none = (!axes || axes->empty()) && c.node.attr_int("noop_with_empty_axes", 0);
  s.reduced.assign(x.size(), !axes || axes->empty() ? !none : false);
  if (axes)
    for (int64_t a : *axes) s.reduced[size_t(normalize_axis(c, a, int64_t(x.size())))] = true;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!s.reduced[i]) s.out.push_back(x[i]);
    else if (keep) s.out.push_back(1);
  }
  return s;
}

struct ReduceRow {
  const char* op;
  Combine how;
  Expr (*pre)(Expr);   // applied to each element first (null: none)
  Expr (*post)(Expr);  // applied to each result (null: none)
  bool float_only;     // the result of integers would be rounded back
  std::optional<double> empty;  // an empty reduction's value, when not how's identity
};

const std::vector<ReduceRow>& reduce_rows() {
  const double inf = std::numeric_limits<double>::infinity();
  static const std::vector<ReduceRow> t = {
      {"ReduceSum", Combine::Sum, nullptr, nullptr, false, {}},
      {"ReduceMean", Combine::Mean, nullptr, nullptr, true, std::nan("")},
      {"ReduceMax", Combine::Max, nullptr, nullptr, false, {}},
      {"ReduceMin", Combine::Min, nullptr, nullptr, false, {}},
      {"ReduceProd", Combine::Prod, nullptr, nullptr, false, {}},
      {"ReduceSumSquare", Combine::Sum, [](Expr x) { return x * x; }, nullptr, false, {}},
      {"ReduceL1", Combine::Sum, [](Expr x) { return fz::abs(x); }, nullptr, false, {}},
      {"ReduceL2", Combine::Sum, [](Expr x) { return x * x; }, [](Expr s) { return fz::sqrt(s); }, true, {}},
      {"ReduceLogSum", Combine::Sum, nullptr, [](Expr s) { return fz::log(s); }, true, -inf},
      // max, then log(Σ exp(x - max)) + max: lower_log_sum_exp.
      {"ReduceLogSumExp", Combine::Max, nullptr, nullptr, true, -inf},
  };
  return t;
}

// The lowering launches nothing for empty inputs, and an empty axes list is
// one: once read, the axes live on as the attribute.
void adopt_axes_input(InferCtx& c) {
  if (!c.has_in(1)) return;
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = c.need_constant(1, "axes").ints();
  c.node.attrs["axes"] = a;
  c.node.inputs[1] = -1;
}

Tensor filled(ScalarKind k, const Shape& s, uint64_t bits) {
  Tensor t(k, s);
  const size_t eb = dtype_bytes(k);
  for (int64_t i = 0; i < t.numel(); ++i) std::memcpy(t.mutable_data() + size_t(i) * eb, &bits, eb);
  return t;
}

// An empty X reduced to a non-empty result: the identity everywhere, known
// now; the node folds as constant folding would.
void fold_empty_reduction(InferCtx& c, const ReduceRow& r) {
  Value& out = c.g.values[size_t(c.node.outputs[0])];
  if (numel(c.shape(0)) != 0 || numel(out.shape) == 0) return;
  Tensor t = filled(out.dtype, out.shape, identity_bits(out.dtype, r.how));
  if (r.empty) {
    if (!is_float(out.dtype)) c.unsupported("an empty integer reduction");
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, *r.empty);
  }
  out.constant = std::move(t);
  c.node.dead = true;
}

void infer_reduce(InferCtx& c, const ReduceRow& r) {
  c.require_inputs(1, 2);
  adopt_axes_input(c);
  c.set_out(0, c.dtype(0), reduce_spec(c).out);
  fold_empty_reduction(c, r);
}

// log Σ exp(x) as max + log Σ exp(x - max): no overflow.
void lower_log_sum_exp(LowerCtx& c, const Shape& x, ScalarKind k, const std::vector<bool>& reduced, int dst) {
  const Shape kept = keepdims_shape(x, reduced);
  const int max = temp_of(c, kept, k), e = temp_of(c, x, k), sum = temp_of(c, kept, k);
  lower_reduce_axes(c, c.in_slot(0), x, k, reduced, Combine::Max, max);
  MapChain ex;
  ex.write(c, "exp_minus_max", fz::exp(ex.in(c.in_slot(0), k, x) - ex.in(max, k, kept)), k, x, e);
  lower_reduce_axes(c, e, x, k, reduced, Combine::Sum, sum);
  MapChain out;
  out.write(c, "log_plus_max", fz::log(out.in(sum, k, kept)) + out.in(max, k, kept), k, kept, dst);
}

void lower_reduce(LowerCtx& c, const ReduceRow& r) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (r.float_only && !is_float(k)) c.unsupported(std::string(ir::scalar_name(k)) + " X (the result would be rounded back)");
  InferCtx ic = ctx_of(c);
  const ReduceSpec s = reduce_spec(ic);
  const int dst = c.out_slot(0);
  if (std::string(r.op) == "ReduceLogSumExp") return lower_log_sum_exp(c, x, k, s.reduced, dst);
  int src = c.in_slot(0);
  if (r.pre) {
    MapChain ch;
    src = temp_of(c, x, k);
    ch.write(c, "reduce_pre", r.pre(ch.in(c.in_slot(0), k, x)), k, x, src);
  }
  const Shape out = c.out(0).shape;
  const int red = r.post ? temp_of(c, out, k) : dst;
  lower_reduce_axes(c, src, x, k, s.reduced, r.how, red);
  if (r.post) {
    MapChain ch;
    ch.write(c, "reduce_post", r.post(ch.in(red, k, {numel(out)})), k, {numel(out)}, dst);
  }
}

// ---- ArgMax / ArgMin ----
struct ArgAxis {
  int64_t outer, n, inner;
};

ArgAxis arg_axis(const InferCtx& c) {
  const Shape& x = c.shape(0);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(x.size()));
  ArgAxis a{1, x.empty() ? 1 : x[size_t(axis)], 1};
  for (int64_t i = 0; i < int64_t(x.size()); ++i)
    if (i < axis) a.outer *= x[size_t(i)];
    else if (i > axis) a.inner *= x[size_t(i)];
  return a;
}

void infer_arg(InferCtx& c) {
  c.require_inputs(1, 1);
  const Shape& x = c.shape(0);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(x.size()));
  if (!x.empty() && x[size_t(axis)] == 0) c.invalid("the index of a maximum or minimum of an empty axis");
  Shape out;
  for (size_t i = 0; i < x.size(); ++i)
    if (int64_t(i) != axis) out.push_back(x[i]);
    else if (c.node.attr_int("keepdims", 1)) out.push_back(1);
  c.set_out(0, ScalarKind::I64, out);
}

// ArgMin is ArgMax of -x; select_last_index the first index of the reversed
// axis, n - 1 - i.
void lower_arg(LowerCtx& c) {
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("types other than f32");
  InferCtx ic = ctx_of(c);
  const ArgAxis a = arg_axis(ic);
  const Shape x3 = {a.outer, a.n, a.inner};
  const bool last = c.node.attr_int("select_last_index", 0) != 0;
  int src = c.in_slot(0);
  if (last) {
    ops::StridedCopy rev;
    rev.shape = x3;
    rev.in_offset = (a.n - 1) * a.inner;
    rev.in_strides = {a.n * a.inner, -a.inner, 1};
    const int t = temp_of(c, x3, ScalarKind::F32);
    c.strided_copy(rev, src, t);
    src = t;
  }
  if (c.node.op == "ArgMin") {
    MapChain ch;
    const int t = temp_of(c, x3, ScalarKind::F32);
    ch.write(c, "negate", -ch.in(src, ScalarKind::F32, x3), ScalarKind::F32, x3, t);
    src = t;
  }
  const Shape out = {a.outer * a.inner};
  const int idx = last ? temp_of(c, out, ScalarKind::I64) : c.out_slot(0);
  ops::Problem p;
  p.op = "reduce";
  p.dims = x3;
  p.attrs = {{"axis", 1}, {"kind", 4}, {"idx", 1}};
  c.op(p, {src, idx});
  if (!last) return;
  MapChain ch;
  ch.write(c, "index_from_end", fz::int_lit(a.n - 1, ScalarKind::I64) - ch.in(idx, ScalarKind::I64, out), ScalarKind::I64, out,
           c.out_slot(0));
}

// ---- CumSum ----
int64_t cumsum_axis(const InferCtx& c) {
  const Tensor& t = c.need_constant(1, "axis");
  if (t.numel() != 1) c.invalid("axis must be a scalar");
  if (c.shape(0).empty()) c.invalid("X must have at least one axis");
  return normalize_axis(c, t.get_int(0), int64_t(c.shape(0).size()));
}

// The reversed view of the middle axis of (outer, n, inner): its own inverse.
ops::StridedCopy reversed(const Shape& x3, ScalarKind k) {
  ops::StridedCopy cp;
  cp.elem_bytes = int(dtype_bytes(k));
  cp.shape = x3;
  cp.in_offset = (x3[1] - 1) * x3[2];
  cp.in_strides = {x3[1] * x3[2], -x3[2], 1};
  return cp;
}

// The scan op on rows: the axis moved last (and reversed) by a strided copy
// in and back out, unless it already is the last, in order.
void cumsum_scan(LowerCtx& c, const Shape& x3, ScalarKind k, bool exclusive, bool reverse) {
  const int64_t outer = x3[0], n = x3[1], inner = x3[2];
  const bool move = inner > 1 || reverse;
  const int eb = int(dtype_bytes(k));
  int src = c.in_slot(0), dst = c.out_slot(0);
  if (move) {
    ops::StridedCopy in;
    in.elem_bytes = eb;
    in.shape = {outer, inner, n};
    in.in_offset = reverse ? (n - 1) * inner : 0;
    in.in_strides = {n * inner, 1, reverse ? -inner : inner};
    const int t = temp_of(c, x3, k);
    c.strided_copy(in, src, t);
    src = t;
    dst = temp_of(c, x3, k);
  }
  ops::Problem p;
  p.op = "scan";
  p.dims = {outer * inner, n};
  p.dtype = k;
  p.attrs["exclusive"] = exclusive;
  c.op(p, {src, dst});
  if (!move) return;
  ops::StridedCopy out;
  out.elem_bytes = eb;
  out.shape = x3;
  out.in_offset = reverse ? n - 1 : 0;
  out.in_strides = {inner * n, reverse ? -1 : 1, n};
  c.strided_copy(out, dst, c.out_slot(0));
}

// Any other numeric dtype, exactly in it: log2(n) passes of a += a shifted by d.
void cumsum_doubling(LowerCtx& c, const Shape& x3, ScalarKind k, bool exclusive, bool reverse) {
  ops::Pad shift;
  shift.elem_bytes = int(dtype_bytes(k));
  shift.in_shape = x3;
  auto shifted = [&](int from, int64_t d) {
    shift.pads_begin = {0, d, 0};
    shift.pads_end = {0, -d, 0};
    const int t = temp_of(c, x3, k);
    ops::Plan plan;
    ops::plan_pad(plan, shift, 0, 1, ops::move_variant_for(c.caps()));
    c.steps(plan, {from, t});
    return t;
  };
  int a = c.in_slot(0);
  if (reverse) {
    const int t = temp_of(c, x3, k);
    c.strided_copy(reversed(x3, k), a, t);
    a = t;
  }
  if (exclusive) a = shifted(a, 1);
  for (int64_t d = 1; d < x3[1]; d *= 2) {
    const int s = shifted(a, d), sum = temp_of(c, x3, k);
    MapChain ch;
    ch.write(c, "prefix_step", ch.in(a, k, x3) + ch.in(s, k, x3), k, x3, sum);
    a = sum;
  }
  if (reverse) c.strided_copy(reversed(x3, k), a, c.out_slot(0));
  else copy_slot(c, a, numel(x3), k, c.out_slot(0));
}

void lower_cumsum(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const ScalarKind k = c.in(0).dtype;
  if (k == ScalarKind::Bool || !(is_float(k) || fz::is_int_kind(k))) c.unsupported(std::string(ir::scalar_name(k)) + " X");
  InferCtx ic = ctx_of(c);
  const int64_t axis = cumsum_axis(ic);
  Shape x3 = {1, x[size_t(axis)], 1};
  for (int64_t i = 0; i < int64_t(x.size()); ++i)
    if (i != axis) x3[i < axis ? 0 : 2] *= x[size_t(i)];
  const bool exclusive = c.node.attr_int("exclusive", 0) != 0, reverse = c.node.attr_int("reverse", 0) != 0;
  if (k == ScalarKind::F32 || k == ScalarKind::I32) cumsum_scan(c, x3, k, exclusive, reverse);
  else cumsum_doubling(c, x3, k, exclusive, reverse);
}

}  // namespace

void register_reduce_more_nodes() {
  for (const ReduceRow& r : reduce_rows()) {
    OpHandler h;
    h.op = r.op;
    h.infer = [&r](InferCtx& c) { infer_reduce(c, r); };
    h.lower = [&r](LowerCtx& c) { lower_reduce(c, r); };
    register_handler(std::move(h));
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    OpHandler h;
    h.op = op;
    h.infer = infer_arg;
    h.lower = lower_arg;
    register_handler(std::move(h));
  }
  OpHandler cs;
  cs.op = "CumSum";
  cs.infer = [](InferCtx& c) {
    c.require_inputs(2, 2);
    cumsum_axis(c);
    c.set_out(0, c.dtype(0), c.shape(0));
  };
  cs.lower = lower_cumsum;
  register_handler(std::move(cs));
}

}  // namespace kgen::graph
