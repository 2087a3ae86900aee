// The tensor-op family: elementwise ops with numpy broadcasting and dtype
// casts ("ew_unary", "ew_binary", "ew_ternary"), fused elementwise chains
// ("ew_chain", built on ops/elementwise/fusion.h), reductions ("reduce", ops/reduce/reduce.h),
// strided transposes ("transpose", ops/layout/transpose.h) and rotary embeddings
// ("rope", ops/attention/rope.cpp).
//
// Elementwise problems: dims = the output shape (rank 1..6); dtype = the
// inputs' type (f32, f16, bf16); attrs:
//   fn      the function (index; see the op's attrs_help)
//   out     output type: 0 = dtype, 1 = f32, 2 = f16, 3 = bf16
//   ba bb bc  per input (a, b, c): bitmask of output axes (bit i = axis i,
//           counted from the left) along which the input has size 1
//   ra rb rc  per input: its rank (default: the output's); the missing
//           leading axes broadcast (numpy's rank mismatch)
#pragma once
#include <string>
#include <vector>

#include "ops/elementwise/fusion.h"
#include "ops/core/op.h"

namespace kgen::ops {

// The chain of an elementwise problem (ew_unary/ew_binary/ew_ternary/ew_chain).
fusion::Chain elementwise_chain(const Problem& p);
// The same chain as a sequence of single-op kernels with f32 temporaries
// (what running the ops one by one costs: the baseline of fusion).
void plan_unfused(Plan& pl, const fusion::Chain& c, const std::vector<int>& in_slots, int out_slot,
                  const fusion::ChainVariant& v);

}  // namespace kgen::ops
