// Quantized ops as integer-exact float kernels plus fused requantization:
// QuantizeLinear, DequantizeLinear, ConvInteger, MatMulInteger, QLinearConv,
// QLinearMatMul and com.microsoft's QLinearAdd and QLinearGlobalAveragePool.
// The convolutions and products run kgen's f32 kernels on (x - zero point)
// and (w - zero point): every product and sum is an integer, exact in f32
// while |accumulator| < 2^24 (8-bit operands, K up to ~250 at full scale;
// real activations stay far below it). Requantization rounds as onnxruntime
// does: round half to even of acc·(sx·sw/sy) in f32, then + zero point, clamped.
#include <algorithm>
#include <cmath>
#include <optional>

#include "graph/nodes/conv.h"
#include "graph/nodes/util.h"

namespace kgen::graph {

namespace {

namespace fz = ops::fusion;
using fz::Expr;

// A per-tensor (scalar) or per-axis (1-D along `axis`) parameter's broadcast
// shape against a tensor of rank `rank`.
Shape param_shape(const Shape& p, int64_t rank, int64_t axis) {
  if (numel(p) <= 1) return {1};
  Shape s = {numel(p)};
  for (int64_t i = axis + 1; i < rank; ++i) s.push_back(1);
  return s;
}

// x as f32 with its zero point subtracted: integers, exact.
Expr centred(int x_in, ScalarKind xk, int zp_in, ScalarKind zk) {
  Expr x = fz::cast(ScalarKind::F32, fz::in(x_in, xk));
  if (zp_in < 0) return x;
  return x - fz::cast(ScalarKind::F32, fz::in(zp_in, zk));
}

// Host: (w - zp[o]) as f32 for constant integer weights, zp per output channel (axis 0) or scalar.
Tensor centred_weights(const Tensor& w, const Tensor* zp, int64_t per_axis_len) {
  Tensor r = w.to_f32();
  if (!zp) return r;
  float* d = reinterpret_cast<float*>(r.mutable_data());
  const int64_t n = w.numel(), per = per_axis_len ? n / per_axis_len : n;
  const Tensor z = zp->to_f32();
  const float* zs = reinterpret_cast<const float*>(z.data());
  for (int64_t i = 0; i < n; ++i) d[i] -= z.numel() == 1 ? zs[0] : zs[i / per];
  return r;
}

// Host: (b - zp[n]) as f32 for a constant K×N integer B, zp per column or scalar.
Tensor centred_columns(const Tensor& b, const Tensor* zp) {
  Tensor r = b.to_f32();
  if (!zp) return r;
  float* d = reinterpret_cast<float*>(r.mutable_data());
  const Tensor z = zp->to_f32();
  const float* zs = reinterpret_cast<const float*>(z.data());
  for (int64_t i = 0; i < b.numel(); ++i) d[i] -= z.numel() == 1 ? zs[0] : zs[i % b.shape[1]];
  return r;
}

// f32 multiplier sx·sw[o]/sy per output channel, in f32 arithmetic as onnxruntime computes it.
Tensor requant_scale(const Tensor& sx, const Tensor& sw, const Tensor& sy, Shape shape) {
  Tensor m(ScalarKind::F32, shape);
  for (int64_t o = 0; o < m.numel(); ++o) {
    const float w = float(sw.numel() == 1 ? sw.get(0) : sw.get(o));
    m.set(o, double(float(float(sx.get(0)) * w) / float(sy.get(0))));
  }
  return m;
}

void need_constant(const LowerCtx& c, std::initializer_list<int> inputs, const char* what) {
  for (int i : inputs)
    if (c.has_in(i) && !c.constant(i)) c.unsupported(std::string(what) + " computed at run time (input " + std::to_string(i) + ")");
}

// ---- QuantizeLinear / DequantizeLinear ----
// The quantization axis; only meaningful (and checked) when the scale is 1-D.
int64_t q_axis(const InferCtx& c) {
  if (numel(c.shape(1)) <= 1 && c.shape(1).size() <= 1) return 0;
  return normalize_axis(c, c.node.attr_int("axis", 1), std::max<int64_t>(1, int64_t(c.shape(0).size())));
}

void infer_quantize(InferCtx& c) {
  c.require_inputs(2, 3);
  ScalarKind out = ScalarKind::U8;
  if (c.has_in(2)) out = c.dtype(2);
  else if (c.node.has("output_dtype")) out = ScalarKind(0);  // resolved below
  if (c.node.has("output_dtype") && !c.has_in(2)) {
    const int64_t t = c.node.attr_int("output_dtype", 2);
    out = t == 3 ? ScalarKind::I8 : t == 2 ? ScalarKind::U8 : t == 4 ? ScalarKind::U16 : t == 5 ? ScalarKind::I16 : ScalarKind::Void;
    if (out == ScalarKind::Void) c.unsupported("output_dtype " + std::to_string(t));
  }
  if (c.node.attr_int("block_size", 0)) c.unsupported("blocked quantization (block_size)");
  c.set_out(0, out, c.shape(0));
}

void lower_quantize(LowerCtx& c) {
  InferCtx ic{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)};
  const Shape& x = c.in(0).shape;
  const ScalarKind ok = c.out(0).dtype;
  const int64_t axis = q_axis(ic);
  fz::Chain ch;
  ch.name = "quantize";
  ch.shape = x.empty() ? Shape{1} : x;
  ch.inputs = {{"x", c.in(0).dtype, ch.shape}, {"s", c.in(1).dtype, param_shape(c.in(1).shape, int64_t(x.size()), axis)}};
  std::vector<int> slots = {c.in_slot(0), c.in_slot(1)};
  Expr v = fz::round(fz::in(0, c.in(0).dtype) / fz::cast(fz::compute_kind(c.in(0).dtype), fz::in(1, c.in(1).dtype)));
  if (c.has_in(2)) {
    ch.inputs.push_back({"zp", c.in(2).dtype, param_shape(c.in(2).shape, int64_t(x.size()), axis)});
    slots.push_back(c.in_slot(2));
    v = v + fz::cast(v.kind(), fz::in(2, c.in(2).dtype));
  }
  ch.out = fz::saturate_cast(ok, v);
  ch.out_dtype = ok;
  c.chain(ch, slots, c.out_slot(0));
}

void infer_dequantize(InferCtx& c) {
  c.require_inputs(2, 3);
  if (c.node.attr_int("block_size", 0)) c.unsupported("blocked quantization (block_size)");
  c.set_out(0, c.dtype(1), c.shape(0));
}

void lower_dequantize(LowerCtx& c) {
  InferCtx ic{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)};
  const Shape& x = c.in(0).shape;
  const int64_t axis = q_axis(ic);
  const ScalarKind sk = c.in(1).dtype, ck = fz::compute_kind(sk);
  fz::Chain ch;
  ch.name = "dequantize";
  ch.shape = x.empty() ? Shape{1} : x;
  ch.inputs = {{"x", c.in(0).dtype, ch.shape}, {"s", sk, param_shape(c.in(1).shape, int64_t(x.size()), axis)}};
  std::vector<int> slots = {c.in_slot(0), c.in_slot(1)};
  Expr v = fz::cast(ck, fz::in(0, c.in(0).dtype));
  if (c.has_in(2)) {
    ch.inputs.push_back({"zp", c.in(2).dtype, param_shape(c.in(2).shape, int64_t(x.size()), axis)});
    slots.push_back(c.in_slot(2));
    v = v - fz::cast(ck, fz::in(2, c.in(2).dtype));
  }
  ch.out = v * fz::in(1, sk);
  ch.out_dtype = c.out(0).dtype;
  c.chain(ch, slots, c.out_slot(0));
}

