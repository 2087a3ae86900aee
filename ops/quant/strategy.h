// The quantized-weight family's untuned variant choices (its OpDefs'
// heuristics) on every target, CPU and GPU: the one place in ops/quant that
// reads the CPU's identity (TargetCaps::cpu). The candidate lists, which
// `kgen tune` searches, stay with the OpDefs (ops/quant/ops.cpp).
#pragma once
#include "ops/core/op.h"
#include "ops/quant/problem.h"

namespace kgen::ops::quant {

Variant dequantize_heuristic(const Problem& p, const TargetCaps& caps);
Variant quantize_heuristic(const Problem& p, const TargetCaps& caps);
Variant qmatmul_heuristic(const Problem& p, const TargetCaps& caps);

// The bf16 matrix-tile prefill's default blocking (impl=7), which its
// candidates vary: every 32-row panel of X per work-item up to 16, up to 8
// blocks of 32 rows of W (fewer where the threads would lack 4 work-items
// each), K in slices of 256.
Variant tile_bf16_variant(const QShape& s, const TargetCaps& caps);

}  // namespace kgen::ops::quant
