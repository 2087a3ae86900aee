// The tensor-op family: elementwise ops with numpy broadcasting and dtype
// casts ("ew_unary", "ew_binary", "ew_ternary"), fused elementwise chains
// ("ew_chain", built on ops/fusion.h), reductions ("reduce", ops/reduce.h),
// strided transposes ("transpose", ops/transpose.h) and rotary embeddings
// ("rope", ops/rope.h).
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

#include "ops/fusion.h"
#include "ops/op.h"

namespace kgen::ops {

void register_tensor_ops();  // every op of the family

// The chain of an elementwise problem (ew_unary/ew_binary/ew_ternary/ew_chain).
fusion::Chain elementwise_chain(const Problem& p);
// The same chain as a sequence of single-op kernels with f32 temporaries
// (what running the ops one by one costs: the baseline of fusion).
void plan_unfused(Plan& pl, const fusion::Chain& c, const std::vector<int>& in_slots, int out_slot,
                  const fusion::ChainVariant& v);

// Registration of the family's parts (called by register_tensor_ops).
void register_elementwise_ops();
void register_reduce_ops();
void register_transpose_ops();
void register_rope_ops();

}  // namespace kgen::ops