// Host folding (quantized weights computed from float initializers): the
// same arithmetic as the kernels, per element.
double param_at(const Tensor* p, int64_t i, const Shape& x, int64_t axis) {
  if (!p) return 0;
  if (p->numel() == 1) return p->get(0);
  int64_t inner = 1;
  for (size_t a = size_t(axis) + 1; a < x.size(); ++a) inner *= x[a];
  return p->get((i / inner) % x[size_t(axis)]);
}

void eval_quantize(EvalCtx& e) {
  InferCtx ic{e.g, e.node};
  const int64_t axis = q_axis(ic);
  Tensor& o = e.out[0];
  const double lo = o.dtype == ScalarKind::I8 ? -128 : o.dtype == ScalarKind::I16 ? -32768 : 0;
  const double hi = o.dtype == ScalarKind::I8 ? 127 : o.dtype == ScalarKind::I16 ? 32767 : o.dtype == ScalarKind::U16 ? 65535 : 255;
  const Tensor* zp = e.in.size() > 2 ? e.in[2] : nullptr;
  for (int64_t i = 0; i < o.numel(); ++i) {
    const float q = float(e.in[0]->get(i)) / float(param_at(e.in[1], i, e.in[0]->shape, axis));
    double v = std::nearbyint(double(q)) + param_at(zp, i, e.in[0]->shape, axis);
    o.set(i, std::isnan(v) ? 0.0 : std::clamp(v, lo, hi));
  }
}

