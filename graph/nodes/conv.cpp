// Convolution and pooling (NCHW, 1-D and 2-D) onto ops/conv: Conv absorbs
// the elementwise nodes after it (a per-channel Add, activations, a residual
// Add of the output's shape, a Cast) into the kernel's epilogue (plain
// bias + Relu as the conv's own bias and ReLU), and its constant weights
// are packed once at prepare into the layout the chosen kernel reads
// (Winograd U, or by 32 output channels). BatchNormalization not folded
// into a Conv runs as a per-channel scale and shift chain.
#include <cmath>

#include "graph/lower.h"
#include "graph/nodes/conv.h"
#include "graph/nodes/util.h"
#include "ops/conv/conv.h"
#include "ops/core/executor.h"

namespace kgen::graph {

namespace {

struct Window {
  int64_t spatial = 2;       // 1 or 2 spatial axes
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 1, ow = 1;
  bool ceil_changes = false;  // ceil_mode gives a larger output than floor
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, bool ceil) {
  const int64_t span = in + p0 + p1 - (d * (k - 1) + 1);
  if (span < 0) return 0;
  return (ceil ? (span + s - 1) / s : span / s) + 1;
}

// Window geometry from attributes (kernel from `kernel_shape` or the weights).
Window window_of(const InferCtx& c, const Shape& x, std::vector<int64_t> kernel) {
  const int64_t sp = int64_t(x.size()) - 2;
  if (sp < 1 || sp > 2) c.unsupported(std::to_string(sp) + "-D windows (kgen runs 1-D and 2-D)");
  if (c.node.has("kernel_shape")) kernel = c.node.attr_ints("kernel_shape");
  if (int64_t(kernel.size()) != sp) c.invalid("kernel_shape has " + std::to_string(kernel.size()) + " entries");
  auto strides = c.node.attr_ints("strides", std::vector<int64_t>(size_t(sp), 1));
  auto dil = c.node.attr_ints("dilations", std::vector<int64_t>(size_t(sp), 1));
  auto pads = c.node.attr_ints("pads", std::vector<int64_t>(size_t(2 * sp), 0));
  if (int64_t(strides.size()) != sp || int64_t(dil.size()) != sp || int64_t(pads.size()) != 2 * sp)
    c.invalid("strides, dilations or pads of the wrong length");
  const std::string auto_pad = c.node.attr_str("auto_pad", "NOTSET");
  const bool ceil = c.node.attr_int("ceil_mode", 0) != 0;
  Window w;
  w.spatial = sp;
  std::vector<int64_t> o(static_cast<size_t>(sp)), p0(o), p1(o);
  for (int64_t a = 0; a < sp; ++a) {
    const int64_t in = x[size_t(2 + a)], k = kernel[size_t(a)], s = strides[size_t(a)], d = dil[size_t(a)];
    if (k < 1 || s < 1 || d < 1) c.invalid("kernel, stride and dilation must be >= 1");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o[size_t(a)] = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (o[size_t(a)] - 1) * s + d * (k - 1) + 1 - in);
      p0[size_t(a)] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p1[size_t(a)] = total - p0[size_t(a)];
    } else if (auto_pad == "VALID") {
      o[size_t(a)] = out_size(in, k, s, d, 0, 0, ceil);
    } else if (auto_pad == "NOTSET") {
      p0[size_t(a)] = pads[size_t(a)];
      p1[size_t(a)] = pads[size_t(a + sp)];
      if (p0[size_t(a)] < 0 || p1[size_t(a)] < 0) c.invalid("negative pads");
      o[size_t(a)] = out_size(in, k, s, d, p0[size_t(a)], p1[size_t(a)], ceil);
      if (ceil && o[size_t(a)] != out_size(in, k, s, d, p0[size_t(a)], p1[size_t(a)], false)) w.ceil_changes = true;
    } else {
      c.invalid("auto_pad '" + auto_pad + "'");
    }
  }
  const size_t h = sp == 2 ? 0 : size_t(-1), ww = size_t(sp - 1);
  if (sp == 2) w.kh = kernel[h], w.sh = strides[h], w.dh = dil[h], w.pt = p0[h], w.pb = p1[h], w.oh = o[h];
  w.kw = kernel[ww], w.sw = strides[ww], w.dw = dil[ww], w.pl = p0[ww], w.pr = p1[ww], w.ow = o[ww];
  return w;
}

