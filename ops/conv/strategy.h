// The convolution family's variant choice on every target: conv2d's form and
// tile, and the pooling ops' forms (the rules and their reasons are in
// strategy.cpp). The candidate lists, the tuning space, stay with each op.
#pragma once
#include <cstdint>

#include "ops/core/op.h"

namespace kgen::ops {

// conv2d's default variant (OpDef::heuristic).
Variant conv2d_strategy(const Problem& p, const TargetCaps& caps);
// maxpool2d's and avgpool2d's default variant.
Variant window_pool_strategy(const Problem& p, const TargetCaps& caps);
// global_avgpool's default variant.
Variant global_avgpool_strategy(const Problem& p, const TargetCaps& caps);

// Winograd's chunk of V and M in KiB where the variant sets no ck (the plan
// and the candidate list read it).
int64_t conv_winograd_chunk_kib(const TargetCaps& caps);

}  // namespace kgen::ops