void eval_dequantize(EvalCtx& e) {
  InferCtx ic{e.g, e.node};
  const int64_t axis = q_axis(ic);
  const Tensor* zp = e.in.size() > 2 ? e.in[2] : nullptr;
  for (int64_t i = 0; i < e.out[0].numel(); ++i)
    e.out[0].set(i, double(float(e.in[0]->get(i) - param_at(zp, i, e.in[0]->shape, axis)) * float(param_at(e.in[1], i, e.in[0]->shape, axis))));
}

// x - zero point into an f32 temporary.
int centred_temp(LowerCtx& c, int x_in, int zp_in) {
  const Shape& x = c.in(x_in).shape;
  const int t = c.temp(size_t(numel(x)) * 4);
  fz::Chain ch;
  ch.name = "centre";
  ch.shape = x;
  ch.inputs = {{"x", c.in(x_in).dtype, x}};
  std::vector<int> slots = {c.in_slot(x_in)};
  int zi = -1;
  if (zp_in >= 0 && c.has_in(zp_in)) {
    if (numel(c.in(zp_in).shape) != 1) c.unsupported("a per-channel zero point of the activations");
    ch.inputs.push_back({"zp", c.in(zp_in).dtype, {1}});
    slots.push_back(c.in_slot(zp_in));
    zi = 1;
  }
  ch.out = centred(0, c.in(x_in).dtype, zi, zi < 0 ? ScalarKind::U8 : c.in(zp_in).dtype);
  c.chain(ch, slots, t);
  return t;
}

// round(acc·m) + zp (if any), saturated to `out`: onnxruntime's
// requantization of f32 integers acc (the chain below, a conv's epilogue).
Expr requantized(Expr acc, Expr m, std::optional<Expr> zp, ScalarKind out) {
  Expr v = fz::round(acc * m);
  if (zp) v = v + fz::cast(ScalarKind::F32, *zp);
  return fz::saturate_cast(out, v);
}

// acc (f32 integers) -> round(acc·m[o]) + zp, saturated to the output type.
void requantize(LowerCtx& c, int acc, const Shape& shape, Tensor m, int zp_in, int out) {
  fz::Chain ch;
  ch.name = "requantize";
  ch.shape = shape;
  ch.inputs = {{"acc", ScalarKind::F32, shape}, {"m", ScalarKind::F32, m.shape}};
  std::vector<int> slots = {acc, c.constant_slot(std::move(m))};
  std::optional<Expr> zp;
  if (c.has_in(zp_in)) {
    ch.inputs.push_back({"zp", c.in(zp_in).dtype, {1}});
    slots.push_back(c.in_slot(zp_in));
    zp = fz::in(2, c.in(zp_in).dtype);
  }
  ch.out_dtype = c.out(0).dtype;
  ch.out = requantized(fz::in(0), fz::in(1), zp, ch.out_dtype);
  c.chain(ch, slots, out);
}

