// Workgroup reductions for the GPU forms of the ops (row ops, GEMVs,
// reductions per row).
#pragma once
#include <cstdint>
#include <utility>

#include "dsl/dsl.h"

namespace kgen::ops {

enum class GroupCombine { Sum, Max, Min };

// The workgroup's sum, max or min of v, returned to every work-item. With
// subgroups: one subgroup reduction, the subgroups' results through shared
// memory (subgroup i holds work-items [i·size, (i+1)·size), as on CUDA and
// in the interpreter), and each work-item folds those few values itself (no
// second broadcast). Without: a tree over shared memory. `sh` holds wg
// values of v's type (wg a power of two); the closing barrier lets the next
// reduction reuse it. Every work-item of the group must call it (it has
// barriers).
dsl::Value group_reduce(const dsl::Value& v, GroupCombine c, const dsl::Array& sh, uint32_t wg, bool subgroups);

// The workgroup's argmax over (v, idx) pairs: the largest v and, among equal
// ones, the smallest idx (an i32; the first occurrence when idx is the
// element's position), both returned to every work-item. With subgroups the
// pair is two subgroup reductions (the max, then the least index holding
// it). `sv` (f32) and `si` (i32) hold wg values; as group_reduce otherwise.
std::pair<dsl::Value, dsl::Value> group_argmax(const dsl::Value& v, const dsl::Value& idx, const dsl::Array& sv,
                                               const dsl::Array& si, uint32_t wg, bool subgroups);

}  // namespace kgen::ops
