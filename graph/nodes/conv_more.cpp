// ConvTranspose (1-D, 2-D and 3-D, NCHW f32) as a convolution: the input
// spread out by the strides (zeros between its elements) and padded so that
// a stride-1 conv2d with the flipped, in/out-swapped kernel computes the
// transposed one:
//   y[o] = Σ x[i]·w[t] over o + pad_begin = i·s + t·d
//        = Σ_t' buf[o + t'·d]·w[k-1-t'],  buf[i·s + d·(k-1) - pad_begin] = x[i].
// The spreading and padding are two Pad moves (zeros after each element of
// a view with unit axes, then the edges; negative edges crop), skipped for
// stride 1 where conv2d's own padding does it. 3-D runs as one conv2d too:
// each output depth becomes a batch item whose channels are the kd depth
// taps of the input (one strided copy), the kernel's depth folded into its
// input channels. The kernel is rearranged once (on the host when it is
// constant, else by a strided copy each run).
//
// 3-D Conv, MaxPool and AveragePool ([N, C, D, H, W], for conv.cpp's
// handlers) compose the same way: Conv folds the depth taps into conv2d's input
// channels; pooling is separable (a max of maxima; an average of averages,
// the in-bounds counts multiplying), so a 2-D pool over H×W and then one
// over depth (a kd×1 window on [N·C, 1, D, Oh·Ow]).
#include <algorithm>

#include "graph/lower.h"
#include "graph/nodes/conv.h"
#include "graph/nodes/reduce_more.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace {

// One spatial axis of the transposed convolution.
struct TAxis {
  int64_t in = 1, k = 1, s = 1, d = 1, op = 0;
  int64_t begin = 0;  // pad_begin (negative: extra outputs ahead)
  int64_t out = 1;
  int64_t span() const { return d * (k - 1); }
  int64_t len() const { return out + span(); }     // the spread, padded input
  int64_t lead() const { return span() - begin; }  // where x[0] lands in it
};

struct TGeom {
  std::vector<TAxis> ax;  // spatial axes, outermost first
  int64_t n = 1, c = 1, m = 1, groups = 1;
};

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// onnx/reference/ops/op_conv_transpose.py's geometry: output_shape fixes the
// size (with SAME_* it also sets the pads, the begin getting the smaller
// half for SAME_UPPER); otherwise pads (default 0) and output_padding do.
TGeom tgeom(const InferCtx& c) {
  const Shape &x = c.shape(0), &w = c.shape(1);
  const size_t sp = x.size() - 2;
  if (x.size() < 3 || w.size() != x.size())
    c.invalid("input " + shape_str(x) + " and weights " + shape_str(w) + " ranks");
  if (sp > 3) c.unsupported(std::to_string(sp) + "-D ConvTranspose (1-D to 3-D run)");
  TGeom g;
  g.n = x[0], g.c = x[1], g.groups = c.node.attr_int("group", 1);
  if (g.groups < 1 || w[0] != g.c || g.c % g.groups)
    c.invalid("weights " + shape_str(w) + " for " + std::to_string(g.c) + " channels in " + std::to_string(g.groups) +
              " groups");
  g.m = w[1] * g.groups;
  auto per_axis = [&](const char* a, int64_t dflt, size_t n) {
    auto v = c.node.attr_ints(a, std::vector<int64_t>(n, dflt));
    if (v.size() != n) c.invalid(std::string(a) + " of " + std::to_string(v.size()) + " values");
    return v;
  };
  const auto s = per_axis("strides", 1, sp), d = per_axis("dilations", 1, sp), op = per_axis("output_padding", 0, sp);
  const auto pads = per_axis("pads", 0, 2 * sp);
  std::vector<int64_t> os = c.node.attr_ints("output_shape");
  if (os.size() == sp + 2) os.erase(os.begin(), os.begin() + 2);
  if (!os.empty() && os.size() != sp) c.invalid("output_shape of " + std::to_string(os.size()) + " values");
  if (c.node.has("kernel_shape") && c.node.attr_ints("kernel_shape") != Shape(w.begin() + 2, w.end()))
    c.invalid("kernel_shape differs from the weights' " + shape_str(w));
  const std::string auto_pad = c.node.attr_str("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") c.invalid("auto_pad '" + auto_pad + "'");
  for (size_t i = 0; i < sp; ++i) {
    TAxis a;
    a.in = x[2 + i], a.k = w[2 + i], a.s = s[i], a.d = d[i], a.op = op[i];
    if (a.s < 1 || a.d < 1 || a.k < 1) c.invalid("strides, dilations and kernel sizes must be >= 1");
    const int64_t natural = a.s * (a.in - 1) + a.op + a.span() + 1;
    if (same) {
      a.out = os.empty() ? a.in * a.s : os[i];
      const int64_t total = natural - a.out;
      a.begin = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
    } else {
      a.begin = auto_pad == "VALID" ? 0 : pads[i];
      const int64_t end = auto_pad == "VALID" ? 0 : pads[i + sp];
      a.out = os.empty() ? natural - a.begin - end : os[i];
    }
    if (a.out < 1) c.invalid("output size " + std::to_string(a.out));
    g.ax.push_back(a);
  }
  return g;
}