void int_to_output(LowerCtx& c, int acc, const Shape& shape) {
  fz::Chain ch;
  ch.name = "to_int32";
  ch.shape = shape;
  ch.inputs = {{"acc", ScalarKind::F32, shape}};
  ch.out_dtype = ScalarKind::I32;
  ch.out = fz::cast(ScalarKind::I32, fz::in(0));
  c.chain(ch, {acc}, c.out_slot(0));
}

// ---- convolutions ----
void infer_conv_like(InferCtx& c, int w_in, ScalarKind out) {
  // Shapes as Conv's: reuse its inference through a temporary view of the inputs.
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(w_in);
  if (x.size() < 3 || w.size() != x.size()) c.invalid("input and weight ranks");
  Graph& g = c.g;
  Node probe = c.node;
  probe.op = "Conv";
  probe.inputs = {c.node.inputs[0], c.node.inputs[size_t(w_in)]};
  probe.outputs = c.node.outputs;
  InferCtx pc{g, probe};
  find_handler("", "Conv")->infer(pc);
  c.set_out(0, out, g.values[size_t(c.node.outputs[0])].shape);
}

// The i32 result: the conv's epilogue casts its f32 integers.
void lower_conv_integer(LowerCtx& c) {
  need_constant(c, {1, 3}, "the weights or their zero point");
  const Tensor& w = *c.constant(1);
  const int x = centred_temp(c, 0, 2);
  ConvArgs a;
  a.x = x;
  Tensor wf = centred_weights(w, c.constant(3), w.shape[0]);
  a.w_const = &wf;
  a.w = c.constant_slot(wf);
  const Shape out = c.out(0).shape;
  ops::ConvEpilogue ep;
  ep.expr = fz::cast(ScalarKind::I32, fz::in(0));
  ep.out_dtype = ScalarKind::I32;
  if (conv_view(out)) {
    a.ep = &ep;
    a.out = c.out_slot(0);
    return plan_conv(c, a);
  }
  a.out = c.temp(size_t(numel(out)) * 4);
  plan_conv(c, a);
  int_to_output(c, a.out, out);
}

void lower_qlinear_conv(LowerCtx& c) {
  need_constant(c, {1, 3, 4, 5, 6, 8}, "scales, weights and zero points");
  const Tensor& w = *c.constant(3);
  ConvArgs a;
  a.x = centred_temp(c, 0, 2);
  Tensor wf = centred_weights(w, c.constant(5), w.shape[0]);
  a.w_const = &wf;
  a.w = c.constant_slot(wf);
  const Shape out = c.out(0).shape;
  // Conv's geometry reads inputs 0 and 1: present the weights as input 1.
  Node probe = c.node;
  probe.inputs = {c.node.inputs[0], c.node.inputs[3]};
  LowerCtx pc{c.g, probe, c.prog, c.dev, c.label, c.value_slot, c.owned};
  const std::optional<ProductView> view = conv_view(out);
  if (!view) {  // (no [N, OC, spatial] view: the conv, then the chain)
    if (c.has_in(8)) a.bias = c.constant_slot(c.constant(8)->to_f32());
    a.out = c.temp(size_t(numel(out)) * 4);
    plan_conv(pc, a);
    return requantize(c, a.out, out, requant_scale(*c.constant(1), *c.constant(4), *c.constant(6), param_shape({out[1]}, int64_t(out.size()), 1)), 7,
                      c.out_slot(0));
  }
  // The bias and the requantization as the conv's epilogue: one launch
  // stores the quantized output.
  EpilogueBuilder b{c, *view};
  Expr acc = fz::in(0);
  if (c.has_in(8)) acc = acc + b.extra(c.constant_slot(c.constant(8)->to_f32()), {"b", ScalarKind::F32, {out[1], 1}});
  const Expr m = b.extra(c.constant_slot(requant_scale(*c.constant(1), *c.constant(4), *c.constant(6), {out[1], 1})),
                         {"m", ScalarKind::F32, {out[1], 1}});
  std::optional<Expr> zp;
  if (c.has_in(7)) zp = b.extra(c.in_slot(7), {"zp", c.in(7).dtype, {1}});
  b.ep.out_dtype = c.out(0).dtype;
  b.ep.expr = requantized(acc, m, zp, b.ep.out_dtype);
  a.ep = &b.ep;
  a.ep_slots = b.slots;
  a.out = c.out_slot(0);
  plan_conv(pc, a);
}

