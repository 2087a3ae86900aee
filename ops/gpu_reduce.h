// Workgroup reductions for the GPU forms of the ops (row ops, GEMVs).
#pragma once
#include <cstdint>

#include "dsl/dsl.h"

namespace kgen::ops {

// The workgroup's sum or max of v, returned to every work-item. With
// subgroups: one subgroup reduction, the subgroups' results through shared
// memory (subgroup i holds work-items [i·size, (i+1)·size), as on CUDA and
// in the interpreter), and each work-item folds those few values itself (no
// second broadcast). Without: a tree over shared memory. `sh` holds wg f32
// (wg a power of two); the closing barrier lets the next reduction reuse it.
// Every work-item of the group must call it (it has barriers).
dsl::Value group_reduce(const dsl::Value& v, bool is_max, const dsl::Array& sh, uint32_t wg, bool subgroups);

}  // namespace kgen::ops