Shape window_out(const Shape& x, int64_t channels, const Window& w) {
  Shape s = {x[0], channels};
  if (w.spatial == 2) s.push_back(w.oh);
  s.push_back(w.ow);
  return s;
}

// An Add of a per-channel f32 constant ([OC,1,1], [1,OC,1,1], a scalar) to
// the output of a Conv (not after a Relu): its constant, else null.
const Tensor* channel_bias(const Graph& g, const Node& add, int64_t oc) {
  if (add.n_inputs() != 2) return nullptr;
  for (int k = 0; k < 2; ++k) {
    const Value& b = g.values[size_t(add.inputs[size_t(k)])];
    const Value& x = g.values[size_t(add.inputs[size_t(1 - k)])];
    if (!b.constant || x.constant || b.dtype != ScalarKind::F32 || x.producer < 0) continue;
    if (g.nodes[size_t(x.producer)].op == "Relu" || x.shape.size() < 3) continue;
    const Shape& s = b.shape;
    const bool scalar = numel(s) == 1 && s.size() <= x.shape.size();
    bool per_channel = numel(s) == oc && s.size() >= x.shape.size() - 1 && s.size() <= x.shape.size();
    for (size_t a = 0; per_channel && a < s.size(); ++a) {
      const size_t axis = x.shape.size() - s.size() + a;  // right-aligned
      per_channel = s[a] == (axis == 1 ? oc : 1);
    }
    if (scalar || per_channel) return &*b.constant;
  }
  return nullptr;
}

Window window_at_lower(const LowerCtx& c, std::vector<int64_t> kernel) {
  // Re-derive through an InferCtx on the (already inferred) node.
  Graph& g = const_cast<Graph&>(c.g);
  InferCtx ic{g, const_cast<Node&>(c.node)};
  return window_of(ic, c.in(0).shape, std::move(kernel));
}

void need_f32(const LowerCtx& c, int i) {
  if (c.in(i).dtype != ScalarKind::F32)
    c.unsupported(std::string("input ") + std::to_string(i) + " of type " + std::string(ir::scalar_name(c.in(i).dtype)) +
                  " (kgen's " + c.node.op + " runs f32)");
}

void infer_conv(InferCtx& c) {
  c.require_inputs(2, 3);
  const Shape& x = c.shape(0);
  const Shape& wt = c.shape(1);
  if (x.size() < 3 || wt.size() != x.size()) c.invalid("input " + shape_str(x) + " and weights " + shape_str(wt) + " ranks");
  const int64_t groups = c.node.attr_int("group", 1);
  if (groups < 1 || x[1] % groups || wt[1] * groups != x[1] || wt[0] % groups)
    c.invalid("channels " + std::to_string(x[1]) + ", weights " + shape_str(wt) + ", group " + std::to_string(groups));
  if (c.has_in(2) && (c.shape(2).size() != 1 || c.shape(2)[0] != wt[0])) c.invalid("bias shape " + shape_str(c.shape(2)));
  if (x.size() == 5) return c.set_out(0, c.dtype(0), window3d_out(c, x, std::vector<int64_t>(wt.begin() + 2, wt.end()), wt[0]));
  Window w = window_of(c, x, std::vector<int64_t>(wt.begin() + 2, wt.end()));
  c.set_out(0, c.dtype(0), window_out(x, wt[0], w));
}

}  // namespace

