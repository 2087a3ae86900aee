// The conv2d lowering the float and the quantized convolutions share.
#pragma once
#include <optional>

#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/conv/conv.h"

namespace kgen::graph {

// conv2d of the node's geometry (input 0's shape, input 1's weight shape,
// the node's attributes) on f32 slots; w_const: the weights' data when
// constant (packed once into the layout the chosen kernel reads); ep: a
// fused epilogue (ops/conv/conv.h) over the conv's f32 result, its inputs'
// slots in ep_slots, `out` then of its type.
struct ConvArgs {
  int x = -1, w = -1, bias = -1, out = -1;
  const Tensor* w_const = nullptr;
  bool relu = false;
  const ops::ConvEpilogue* ep = nullptr;
  std::vector<int> ep_slots = {};
};
void plan_conv(LowerCtx& c, const ConvArgs& a);

// A 1-D or 2-D Conv-like node's output as the epilogue's [N, OC, spatial]
// view; null for other ranks.
std::optional<ProductView> conv_view(const Shape& out);

// 3-D windows (graph/nodes/conv_more.cpp), composed from the 2-D kernels:
// the output shape, Conv (depth taps folded into conv2d's channels), pooling
// (H×W, then depth).
Shape window3d_out(const InferCtx& c, const Shape& x, std::vector<int64_t> kernel, int64_t channels);
void lower_conv3d(LowerCtx& c, const ConvArgs& a);
void lower_pool3d(LowerCtx& c);

}  // namespace kgen::graph
