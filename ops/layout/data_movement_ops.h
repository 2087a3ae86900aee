// The data-movement kernels (ops/layout/data_movement.h) as OpDefs of the
// layout family, for the tests, the conformance suite and `kgen op|bench`:
// "strided_copy", "concat", "gather", "pad", "resize" (problem encodings in
// each OpDef's dims_help / attrs_help). Shared here: the variant space
// (impl 0: one work-item per element, 1: the CPU's row walk) and inputs of
// random bits for any dtype.
#pragma once
#include <string>
#include <vector>

#include "ops/core/op.h"
#include "ops/layout/data_movement.h"

namespace kgen::ops {

// Registers the five OpDefs (called by register_layout_ops).
void register_data_movement_ops();

namespace move_ops {

void register_copy_ops();  // strided_copy, concat
void register_gather_op();
void register_pad_op();
void register_resize_op();

// The element size of the problem's dtype (1, 2, 4 or 8 bytes).
int elem_bytes(const Problem& p);
// A tensor whose random inputs span the dtype (integers over their whole
// range, floats in [-1, 1]).
TensorSpec any_tensor(std::string name, ir::ScalarKind k, std::vector<int64_t> shape);
// Per-axis integer attributes prefix0, prefix1, ... (dflt where absent).
std::vector<int64_t> axis_attrs(const Problem& p, const std::string& prefix, size_t rank, int64_t dflt);
bool has_axis_attr(const Problem& p, const std::string& prefix, size_t rank);

// The OpDef's variant space and choice: impl 0 / 1 (rows form, CPU only).
void set_move_variants(OpDef& d);
MoveVariant move_variant(const Variant& v);

}  // namespace move_ops
}  // namespace kgen::ops