// ---- products ----
void infer_matmul_like(InferCtx& c, int b_in, ScalarKind out) {
  const Shape& a = c.shape(0);
  const Shape& b = c.shape(b_in);
  if (a.size() < 2 || b.size() != 2) c.unsupported("operands other than A (..., M, K) and a 2-D B");
  if (a.back() != b[0]) c.invalid("inner dimensions " + shape_str(a) + " x " + shape_str(b));
  Shape s = a;
  s.back() = b[1];
  c.set_out(0, out, s);
}

// A (rows × K, f32) · B (K × N) into `out`, `ep` applied as C is stored.
void plan_rows_product(LowerCtx& c, int a, int64_t rows, int64_t k, int b, int64_t n, const ops::MatmulEpilogue& ep,
                       const std::vector<int>& ep_slots, int out) {
  ops::Problem p;
  p.op = "matmul";
  p.dims = {rows, n, k};
  plan_product(c, p, a, b, ep, ep_slots, out);
}

// [1, rows, N]: the products' output as the epilogue sees it.
ProductView rows_view(const Shape& out) {
  ProductView v;
  v.out = out;
  v.n_from = out.size() - 1;
  v.n = out.back();
  v.m = numel(out) / v.n;
  return v;
}

// The i32 result: the product's epilogue casts its f32 integers.
void lower_matmul_integer(LowerCtx& c) {
  need_constant(c, {1, 3}, "B or its zero point");
  const Shape& as = c.in(0).shape;
  const Tensor& b = *c.constant(1);
  const int a = centred_temp(c, 0, 2);
  Tensor bf = centred_columns(b, c.constant(3));
  ops::MatmulEpilogue ep;
  ep.expr = fz::cast(ScalarKind::I32, fz::in(0));
  ep.out_dtype = ScalarKind::I32;
  plan_rows_product(c, a, numel(as) / as.back(), as.back(), c.constant_slot(std::move(bf)), b.shape[1], ep, {}, c.out_slot(0));
}

// The requantization as the product's epilogue: one launch stores the
// quantized output.
void lower_qlinear_matmul(LowerCtx& c) {
  need_constant(c, {1, 3, 4, 5, 6}, "scales, B and zero points");
  const Shape& as = c.in(0).shape;
  const Tensor& b = *c.constant(3);
  const int a = centred_temp(c, 0, 2);
  Tensor bf = centred_columns(b, c.constant(5));
  const Shape out = c.out(0).shape;
  const ProductView view = rows_view(out);
  EpilogueBuilder eb{c, view};
  const Shape ms = numel(c.in(4).shape) == 1 ? Shape{1} : Shape{b.shape[1]};
  const Expr m = eb.extra(c.constant_slot(requant_scale(*c.constant(1), *c.constant(4), *c.constant(6), ms)), {"m", ScalarKind::F32, ms});
  std::optional<Expr> zp;
  if (c.has_in(7)) zp = eb.extra(c.in_slot(7), {"zp", c.in(7).dtype, {1}});
  eb.ep.out_dtype = c.out(0).dtype;
  eb.ep.expr = requantized(fz::in(0), m, zp, eb.ep.out_dtype);
  plan_rows_product(c, a, numel(as) / as.back(), as.back(), c.constant_slot(std::move(bf)), b.shape[1], eb.ep, eb.slots, c.out_slot(0));
}

