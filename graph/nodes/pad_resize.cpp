// Pad (opsets 1-21), CenterCropPad (a Pad with negative pads where it
// crops), Resize (opsets 10-19) and Upsample (opsets 7-9) onto ops/layout's
// Pad and Resize moves. Each op describes its move once from the node (an
// ops::Pad or ops::Resize): inference takes the output shape from it, host
// folding runs the move's reference, lowering plans its kernel.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/layout/data_movement.h"

namespace kgen::graph {

namespace fz = ops::fusion;

namespace {

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

// An ops/ builder's std::invalid_argument ("Pad: axis 1: ...") as the node's error.
template <class F>
auto checked(const InferCtx& c, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    c.invalid(e.what());
  }
}

// ---- Pad ----

// The element's bit pattern of `v` (a constant of any type) in type k.
uint64_t value_bits(ScalarKind k, const Tensor& v) {
  Tensor t = v.dtype == k ? v : Tensor(k, {1});
  if (v.dtype != k) {
    if (ir::Type(k).is_int() && ir::Type(v.dtype).is_int()) t = Tensor::from_ints(k, {1}, {v.get_int(0)});
    else t.set(0, v.get(0));
  }
  uint64_t bits = 0;
  std::memcpy(&bits, t.data(), dtype_bytes(k));
  return bits;
}

ops::Pad::Mode pad_mode(const InferCtx& c) {
  const std::string m = c.node.attr_str("mode", "constant");
  if (m == "constant") return ops::Pad::Constant;
  if (m == "reflect") return ops::Pad::Reflect;
  if (m == "edge") return ops::Pad::Edge;
  if (m == "wrap") return ops::Pad::Wrap;
  c.invalid("mode '" + m + "'");
}

// The move without its constant's value (value_bits 0).
ops::Pad pad_move(const InferCtx& c) {
  c.require_inputs(1, 4);
  const Shape& in = c.shape(0);
  const int64_t r = int64_t(in.size());
  std::vector<int64_t> pads = c.node.opset >= 11 ? c.need_constant(1, "pads").ints()
                             : c.node.has("pads")  ? c.node.attr_ints("pads")
                                                   : c.node.attr_ints("paddings");  // opset 1's name
  std::vector<int64_t> axes;
  if (c.has_in(3))
    for (int64_t a : c.need_constant(3, "axes").ints()) axes.push_back(normalize_axis(c, a, r));
  else
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  if (pads.size() != 2 * axes.size())
    c.invalid(std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) + " axes (two per axis)");
  ops::Pad p;
  p.elem_bytes = int(dtype_bytes(c.dtype(0)));
  p.in_shape = in;
  p.pads_begin.assign(in.size(), 0);
  p.pads_end.assign(in.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    p.pads_begin[size_t(axes[i])] = pads[i];
    p.pads_end[size_t(axes[i])] = pads[axes.size() + i];
  }
  p.mode = pad_mode(c);
  return p;
}

// The constant's value: the attribute (opset < 11), the constant input, 0
// when absent; nullopt when the input is computed at run time.
std::optional<uint64_t> pad_value(const InferCtx& c) {
  const ScalarKind k = c.dtype(0);
  if (c.node.opset < 11) return value_bits(k, Tensor::scalar(ScalarKind::F64, c.node.attr_float("value", 0)));
  if (!c.has_in(2)) return 0;
  const Tensor* v = c.constant(2);
  if (!v) return std::nullopt;
  if (v->numel() != 1) c.invalid("constant_value must hold one element");
  return value_bits(k, *v);
}

void infer_pad(InferCtx& c) {
  const ops::Pad p = pad_move(c);
  c.set_out(0, c.dtype(0), checked(c, [&] { return ops::pad_out_shape(p); }));
}

void eval_pad(EvalCtx& e) {
  InferCtx ic{e.g, e.node};
  ops::Pad p = pad_move(ic);
  p.value_bits = *pad_value(ic);
  ops::reference_pad(p, e.in[0]->data(), e.out[0].mutable_data());
}

