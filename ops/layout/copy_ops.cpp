// The "strided_copy" and "concat" OpDefs (ops/layout/data_movement_ops.h):
// StridedCopy over any strides, and Concat as one copy per part into
// offsets of the output (the graph executor's form).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "ops/layout/data_movement_ops.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops::move_ops {

using move::numel;

namespace {

// The smallest offset keeping every address of a walk >= 0, and the walk's
// span (highest address + 1) from there.
int64_t min_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t a = 0; a < shape.size(); ++a) o -= std::min<int64_t>(strides[a], 0) * (shape[a] - 1);
  return o;
}
int64_t span(int64_t offset, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (numel(shape) == 0) return 0;
  int64_t hi = offset;
  for (size_t a = 0; a < shape.size(); ++a) hi += std::max<int64_t>(strides[a], 0) * (shape[a] - 1);
  return hi + 1;
}

// strided_copy: dims = the output shape; s<k> input strides (default
// contiguous), off the input offset (default the least valid), o<k> output
// strides covering the output exactly (a permuted, possibly reversed,
// contiguous layout) with ooff likewise.
StridedCopy copy_of(const Problem& p) {
  if (p.dims.size() > 8) throw std::invalid_argument("dims: the output shape, rank 0..8");
  StridedCopy c;
  c.elem_bytes = elem_bytes(p);
  c.shape = p.dims;
  const size_t R = p.dims.size();
  const std::vector<int64_t> contiguous = move::contiguous_strides(p.dims);
  c.in_strides = has_axis_attr(p, "s", R) ? axis_attrs(p, "s", R, 0) : contiguous;
  c.in_offset = p.attr("off", min_offset(c.shape, c.in_strides));
  if (has_axis_attr(p, "o", R)) {
    c.out_strides = axis_attrs(p, "o", R, 0);
    std::vector<std::pair<int64_t, int64_t>> axes;  // |stride|, size
    for (size_t a = 0; a < R; ++a)
      if (p.dims[a] > 1) axes.push_back({std::abs(c.out_strides[a]), p.dims[a]});
    std::sort(axes.begin(), axes.end());
    int64_t next = 1;
    for (auto [s, d] : axes) {
      if (s != next) throw std::invalid_argument("strided_copy: the o<k> output strides must cover the output exactly");
      next = s * d;
    }
    c.out_offset = p.attr("ooff", min_offset(c.shape, c.out_strides));
    if (c.out_offset != min_offset(c.shape, c.out_strides))
      throw std::invalid_argument("strided_copy: ooff must be the least offset of the output strides");
  }
  return c;
}

int64_t out_elems(const StridedCopy& c) {
  return c.out_strides.empty() ? numel(c.shape) : span(c.out_offset, c.shape, c.out_strides);
}

Problem copy_prob(std::vector<int64_t> dims, ir::ScalarKind dt, std::map<std::string, int64_t> attrs = {}) {
  Problem p;
  p.op = "strided_copy";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs = std::move(attrs);
  return p;
}

