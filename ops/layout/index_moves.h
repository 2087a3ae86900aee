// Moves addressed by an index tensor, for a graph executor: ONNX's
// GatherElements, GatherND, ScatterElements and ScatterND. Like the moves of
// ops/layout/data_movement.h each is a builder struct, a plan function
// appending its kernel launches to an ops::Plan (reading and writing the
// buffers in the given slots), and a plain C++ reference.
//
//   GatherElements g;                    // y[i, j] = x[idx[i, j], j] of a 5 x 3 float x
//   g.elem_bytes = 4;
//   g.data_shape = {5, 3};
//   g.index_shape = {2, 3};
//   g.axis = 0;
//   plan_gather_elements(plan, g, /*data=*/0, /*indices=*/1, /*out=*/2, move_variant_for(caps));
//
// Indices are int32 or int64 (ScalarKind I32 / I64); a negative one counts
// from the end of its axis. An index outside [-len, len) reads nothing (the
// gathers write zero bytes there) and writes nothing (the scatters skip
// it); ONNX leaves both undefined. Gathers move bits (every element size);
// scatters without a reduction too, with one they compute in the dtype
// (f16 and bf16 through f32). Shapes are row-major, buffers flat. Malformed
// descriptions throw std::invalid_argument naming what is wrong. The OpDefs
// "gather_elements", "gather_nd", "scatter_elements" and "scatter_nd" of the
// layout family (register_index_move_ops) carry their test problems.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/layout/data_movement.h"

namespace kgen::ops {

// y[c] = data[c with c[axis] replaced by idx[c]] for every coordinate c of
// index_shape (the output's shape). data and indices share a rank (1..8);
// index_shape[k] <= data_shape[k] on every axis but `axis`.
struct GatherElements {
  int elem_bytes = 4;  // 1, 2, 4 or 8
  std::vector<int64_t> data_shape, index_shape;
  int64_t axis = 0;
  ir::ScalarKind index_kind = ir::ScalarKind::I64;
};
std::vector<int64_t> gather_elements_out_shape(const GatherElements& g);  // index_shape, once checked
void plan_gather_elements(Plan& pl, const GatherElements& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v);
void reference_gather_elements(const GatherElements& g, const void* data, const void* idx, void* out);

// indices (b..., q..., k): each k-tuple picks a slice data[b..., i_1..i_k, :]
// of the batch its leading batch_dims coordinates name. Output:
// index_shape[:-1] + data_shape[batch_dims + k:].
struct GatherND {
  int elem_bytes = 4;
  std::vector<int64_t> data_shape, index_shape;  // index_shape.back() = k, 1..rank - batch_dims
  int64_t batch_dims = 0;
  ir::ScalarKind index_kind = ir::ScalarKind::I64;
};
std::vector<int64_t> gather_nd_out_shape(const GatherND& g);
void plan_gather_nd(Plan& pl, const GatherND& g, int data_slot, int idx_slot, int out_slot, const MoveVariant& v);
void reference_gather_nd(const GatherND& g, const void* data, const void* idx, void* out);

// How a scatter combines an update with the element it lands on.
enum class ScatterReduce { None, Add, Mul, Max, Min };

// out = data; then for each coordinate c of index_shape, in row-major
// order: out[c with c[axis] = idx[c]] = reduce(it, updates[c]). updates has
// index_shape; the order makes repeated targets well defined (the last
// write wins without a reduction).
struct ScatterElements {
  ir::ScalarKind dtype = ir::ScalarKind::F32;  // any; a reduction needs a number (not bool)
  std::vector<int64_t> data_shape, index_shape;
  int64_t axis = 0;
  ir::ScalarKind index_kind = ir::ScalarKind::I64;
  ScatterReduce reduce = ScatterReduce::None;
};
void check_scatter_elements(const ScatterElements& s);  // throws naming what is wrong
void plan_scatter_elements(Plan& pl, const ScatterElements& s, int data_slot, int idx_slot, int upd_slot, int out_slot,
                           const MoveVariant& v);
void reference_scatter_elements(const ScatterElements& s, const void* data, const void* idx, const void* upd, void* out);

// out = data; then for each k-tuple t of indices (q..., k), in order:
// out[t, :] = reduce(it, updates[q..., :]). updates: index_shape[:-1] +
// data_shape[k:].
struct ScatterND {
  ir::ScalarKind dtype = ir::ScalarKind::F32;
  std::vector<int64_t> data_shape, index_shape;  // index_shape.back() = k, 1..rank
  ir::ScalarKind index_kind = ir::ScalarKind::I64;
  ScatterReduce reduce = ScatterReduce::None;
};
std::vector<int64_t> scatter_nd_updates_shape(const ScatterND& s);
void plan_scatter_nd(Plan& pl, const ScatterND& s, int data_slot, int idx_slot, int upd_slot, int out_slot, const MoveVariant& v);
void reference_scatter_nd(const ScatterND& s, const void* data, const void* idx, const void* upd, void* out);

// The four OpDefs (idempotent; the layout family registers them).
void register_index_move_ops();

}  // namespace kgen::ops
