// Data movement: Transpose, Slice, Expand, Tile, Concat, Split,
// DepthToSpace/SpaceToDepth (strided copies), Gather, Pad and Resize onto
// ops/layout's moves. Each op describes its move once (a StridedCopy, a
// Gather, ...): lowering plans it, host folding runs the move's reference.
#include <algorithm>
#include <cmath>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace {

int elem(ScalarKind k) { return int(dtype_bytes(k)); }

// ---- Transpose ----
std::vector<int64_t> perm_of(const InferCtx& c) {
  const int64_t r = int64_t(c.shape(0).size());
  std::vector<int64_t> p = c.node.attr_ints("perm");
  if (p.empty())
    for (int64_t i = r - 1; i >= 0; --i) p.push_back(i);
  std::vector<bool> seen(static_cast<size_t>(r), false);
  if (int64_t(p.size()) != r) c.invalid("perm of " + std::to_string(p.size()) + " axes for rank " + std::to_string(r));
  for (int64_t& a : p) {
    a = normalize_axis(c, a, r);
    if (seen[size_t(a)]) c.invalid("perm repeats axis " + std::to_string(a));
    seen[size_t(a)] = true;
  }
  return p;
}

ops::StridedCopy transpose_copy(const Shape& in, const std::vector<int64_t>& perm, ScalarKind k) {
  const auto st = strides_of(in);
  ops::StridedCopy c;
  c.elem_bytes = elem(k);
  for (int64_t a : perm) {
    c.shape.push_back(in[size_t(a)]);
    c.in_strides.push_back(st[size_t(a)]);
  }
  return c;
}