// The weights in the layout the chosen kernel reads, packed here once.
void plan_conv(LowerCtx& c, const ConvArgs& a) {
  const Shape& x = c.in(0).shape;
  const Shape& wt = c.in(1).shape;
  const Window w = window_at_lower(c, std::vector<int64_t>(wt.begin() + 2, wt.end()));
  ops::Problem p;
  p.op = "conv2d";
  p.dims = {x[0], x[1], w.spatial == 2 ? x[2] : 1, x.back(), wt[0], w.spatial == 2 ? wt[2] : 1, wt.back()};
  p.attrs = {{"stride_h", w.sh}, {"stride_w", w.sw}, {"pad_h", w.pt}, {"pad_w", w.pl}, {"pad_b", w.pb},
             {"pad_r", w.pr}, {"dilation_h", w.dh}, {"dilation_w", w.dw}, {"groups", c.node.attr_int("group", 1)},
             {"bias", a.bias >= 0 ? 1 : 0}, {"relu", a.relu ? 1 : 0}};
  int w_slot = a.w;
  if (const Tensor* wc = a.w_const; wc && ops::is_cpu(c.caps())) {
    const ops::Variant v = ops::choose_variant(c.dev, p);
    const ops::ConvShape s = ops::conv_shape(p);
    const int64_t impl = v.get("impl");
    const int64_t layout = impl == ops::conv_impl::kWinograd                            ? ops::kWeightsWinograd
                           : impl == ops::conv_impl::kDirectOc && v.get("nl", 2) == 2 ? ops::kWeightsOc32
                                                                                      : 0;
    if (layout) {
      p.attrs["w_layout"] = layout;
      const int64_t n = layout == ops::kWeightsWinograd ? ops::conv_weights_winograd_size(s) : ops::conv_weights_oc32_size(s);
      Tensor packed(ScalarKind::F32, {n});
      auto* dst = reinterpret_cast<float*>(packed.mutable_data());
      const auto* src = reinterpret_cast<const float*>(wc->data());
      if (layout == ops::kWeightsWinograd) ops::conv_pack_weights_winograd(s, src, dst);
      else ops::conv_pack_weights_oc32(s, src, dst);
      w_slot = c.constant_slot(std::move(packed));
    }
  }
  std::vector<int> slots = {a.x, w_slot};
  if (a.bias >= 0) slots.push_back(a.bias);
  if (!a.ep) {
    slots.push_back(a.out);
    return c.op(p, slots);
  }
  slots.insert(slots.end(), a.ep_slots.begin(), a.ep_slots.end());
  slots.push_back(a.out);
  ops::op_for(p);
  c.steps(ops::plan_conv2d(p, ops::choose_variant(c.dev, p), c.caps(), a.ep), slots);
}

std::optional<ProductView> conv_view(const Shape& out) {
  if (out.size() != 3 && out.size() != 4) return std::nullopt;
  ProductView v;
  v.out = out;
  v.m_from = 1, v.n_from = 2;
  v.batch = out[0], v.m = out[1], v.n = numel(out) / (out[0] * out[1]);
  return v;
}

