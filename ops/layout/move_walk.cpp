#include "ops/layout/move_walk.h"

#include <algorithm>
#include <stdexcept>

#include "ops/common/wrapped_group.h"

namespace kgen::ops::move {

using namespace kgen::dsl;

ir::Type index_type(int64_t max_index) { return max_index < (int64_t(1) << 31) ? u32 : u64; }
ir::Type index_type(int64_t max_index, const MoveVariant& v) { return v.wide ? u64 : index_type(max_index); }

uint64_t index_slot(ir::Type it, int64_t v) {
  return it == u32 ? ir::scalar_slot(uint32_t(uint64_t(v))) : ir::scalar_slot(uint64_t(v));
}

ir::Type word_type(int bytes) {
  switch (bytes) {
    case 1: return u8;
    case 2: return u16;
    case 4: return u32;
    default: throw std::logic_error("move::word_type: words are 1, 2 or 4 bytes");
  }
}

int64_t numel(const std::vector<int64_t>& shape, size_t from, size_t to) {
  int64_t n = 1;
  const size_t end = std::min(to, shape.size());  // hoisted: GCC's loop-bound warning on the SIZE_MAX default
  for (size_t a = from; a < end; ++a) n *= shape[a];
  return n;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;) s[a - 1] = s[a] * shape[a];
  return s;
}

namespace {

// The rows form's blocks: a group takes `chunk` columns of one row where
// rows are long, else whole rows, enough of them to make about `target`
// elements (short rows one per group would be all overhead).
struct Blocks {
  int64_t rows_per_group, chunk, nchunks, groups;
};
Blocks blocks(int64_t rows, int64_t inner, int64_t target) {
  target = std::max<int64_t>(16, target / 16 * 16);
  Blocks b;
  if (inner > target) {
    b.rows_per_group = 1;
    b.chunk = target;  // a multiple of 16: the lines of every chunk start on the row's line grid
  } else {
    b.rows_per_group = std::max<int64_t>(1, target / std::max<int64_t>(inner, 1));
    b.chunk = inner;
  }
  b.nchunks = (inner + b.chunk - 1) / b.chunk;
  b.groups = (rows + b.rows_per_group - 1) / b.rows_per_group * b.nchunks;
  return b;
}

}  // namespace

void set_launch(Step& s, const MoveVariant& v, ir::Type it, int64_t rows, int64_t inner) {
  std::vector<int64_t> vals;
  if (v.rows) {
    const Blocks b = blocks(rows, inner, v.chunk);
    s.dims.grid = wrapped_grid(b.groups);
    s.dims.workgroup = {1, 1, 1};
    vals = {rows, inner, b.rows_per_group, b.chunk, b.nchunks, b.groups};
  } else {
    s.dims.grid = wrapped_grid(int64_t(groups_for(rows * inner, v.wg)));
    s.dims.workgroup = {uint32_t(v.wg), 1, 1};
    vals = {rows, inner, rows * inner};
  }
  std::vector<uint64_t> walk;
  for (int64_t x : vals) walk.push_back(index_slot(it, x));
  s.scalars.insert(s.scalars.begin(), walk.begin(), walk.end());
}

Walk::Walk(KernelBuilder& kb, ir::Type it, const MoveVariant& v) : it_(it), wg_(v.rows ? 1 : v.wg) {
  if (!v.rows && (v.wg < 1 || v.wg > 1024)) throw std::invalid_argument("MoveVariant: wg must be 1..1024");
  rows_ = kb.scalar("rows", it);
  inner_ = kb.scalar("inner", it);
  if (v.rows) {
    rows_per_group_ = kb.scalar("rows_per_group", it);
    chunk_ = kb.scalar("chunk", it);
    nchunks_ = kb.scalar("nchunks", it);
    groups_ = kb.scalar("groups", it);
  } else {
    groups_ = kb.scalar("elements", it);  // the element form's items
  }
  kb.workgroup(uint32_t(wg_));
}

void Walk::for_rows(const std::vector<Value>& dims, const RowBody& body, const GroupBegin& begin) const {
  Value g = cast(it_, wrapped_group_id());
  if_(g >= groups_, [&] { return_(); });
  Value block = g / nchunks_;
  Value c0 = (g - block * nchunks_) * chunk_;
  Value c1 = min(c0 + chunk_, inner_);
  Value r0 = block * rows_per_group_;
  Value r1 = min(r0 + rows_per_group_, rows_);
  if (begin) begin(c0, c1);
  std::vector<Var> coord;
  for (const Value& c : unflatten(r0, dims)) coord.push_back(var(it_, c));
  for_range(r0, r1, [&](Value row) {
    std::vector<Value> now;
    for (const Var& c : coord) now.push_back(c.get());
    body(now, row, c0, c1);
    // The next row: the last coordinate up one, carrying outwards.
    std::function<void(size_t)> carry = [&](size_t k) {
      coord[k] += 1u;
      if (k > 0) if_(coord[k].get() == dims[k], [&] {
          coord[k] = constant(it_, 0);
          carry(k - 1);
        });
    };
    if (!coord.empty()) carry(coord.size() - 1);
  });
}

void Walk::for_element(const std::function<void(const Value&, const Value&)>& body) const {
  Value e = cast(it_, wrapped_group_id()) * uint32_t(wg_) + cast(it_, local_id(0));
  if_(e >= groups_, [&] { return_(); });
  Value row = e / inner_;
  body(row, e - row * inner_);
}

std::vector<Value> unflatten(const Value& i, const std::vector<Value>& dims) {
  std::vector<Value> c(dims.size());
  Value rem = i;
  for (size_t k = dims.size(); k-- > 0;) {
    if (k == 0) {
      c[k] = rem;
    } else {
      Value q = rem / dims[k];
      c[k] = rem - q * dims[k];
      rem = q;
    }
  }
  return c;
}

void copy_run(const Array& x, const Value& xb, const Array& y, const Value& yb, const Value& c0, const Value& c1) {
  Value full = c0 + (c1 - c0) / 16u * 16u;
  for_range(c0, full, [&](Value j) { store_line(y, yb + j, load_line(x, xb + j)); }, 16u);
  for_range(full, c1, [&](Value j) { y[yb + j] = x[xb + j]; });
}

void fill_run(const Array& y, const Value& yb, const Value& c0, const Value& c1, const Value& line,
              const std::function<Value(const Value&)>& at) {
  Value full = c0 + (c1 - c0) / 16u * 16u;
  for_range(c0, full, [&](Value j) { store_line(y, yb + j, line); }, 16u);
  for_range(full, c1, [&](Value j) { y[yb + j] = at(j); });
}

}  // namespace kgen::ops::move
