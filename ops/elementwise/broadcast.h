// The tensor-op family: elementwise ops with numpy broadcasting and dtype
// casts ("ew_unary", "ew_binary", "ew_ternary"), fused elementwise chains
// ("ew_chain", built on ops/elementwise/fusion.h), reductions ("reduce", ops/reduce/reduce.h),
// strided transposes ("transpose", ops/layout/transpose.h) and rotary embeddings
// ("rope", ops/attention/rope.cpp).
//
// Elementwise problems: dims = the output shape (rank 1..6); dtype = the
// inputs' type (f32, f16, bf16; ew_typed: any); attrs:
//   fn      the function (index; see the op's attrs_help)
//   out     output type: 0 = dtype, 1 = f32, 2 = f16, 3 = bf16 (ew_typed: 0 =
//           the expression's kind, else 1 + ir::ScalarKind)
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

// The chain of an elementwise problem (ew_unary/ew_binary/ew_ternary/ew_chain/ew_typed).
fusion::Chain elementwise_chain(const Problem& p);
// Input k's ('a', 'b', 'c') shape: the output's with the axes of its "b<k>"
// mask 1, then the leading axes beyond its rank ("r<k>") dropped.
std::vector<int64_t> elementwise_input_shape(const Problem& p, char k);
// The same chain as a sequence of single-op kernels with temporaries of each
// node's kind (what running the ops one by one costs: the baseline of fusion).
void plan_unfused(Plan& pl, const fusion::Chain& c, const std::vector<int>& in_slots, int out_slot,
                  const fusion::ChainVariant& v);
// What the elementwise ops share: plan (fused or not), candidates, heuristic,
// reference, outputs, flops and bytes, all through elementwise_chain; the
// inputs and tolerance suit ew_unary/binary/ternary/chain.
OpDef elementwise_def(const std::string& name, const std::string& desc, const std::string& attrs_help);

// "ew_typed" (ops/elementwise/typed.cpp): fused chains over every scalar
// kind (integer wrap, division, casts, quantize steps, comparisons, bool
// logic), for testing the typed chains on every device.
fusion::Chain typed_chain(const Problem& p);
OpDef typed_elementwise_def();

}  // namespace kgen::ops
