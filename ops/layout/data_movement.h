// Data-movement kernels for a graph executor: Slice, Expand, Concat, Split,
// Tile and DepthToSpace (strided copies), Gather, Pad and Resize. A builder
// struct describes one move; its plan function appends the move's kernel
// launch to an ops::Plan (as fusion::plan_chain does), reading and writing
// the buffers in the given slots.
//
//   StridedCopy c;                       // Slice x[1:, ::-2] of a 5 x 8 float tensor
//   c.elem_bytes = 4;
//   c.shape = {4, 4};
//   c.in_offset = 1 * 8 + 7;             // element x[1, 7]
//   c.in_strides = {8, -2};
//   plan_strided_copy(plan, c, /*in_slot=*/0, /*out_slot=*/1, move_variant_for(caps));
//
// Copies move bits (elements as 1, 2 or 4-byte words; 8-byte ones as word
// pairs), so every dtype works. Sizes and strides are in elements; buffers
// are flat. Malformed descriptions throw std::invalid_argument naming what is
// wrong. Each move also has a plain C++ reference (the tests' spec) and an
// OpDef of the "layout" family (ops/layout/data_movement_ops.h) for tests
// and benchmarks.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "ops/core/op.h"

namespace kgen::ops {

// How the kernels run. rows (the CPU's form): one work-item per group walks
// a block of output rows (the last axis), `chunk` elements per group, in
// 16-lane lines where a row is a contiguous run; else (the GPU's) one
// work-item per output element, `wg` per group.
struct MoveVariant {
  bool rows = false;
  int64_t chunk = 8192;
  int wg = 64;
  bool wide = false;  // u64 index arithmetic even where u32 does (sizes past 2^31 need it; tests force it)
};
MoveVariant move_variant_for(const TargetCaps& caps);

// out[out_offset + Σ c_k·out_strides[k]] = in[in_offset + Σ c_k·in_strides[k]]
// for every coordinate c of `shape` (rank 0..8; a size 0 copies nothing).
// in_strides: signed (negative: a reversed axis, 0: a broadcast one);
// out_strides: empty = contiguous. Slice: an offset and steps; Expand and
// Tile: 0 strides; Concat/Split: output/input offsets with the full tensor's
// strides; DepthToSpace: permuted strides. Every address must be >= 0 (and
// in the buffer: not checked, the plan does not know the buffers' sizes).
// Output addresses must not repeat (a broadcast output is undefined).
struct StridedCopy {
  int elem_bytes = 4;  // 1, 2, 4 or 8
  std::vector<int64_t> shape;
  int64_t in_offset = 0;
  std::vector<int64_t> in_strides;
  int64_t out_offset = 0;
  std::vector<int64_t> out_strides;
};
void plan_strided_copy(Plan& pl, const StridedCopy& c, int in_slot, int out_slot, const MoveVariant& v);
void reference_strided_copy(const StridedCopy& c, const void* in, void* out);

// out[o, j, r] = data[o, idx[j], r] (+ axis_len where idx[j] < 0) for data
// (outer, axis_len, inner), idx n_indices values, out (outer, n_indices,
// inner). An index outside [-axis_len, axis_len) reads nothing: its output
// row is written with zero bytes (ONNX leaves it undefined).
struct Gather {
  int elem_bytes = 4;
  int64_t outer = 1, axis_len = 1, inner = 1, n_indices = 1;
  ir::ScalarKind index_kind = ir::ScalarKind::I64;  // I32 or I64
};
void plan_gather(Plan& pl, const Gather& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v);
void reference_gather(const Gather& g, const void* data, const void* idx, void* out);

// ONNX Pad: out axis k = pads_begin[k] + in_shape[k] + pads_end[k]. A
// negative pad crops that side first (as ONNX Runtime does); the rest is
// padded as numpy.pad does: Constant (value_bits, the element's bit
// pattern), Reflect (mirrored without repeating the edge, periodically past
// the size; a single element repeats), Edge (the edge repeated), Wrap
// (periodic). Reflect, Edge and Wrap need an element left on a padded axis.
struct Pad {
  enum Mode { Constant, Reflect, Edge, Wrap };
  int elem_bytes = 4;
  std::vector<int64_t> in_shape;  // rank 0..8
  std::vector<int64_t> pads_begin, pads_end;
  Mode mode = Constant;
  uint64_t value_bits = 0;
};
std::vector<int64_t> pad_out_shape(const Pad& p);
void plan_pad(Plan& pl, const Pad& p, int in_slot, int out_slot, const MoveVariant& v);
void reference_pad(const Pad& p, const void* in, void* out);

// ONNX Resize (opsets 11-19; onnx/reference/ops/op_resize.py is the spec),
// without roi, antialias or tf_crop_and_resize. An output coordinate maps to
// the input through scales[k] (empty: out/in), n-linearly (separably) over
// every axis but those it maps onto themselves (scale 1, the same size and
// a transform that keeps coordinates: tf_half_pixel_for_nn does not). The
// kernels take the coordinates in f32, as ONNX Runtime does (the reference
// in f64), and accumulate in f32: weights are good to about ulp(input
// coordinate), and Nearest may round the other way where the scale is not a
// short binary fraction (asymmetric 10 -> 6: output 4 maps to 7 in f64,
// 6.9999995 in f32). Cubic interpolates on at most 3 axes (4^3 taps).
// Indices are u32 (sizes below 2^31; MoveVariant::wide does not apply).
struct Resize {
  enum Mode { Nearest, Linear, Cubic };
  enum Coord { HalfPixel, Asymmetric, AlignCorners, PytorchHalfPixel, TfHalfPixelForNn, HalfPixelSymmetric };
  enum NearestRound { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
  ir::ScalarKind dtype = ir::ScalarKind::F32;  // f32, f16, bf16
  std::vector<int64_t> in_shape, out_shape;   // rank 1..6
  std::vector<double> scales;
  Mode mode = Nearest;
  Coord coord = HalfPixel;
  NearestRound nearest = RoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;  // Nearest: 0 where the picked element is outside
  double extrapolation_value = 0;  // tf_crop_and_resize only: unused here
};
void plan_resize(Plan& pl, const Resize& r, int in_slot, int out_slot, const MoveVariant& v);
// Throws std::invalid_argument naming what is wrong with `r` (plan_resize checks too).
void check_resize(const Resize& r);
void reference_resize(const Resize& r, const void* in, void* out);

}  // namespace kgen::ops
