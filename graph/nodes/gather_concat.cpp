// Concat and Split (strided copies into / out of the full tensor), Gather,
// Pad and Resize onto ops/layout's moves; each folds on the host through the
// move's reference.
#include <algorithm>
#include <cstring>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace {

int elem(ScalarKind k) { return int(dtype_bytes(k)); }

// Piece k of an axis-split tensor `full`: a copy between the piece
// (contiguous) and its place in `full` (offset, full strides).
ops::StridedCopy piece_copy(const Shape& full, const Shape& piece, int64_t axis, int64_t at, ScalarKind k, bool into_full) {
  const auto st = strides_of(full);
  ops::StridedCopy c;
  c.elem_bytes = elem(k);
  c.shape = piece;
  const int64_t off = at * st[size_t(axis)];
  if (into_full) {
    c.in_strides = strides_of(piece);
    c.out_offset = off;
    c.out_strides = st;
  } else {
    c.in_offset = off;
    c.in_strides = st;
  }
  return c;
}

void infer_concat(InferCtx& c) {
  if (c.n_in() < 1) c.invalid("needs inputs");
  Shape out = c.shape(0);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", c.node.opset < 4 ? 1 : 0), int64_t(out.size()));
  out[size_t(axis)] = 0;
  for (int i = 0; i < c.n_in(); ++i) {
    const Shape& s = c.shape(i);
    if (s.size() != out.size() || c.dtype(i) != c.dtype(0)) c.invalid("inputs of different ranks or types");
    for (size_t a = 0; a < s.size(); ++a)
      if (int64_t(a) != axis && s[a] != out[a]) c.invalid("input " + std::to_string(i) + " shape " + shape_str(s));
    out[size_t(axis)] += s[size_t(axis)];
  }
  c.set_out(0, c.dtype(0), out);
}

int64_t concat_axis(const Node& n, int64_t rank) {
  int64_t a = n.attr_int("axis", n.opset < 4 ? 1 : 0);
  return a < 0 ? a + rank : a;
}

void eval_concat(EvalCtx& e) {
  const Shape& out = e.out[0].shape;
  const int64_t axis = concat_axis(e.node, int64_t(out.size()));
  int64_t at = 0;
  for (const Tensor* t : e.in) {
    ops::reference_strided_copy(piece_copy(out, t->shape, axis, at, t->dtype, true), t->data(), e.out[0].mutable_data());
    at += t->shape[size_t(axis)];
  }
}

void lower_concat(LowerCtx& c) {
  const Shape& out = c.out(0).shape;
  const int64_t axis = concat_axis(c.node, int64_t(out.size()));
  int64_t at = 0;
  const int o = c.out_slot(0);
  for (int i = 0; i < c.node.n_inputs(); ++i) {
    const Shape& s = c.in(i).shape;
    if (numel(s)) {
      c.strided_copy(piece_copy(out, s, axis, at, c.in(i).dtype, true), c.in_slot(i), o);
    }
    at += s[size_t(axis)];
  }
}

std::vector<int64_t> split_sizes(const InferCtx& c) {
  const Shape& in = c.shape(0);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(in.size()));
  const int64_t d = in[size_t(axis)], n = int64_t(c.node.outputs.size());
  std::vector<int64_t> sizes;
  if (c.node.has("split")) sizes = c.node.attr_ints("split");
  else if (c.has_in(1)) sizes = c.need_constant(1, "split").ints();
  else {
    const int64_t parts = c.node.has("num_outputs") ? c.node.attr_int("num_outputs", n) : n;
    const int64_t each = (d + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(each, d - i * each)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != d || int64_t(sizes.size()) != n) c.invalid("split sizes do not add up to the axis or the outputs");
  return sizes;
}

void infer_split(InferCtx& c) {
  const auto sizes = split_sizes(c);
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(c.shape(0).size()));
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = c.shape(0);
    s[size_t(axis)] = sizes[i];
    c.set_out(int(i), c.dtype(0), s);
  }
}

