// The select family: "topk", the k largest (or smallest) values along one
// axis of a tensor and their int64 indices, sorted, ties broken by the lower
// index (onnxruntime's order).
//
// The problem is the tensor seen as outer × n × inner with the selection
// along n; values and indices are outer × k × inner.
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace kgen::ops {

// One TopK: sizes, dtype and direction.
struct TopK {
  ir::ScalarKind dtype = ir::ScalarKind::F32;
  int64_t outer = 1, n = 1, inner = 1, k = 1;
  bool largest = true;
};

// Fills values (dtype) and indices (int64) from x (host bytes).
void reference_topk(const TopK& t, const void* x, void* values, int64_t* indices);

// One work-item per (outer, inner) row: k selection passes over its n values
// (each takes the best value ranked after the previous pick), or with
// `insertion` one pass keeping the best k sorted in the outputs. Buffers x,
// values (dt), indices (u32 word pairs: int64 little-endian); scalars n,
// inner, k, rows (i32). Workgroup wg, wrapped grid.
ir::Kernel topk_kernel(ir::Type dt, bool largest, bool insertion, int wg);

void register_select_ops();  // "topk"

}  // namespace kgen::ops
