// Kernels: kgen::dsl records C++ lambdas as kgen IR (an ir::Kernel), and the
// reference interpreter (ir::interpret) defines what a kernel computes, so
// device results are checked against it.
#pragma once
#include <cstdint>
#include <vector>

#include "dsl/dsl.h"
#include "ir/interpreter.h"
#include "ir/workload.h"

namespace kgen {

// A 1-D launch covering `items` work-items in workgroups of `group` (the last
// group is partial when `group` does not divide `items`: kernels bound-check).
inline ir::LaunchDims grid_1d(uint64_t items, uint32_t group) {
  ir::LaunchDims d;
  d.workgroup = {group, 1, 1};
  d.grid = {uint32_t(items == 0 ? 1 : (items + group - 1) / group), 1, 1};
  return d;
}

// `host` as an interpreter buffer; it must outlive the interpret() call.
template <class T>
ir::InterpBuffer interp_buffer(std::vector<T>& host) {
  return {host.data(), host.size() * sizeof(T)};
}

}  // namespace kgen