// A constant_value given at run time: pad with zeros, then one chain picks
// the value where any axis's mask (its own shape, broadcast) says padding.
void lower_pad_runtime_value(LowerCtx& c, const ops::Pad& p) {
  const Shape& os = c.out(0).shape;
  if (os.size() > 6) c.unsupported("a constant_value computed at run time on a rank above 6");
  // bool moves as u8 (the same bytes), as Trilu's chain does.
  const ScalarKind k = c.in(0).dtype == ScalarKind::Bool ? ScalarKind::U8 : c.in(0).dtype;
  const int padded = c.temp(size_t(numel(os)) * dtype_bytes(k));
  ops::Plan plan;
  ops::plan_pad(plan, p, 0, 1, ops::move_variant_for(c.caps()));
  c.steps(plan, {c.in_slot(0), padded});
  fz::Chain ch;
  ch.name = "pad_value";
  ch.shape = os;
  ch.out_dtype = k;
  const ScalarKind vk = c.in(2).dtype == ScalarKind::Bool ? ScalarKind::U8 : c.in(2).dtype;
  ch.inputs = {{"padded", k, os}, {"value", vk, {1}}};
  std::vector<int> slots = {padded, c.in_slot(2)};
  fz::Expr inside;
  for (size_t a = 0; a < os.size(); ++a) {
    if (p.pads_begin[a] <= 0 && p.pads_end[a] <= 0) continue;
    Shape ms(os.size(), 1);
    ms[a] = os[a];
    Tensor m(ScalarKind::Bool, ms);
    for (int64_t i = 0; i < os[a]; ++i) m.set(i, i >= p.pads_begin[a] && i < os[a] - p.pads_end[a]);
    ch.inputs.push_back({"inside" + std::to_string(a), ScalarKind::Bool, ms});
    slots.push_back(c.constant_slot(std::move(m)));
    fz::Expr here = fz::in(int(ch.inputs.size()) - 1, ScalarKind::Bool);
    inside = inside.node ? fz::logical_and(inside, here) : here;
  }
  fz::Expr x = fz::in(0, k);
  ch.out = inside.node ? fz::where(inside, x, fz::cast(fz::compute_kind(k), fz::in(1, vk))) : x;
  c.chain(ch, slots, c.out_slot(0));
}

void lower_pad(LowerCtx& c) {
  InferCtx ic = ctx_of(c);
  ops::Pad p = pad_move(ic);
  const auto value = pad_value(ic);
  if (!value && p.mode == ops::Pad::Constant) return lower_pad_runtime_value(c, p);
  p.value_bits = value.value_or(0);
  ops::Plan plan;
  ops::plan_pad(plan, p, 0, 1, ops::move_variant_for(c.caps()));
  c.steps(plan, {c.in_slot(0), c.out_slot(0)});
}

// ---- CenterCropPad: each listed axis cropped or padded (with zeros) to
// its size around the centre, the extra element after it ----
ops::Pad center_crop_pad_move(const InferCtx& c) {
  c.require_inputs(2, 2);
  const Shape& in = c.shape(0);
  const int64_t r = int64_t(in.size());
  const std::vector<int64_t> want = c.need_constant(1, "shape").ints();
  std::vector<int64_t> axes = c.node.attr_ints("axes");
  if (axes.empty())
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  if (want.size() != axes.size()) c.invalid("shape has " + std::to_string(want.size()) + " sizes for " + std::to_string(axes.size()) + " axes");
  ops::Pad p;
  p.elem_bytes = int(dtype_bytes(c.dtype(0)));
  p.in_shape = in;
  p.pads_begin.assign(in.size(), 0);
  p.pads_end.assign(in.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = size_t(normalize_axis(c, axes[i], r));
    if (want[i] < 0) c.invalid("negative size in shape");
    const int64_t diff = want[i] - in[a];  // > 0: pad, < 0: crop
    p.pads_begin[a] = diff >= 0 ? diff / 2 : -((-diff) / 2);
    p.pads_end[a] = diff - p.pads_begin[a];
  }
  return p;
}

OpHandler pad_handler(const char* op, std::function<ops::Pad(const InferCtx&)> move) {
  OpHandler h;
  h.op = op;
  h.infer = [move](InferCtx& c) { c.set_out(0, c.dtype(0), checked(c, [&] { return ops::pad_out_shape(move(c)); })); };
  h.eval = [move](EvalCtx& e) { ops::reference_pad(move(InferCtx{e.g, e.node}), e.in[0]->data(), e.out[0].mutable_data()); };
  h.lower = [move](LowerCtx& c) {
    ops::Plan plan;
    ops::plan_pad(plan, move(ctx_of(c)), 0, 1, ops::move_variant_for(c.caps()));
    c.steps(plan, {c.in_slot(0), c.out_slot(0)});
  };
  return h;
}