Shape tout_shape(const TGeom& g) {
  Shape s = {g.n, g.m};
  for (const TAxis& a : g.ax) s.push_back(a.out);
  return s;
}

void infer_convtranspose(InferCtx& c) {
  c.require_inputs(2, 3);
  const TGeom g = tgeom(c);
  if (c.has_in(2) && c.shape(2) != Shape{g.m}) c.invalid("bias shape " + shape_str(c.shape(2)));
  c.set_out(0, c.dtype(0), tout_shape(g));
}

void run_pad(LowerCtx& c, const ops::Pad& p, int src, int dst) {
  ops::Plan plan;
  ops::plan_pad(plan, p, 0, 1, ops::move_variant_for(c.caps()));
  c.steps(plan, {src, dst});
}

// x spread by the strides and padded: [N·C, len...] (f32).
int spread_input(LowerCtx& c, const TGeom& g) {
  int src = c.in_slot(0);
  Shape spread = {g.n * g.c};
  bool strided = false;
  for (const TAxis& a : g.ax) strided |= a.s > 1;
  if (strided) {
    // [N·C, in0, 1, in1, 1, ...] with s-1 zeros after each element.
    ops::Pad z;
    z.in_shape = {g.n * g.c};
    for (const TAxis& a : g.ax) {
      z.in_shape.push_back(a.in);
      z.in_shape.push_back(1);
      spread.push_back(a.in * a.s);
    }
    z.pads_begin.assign(z.in_shape.size(), 0);
    z.pads_end.assign(z.in_shape.size(), 0);
    for (size_t i = 0; i < g.ax.size(); ++i) z.pads_end[2 + 2 * i] = g.ax[i].s - 1;
    const int t = temp_of(c, spread, ScalarKind::F32);
    run_pad(c, z, src, t);
    src = t;
  } else {
    for (const TAxis& a : g.ax) spread.push_back(a.in);
  }
  ops::Pad e;
  e.in_shape = spread;
  e.pads_begin = {0};
  e.pads_end = {0};
  Shape full = {g.n * g.c};
  for (size_t i = 0; i < g.ax.size(); ++i) {
    const TAxis& a = g.ax[i];
    e.pads_begin.push_back(a.lead());
    e.pads_end.push_back(a.len() - spread[i + 1] - a.lead());
    full.push_back(a.len());
  }
  const int buf = temp_of(c, full, ScalarKind::F32);
  run_pad(c, e, src, buf);
  return buf;
}

// The conv2d kernel from W [C, M/g, (kd,) kh, kw]: [g, M/g, (kd,) C/g, kh, kw]
// with every spatial axis reversed (3-D: the depth taps ahead of the input
// channels, as the depth-folded input orders them).
int conv_weights(LowerCtx& c, const TGeom& g) {
  const Shape& w = c.in(1).shape;
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups;
  const auto st = strides_of(w);
  ops::StridedCopy cp;
  cp.shape = {g.groups, mg};
  cp.in_strides = {cg * st[0], st[1]};
  auto tap = [&](size_t axis) {
    cp.shape.push_back(w[axis]);
    cp.in_strides.push_back(-st[axis]);
    cp.in_offset += (w[axis] - 1) * st[axis];
  };
  if (g.ax.size() == 3) tap(2);
  cp.shape.push_back(cg);
  cp.in_strides.push_back(st[0]);
  for (size_t axis = w.size() - std::min<size_t>(2, g.ax.size()); axis < w.size(); ++axis) tap(axis);
  if (const Tensor* wc = c.constant(1)) {
    Tensor t(ScalarKind::F32, cp.shape);
    ops::reference_strided_copy(cp, wc->data(), t.mutable_data());
    return c.constant_slot(std::move(t));
  }
  const int dst = temp_of(c, cp.shape, ScalarKind::F32);
  c.strided_copy(cp, c.in_slot(1), dst);
  return dst;
}

