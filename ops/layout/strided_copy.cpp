// StridedCopy (ops/layout/data_movement.h): the copy normalized to few axes
// of whole words, then one kernel per (rank, word, index type, form, inner
// stride kind); sizes, strides and offsets are scalars.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/layout/data_movement.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

using namespace kgen::dsl;
using move::numel;

namespace {

// The copy as the kernel sees it: words of `word` bytes, size-1 axes
// dropped, axes contiguous in both input and output merged, and 8-byte
// elements split into word pairs (one kernel type set for every target).
// Narrower elements stay as they are even in runs of whole u32 words: the
// runtimes require a buffer to hold whole elements of the kernel's type, and
// a slice's source need not be a multiple of 4 bytes.
struct CopyLayout {
  int word = 4;
  std::vector<int64_t> dims, in_strides, out_strides;
  int64_t in_offset = 0, out_offset = 0;
};

// The lowest and highest address of a strided walk (shape non-empty).
std::pair<int64_t, int64_t> address_range(int64_t offset, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t lo = offset, hi = offset;
  for (size_t a = 0; a < shape.size(); ++a) (strides[a] < 0 ? lo : hi) += strides[a] * (shape[a] - 1);
  return {lo, hi};
}

void validate(const StridedCopy& c) {
  const std::string w = "StridedCopy: ";
  if (c.elem_bytes != 1 && c.elem_bytes != 2 && c.elem_bytes != 4 && c.elem_bytes != 8)
    throw std::invalid_argument(w + "elem_bytes must be 1, 2, 4 or 8 (got " + std::to_string(c.elem_bytes) + ")");
  if (c.shape.size() > 8) throw std::invalid_argument(w + "rank " + std::to_string(c.shape.size()) + " > 8");
  for (int64_t d : c.shape)
    if (d < 0) throw std::invalid_argument(w + "negative size in shape");
  if (c.in_strides.size() != c.shape.size())
    throw std::invalid_argument(w + "in_strides has " + std::to_string(c.in_strides.size()) + " entries for rank " +
                                std::to_string(c.shape.size()));
  if (!c.out_strides.empty() && c.out_strides.size() != c.shape.size())
    throw std::invalid_argument(w + "out_strides must be empty (contiguous) or one per axis");
  if (c.in_offset < 0 || c.out_offset < 0) throw std::invalid_argument(w + "offsets must be >= 0");
  if (numel(c.shape) == 0) return;
  for (size_t a = 0; a < c.shape.size(); ++a)
    if (!c.out_strides.empty() && c.out_strides[a] == 0 && c.shape[a] > 1)
      throw std::invalid_argument(w + "out_strides[" + std::to_string(a) + "] is 0: output elements would repeat");
  if (address_range(c.in_offset, c.shape, c.in_strides).first < 0)
    throw std::invalid_argument(w + "the input offset and negative strides reach below element 0");
  if (!c.out_strides.empty() && address_range(c.out_offset, c.shape, c.out_strides).first < 0)
    throw std::invalid_argument(w + "the output offset and negative strides reach below element 0");
  if (double(numel(c.shape)) * c.elem_bytes > 9e18) throw std::invalid_argument(w + "too large");
}

CopyLayout layout_of(const StridedCopy& c) {
  std::vector<int64_t> shape = c.shape, is = c.in_strides;
  std::vector<int64_t> os = c.out_strides.empty() ? move::contiguous_strides(c.shape) : c.out_strides;
  int64_t ioff = c.in_offset, ooff = c.out_offset;
  int eb = c.elem_bytes;
  if (eb == 8) {  // an inner axis of two u32 words
    for (auto& s : is) s *= 2;
    for (auto& s : os) s *= 2;
    ioff *= 2, ooff *= 2;
    shape.push_back(2), is.push_back(1), os.push_back(1);
    eb = 4;
  }
  CopyLayout l;
  l.word = eb;
  l.in_offset = ioff;
  l.out_offset = ooff;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 1) continue;
    const bool merge = !l.dims.empty() && l.in_strides.back() == is[a] * shape[a] && l.out_strides.back() == os[a] * shape[a];
    if (merge) {
      l.dims.back() *= shape[a];
      l.in_strides.back() = is[a];
      l.out_strides.back() = os[a];
    } else {
      l.dims.push_back(shape[a]);
      l.in_strides.push_back(is[a]);
      l.out_strides.push_back(os[a]);
    }
  }
  if (l.dims.empty()) l.dims = {1}, l.in_strides = {1}, l.out_strides = {1};
  return l;
}

// The inner axis's strides as the kernel specializes them: 1 (a run), 0
// (one value repeated; input only), anything else (element by element).
int stride_kind(int64_t s, bool allow_zero) { return s == 1 ? 1 : s == 0 && allow_zero ? 0 : 2; }