// ---- Resize and Upsample ----

ops::Resize::Mode resize_mode(const InferCtx& c) {
  const std::string m = c.node.attr_str("mode", "nearest");
  if (m == "nearest") return ops::Resize::Nearest;
  if (m == "linear" || m == "bilinear") return ops::Resize::Linear;
  if (m == "cubic" && c.node.op == "Resize" && c.node.opset >= 11) return ops::Resize::Cubic;
  c.invalid("mode '" + m + "'");
}

ops::Resize::Coord resize_coord(const InferCtx& c) {
  const std::string m = c.node.attr_str("coordinate_transformation_mode", "half_pixel");
  if (m == "half_pixel") return ops::Resize::HalfPixel;
  if (m == "asymmetric") return ops::Resize::Asymmetric;
  if (m == "align_corners") return ops::Resize::AlignCorners;
  if (m == "pytorch_half_pixel") return ops::Resize::PytorchHalfPixel;
  if (m == "tf_half_pixel_for_nn") return ops::Resize::TfHalfPixelForNn;
  if (m == "half_pixel_symmetric") return ops::Resize::HalfPixelSymmetric;
  if (m == "tf_crop_and_resize") c.unsupported("coordinate_transformation_mode tf_crop_and_resize (a region of interest)");
  c.invalid("coordinate_transformation_mode '" + m + "'");
}

ops::Resize::NearestRound resize_nearest(const InferCtx& c) {
  const std::string m = c.node.attr_str("nearest_mode", "round_prefer_floor");
  if (m == "round_prefer_floor") return ops::Resize::RoundPreferFloor;
  if (m == "round_prefer_ceil") return ops::Resize::RoundPreferCeil;
  if (m == "floor") return ops::Resize::Floor;
  if (m == "ceil") return ops::Resize::Ceil;
  c.invalid("nearest_mode '" + m + "'");
}

// A scales or sizes input: present and non-empty (an empty tensor stands
// for an omitted input), then constant.
const Tensor* given(const InferCtx& c, int i, const char* what) {
  if (!c.has_in(i) || numel(c.shape(i)) == 0) return nullptr;
  return &c.need_constant(i, what);
}

// Scales and the output shape from `scales` or `sizes` over `axes`
// (onnx/reference/ops/op_resize.py _interpolate_nd).
void resize_shape(const InferCtx& c, ops::Resize& r, const Tensor* scales, const Tensor* sizes, std::vector<int64_t> axes) {
  const Shape& in = r.in_shape;
  const size_t R = in.size();
  if (axes.empty())
    for (size_t a = 0; a < R; ++a) axes.push_back(int64_t(a));
  if ((scales != nullptr) == (sizes != nullptr)) c.invalid("needs exactly one of scales and sizes");
  const Tensor& values = scales ? *scales : *sizes;
  if (size_t(values.numel()) != axes.size())
    c.invalid(std::string(scales ? "scales" : "sizes") + " of " + std::to_string(values.numel()) + " values for " +
              std::to_string(axes.size()) + " axes");
  r.scales.assign(R, 1.0);
  r.out_shape = in;
  if (scales) {
    for (size_t i = 0; i < axes.size(); ++i) r.scales[size_t(axes[i])] = values.get(int64_t(i));
    for (size_t a = 0; a < R; ++a) {
      if (!(r.scales[a] > 0)) c.invalid("scales must be positive");
      r.out_shape[a] = int64_t(std::floor(r.scales[a] * double(in[a])));
    }
    return;
  }
  const std::string policy = c.node.attr_str("keep_aspect_ratio_policy", "stretch");
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = size_t(axes[i]);
    r.out_shape[a] = values.get_int(int64_t(i));
    if (r.out_shape[a] < 0) c.invalid("negative sizes");
    r.scales[a] = double(r.out_shape[a]) / double(in[a]);
  }
  if (policy == "stretch") return;
  if (policy != "not_larger" && policy != "not_smaller") c.invalid("keep_aspect_ratio_policy '" + policy + "'");
  double s = r.scales[size_t(axes[0])];
  for (int64_t a : axes) s = policy == "not_larger" ? std::min(s, r.scales[size_t(a)]) : std::max(s, r.scales[size_t(a)]);
  for (int64_t a : axes) {
    r.scales[size_t(a)] = s;
    r.out_shape[size_t(a)] = int64_t(s * double(in[size_t(a)]) + 0.5);
  }
}

