// Elementwise map kernels over any unary, binary or compare IR op, generated
// from the op lists in ir/ops.h: one kernel per (op, dtype). They are the
// building block for the elementwise op library and the per-op conformance
// suite (every op on every backend against the interpreter, as ggml's
// test-backend-ops does).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::ops {

// y[i] = op(x[i]) (unary ops).
ir::Kernel unary_map(ir::Op op, ir::Type dtype);
// z[i] = op(x[i], y[i]) (binary ops; compare ops write a bool buffer).
ir::Kernel binary_map(ir::Op op, ir::Type dtype);
// The kernel for an op of either arity.
ir::Kernel elementwise_map(ir::Op op, ir::Type dtype);

// Launch and data for n elements; input ranges keep every op defined
// (e.g. integer divisors are never zero).
ir::Workload elementwise_workload(ir::Op op, ir::Type dtype, int64_t n);

struct OpDtype {
  ir::Op op;
  ir::Type dtype;
};
// Every (unary/binary/compare op, scalar dtype) pair the op's domain accepts.
std::vector<OpDtype> all_elementwise_cases();

}  // namespace kgen::ops