// ---- com.microsoft ----
void lower_qlinear_add(LowerCtx& c) {
  need_constant(c, {1, 4, 6}, "the scales");
  const double ra = float(c.constant(1)->get(0)) / float(c.constant(6)->get(0));
  const double rb = float(c.constant(4)->get(0)) / float(c.constant(6)->get(0));
  fz::Chain ch;
  ch.name = "qlinear_add";
  ch.shape = c.out(0).shape;
  std::vector<int> slots;
  auto add = [&](int i) {
    ch.inputs.push_back({c.in(i).name, c.in(i).dtype, c.in(i).shape.empty() ? Shape{1} : c.in(i).shape});
    slots.push_back(c.in_slot(i));
    return fz::in(int(ch.inputs.size()) - 1, c.in(i).dtype);
  };
  auto f32 = [](Expr e) { return fz::cast(ScalarKind::F32, e); };
  Expr a = f32(add(0)), b = f32(add(3));
  if (c.has_in(2)) a = a - f32(add(2));
  if (c.has_in(5)) b = b - f32(add(5));
  Expr v = a * fz::lit(float(ra)) + b * fz::lit(float(rb));
  if (c.has_in(7)) v = v + f32(add(7));
  ch.out_dtype = c.out(0).dtype;
  ch.out = fz::saturate_cast(ch.out_dtype, v);
  c.chain(ch, slots, c.out_slot(0));
}

void lower_qlinear_gap(LowerCtx& c) {
  need_constant(c, {1, 3}, "the scales");
  if (c.node.attr_int("channels_last", 0)) c.unsupported("channels_last=1");
  const Shape& x = c.in(0).shape;
  const int64_t nc = x[0] * x[1], hw = numel(x) / nc;
  const int centred_x = centred_temp(c, 0, 2);
  const int sum = c.temp(size_t(nc) * 4);
  ops::Problem p;
  p.op = "reduce";
  p.dims = {nc, hw};
  p.attrs = {{"axis", 1}, {"kind", 0}};
  c.op(p, {centred_x, sum});
  Tensor m(ScalarKind::F32, {1});
  m.set(0, double(float(c.constant(1)->get(0)) / float(float(c.constant(3)->get(0)) * float(hw))));
  requantize(c, sum, {nc}, std::move(m), 4, c.out_slot(0));
}

// DynamicQuantizeLinear: u8 with a scale and zero point from the data's range
// (widened to include 0): two reductions, one chain per output.
void lower_dynamic_quantize(LowerCtx& c) {
  if (c.in(0).dtype != ScalarKind::F32) c.unsupported("inputs other than f32");
  const Shape x = c.in(0).shape;
  const int64_t n = numel(x);
  const int lo = c.temp(4), hi = c.temp(4);
  for (auto [slot, kind] : {std::pair{lo, 2}, std::pair{hi, 1}}) {
    ops::Problem p;
    p.op = "reduce";
    p.dims = {1, n};
    p.attrs = {{"axis", 1}, {"kind", kind}};
    c.op(p, {c.in_slot(0), slot});
  }
  // scale = (max(hi, 0) - min(lo, 0)) / 255; zp = saturate(round(-min(lo, 0) / scale)).
  auto range = [&](fz::Chain& ch) {
    ch.inputs = {{"lo", ScalarKind::F32, {1}}, {"hi", ScalarKind::F32, {1}}};
    ch.shape = {1};
    return (fz::max(fz::in(1), fz::lit(0.0)) - fz::min(fz::in(0), fz::lit(0.0))) / fz::lit(255.0);
  };
  fz::Chain scale;
  scale.name = "dynamic_scale";
  scale.out = range(scale);
  c.chain(scale, {lo, hi}, c.out_slot(1));
  fz::Chain zp;
  zp.name = "dynamic_zero_point";
  zp.out_dtype = ScalarKind::U8;
  zp.out = fz::saturate_cast(ScalarKind::U8, fz::round((fz::lit(0.0) - fz::min(fz::in(0), fz::lit(0.0))) / range(zp)));
  c.chain(zp, {lo, hi}, c.out_slot(2));
  fz::Chain q;
  q.name = "dynamic_quantize";
  q.shape = x.empty() ? Shape{1} : x;
  q.inputs = {{"x", ScalarKind::F32, q.shape}, {"s", ScalarKind::F32, {1}}, {"zp", ScalarKind::U8, {1}}};
  q.out_dtype = ScalarKind::U8;
  q.out = fz::saturate_cast(ScalarKind::U8, fz::round(fz::in(0) / fz::in(1)) + fz::cast(ScalarKind::F32, fz::in(2, ScalarKind::U8)));
  c.chain(q, {c.in_slot(0), c.out_slot(1), c.out_slot(2)}, c.out_slot(0));
}

}  // namespace

