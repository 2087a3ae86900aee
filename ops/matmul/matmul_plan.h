// The matmul op's plan with C anywhere and an epilogue (ops/matmul/ops.cpp,
// ops/matmul/epilogue_plan.cpp): what plan_matmul builds on.
#pragma once
#include <cstddef>

#include "ops/core/op.h"
#include "ops/matmul/plan.h"

namespace kgen::ops {

// Where the plan writes C: its slot among the op's nio tensors (A and B are
// slots 0 and 1), and the epilogue the launch storing C applies (null: C
// as summed). Only with a variant for which epilogue_fuses holds.
struct MatmulOut {
  int c = 2;
  size_t nio = 3;
  const EpilogueUse* eu = nullptr;
};
void plan_matmul_into(Plan& pl, const Problem& p, const Variant& v, const TargetCaps& caps, const MatmulOut& o);

// Does the matmul variant v store C through a launch that applies an
// epilogue with output type `out` (a GEMM, GEMV, K-split sum, GPU tile or
// GPU GEMV)?
bool epilogue_fuses(const Variant& v, ir::ScalarKind out);

}  // namespace kgen::ops