// 3-D: the buffer [N, C, Ld, Lh, Lw] as [N·Od, g, kd, C/g, Lh, Lw], item
// (n, od) holding depths od + t·dd of its image.
int fold_depth(LowerCtx& c, const TGeom& g, int buf) {
  const TAxis &dz = g.ax[0], &hy = g.ax[1], &wx = g.ax[2];
  const int64_t plane = hy.len() * wx.len(), cg = g.c / g.groups;
  ops::StridedCopy cp;
  cp.shape = {g.n, dz.out, g.groups, dz.k, cg, hy.len(), wx.len()};
  cp.in_strides = {g.c * dz.len() * plane, plane, cg * dz.len() * plane, dz.d * plane, dz.len() * plane, wx.len(), 1};
  const int dst = temp_of(c, cp.shape, ScalarKind::F32);
  c.strided_copy(cp, buf, dst);
  return dst;
}

void lower_convtranspose(LowerCtx& c) {
  for (int i = 0; i < 3; ++i)
    if (c.has_in(i) && c.in(i).dtype != ScalarKind::F32)
      c.unsupported("input " + std::to_string(i) + " of type " + std::string(ir::scalar_name(c.in(i).dtype)) +
                    " (f32 only)");
  const TGeom g = tgeom(InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)});
  const size_t sp = g.ax.size();
  // Stride 1 with a non-negative border in 1-D and 2-D: conv2d pads the input itself.
  bool direct = sp < 3;
  for (const TAxis& a : g.ax) direct &= a.s == 1 && a.lead() >= 0 && a.len() - a.in - a.lead() >= 0;
  const TAxis one;
  const TAxis &hy = sp >= 2 ? g.ax[sp - 2] : one, &wx = g.ax[sp - 1];
  int x = direct ? c.in_slot(0) : spread_input(c, g);
  int64_t batch = g.n, channels = g.c;
  if (sp == 3) {
    x = fold_depth(c, g, x);
    batch = g.n * g.ax[0].out;
    channels = g.c * g.ax[0].k;
  }
  ops::Problem p;
  p.op = "conv2d";
  p.dims = {batch, channels, direct ? hy.in : hy.len(), direct ? wx.in : wx.len(), g.m, hy.k, wx.k};
  p.attrs = {{"dilation_h", hy.d}, {"dilation_w", wx.d}, {"groups", g.groups}, {"bias", c.has_in(2) ? 1 : 0}};
  if (direct) {
    p.attrs["pad_h"] = hy.lead();
    p.attrs["pad_b"] = hy.len() - hy.in - hy.lead();
    p.attrs["pad_w"] = wx.lead();
    p.attrs["pad_r"] = wx.len() - wx.in - wx.lead();
  }
  std::vector<int> slots = {x, conv_weights(c, g)};
  if (c.has_in(2)) slots.push_back(c.in_slot(2));
  const Shape out = tout_shape(g);
  const int y = sp == 3 ? temp_of(c, out, ScalarKind::F32) : c.out_slot(0);
  slots.push_back(y);
  c.op(p, slots);
  // 3-D: [N, Od, M, Oh, Ow] -> [N, M, Od, Oh, Ow].
  if (sp == 3) lower_permute(c, y, {g.n, out[2], g.m, out[3], out[4]}, ScalarKind::F32, {0, 2, 1, 3, 4}, c.out_slot(0));
}

}  // namespace

// ---- 3-D windows ----
// Entry points for conv.cpp's Conv, MaxPool and AveragePool handlers on 5-D
// inputs (declarations for graph/nodes/conv.h): the output shape, the lowerings.
Shape window3d_out(const InferCtx& c, const Shape& x, std::vector<int64_t> kernel, int64_t channels);
void lower_conv3d(LowerCtx& c, const ConvArgs& a);
void lower_pool3d(LowerCtx& c);

