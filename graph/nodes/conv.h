// The conv2d lowering the float and the quantized convolutions share.
#pragma once
#include "graph/lower.h"

namespace kgen::graph {

// conv2d of the node's geometry (input 0's shape, input 1's weight shape,
// the node's attributes) on f32 slots; w_const: the weights' data when
// constant (packed once into the layout the chosen kernel reads).
struct ConvArgs {
  int x = -1, w = -1, bias = -1, out = -1;
  const Tensor* w_const = nullptr;
  bool relu = false;
};
void plan_conv(LowerCtx& c, const ConvArgs& a);

}  // namespace kgen::graph
