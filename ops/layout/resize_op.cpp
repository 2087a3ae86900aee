// The "resize" OpDef (ops/layout/data_movement_ops.h).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/layout/data_movement_ops.h"

namespace kgen::ops::move_ops {

namespace {

// dims = the input shape (rank 1..6); o<k> output sizes; s<k> scales in
// thousandths (any given: scales for every axis, 1000 where absent; the
// output then floor(in · scale) unless o<k> says); mode 0..2, coord 0..5,
// nearest 0..3, a = cubic_coeff_a in thousandths (default -750), excl.
Resize resize_of(const Problem& p) {
  const size_t R = p.dims.size();
  if (R < 1 || R > 6) throw std::invalid_argument("dims: the input shape, rank 1..6");
  Resize r;
  r.dtype = p.dtype;
  r.in_shape = p.dims;
  const bool scaled = has_axis_attr(p, "s", R);
  for (size_t a = 0; a < R; ++a) {
    const std::string k = std::to_string(a);
    if (scaled) r.scales.push_back(double(p.attr("s" + k, 1000)) / 1000.0);
    const int64_t dflt = scaled ? int64_t(std::floor(double(p.dims[a]) * r.scales.back())) : p.dims[a];
    r.out_shape.push_back(p.attr("o" + k, dflt));
  }
  const int64_t mode = p.attr("mode", 0), coord = p.attr("coord", 0), nearest = p.attr("nearest", 0);
  if (mode < 0 || mode > 2) throw std::invalid_argument("mode must be 0 (nearest), 1 (linear) or 2 (cubic)");
  if (coord < 0 || coord > 5)
    throw std::invalid_argument("coord must be 0 half_pixel|1 asymmetric|2 align_corners|3 pytorch_half_pixel|"
                                "4 tf_half_pixel_for_nn|5 half_pixel_symmetric");
  if (nearest < 0 || nearest > 3) throw std::invalid_argument("nearest must be 0 round_prefer_floor|1 round_prefer_ceil|2 floor|3 ceil");
  r.mode = Resize::Mode(mode);
  r.coord = Resize::Coord(coord);
  r.nearest = Resize::NearestRound(nearest);
  r.cubic_coeff_a = double(p.attr("a", -750)) / 1000.0;
  r.exclude_outside = p.attr("excl", 0) != 0;
  return r;
}

Problem resize_prob(std::vector<int64_t> dims, std::map<std::string, int64_t> attrs, ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = "resize";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = std::move(attrs);
  return p;
}

// Output sizes o2, o3 of an NCHW problem.
std::map<std::string, int64_t> hw(int64_t h, int64_t w, std::map<std::string, int64_t> more) {
  more["o2"] = h;
  more["o3"] = w;
  return more;
}

std::vector<Problem> test_problems() {
  using K = ir::ScalarKind;
  enum { HalfPixel, Asymmetric, AlignCorners, Pytorch, TfNn, Symmetric };
  return {
      resize_prob({1, 2, 5, 7}, hw(9, 12, {{"mode", 1}})),  // linear, half_pixel, up
      // nearest: each rounding, up and down, scales and sizes
      resize_prob({2, 3, 4, 5}, hw(8, 10, {{"nearest", 2}, {"coord", Asymmetric}})),
      resize_prob({2, 3, 4, 5}, {{"s2", 2000}, {"s3", 2000}, {"nearest", 1}}),
      resize_prob({2, 3, 8, 10}, hw(4, 5, {{"coord", TfNn}})),
      resize_prob({1, 1, 5, 5}, hw(9, 3, {{"nearest", 3}, {"coord", AlignCorners}})),
      resize_prob({1, 2, 7, 6}, {{"s2", 1500}, {"s3", 2500}, {"coord", HalfPixel}}),
      resize_prob({3, 7, 9}, {{"s1", 750}, {"s2", 1250}, {"nearest", 1}, {"coord", Pytorch}}),
      resize_prob({1, 5, 6, 33}, {{"o1", 10}, {"o2", 3}}),  // NHWC: channels copied in lines
      resize_prob({1, 3, 8, 8}, hw(16, 16, {}), K::F16),
      // linear
      resize_prob({1, 1, 6, 7}, hw(11, 4, {{"mode", 1}, {"coord", AlignCorners}})),
      resize_prob({2, 1, 5, 8}, hw(1, 3, {{"mode", 1}, {"coord", Pytorch}})),  // an output of one
      resize_prob({1, 2, 6, 5}, hw(4, 13, {{"mode", 1}, {"coord", Asymmetric}})),
      resize_prob({1, 2, 5, 5}, {{"s2", 1700}, {"s3", 600}, {"mode", 1}, {"coord", Symmetric}}),
      resize_prob({1, 6, 7, 19}, {{"o1", 12}, {"o2", 5}, {"mode", 1}}),  // NHWC
      resize_prob({17}, {{"o0", 40}, {"mode", 1}}),
      resize_prob({2, 3, 2, 3, 2, 5}, {{"o2", 3}, {"o3", 2}, {"o4", 4}, {"mode", 1}}),
      resize_prob({3, 2, 4, 3, 2}, {{"o0", 5}, {"o1", 3}, {"o2", 2}, {"o3", 4}, {"o4", 3}, {"mode", 1}}),
      resize_prob({1, 3, 8, 8}, hw(16, 12, {{"mode", 1}}), K::F16),
      resize_prob({1, 2, 9, 8}, hw(5, 17, {{"mode", 1}, {"excl", 1}}), K::BF16),
      resize_prob({1, 1, 300, 400}, hw(150, 600, {{"mode", 1}})),
      // cubic
      resize_prob({1, 1, 6, 7}, hw(11, 4, {{"mode", 2}})),
      resize_prob({1, 2, 6, 7}, hw(13, 5, {{"mode", 2}, {"excl", 1}, {"a", -500}})),
      resize_prob({1, 1, 5, 8}, hw(9, 6, {{"mode", 2}, {"coord", AlignCorners}})),
      resize_prob({2, 5, 4, 6}, {{"o1", 7}, {"o2", 3}, {"o3", 9}, {"mode", 2}, {"coord", Asymmetric}}),
      resize_prob({1, 1, 4, 4}, {{"s2", 3000}, {"s3", 500}, {"mode", 2}, {"coord", TfNn}}),
      resize_prob({1, 2, 6, 1}, hw(3, 1, {{"mode", 2}, {"coord", Pytorch}})),
      resize_prob({1, 2, 5, 5}, {{"s2", 1700}, {"s3", 600}, {"mode", 2}, {"coord", Symmetric}, {"excl", 1}}),
  };
}

}  // namespace

void register_resize_op() {
  OpDef d;
  d.name = "resize";
  d.description = "ONNX Resize: nearest, (n-)linear or cubic, every coordinate transformation but tf_crop_and_resize";
  d.dims_help = "input shape (rank 1..6)";
  d.attrs_help = "o0..o5=output sizes s0..s5=scales in thousandths mode=0 nearest|1 linear|2 cubic "
                 "coord=0 half_pixel|1 asymmetric|2 align_corners|3 pytorch_half_pixel|4 tf_half_pixel_for_nn|5 "
                 "half_pixel_symmetric nearest=0 round_prefer_floor|1 round_prefer_ceil|2 floor|3 ceil "
                 "a=cubic_coeff_a in thousandths (-750) excl=exclude_outside";
  d.validate = [](const Problem& p) {
    Plan probe;
    plan_resize(probe, resize_of(p), 0, 1, MoveVariant{});
  };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("x", p.dtype, p.dims)}; };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, resize_of(p).out_shape)}; };
  set_move_variants(d);
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    Plan pl;
    plan_resize(pl, resize_of(p), 0, 1, move_variant(v));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_resize(resize_of(p), in[0], out[0]);
  };
  // The kernels' f32 coordinates and sums against the reference's f64, then
  // the rounding to the element type. A coordinate x_in is good to about
  // ulp(x_in), so its weights are too: the error grows with the axis.
  d.tolerance = [](const Problem& p) {
    const double coord = 4e-7 * double(*std::max_element(p.dims.begin(), p.dims.end()));
    return coord + (p.dtype == ir::ScalarKind::F16 ? 2e-3 : p.dtype == ir::ScalarKind::BF16 ? 1.6e-2 : 2e-5);
  };
  d.bytes = [](const Problem& p) {
    double n = 1;
    for (int64_t x : resize_of(p).out_shape) n *= double(x);
    return 2.0 * n * double(ir::Type(p.dtype).bytes());
  };
  d.test_problems = test_problems();
  d.bench_problems = {resize_prob({8, 64, 80, 80}, hw(160, 160, {})), resize_prob({8, 64, 80, 80}, hw(160, 160, {{"mode", 1}})),
                      resize_prob({8, 80, 80, 64}, {{"o1", 160}, {"o2", 160}, {"mode", 1}})};
  register_op(std::move(d));
}

}  // namespace kgen::ops::move_ops
