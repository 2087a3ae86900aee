// The kernel side of ops/core/op.h's wrapped_grid: a GPU grid axis holds 65535
// workgroups, so a long run of groups is laid out as x × y, and a kernel
// reads its flat group number back from the two axes.
#pragma once

#include "dsl/dsl.h"

namespace kgen::ops {

// group_id(axis) + group_id(axis + 1) · num_groups(axis), as u32.
inline dsl::Value wrapped_group_id(int axis = 0) {
  return dsl::group_id(axis) + dsl::group_id(axis + 1) * dsl::num_groups(axis);
}

}  // namespace kgen::ops
