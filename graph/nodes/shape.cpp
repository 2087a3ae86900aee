// Shape and data-layout ops: views (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Dropout at inference), shape arithmetic folded on the host
// (Shape, Constant, ConstantOfShape, Gather/Concat/Slice on constants),
// Cast and Transpose.
#include <algorithm>
#include <cstring>

#include "graph/lower.h"
#include "graph/nodes/util.h"

namespace kgen::graph {

namespace {

void copy_eval(EvalCtx& e) {
  if (e.out[0].bytes()) std::memcpy(e.out[0].mutable_data(), e.in[0]->data(), e.out[0].bytes());
}

OpHandler view(const char* op, std::function<Shape(InferCtx&)> shape) {
  OpHandler h;
  h.op = op;
  h.view = true;
  h.fold_always = true;
  h.infer = [shape](InferCtx& c) {
    Shape s = shape(c);
    if (numel(s) != numel(c.shape(0)))
      c.invalid("cannot view " + shape_str(c.shape(0)) + " as " + shape_str(s));
    c.set_out(0, c.dtype(0), s);
    if (c.node.outputs.size() > 1 && c.node.outputs[1] >= 0) c.set_out(1, ScalarKind::Bool, s);  // Dropout mask
  };
  h.eval = [](EvalCtx& e) {
    copy_eval(e);
    if (e.out.size() > 1 && e.out[1].numel()) std::memset(e.out[1].mutable_data(), 1, e.out[1].bytes());
  };
  return h;
}

Shape reshape_shape(InferCtx& c) {
  c.require_inputs(c.node.opset < 5 ? 1 : 2, 2);
  std::vector<int64_t> want = c.node.opset < 5 ? c.node.attr_ints("shape") : c.need_constant(1, "shape").ints();
  const bool allowzero = c.node.attr_int("allowzero", 0) != 0;
  const Shape& in = c.shape(0);
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0 && !allowzero) {
      if (i >= in.size()) c.invalid("shape entry 0 at axis " + std::to_string(i) + " beyond the input's rank");
      want[i] = in[i];
    }
    if (want[i] == -1) {
      if (infer_at >= 0) c.invalid("shape has more than one -1");
      infer_at = int(i);
    } else if (want[i] < 0) {
      c.invalid("shape entry " + std::to_string(want[i]));
    } else if (__builtin_mul_overflow(known, want[i], &known)) {
      c.invalid("shape " + shape_str(want) + " overflows");
    }
  }
  if (infer_at >= 0) want[size_t(infer_at)] = known ? numel(in) / known : 0;
  return want;
}

Shape flatten_shape(InferCtx& c) {
  const Shape& in = c.shape(0);
  int64_t axis = c.node.attr_int("axis", 1);  // in [-r, r]
  if (axis < -int64_t(in.size()) || axis > int64_t(in.size())) c.invalid("axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += int64_t(in.size());
  int64_t a = 1;
  for (int64_t i = 0; i < axis; ++i) a *= in[size_t(i)];
  return {a, numel(in) / std::max<int64_t>(a, 1) * (a == 0 ? 0 : 1)};
}

Shape squeeze_shape(InferCtx& c) {
  const Shape& in = c.shape(0);
  auto axes = axes_attr_or_input(c, "axes", 1);
  Shape r;
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      int64_t ax = normalize_axis(c, a, int64_t(in.size()));
      if (in[size_t(ax)] != 1) c.invalid("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[size_t(ax)]));
      drop[size_t(ax)] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) r.push_back(in[i]);
  return r;
}

Shape unsqueeze_shape(InferCtx& c) {
  const Shape& in = c.shape(0);
  auto axes = axes_attr_or_input(c, "axes", 1);
  if (!axes) c.invalid("axes required");
  const int64_t rank = int64_t(in.size() + axes->size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    int64_t ax = normalize_axis(c, a, rank);
    if (added[size_t(ax)]) c.invalid("axis " + std::to_string(a) + " given twice");
    added[size_t(ax)] = true;
  }
  Shape r;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) r.push_back(added[size_t(i)] ? 1 : in[k++]);
  return r;
}