// Before opset 11 (Upsample, Resize-10): asymmetric coordinates, and
// nearest takes the floor upsampling and the ceiling downsampling (ONNX
// Runtime's rule for these opsets).
void legacy_transform(const InferCtx& c, ops::Resize& r) {
  r.coord = ops::Resize::Asymmetric;
  bool up = false, down = false;
  for (double s : r.scales) up |= s > 1, down |= s < 1;
  if (r.mode == ops::Resize::Nearest && up && down) c.unsupported("nearest upsampling some axes and downsampling others (opset < 11)");
  r.nearest = down ? ops::Resize::Ceil : ops::Resize::Floor;
}

ops::Resize resize_move(const InferCtx& c) {
  const bool upsample = c.node.op == "Upsample";
  const bool legacy = upsample || c.node.opset < 11;
  ops::Resize r;
  r.dtype = c.dtype(0);
  if (r.dtype != ScalarKind::F32 && r.dtype != ScalarKind::F16 && r.dtype != ScalarKind::BF16)
    c.unsupported("a " + std::string(ir::scalar_name(r.dtype)) + " input (kgen resizes f32, f16 and bf16)");
  r.in_shape = c.shape(0);
  r.mode = resize_mode(c);
  if (c.node.attr_int("antialias", 0)) c.unsupported("antialias=1 (kgen resizes without antialiasing)");
  std::vector<int64_t> axes;
  for (int64_t a : c.node.attr_ints("axes")) axes.push_back(normalize_axis(c, a, int64_t(r.in_shape.size())));
  if (upsample && c.node.opset < 9) {
    const std::vector<double> s = c.node.attr_floats("scales");
    Tensor t(ScalarKind::F64, {int64_t(s.size())});
    for (size_t i = 0; i < s.size(); ++i) t.set(int64_t(i), s[i]);
    resize_shape(c, r, &t, nullptr, axes);
  } else if (legacy) {
    c.require_inputs(2, 2);
    resize_shape(c, r, &c.need_constant(1, "scales"), nullptr, axes);
  } else {
    c.require_inputs(1, 4);
    resize_shape(c, r, given(c, 2, "scales"), given(c, 3, "sizes"), axes);
  }
  if (legacy) {
    legacy_transform(c, r);
  } else {
    r.coord = resize_coord(c);
    r.nearest = resize_nearest(c);
    r.cubic_coeff_a = c.node.attr_float("cubic_coeff_a", -0.75);
    r.exclude_outside = c.node.attr_int("exclude_outside", 0) != 0;
  }
  checked(c, [&] { ops::check_resize(r); });
  return r;
}

OpHandler resize_handler(const char* op) {
  OpHandler h;
  h.op = op;
  h.infer = [](InferCtx& c) {
    c.set_out(0, c.dtype(0), resize_move(c).out_shape);
    // Only the data reaches the kernel: an empty roi, scales or sizes
    // (standing for an omitted one) is dropped, and so is roi (unused
    // without tf_crop_and_resize).
    for (int i = 1; i < int(c.node.inputs.size()); ++i)
      if (c.has_in(i) && (numel(c.shape(i)) == 0 || (i == 1 && c.node.op == "Resize" && c.node.opset >= 11))) c.node.inputs[size_t(i)] = -1;
  };
  h.eval = [](EvalCtx& e) { ops::reference_resize(resize_move(InferCtx{e.g, e.node}), e.in[0]->data(), e.out[0].mutable_data()); };
  h.lower = [](LowerCtx& c) {
    const ops::Resize r = resize_move(ctx_of(c));
    ops::Plan plan;
    try {
      ops::plan_resize(plan, r, 0, 1, ops::move_variant_for(c.caps()));
    } catch (const std::invalid_argument& e) {
      c.unsupported(e.what());  // cubic on more than 3 axes
    }
    c.steps(plan, {c.in_slot(0), c.out_slot(0)});
  };
  return h;
}

}  // namespace

void register_pad_resize_nodes() {
  OpHandler pad;
  pad.op = "Pad";
  pad.infer = infer_pad;
  pad.eval = eval_pad;
  pad.lower = lower_pad;
  register_handler(std::move(pad));
  register_handler(pad_handler("CenterCropPad", center_crop_pad_move));
  register_handler(resize_handler("Resize"));
  register_handler(resize_handler("Upsample"));
}

}  // namespace kgen::graph