namespace {

// The conv's bias plus the per-channel constants its epilogue Adds (Conv ->
// Add(b[oc]) -> Relu, as exporters that keep the bias apart write it).
int bias_with_epilogue(LowerCtx& c, int64_t oc) {
  std::vector<const Tensor*> terms;
  for (const Node* e : c.epilogue)
    if (e->op == "Add") terms.push_back(channel_bias(c.g, *e, oc));
  if (terms.empty()) return c.has_in(2) ? c.in_slot(2) : -1;
  Tensor b(ScalarKind::F32, {oc});
  for (int64_t o = 0; o < oc; ++o) {
    double v = c.constant(2) ? c.constant(2)->get(o) : 0.0;
    for (const Tensor* t : terms) v += t->get(t->numel() == 1 ? 0 : o);
    b.set(o, v);
  }
  if (c.has_in(2) && !c.constant(2)) c.unsupported("a bias computed at run time with an Add after the Conv");
  return c.constant_slot(std::move(b));
}

// The absorbed nodes are per-channel Adds and Relus: the conv's own bias
// and ReLU (bias_with_epilogue) do them.
bool bias_relu_only(const LowerCtx& c) {
  const int64_t oc = c.in(1).shape[0];
  for (const Node* e : c.epilogue)
    if (e->op != "Relu" && !(e->op == "Add" && channel_bias(c.g, *e, oc))) return false;
  return true;
}

// The conv with the absorbed nodes as its epilogue, its bias the first term.
void lower_conv_epilogue(LowerCtx& c) {
  const ProductView view = *conv_view(c.out(0).shape);
  EpilogueBuilder b{c, view};
  ops::fusion::Expr acc = ops::fusion::in(0);
  if (c.has_in(2)) acc = acc + b.extra(c.in_slot(2), {"b", c.in(2).dtype, {c.in(1).shape[0], 1}});
  b.absorb(acc, ScalarKind::F32);
  ConvArgs a;
  a.x = c.in_slot(0);
  a.w = c.in_slot(1);
  a.w_const = c.constant(1);
  a.out = c.out_slot(0);
  a.ep = &b.ep;
  a.ep_slots = b.slots;
  plan_conv(c, a);
}

void lower_conv(LowerCtx& c) {
  need_f32(c, 0);
  need_f32(c, 1);
  if (!bias_relu_only(c)) return lower_conv_epilogue(c);
  ConvArgs a;
  a.x = c.in_slot(0);
  a.w = c.in_slot(1);
  a.w_const = c.constant(1);
  a.bias = bias_with_epilogue(c, c.in(1).shape[0]);
  a.out = c.out_slot(0);
  for (const Node* e : c.epilogue) a.relu = a.relu || e->op == "Relu";
  if (c.in(0).shape.size() == 5) return lower_conv3d(c, a);
  plan_conv(c, a);
}

void infer_pool(InferCtx& c, bool global) {
  c.require_inputs(1, 1);
  const Shape& x = c.shape(0);
  if (x.size() < 3) c.invalid("input " + shape_str(x) + ": N, C and spatial axes");
  if (global) {
    Shape s = {x[0], x[1]};
    s.resize(x.size(), 1);
    c.set_out(0, c.dtype(0), s);
    return;
  }
  if (c.node.outputs.size() > 1 && c.node.outputs[1] >= 0) c.unsupported("the Indices output of MaxPool");
  if (x.size() == 5) return c.set_out(0, c.dtype(0), window3d_out(c, x, {}, x[1]));
  Window w = window_of(c, x, {});
  c.set_out(0, c.dtype(0), window_out(x, x[1], w));
}

void lower_pool(LowerCtx& c) {
  need_f32(c, 0);
  if (c.in(0).shape.size() == 5) return lower_pool3d(c);
  const Shape& x = c.in(0).shape;
  const bool max = c.node.op == "MaxPool";
  const Window w = window_at_lower(c, {});
  if (w.dh != 1 || w.dw != 1) c.unsupported("dilations");
  if (max && c.node.attr_int("storage_order", 0)) c.unsupported("storage_order=1");
  const bool include_pad = !max && c.node.attr_int("count_include_pad", 0);
  // ceil_mode's last window reaches past the padding: extra end padding, which
  // never wins a max nor counts in an average that excludes padding.
  const int64_t h = w.spatial == 2 ? x[2] : 1, wd = x.back();
  const int64_t pb = std::max(w.pb, (w.oh - 1) * w.sh + w.kh - (h + w.pt));
  const int64_t pr = std::max(w.pr, (w.ow - 1) * w.sw + w.kw - (wd + w.pl));
  if (include_pad && (pb != w.pb || pr != w.pr)) c.unsupported("ceil_mode=1 with count_include_pad=1 where it adds an output");
  ops::Problem p;
  p.op = max ? "maxpool2d" : "avgpool2d";
  p.dims = {x[0], x[1], h, wd};
  p.attrs = {{"kernel_h", w.kh}, {"kernel_w", w.kw}, {"stride_h", w.sh}, {"stride_w", w.sw},
             {"pad_h", w.pt}, {"pad_w", w.pl}, {"pad_b", pb}, {"pad_r", pr}};
  if (!max) p.attrs["count_include_pad"] = include_pad ? 1 : 0;
  if (2 * w.pt > w.kh || 2 * w.pl > w.kw || pb >= w.kh || pr >= w.kw)
    c.unsupported("pads beyond half the window at the start or the whole window at the end");
  c.op(p, {c.in_slot(0), c.out_slot(0)});
}

void lower_global_max(LowerCtx& c) {
  need_f32(c, 0);
  const Shape& x = c.in(0).shape;
  ops::Problem p;
  p.op = "reduce";
  p.dims = {x[0] * x[1], numel(x) / (x[0] * x[1])};
  p.attrs = {{"axis", 1}, {"kind", 1}};
  c.op(p, {c.in_slot(0), c.out_slot(0)});
}

void lower_global_avg(LowerCtx& c) {
  need_f32(c, 0);
  const Shape& x = c.in(0).shape;
  int64_t hw = 1;
  for (size_t i = 2; i < x.size(); ++i) hw *= x[i];
  ops::Problem p;
  p.op = "global_avgpool";
  p.dims = {x[0], x[1], 1, hw};
  c.op(p, {c.in_slot(0), c.out_slot(0)});
}

// y = x * s[c] + t[c], s = scale / sqrt(var + eps), t = B - mean * s (constants).
void lower_batchnorm(LowerCtx& c) {
  const Shape& x = c.in(0).shape;
  for (int i = 1; i < 5; ++i)
    if (!c.constant(i)) c.unsupported("scale, B, mean and var computed at run time");
  const double eps = c.node.attr_float("epsilon", 1e-5);
  const int64_t ch = x.size() > 1 ? x[1] : 1;
  Shape ps = {ch};
  for (size_t i = 2; i < x.size(); ++i) ps.push_back(1);
  Tensor s(ScalarKind::F32, ps), t(ScalarKind::F32, ps);
  for (int64_t k = 0; k < ch; ++k) {
    const double sc = c.constant(1)->get(k) / std::sqrt(c.constant(4)->get(k) + eps);
    s.set(k, sc);
    t.set(k, c.constant(2)->get(k) - c.constant(3)->get(k) * sc);
  }
  namespace fz = ops::fusion;
  fz::Chain ch_;
  ch_.name = "batchnorm";
  ch_.inputs = {{"x", c.in(0).dtype, x}, {"s", ScalarKind::F32, ps}, {"t", ScalarKind::F32, ps}};
  ch_.shape = x;
  ch_.out_dtype = c.out(0).dtype;
  ch_.out = fz::in(0) * fz::in(1) + fz::in(2);
  c.chain(ch_, {c.in_slot(0), c.constant_slot(std::move(s)), c.constant_slot(std::move(t))}, c.out_slot(0));
}

}  // namespace