void register_views() {
  register_handler(view("Reshape", reshape_shape));
  register_handler(view("Flatten", flatten_shape));
  register_handler(view("Squeeze", squeeze_shape));
  register_handler(view("Unsqueeze", unsqueeze_shape));
  register_handler(view("Identity", [](InferCtx& c) { return c.shape(0); }));
  OpHandler dropout = view("Dropout", [](InferCtx& c) {
    if (c.node.attr_int("training_mode", 0) || (c.has_in(2) && (!c.constant(2) || c.constant(2)->get(0) != 0)))
      c.unsupported("training mode (or a training_mode input given at run time)");
    return c.shape(0);
  });
  dropout.view = false;  // a view, plus an all-true mask when asked for
  dropout.lower = [](LowerCtx& c) {
    c.alias_out(0, 0);
    if (!c.has_out(1)) return;
    const int64_t n = std::max<int64_t>(1, numel(c.out(1).shape));
    Tensor ones(ScalarKind::U8, {n});
    std::memset(ones.mutable_data(), 1, size_t(n));
    ops::fusion::Chain ch;
    ch.name = "mask";
    ch.inputs = {{"one", ScalarKind::U8, {n}}};
    ch.shape = {n};
    ch.out_dtype = ScalarKind::U8;
    ch.out = ops::fusion::in(0, ScalarKind::U8);
    c.chain(ch, {c.constant_slot(std::move(ones))}, c.out_slot(1));
  };
  register_handler(std::move(dropout));
}

void register_shape_arith() {
  OpHandler shape;
  shape.op = "Shape";
  shape.fold_always = true;
  shape.infer = [](InferCtx& c) {
    const int64_t r = int64_t(c.shape(0).size());
    int64_t start = c.node.attr_int("start", 0), end = c.node.attr_int("end", r);
    start = std::clamp(start < 0 ? start + r : start, int64_t(0), r);
    end = std::clamp(end < 0 ? end + r : end, int64_t(0), r);
    std::vector<int64_t> dims(c.shape(0).begin() + start, c.shape(0).begin() + std::max(start, end));
    c.set_out(0, ScalarKind::I64, {int64_t(dims.size())});
    // Known from the shape alone: a constant whatever the data.
    c.g.values[size_t(c.node.outputs[0])].constant = Tensor::from_ints(ScalarKind::I64, {int64_t(dims.size())}, dims);
    c.node.dead = true;
  };
  register_handler(std::move(shape));

  OpHandler size;
  size.op = "Size";
  size.infer = [](InferCtx& c) {
    c.set_out(0, ScalarKind::I64, {});
    c.g.values[size_t(c.node.outputs[0])].constant = Tensor::from_ints(ScalarKind::I64, {}, {numel(c.shape(0))});
    c.node.dead = true;
  };
  register_handler(std::move(size));

  OpHandler constant;
  constant.op = "Constant";
  constant.infer = [](InferCtx& c) {
    const Node& n = c.node;
    Tensor t;
    if (n.has("value")) t = *n.attrs.at("value").tensor;
    else if (n.has("value_float")) t = Tensor::scalar(ScalarKind::F32, n.attr_float("value_float", 0));
    else if (n.has("value_int")) t = Tensor::from_ints(ScalarKind::I64, {}, {n.attr_int("value_int", 0)});
    else if (n.has("value_floats")) {
      auto f = n.attr_floats("value_floats");
      t = Tensor(ScalarKind::F32, {int64_t(f.size())});
      for (size_t i = 0; i < f.size(); ++i) t.set(int64_t(i), f[i]);
    } else if (n.has("value_ints")) {
      auto v = n.attr_ints("value_ints");
      t = Tensor::from_ints(ScalarKind::I64, {int64_t(v.size())}, v);
    } else {
      c.unsupported("a Constant without a tensor, float(s) or int(s) value (sparse and string values)");
    }
    c.set_out(0, t.dtype, t.shape);
    c.g.values[size_t(n.outputs[0])].constant = std::move(t);
    c.node.dead = true;
  };
  register_handler(std::move(constant));

  OpHandler cos;
  cos.op = "ConstantOfShape";
  cos.fold_always = true;
  cos.infer = [](InferCtx& c) {
    Shape s = c.need_constant(0, "shape").ints();
    ScalarKind k = ScalarKind::F32;
    if (c.node.has("value")) k = c.node.attrs.at("value").tensor->dtype;
    c.set_out(0, k, s);
  };
  cos.eval = [](EvalCtx& e) {
    double v = e.node.has("value") ? e.node.attrs.at("value").tensor->get(0) : 0.0;
    Tensor& o = e.out[0];
    if (o.numel() == 0) return;
    o.set(0, v);
    const size_t eb = dtype_bytes(o.dtype);
    uint8_t* d = o.mutable_data();
    for (int64_t i = 1; i < o.numel(); ++i) std::memcpy(d + size_t(i) * eb, d, eb);
  };
  register_handler(std::move(cos));
}

}  // namespace

void register_shape_nodes() {
  register_views();
  register_shape_arith();
}

}  // namespace kgen::graph