// ---- Slice ----
struct SliceSpec {
  Shape out;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

SliceSpec slice_spec(const InferCtx& c) {
  const Shape& in = c.shape(0);
  const int64_t r = int64_t(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.node.opset < 10) {
    starts = c.node.attr_ints("starts");
    ends = c.node.attr_ints("ends");
    axes = c.node.attr_ints("axes");
  } else {
    starts = c.need_constant(1, "starts").ints();
    ends = c.need_constant(2, "ends").ints();
    if (c.has_in(3)) axes = c.need_constant(3, "axes").ints();
    if (c.has_in(4)) steps = c.need_constant(4, "steps").ints();
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.invalid("starts, ends, axes and steps of different lengths");
  SliceSpec s;
  s.out = in;
  const auto st = strides_of(in);
  s.strides = st;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = normalize_axis(c, axes[i], r), d = in[size_t(a)];
    if (steps[i] == 0) c.invalid("step 0");
    // A step beyond the axis takes one element: bounded, its stride cannot overflow.
    const int64_t step = steps[i] > 0 ? std::min(steps[i], std::max<int64_t>(d, 1)) : std::max(steps[i], -std::max<int64_t>(d, 1));
    int64_t b = starts[i] < 0 ? starts[i] + d : starts[i], e = ends[i] < 0 ? ends[i] + d : ends[i];
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else {
      b = std::clamp<int64_t>(b, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    const int64_t n = step > 0 ? std::max<int64_t>(0, (e - b + step - 1) / step) : std::max<int64_t>(0, (b - e - step - 1) / -step);
    s.out[size_t(a)] = n;
    if (n) s.offset += b * st[size_t(a)];
    s.strides[size_t(a)] = st[size_t(a)] * step;
  }
  return s;
}

// ---- Expand and Tile (0 strides) ----
ops::StridedCopy broadcast_copy(const Shape& in, const Shape& out, ScalarKind k) {
  ops::StridedCopy c;
  c.elem_bytes = elem(k);
  c.shape = out;
  const auto st = strides_of(in);
  c.in_strides.assign(out.size(), 0);
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t o = out.size() - in.size() + i;
    c.in_strides[o] = in[i] == 1 ? 0 : st[i];
  }
  return c;
}

// Tile: the output viewed as (r0, d0, r1, d1, ...) reads input (d0, d1, ...).
ops::StridedCopy tile_copy(const Shape& in, const std::vector<int64_t>& reps, ScalarKind k) {
  ops::StridedCopy c;
  c.elem_bytes = elem(k);
  const auto st = strides_of(in);
  for (size_t i = 0; i < in.size(); ++i) {
    c.shape.push_back(reps[i]);
    c.in_strides.push_back(0);
    c.shape.push_back(in[i]);
    c.in_strides.push_back(st[i]);
  }
  return c;
}

// ---- DepthToSpace / SpaceToDepth: a transpose of 6-D views ----
ops::StridedCopy depth_space_copy(const InferCtx& c, bool to_space, Shape* out) {
  const Shape& x = c.shape(0);
  if (x.size() != 4) c.invalid("input must be 4-D");
  const int64_t b = c.node.attr_int("blocksize", 0), n = x[0], ch = x[1], h = x[2], w = x[3];
  if (b < 1) c.invalid("blocksize must be >= 1");
  const bool crd = c.node.attr_str("mode", "DCR") == "CRD";
  if (to_space) {
    if (ch % (b * b)) c.invalid("channels not divisible by blocksize²");
    const int64_t oc = ch / (b * b);
    *out = {n, oc, h * b, w * b};
    // input viewed DCR (n, b1, b2, oc, h, w) or CRD (n, oc, b1, b2, h, w); output (n, oc, h, b1, w, b2)
    Shape v = crd ? Shape{n, oc, b, b, h, w} : Shape{n, b, b, oc, h, w};
    std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
    return transpose_copy(v, perm, c.dtype(0));
  }
  if (h % b || w % b) c.invalid("height and width not divisible by blocksize");
  *out = {n, ch * b * b, h / b, w / b};
  // input viewed (n, c, h/b, b1, w/b, b2); output (n, b1, b2, c, h/b, w/b)
  return transpose_copy({n, ch, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, c.dtype(0));
}

// The common shape of the move-based handlers: a function describing the
// move (and the output shape) from an InferCtx, used by infer, eval and lower.
using CopyFn = std::function<ops::StridedCopy(const InferCtx&, Shape& out)>;

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

OpHandler copy_handler(const char* op, int min_in, int max_in, CopyFn fn) {
  OpHandler h;
  h.op = op;
  h.infer = [=](InferCtx& c) {
    c.require_inputs(min_in, max_in);
    Shape out;
    fn(c, out);
    c.set_out(0, c.dtype(0), out);
  };
  h.eval = [=](EvalCtx& e) {  // host folding: the move's reference on the constant bytes
    InferCtx ic{e.g, e.node};
    Shape out;
    ops::reference_strided_copy(fn(ic, out), e.in[0]->data(), e.out[0].mutable_data());
  };
  h.lower = [=](LowerCtx& c) {
    InferCtx ic = ctx_of(c);
    Shape out;
    c.strided_copy(fn(ic, out), c.in_slot(0), c.out_slot(0));
  };
  return h;
}

}  // namespace

void register_layout_nodes() {
  register_handler(copy_handler("Transpose", 1, 1, [](const InferCtx& c, Shape& out) {
    auto p = perm_of(c);
    auto cp = transpose_copy(c.shape(0), p, c.dtype(0));
    out = cp.shape;
    return cp;
  }));
  register_handler(copy_handler("Slice", 1, 5, [](const InferCtx& c, Shape& out) {
    SliceSpec s = slice_spec(c);
    out = s.out;
    ops::StridedCopy cp;
    cp.elem_bytes = elem(c.dtype(0));
    cp.shape = s.out;
    cp.in_offset = s.offset;
    cp.in_strides = s.strides;
    return cp;
  }));
  register_handler(copy_handler("Expand", 2, 2, [](const InferCtx& c, Shape& out) {
    Shape want = c.need_constant(1, "shape").ints();
    out = broadcast_shapes(c, {c.shape(0), want});
    return broadcast_copy(c.shape(0), out, c.dtype(0));
  }));
  register_handler(copy_handler("Tile", 2, 2, [](const InferCtx& c, Shape& out) {
    auto reps = c.need_constant(1, "repeats").ints();
    if (reps.size() != c.shape(0).size()) c.invalid("repeats of the wrong length");
    for (int64_t r : reps)
      if (r < 0) c.invalid("negative repeats");
    out.clear();
    for (size_t i = 0; i < reps.size(); ++i) {
      int64_t d = 0;
      if (__builtin_mul_overflow(reps[i], c.shape(0)[i], &d)) c.invalid("repeats overflow the output size");
      out.push_back(d);
    }
    return tile_copy(c.shape(0), reps, c.dtype(0));
  }));
  register_handler(copy_handler("DepthToSpace", 1, 1, [](const InferCtx& c, Shape& out) { return depth_space_copy(c, true, &out); }));
  register_handler(copy_handler("SpaceToDepth", 1, 1, [](const InferCtx& c, Shape& out) { return depth_space_copy(c, false, &out); }));
}

}  // namespace kgen::graph