ir::Kernel copy_kernel(const CopyLayout& l, ir::Type it, const MoveVariant& v) {
  const int R = int(l.dims.size());
  const ir::Type wt = move::word_type(l.word);
  const int ik = stride_kind(l.in_strides.back(), true), ok = stride_kind(l.out_strides.back(), false);
  const std::string name = "strided_copy_" + wt.str() + "_r" + std::to_string(R) + "_" + it.str() + (v.rows ? "_rows" : "_el") +
                           "_in" + std::to_string(ik) + "_out" + std::to_string(ok);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", wt);
    auto y = kb.output("y", wt);
    move::Walk walk(kb, it, v);
    auto in_offset = kb.scalar("in_offset", it);
    auto out_offset = kb.scalar("out_offset", it);
    std::vector<Value> dims, is, os;
    for (int k = 0; k + 1 < R; ++k) dims.push_back(kb.scalar("d" + std::to_string(k), it));
    for (int k = 0; k < R; ++k) is.push_back(kb.scalar("is" + std::to_string(k), it));
    for (int k = 0; k < R; ++k) os.push_back(kb.scalar("os" + std::to_string(k), it));
    // The first input and output element of the row at coordinates c.
    auto bases = [&](const std::vector<Value>& c) {
      Value ib = in_offset, ob = out_offset;
      for (size_t k = 0; k < c.size(); ++k) {
        ib = ib + c[k] * is[k];
        ob = ob + c[k] * os[k];
      }
      return std::pair{ib, ob};
    };
    const Value& si = is.back();
    const Value& so = os.back();
    if (!v.rows) {
      walk.for_element([&](const Value& row, const Value& col) {
        auto [ib, ob] = bases(move::unflatten(row, dims));
        y[ob + col * so] = x[ib + col * si];
      });
      return;
    }
    walk.for_rows(dims, [&](const std::vector<Value>& c, const Value&, const Value& c0, const Value& c1) {
      auto [ib, ob] = bases(c);
      if (ik == 1 && ok == 1) {
        move::copy_run(x, ib, y, ob, c0, c1);
      } else if (ik == 0 && ok == 1) {  // one input value along the row (Expand, Tile)
        Value e = x[ib];
        move::fill_run(y, ob, c0, c1, splat(e, 16), [&](const Value&) { return e; });
      } else {
        for_range(c0, c1, [&](Value j) { y[ob + j * so] = x[ib + j * si]; });
      }
    });
  });
}

}  // namespace

void plan_strided_copy(Plan& pl, const StridedCopy& c, int in_slot, int out_slot, const MoveVariant& v) {
  validate(c);
  if (numel(c.shape) == 0) return;
  const CopyLayout l = layout_of(c);
  const int R = int(l.dims.size());
  const int64_t inner = l.dims.back(), rows = numel(l.dims) / inner;
  const int64_t in_hi = address_range(l.in_offset, l.dims, l.in_strides).second;
  const int64_t out_hi = address_range(l.out_offset, l.dims, l.out_strides).second;
  const ir::Type it = move::index_type(std::max({in_hi, out_hi, rows * inner}), v);
  Step s;
  s.kernel = copy_kernel(l, it, v);
  s.buffers = {in_slot, out_slot};
  s.scalars.push_back(move::index_slot(it, l.in_offset));
  s.scalars.push_back(move::index_slot(it, l.out_offset));
  for (int k = 0; k + 1 < R; ++k) s.scalars.push_back(move::index_slot(it, l.dims[size_t(k)]));
  for (int64_t x : l.in_strides) s.scalars.push_back(move::index_slot(it, x));
  for (int64_t x : l.out_strides) s.scalars.push_back(move::index_slot(it, x));
  move::set_launch(s, v, it, rows, inner);
  pl.steps.push_back(std::move(s));
}

void reference_strided_copy(const StridedCopy& c, const void* in, void* out) {
  validate(c);
  const int64_t n = numel(c.shape);
  const std::vector<int64_t> os = c.out_strides.empty() ? move::contiguous_strides(c.shape) : c.out_strides;
  const size_t eb = size_t(c.elem_bytes), R = c.shape.size();
  std::vector<int64_t> coord(R, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = c.in_offset, dst = c.out_offset;
    for (size_t k = 0; k < R; ++k) {
      src += coord[k] * c.in_strides[k];
      dst += coord[k] * os[k];
    }
    std::memcpy(static_cast<uint8_t*>(out) + size_t(dst) * eb, static_cast<const uint8_t*>(in) + size_t(src) * eb, eb);
    for (size_t k = R; k-- > 0;) {
      if (++coord[k] < c.shape[k]) break;
      coord[k] = 0;
    }
  }
}

}  // namespace kgen::ops
