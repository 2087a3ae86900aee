// The "pad" OpDef (ops/layout/data_movement_ops.h).
#include <stdexcept>

#include "ops/layout/data_movement_ops.h"

namespace kgen::ops::move_ops {

namespace {

// dims = the input shape (rank 0..8); b<k>, e<k> pads before and after
// (negative: crop), mode 0..3, value = the constant's bit pattern.
Pad pad_of(const Problem& p) {
  if (p.dims.size() > 8) throw std::invalid_argument("dims: the input shape, rank 0..8");
  Pad d;
  d.elem_bytes = elem_bytes(p);
  d.in_shape = p.dims;
  d.pads_begin = axis_attrs(p, "b", p.dims.size(), 0);
  d.pads_end = axis_attrs(p, "e", p.dims.size(), 0);
  const int64_t mode = p.attr("mode", 0);
  if (mode < 0 || mode > 3) throw std::invalid_argument("mode must be 0 (constant), 1 (reflect), 2 (edge) or 3 (wrap)");
  d.mode = Pad::Mode(mode);
  d.value_bits = uint64_t(p.attr("value", 0));
  return d;
}

Problem pad_prob(std::vector<int64_t> dims, ir::ScalarKind dt, int64_t mode, std::vector<int64_t> b, std::vector<int64_t> e,
                 int64_t value = 0) {
  Problem p;
  p.op = "pad";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs["mode"] = mode;
  for (size_t a = 0; a < b.size(); ++a) {
    if (b[a]) p.attrs["b" + std::to_string(a)] = b[a];
    if (e[a]) p.attrs["e" + std::to_string(a)] = e[a];
  }
  if (value) p.attrs["value"] = value;
  return p;
}

}  // namespace

void register_pad_op() {
  using K = ir::ScalarKind;
  enum { C = 0, R = 1, E = 2, W = 3 };
  OpDef d;
  d.name = "pad";
  d.description = "ONNX Pad: constant, reflect, edge or wrap; negative pads crop";
  d.dims_help = "input shape (rank 0..8)";
  d.attrs_help = "b0..b7, e0..e7=pads before/after (negative: crop) mode=0 constant|1 reflect|2 edge|3 wrap "
                 "value=the constant's bits";
  d.validate = [](const Problem& p) { pad_out_shape(pad_of(p)); };
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("x", p.dtype, p.dims)}; };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, pad_out_shape(pad_of(p)))}; };
  set_move_variants(d);
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    Plan pl;
    plan_pad(pl, pad_of(p), 0, 1, move_variant(v));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_pad(pad_of(p), in[0], out[0]);
  };
  d.tolerance = [](const Problem&) { return 0.0; };
  d.bytes = [](const Problem& p) {
    double n = 1;
    for (int64_t x : pad_out_shape(pad_of(p))) n *= double(x);
    return 2.0 * n * elem_bytes(p);
  };
  const int64_t one_and_half = 0x3fc00000;              // 1.5f
  const int64_t minus_two_and_half = int64_t(0xc004000000000000ull);  // -2.5 (f64)
  d.test_problems = {
      pad_prob({3, 37}, K::F32, C, {1, 5}, {2, 3}, one_and_half),
      pad_prob({}, K::F32, C, {}, {}),               // rank 0: a copy
      pad_prob({5}, K::U8, R, {7}, {5}),             // reflect past the size (periodic)
      pad_prob({4, 6}, K::F16, E, {2, 3}, {1, 4}),
      pad_prob({3, 5}, K::F32, W, {4, 7}, {5, 6}),   // wrap past the size
      pad_prob({6, 8}, K::F32, C, {-1, 2}, {1, -3}, one_and_half),  // crops
      pad_prob({5, 9}, K::F32, R, {-1, 3}, {2, -2}),
      pad_prob({1, 4}, K::F32, R, {2, 0}, {1, 1}),   // reflect of one element: it repeats
      pad_prob({3, 4, 5}, K::F64, C, {0, 1, 0}, {1, 0, 2}, minus_two_and_half),
      pad_prob({3, 4, 5}, K::I64, W, {0, 1, 0}, {1, 0, 2}),
      pad_prob({4, 3, 16}, K::U8, C, {1, 0, 0}, {2, 0, 0}, 7),  // rows of bytes as u32 words
      pad_prob({2, 1, 3, 1, 2, 2, 1, 3}, K::BF16, E, {1, 0, 0, 2, 0, 1, 0, 1}, {0, 1, 1, 0, 0, 0, 2, 2}),
      pad_prob({2, 3, 30, 40}, K::F32, R, {0, 0, 2, 2}, {0, 0, 2, 2}),
      pad_prob({1, 3, 8, 9}, K::F16, C, {0, 0, 1, 1}, {0, 0, 1, 1}),
      pad_prob({3, 2}, K::F32, C, {1, 2}, {0, -2}, one_and_half),  // an axis cropped to nothing: all constant
      // the last axis cropped to one element: the inner axis is strided
      pad_prob({3, 4, 5}, K::U8, C, {1, 0, -2}, {0, 2, -2}, 9), pad_prob({3, 4, 5}, K::F16, R, {1, 3, -4}, {0, 2, 0}),
      pad_prob({2, 20000}, K::F32, C, {0, 3}, {1, 5}),              // rows split into chunks
      pad_prob({2, 20000}, K::I32, E, {1, 17}, {0, 20}),
  };
  d.bench_problems = {pad_prob({8, 64, 112, 112}, K::F32, C, {0, 0, 1, 1}, {0, 0, 1, 1}),
                      pad_prob({8, 64, 112, 112}, K::F32, R, {0, 0, 3, 3}, {0, 0, 3, 3})};
  register_op(std::move(d));
}

}  // namespace kgen::ops::move_ops