namespace {

struct WAxis {
  int64_t in = 1, k = 1, s = 1, d = 1, p0 = 0, p1 = 0, out = 1;
  bool ceil_adds = false;  // ceil_mode gives one more output than floor
  int64_t extent() const { return d * (k - 1) + 1; }
  // The end padding that the last window reaches (ceil_mode's extra output included).
  int64_t end_pad() const { return std::max(p1, (out - 1) * s + extent() - in - p0); }
};

// Conv's and the pools' geometry of each spatial axis (auto_pad, pads,
// strides, dilations, ceil_mode), the kernel from kernel_shape or `kernel`.
std::vector<WAxis> window_axes(const InferCtx& c, const Shape& x, std::vector<int64_t> kernel) {
  const size_t sp = x.size() - 2;
  if (c.node.has("kernel_shape")) kernel = c.node.attr_ints("kernel_shape");
  const auto s = c.node.attr_ints("strides", std::vector<int64_t>(sp, 1));
  const auto d = c.node.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  const auto pads = c.node.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (kernel.size() != sp || s.size() != sp || d.size() != sp || pads.size() != 2 * sp)
    c.invalid("kernel_shape, strides, dilations or pads of the wrong length");
  const std::string auto_pad = c.node.attr_str("auto_pad", "NOTSET");
  const bool ceil = c.node.attr_int("ceil_mode", 0) != 0;
  std::vector<WAxis> ax;
  for (size_t i = 0; i < sp; ++i) {
    WAxis a;
    a.in = x[2 + i], a.k = kernel[i], a.s = s[i], a.d = d[i];
    if (a.k < 1 || a.s < 1 || a.d < 1) c.invalid("kernel, stride and dilation must be >= 1");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      a.out = (a.in + a.s - 1) / a.s;
      const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.s + a.extent() - a.in);
      a.p0 = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.p1 = total - a.p0;
    } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
      if (auto_pad == "NOTSET") a.p0 = pads[i], a.p1 = pads[i + sp];
      if (a.p0 < 0 || a.p1 < 0) c.invalid("negative pads");
      const int64_t room = a.in + a.p0 + a.p1 - a.extent();
      if (room < 0) c.invalid("a window larger than the padded input");
      a.out = room / a.s + 1;
      if (ceil && room % a.s) {
        // ONNX drops a last window that would start in the end padding.
        const int64_t more = room / a.s + 2;
        if ((more - 1) * a.s < a.in + a.p0) a.out = more, a.ceil_adds = true;
      }
    } else {
      c.invalid("auto_pad '" + auto_pad + "'");
    }
    ax.push_back(a);
  }
  return ax;
}

}  // namespace

Shape window3d_out(const InferCtx& c, const Shape& x, std::vector<int64_t> kernel, int64_t channels) {
  Shape s = {x[0], channels};
  for (const WAxis& a : window_axes(c, x, std::move(kernel))) s.push_back(a.out);
  return s;
}

