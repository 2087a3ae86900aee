// The launch shapes the data-movement kernels share (ops/layout/data_movement.h):
// the output seen as rows × inner (its last axis), walked either in blocks
// of rows per group (the CPU's form) or one element per work-item (the
// GPU's), with index arithmetic in u32 or, where sizes need it, u64.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/core/op.h"
#include "ops/layout/data_movement.h"

namespace kgen::ops::move {

// u32 where every index the kernel forms stays below 2^31, else u64.
// Unsigned arithmetic wraps, so negative strides passed as their two's
// complement still land on the right (non-negative) address.
ir::Type index_type(int64_t max_index);
// The same, u64 wherever the variant asks for wide indices.
ir::Type index_type(int64_t max_index, const MoveVariant& v);
// A scalar slot holding v in the index type (negative v: two's complement).
uint64_t index_slot(ir::Type it, int64_t v);
// The unsigned word type of 1, 2 or 4 bytes.
ir::Type word_type(int bytes);
// Row-major strides of a shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
// The product of shape[from, to): the elements of those axes.
int64_t numel(const std::vector<int64_t>& shape, size_t from = 0, size_t to = SIZE_MAX);

// The walk's scalars, declared first in the kernel (Walk's constructor), and
// its launch: grid, workgroup and those scalars, appended to `s`.
void set_launch(Step& s, const MoveVariant& v, ir::Type it, int64_t rows, int64_t inner);

class Walk {
 public:
  // Declares the walk's scalars and fixes the workgroup size.
  Walk(dsl::KernelBuilder& kb, ir::Type it, const MoveVariant& v);
  // Rows form: body(coords, row, c0, c1) for each row of the group's block,
  // with the group's columns [c0, c1) and the row's coordinates over `dims`
  // (outermost first; the rows are their product). The coordinates step
  // from row to row with a carry: short rows pay no divisions. begin(c0,
  // c1), where given, runs once per group before its rows.
  using RowBody = std::function<void(const std::vector<dsl::Value>&, const dsl::Value&, const dsl::Value&, const dsl::Value&)>;
  using GroupBegin = std::function<void(const dsl::Value&, const dsl::Value&)>;
  void for_rows(const std::vector<dsl::Value>& dims, const RowBody& body, const GroupBegin& begin = nullptr) const;
  // Element form: body(row, col) for the work-item's element.
  void for_element(const std::function<void(const dsl::Value&, const dsl::Value&)>& body) const;
  const dsl::Value& inner() const { return inner_; }

 private:
  ir::Type it_;
  int wg_;
  dsl::Value rows_, inner_, rows_per_group_, chunk_, nchunks_, groups_;
};

// The coordinates of flat index `i` over `dims` (outermost first; the
// first coordinate is not reduced modulo its size).
std::vector<dsl::Value> unflatten(const dsl::Value& i, const std::vector<dsl::Value>& dims);

// Rows form: copies the run [c0, c1) of x from xb to y from yb (both
// contiguous), in 16-lane lines and a scalar tail.
void copy_run(const dsl::Array& x, const dsl::Value& xb, const dsl::Array& y, const dsl::Value& yb, const dsl::Value& c0,
              const dsl::Value& c1);
// Rows form: fills y[yb + j] for j in [c0, c1): `line` (16 lanes) at
// c0, c0 + 16, ...; the scalar tail with at(j).
void fill_run(const dsl::Array& y, const dsl::Value& yb, const dsl::Value& c0, const dsl::Value& c1, const dsl::Value& line,
              const std::function<dsl::Value(const dsl::Value&)>& at);

}  // namespace kgen::ops::move