void register_quant_nodes() {
  OpHandler q;
  q.op = "QuantizeLinear";
  q.infer = infer_quantize;
  q.lower = lower_quantize;
  q.eval = eval_quantize;
  register_handler(std::move(q));
  OpHandler dyn;
  dyn.op = "DynamicQuantizeLinear";
  dyn.infer = [](InferCtx& c) {
    c.require_inputs(1, 1);
    c.set_out(0, ScalarKind::U8, c.shape(0));
    c.set_out(1, ScalarKind::F32, {});
    c.set_out(2, ScalarKind::U8, {});
  };
  dyn.lower = lower_dynamic_quantize;
  register_handler(std::move(dyn));
  OpHandler dq;
  dq.op = "DequantizeLinear";
  dq.infer = infer_dequantize;
  dq.lower = lower_dequantize;
  dq.eval = eval_dequantize;
  register_handler(std::move(dq));
  OpHandler ci;
  ci.op = "ConvInteger";
  ci.infer = [](InferCtx& c) { c.require_inputs(2, 4); infer_conv_like(c, 1, ScalarKind::I32); };
  ci.lower = lower_conv_integer;
  register_handler(std::move(ci));
  OpHandler qc;
  qc.op = "QLinearConv";
  qc.infer = [](InferCtx& c) { c.require_inputs(8, 9); infer_conv_like(c, 3, c.dtype(7)); };
  qc.lower = lower_qlinear_conv;
  register_handler(std::move(qc));
  OpHandler mi;
  mi.op = "MatMulInteger";
  mi.infer = [](InferCtx& c) { c.require_inputs(2, 4); infer_matmul_like(c, 1, ScalarKind::I32); };
  mi.lower = lower_matmul_integer;
  register_handler(std::move(mi));
  OpHandler qm;
  qm.op = "QLinearMatMul";
  qm.infer = [](InferCtx& c) { c.require_inputs(8, 8); infer_matmul_like(c, 3, c.dtype(7)); };
  qm.lower = lower_qlinear_matmul;
  register_handler(std::move(qm));
  OpHandler qa;
  qa.op = "QLinearAdd";
  qa.domain = "com.microsoft";
  qa.infer = [](InferCtx& c) {
    c.require_inputs(7, 8);
    c.set_out(0, c.dtype(0), broadcast_shapes(c, {c.shape(0), c.shape(3)}));
  };
  qa.lower = lower_qlinear_add;
  register_handler(std::move(qa));
  OpHandler gap;
  gap.op = "QLinearGlobalAveragePool";
  gap.domain = "com.microsoft";
  gap.infer = [](InferCtx& c) {
    c.require_inputs(4, 5);
    Shape s = {c.shape(0)[0], c.shape(0)[1]};
    s.resize(c.shape(0).size(), 1);
    c.set_out(0, c.dtype(0), s);
  };
  gap.lower = lower_qlinear_gap;
  register_handler(std::move(gap));
}

}  // namespace kgen::graph