void lower_split(LowerCtx& c) {
  InferCtx ic{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)};
  const auto sizes = split_sizes(ic);
  const Shape& in = c.in(0).shape;
  const int64_t axis = normalize_axis(ic, c.node.attr_int("axis", 0), int64_t(in.size()));
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (c.has_out(int(i)) && numel(c.out(int(i)).shape)) {
      c.strided_copy(piece_copy(in, c.out(int(i)).shape, axis, at, c.in(0).dtype, false), c.in_slot(0), c.out_slot(int(i)));
    }
    at += sizes[i];
  }
}

void eval_split(EvalCtx& e) {
  InferCtx ic{e.g, e.node};
  const auto sizes = split_sizes(ic);
  const int64_t axis = normalize_axis(ic, e.node.attr_int("axis", 0), int64_t(e.in[0]->shape.size()));
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (e.out[i].numel())
      ops::reference_strided_copy(piece_copy(e.in[0]->shape, e.out[i].shape, axis, at, e.in[0]->dtype, false),
                                  e.in[0]->data(), e.out[i].mutable_data());
    at += sizes[i];
  }
}

// ---- Gather ----
ops::Gather gather_of(const Shape& data, int64_t axis, int64_t n_idx, ScalarKind data_k, ScalarKind idx_k) {
  ops::Gather g;
  g.elem_bytes = elem(data_k);
  for (int64_t i = 0; i < axis; ++i) g.outer *= data[size_t(i)];
  g.axis_len = data[size_t(axis)];
  for (size_t i = size_t(axis) + 1; i < data.size(); ++i) g.inner *= data[i];
  g.n_indices = n_idx;
  g.index_kind = idx_k;
  return g;
}

void infer_gather(InferCtx& c) {
  c.require_inputs(2, 2);
  const Shape& d = c.shape(0);
  if (c.dtype(1) != ScalarKind::I32 && c.dtype(1) != ScalarKind::I64) c.invalid("indices must be int32 or int64");
  const int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(d.size()));
  Shape out(d.begin(), d.begin() + axis);
  for (int64_t s : c.shape(1)) out.push_back(s);
  out.insert(out.end(), d.begin() + axis + 1, d.end());
  c.set_out(0, c.dtype(0), out);
}

int64_t gather_axis(const Node& n, const Shape& d) {
  const int64_t a = n.attr_int("axis", 0);
  return a < 0 ? a + int64_t(d.size()) : a;
}

void eval_gather(EvalCtx& e) {
  const Shape& d = e.in[0]->shape;
  auto g = gather_of(d, gather_axis(e.node, d), e.in[1]->numel(), e.in[0]->dtype, e.in[1]->dtype);
  for (int64_t i = 0; i < e.in[1]->numel(); ++i) {
    const int64_t ix = e.in[1]->get_int(i);
    if (ix < -g.axis_len || ix >= g.axis_len)
      throw std::invalid_argument(e.node.where() + ": index " + std::to_string(ix) + " out of range for an axis of " + std::to_string(g.axis_len));
  }
  ops::reference_gather(g, e.in[0]->data(), e.in[1]->data(), e.out[0].mutable_data());
}

void lower_gather(LowerCtx& c) {
  const Shape& d = c.in(0).shape;
  auto g = gather_of(d, gather_axis(c.node, d), numel(c.in(1).shape), c.in(0).dtype, c.in(1).dtype);
  ops::Plan plan;
  ops::plan_gather(plan, g, 0, 1, 2, ops::move_variant_for(c.caps()));
  c.steps(plan, {c.in_slot(0), c.in_slot(1), c.out_slot(0)});
}

}  // namespace

void register_gather_concat_nodes() {
  OpHandler concat;
  concat.op = "Concat";
  concat.infer = infer_concat;
  concat.eval = eval_concat;
  concat.lower = lower_concat;
  concat.fold_always = true;
  register_handler(std::move(concat));
  OpHandler split;
  split.op = "Split";
  split.infer = infer_split;
  split.eval = eval_split;
  split.lower = lower_split;
  register_handler(std::move(split));
  OpHandler gather;
  gather.op = "Gather";
  gather.infer = infer_gather;
  gather.eval = eval_gather;
  gather.lower = lower_gather;
  gather.fold_always = true;
  register_handler(std::move(gather));
}

}  // namespace kgen::graph