void register_strided_copy() {
  using K = ir::ScalarKind;
  OpDef d;
  d.name = "strided_copy";
  d.description = "y[ooff + Σ c·o] = x[off + Σ c·s]: Slice, Expand, Tile, DepthToSpace as one strided copy of bits";
  d.dims_help = "output shape (rank 0..8)";
  d.attrs_help = "s0..s7=input strides (signed, 0 broadcasts; default contiguous) off=input offset "
                 "o0..o7=output strides (a permuted contiguous layout, signed) ooff";
  d.validate = [](const Problem& p) {
    StridedCopy c = copy_of(p);
    Plan probe;
    plan_strided_copy(probe, c, 0, 1, MoveVariant{});
  };
  d.inputs = [](const Problem& p) {
    StridedCopy c = copy_of(p);
    return std::vector<TensorSpec>{any_tensor("x", p.dtype, {std::max<int64_t>(span(c.in_offset, c.shape, c.in_strides), 1)})};
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, {out_elems(copy_of(p))})}; };
  set_move_variants(d);
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) {
    Plan pl;
    plan_strided_copy(pl, copy_of(p), 0, 1, move_variant(v));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    reference_strided_copy(copy_of(p), in[0], out[0]);
  };
  d.tolerance = [](const Problem&) { return 0.0; };
  d.bytes = [](const Problem& p) { return 2.0 * double(numel(p.dims)) * elem_bytes(p); };
  d.test_problems = {
      // a slice with a row pitch: lines and a tail per row
      copy_prob({3, 37}, K::F32, {{"s0", 40}, {"s1", 1}, {"off", 2}}),
      copy_prob({}, K::F32),                                      // rank 0
      copy_prob({45}, K::U8, {{"s0", -1}}),                       // reversed
      copy_prob({5, 7}, K::F32, {{"s0", -16}, {"s1", -2}}),      // x[::-1, ::-2] of 5 x 14 (+2)
      copy_prob({4, 3, 33}, K::F16, {{"s0", 0}, {"s1", 33}, {"s2", 1}}),  // Expand (1,3,33) -> (4,3,33)
      copy_prob({6, 40}, K::F32, {{"s0", 1}, {"s1", 0}}),        // Expand (6,1) -> (6,40): one value per row
      copy_prob({2, 3, 2, 5}, K::I32, {{"s0", 0}, {"s1", 5}, {"s2", 0}, {"s3", 1}}),  // Tile (3,5) by (2,2)
      // DepthToSpace (DCR, blocksize 2) of (1,8,3,5): output (1,2,3,2,5,2)
      copy_prob({1, 2, 3, 2, 5, 2}, K::F32, {{"s0", 0}, {"s1", 15}, {"s2", 5}, {"s3", 60}, {"s4", 1}, {"s5", 30}}),
      // rank 8, odd sizes, reversed and broadcast axes, 8-byte elements
      copy_prob({2, 1, 3, 2, 1, 2, 3, 5}, K::F64,
                {{"s0", -180}, {"s1", 7}, {"s2", 30}, {"s3", 0}, {"s4", 1}, {"s5", 15}, {"s6", -5}, {"s7", 1}}),
      copy_prob({2, 3, 2, 3, 2, 3, 2}, K::U8, {{"s0", 1}, {"s1", 2}, {"s2", 6}, {"s3", 12}, {"s4", 36}, {"s5", 72}, {"s6", 216}}),
      copy_prob({4, 9}, K::F64, {{"s0", 9}, {"s1", -1}}),        // 8-byte, reversed inner axis
      copy_prob({3, 70}, K::U8, {{"s0", 75}, {"s1", 1}, {"off", 2}}),   // lines of bytes
      copy_prob({7, 30}, K::BF16, {{"s0", 31}, {"s1", 1}, {"off", 1}}),  // 16-bit at odd offsets
      copy_prob({5, 7}, K::F32, {{"o0", 1}, {"o1", 5}}),         // a transposed output
      copy_prob({5, 7}, K::F16, {{"o0", -7}, {"o1", 1}}),        // rows reversed in the output
      copy_prob({3, 20000}, K::F32, {{"s0", 20001}, {"s1", 1}}),  // rows split into chunks
      copy_prob({500, 3}, K::F32, {{"s0", 5}, {"s1", 1}}),        // short rows, many per group
      copy_prob({3, 4, 50}, K::I64, {{"s0", 0}, {"s1", 50}, {"s2", 1}}),
  };
  d.bench_problems = {copy_prob({64, 128, 128}, K::F32, {{"s0", 128 * 130}, {"s1", 130}, {"s2", 1}}),
                      copy_prob({8, 64, 56, 56}, K::F32, {{"s0", 0}, {"s1", 3136}, {"s2", 56}, {"s3", 1}})};
  register_op(std::move(d));
}

// concat: dims = the output shape (rank 1..8), attrs axis (default 0) and
// parts (default 3, 1..8): input i has the output's shape with
// size/parts (+1 for the first size % parts) along the axis.
struct Concat {
  size_t axis;
  std::vector<int64_t> sizes;
};
Concat concat_of(const Problem& p) {
  if (p.dims.empty() || p.dims.size() > 8) throw std::invalid_argument("dims: the output shape, rank 1..8");
  const int64_t axis = p.attr("axis", 0), parts = p.attr("parts", 3);
  if (axis < 0 || size_t(axis) >= p.dims.size()) throw std::invalid_argument("axis must be 0..rank-1");
  if (parts < 1 || parts > 8) throw std::invalid_argument("parts must be 1..8");
  Concat c{size_t(axis), {}};
  const int64_t D = p.dims[c.axis];
  for (int64_t i = 0; i < parts; ++i) c.sizes.push_back(D / parts + (i < D % parts ? 1 : 0));
  return c;
}