void register_conv_nodes() {
  OpHandler conv;
  conv.op = "Conv";
  conv.infer = infer_conv;
  conv.lower = lower_conv;
  conv.absorbs = [](const Graph& g, const Node& self, const Node& consumer) {
    if (self.op != "Conv" || !consumer.domain.empty()) return false;
    if (consumer.op == "Relu") return true;
    if (consumer.op == "Add" && channel_bias(g, consumer, g.values[size_t(self.inputs[1])].shape[0])) return true;
    // Any other elementwise node on a 1-D or 2-D f32 conv's output.
    const Value& y = g.values[size_t(self.outputs[0])];
    const auto view = conv_view(y.shape);
    if (!view || y.dtype != ScalarKind::F32 || consumer.outputs.size() != 1 || consumer.outputs[0] < 0) return false;
    return float_io(g.values[size_t(consumer.outputs[0])].dtype) && epilogue_absorbs(g, self, *view, consumer);
  };
  register_handler(std::move(conv));
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpHandler h;
    h.op = op;
    h.infer = [](InferCtx& c) { infer_pool(c, false); };
    h.lower = lower_pool;
    register_handler(std::move(h));
  }
  OpHandler gap;
  gap.op = "GlobalAveragePool";
  gap.infer = [](InferCtx& c) { infer_pool(c, true); };
  gap.lower = lower_global_avg;
  register_handler(std::move(gap));
  OpHandler gmp;
  gmp.op = "GlobalMaxPool";
  gmp.infer = [](InferCtx& c) { infer_pool(c, true); };
  gmp.lower = lower_global_max;
  register_handler(std::move(gmp));
  OpHandler bn;
  bn.op = "BatchNormalization";
  bn.infer = [](InferCtx& c) {
    c.require_inputs(5, 5);
    if (c.node.attr_int("training_mode", 0)) c.unsupported("training_mode=1");
    c.set_out(0, c.dtype(0), c.shape(0));
    for (size_t i = 1; i < c.node.outputs.size(); ++i)
      if (c.node.outputs[i] >= 0) c.unsupported("the running mean/var outputs (training)");
  };
  bn.lower = lower_batchnorm;
  register_handler(std::move(bn));
}

}  // namespace kgen::graph
