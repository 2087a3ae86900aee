// Lowering pieces the reduce, normalisation and loss handlers share: a
// reduction over any set of axes in any dtype (the reduce op for f32 sums,
// maxima, minima and means; a tree of elementwise chains otherwise), axis
// permutations, and fused chains built input by input.
#pragma once
#include <vector>

#include "graph/lower.h"

namespace kgen::graph {

enum class Combine { Sum, Max, Min, Mean, Prod };

// dst = src (shape x, dtype k) reduced over the axes marked in `reduced`;
// dst holds the kept axes in order (keepdims' layout). Non-adjacent axes are
// permuted together first. Bool takes Max (any) and Min (all) only.
void lower_reduce_axes(LowerCtx& c, int src, const Shape& x, ScalarKind k, const std::vector<bool>& reduced, Combine how,
                       int dst);

// x with its axes permuted (output axis i = input axis perm[i]), any dtype.
void lower_permute(LowerCtx& c, int src, const Shape& x, ScalarKind k, const std::vector<int64_t>& perm, int dst);

// x with `reduced` axes set to 1: a reduction's result, broadcastable against x.
Shape keepdims_shape(const Shape& x, const std::vector<bool>& reduced);

int temp_of(LowerCtx& c, const Shape& s, ScalarKind k);

// A fused elementwise chain: add inputs (slots with their dtype and shape,
// broadcast against the output), then write the expression.
struct MapChain {
  ops::fusion::Chain chain;
  std::vector<int> slots;
  ops::fusion::Expr in(int slot, ScalarKind k, const Shape& shape);
  void write(LowerCtx& c, const char* name, const ops::fusion::Expr& out, ScalarKind out_k, const Shape& shape, int dst);
};

}  // namespace kgen::graph