std::vector<int64_t> part_shape(const Problem& p, const Concat& c, size_t i) {
  std::vector<int64_t> s = p.dims;
  s[c.axis] = c.sizes[i];
  return s;
}

Plan concat_plan(const Problem& p, const MoveVariant& v) {
  const Concat c = concat_of(p);
  const std::vector<int64_t> os = move::contiguous_strides(p.dims);
  Plan pl;
  int64_t start = 0;
  for (size_t i = 0; i < c.sizes.size(); ++i) {
    StridedCopy s;
    s.elem_bytes = elem_bytes(p);
    s.shape = part_shape(p, c, i);
    s.in_strides = move::contiguous_strides(s.shape);
    s.out_offset = start * os[c.axis];
    s.out_strides = os;
    plan_strided_copy(pl, s, int(i), int(c.sizes.size()), v);
    start += c.sizes[i];
  }
  return pl;
}

Problem concat_prob(std::vector<int64_t> dims, int64_t axis, int64_t parts, ir::ScalarKind dt) {
  Problem p = copy_prob(std::move(dims), dt, {{"axis", axis}, {"parts", parts}});
  p.op = "concat";
  return p;
}

void register_concat() {
  using K = ir::ScalarKind;
  OpDef d;
  d.name = "concat";
  d.description = "y = concat(x0, x1, ...) along an axis: one strided copy per part into its offset of y";
  d.dims_help = "output shape (rank 1..8)";
  d.attrs_help = "axis=k (default 0) parts=1..8 (default 3; the axis split as evenly as it goes, larger parts first)";
  d.validate = [](const Problem& p) { concat_plan(p, MoveVariant{}); };
  d.inputs = [](const Problem& p) {
    const Concat c = concat_of(p);
    std::vector<TensorSpec> v;
    for (size_t i = 0; i < c.sizes.size(); ++i) v.push_back(any_tensor("x" + std::to_string(i), p.dtype, part_shape(p, c, i)));
    return v;
  };
  d.outputs = [](const Problem& p) { return std::vector<TensorSpec>{any_tensor("y", p.dtype, p.dims)}; };
  set_move_variants(d);
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps&) { return concat_plan(p, move_variant(v)); };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    // The plain definition: each output element from the part its axis coordinate falls in.
    const Concat c = concat_of(p);
    const size_t eb = size_t(elem_bytes(p));
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < c.axis; ++a) outer *= p.dims[a];
    for (size_t a = c.axis + 1; a < p.dims.size(); ++a) inner *= p.dims[a];
    auto* y = static_cast<uint8_t*>(out[0]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0, part = 0, start = 0; k < p.dims[c.axis]; ++k) {
        while (k >= start + c.sizes[size_t(part)]) start += c.sizes[size_t(part++)];
        const auto* x = static_cast<const uint8_t*>(in[size_t(part)]);
        const size_t src = size_t((o * c.sizes[size_t(part)] + k - start) * inner) * eb;
        std::memcpy(y + size_t((o * p.dims[c.axis] + k) * inner) * eb, x + src, size_t(inner) * eb);
      }
  };
  d.tolerance = [](const Problem&) { return 0.0; };
  d.bytes = [](const Problem& p) { return 2.0 * double(numel(p.dims)) * elem_bytes(p); };
  d.test_problems = {concat_prob({5, 37}, 1, 3, K::F32), concat_prob({7, 2, 9}, 0, 2, K::U8),
                     concat_prob({3, 2}, 1, 3, K::F16),  // a part of size 0
                     concat_prob({100}, 0, 4, K::F64), concat_prob({2, 3, 5, 4, 3}, 3, 3, K::BF16),
                     concat_prob({2, 70, 33}, 2, 2, K::U8)};
  d.bench_problems = {concat_prob({8, 256, 56, 56}, 1, 2, K::F32)};
  register_op(std::move(d));
}

}  // namespace

void register_copy_ops() {
  register_strided_copy();
  register_concat();
}

}  // namespace kgen::ops::move_ops