namespace {

InferCtx infer_ctx(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

// W [M, C/g, kd, kh, kw] as [M, kd, C/g, kh, kw]: the depth taps ahead of the
// channels, as the depth-folded input orders them.
int depth_first_weights(LowerCtx& c, const ConvArgs& a) {
  const Shape& w = c.in(1).shape;
  const auto st = strides_of(w);
  ops::StridedCopy cp;
  cp.shape = {w[0], w[2], w[1], w[3], w[4]};
  cp.in_strides = {st[0], st[2], st[1], st[3], st[4]};
  if (a.w_const) {
    Tensor t(ScalarKind::F32, cp.shape);
    ops::reference_strided_copy(cp, a.w_const->data(), t.mutable_data());
    return c.constant_slot(std::move(t));
  }
  const int dst = temp_of(c, cp.shape, ScalarKind::F32);
  c.strided_copy(cp, a.w, dst);
  return dst;
}

}  // namespace

void lower_conv3d(LowerCtx& c, const ConvArgs& a) {
  const Shape &x = c.in(0).shape, &w = c.in(1).shape;
  const std::vector<WAxis> ax = window_axes(infer_ctx(c), x, Shape(w.begin() + 2, w.end()));
  const WAxis &dz = ax[0], &hy = ax[1], &wx = ax[2];
  const int64_t n = x[0], ch = x[1], m = w[0], groups = c.node.attr_int("group", 1), cg = ch / groups;
  const int64_t hw = x[3] * x[4], depth = x[2] + dz.p0 + dz.p1;
  int src = a.x;
  if (dz.p0 || dz.p1) {
    ops::Pad p;
    p.in_shape = {n * ch, x[2], hw};
    p.pads_begin = {0, dz.p0, 0};
    p.pads_end = {0, dz.p1, 0};
    src = temp_of(c, {n * ch, depth, hw}, ScalarKind::F32);
    run_pad(c, p, a.x, src);
  }
  // Item (n, od) of the folded input: channels (group, tap t, channel) hold
  // depth od·sd + t·dd of the padded input.
  ops::StridedCopy fold;
  fold.shape = {n, dz.out, groups, dz.k, cg, x[3], x[4]};
  fold.in_strides = {ch * depth * hw, dz.s * hw, cg * depth * hw, dz.d * hw, depth * hw, x[4], 1};
  const int folded = temp_of(c, fold.shape, ScalarKind::F32);
  c.strided_copy(fold, src, folded);
  ops::Problem p;
  p.op = "conv2d";
  p.dims = {n * dz.out, ch * dz.k, x[3], x[4], m, hy.k, wx.k};
  p.attrs = {{"stride_h", hy.s},      {"stride_w", wx.s},
             {"pad_h", hy.p0},        {"pad_w", wx.p0},
             {"pad_b", hy.p1},        {"pad_r", wx.p1},
             {"dilation_h", hy.d},    {"dilation_w", wx.d},
             {"groups", groups},      {"bias", a.bias >= 0 ? 1 : 0},
             {"relu", a.relu ? 1 : 0}};
  std::vector<int> slots = {folded, depth_first_weights(c, a)};
  if (a.bias >= 0) slots.push_back(a.bias);
  const int y = temp_of(c, {n, dz.out, m, hy.out, wx.out}, ScalarKind::F32);
  slots.push_back(y);
  c.op(p, slots);
  lower_permute(c, y, {n, dz.out, m, hy.out, wx.out}, ScalarKind::F32, {0, 2, 1, 3, 4}, a.out);
}

void lower_pool3d(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  const bool max = c.node.op == "MaxPool";
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("input of type " + std::string(ir::scalar_name(c.in(0).dtype)));
  const std::vector<WAxis> ax = window_axes(infer_ctx(c), x, {});
  for (const WAxis& a : ax)
    if (a.d != 1) c.unsupported("dilations");
  if (max && c.node.attr_int("storage_order", 0)) c.unsupported("storage_order=1");
  const bool include_pad = !max && c.node.attr_int("count_include_pad", 0) != 0;
  for (const WAxis& a : ax)
    if (include_pad && a.ceil_adds) c.unsupported("ceil_mode=1 with count_include_pad=1 where it adds an output");
  const WAxis &dz = ax[0], &hy = ax[1], &wx = ax[2];
  auto pool = [&](Shape dims, const WAxis& h, const WAxis& w, int src, int dst) {
    ops::Problem p;
    p.op = max ? "maxpool2d" : "avgpool2d";
    p.dims = std::move(dims);
    p.attrs = {{"kernel_h", h.k}, {"kernel_w", w.k}, {"stride_h", h.s},      {"stride_w", w.s},
               {"pad_h", h.p0},   {"pad_w", w.p0},   {"pad_b", h.end_pad()}, {"pad_r", w.end_pad()}};
    if (!max) p.attrs["count_include_pad"] = include_pad ? 1 : 0;
    c.op(p, {src, dst});
  };
  // H×W windows of every depth, then depth windows of every output position.
  const int plane = temp_of(c, {x[0], x[1] * x[2], hy.out, wx.out}, ScalarKind::F32);
  pool({x[0], x[1] * x[2], x[3], x[4]}, hy, wx, c.in_slot(0), plane);
  pool({x[0] * x[1], 1, x[2], hy.out * wx.out}, dz, WAxis{}, plane, c.out_slot(0));
}

void register_conv_more_nodes() {
  OpHandler ct;
  ct.op = "ConvTranspose";
  ct.infer = infer_convtranspose;
  ct.lower = lower_convtranspose;
  register_handler(std::move(ct));
}

}  // namespace kgen::graph
