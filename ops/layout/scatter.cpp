// ScatterElements and ScatterND (ops/layout/index_moves.h): a copy of the
// data into the output, then a kernel applying the updates in place. Updates
// that may land on the same element stay on one work-item, in index order,
// so repeated targets come out as the sequential definition says without
// atomics: ScatterElements gives each work-item one line along the axis
// (only those can collide), ScatterND one column of the slices and every
// tuple in turn. Without a reduction the kernels move words (every element
// size); with one they compute in the dtype (f16 and bf16 through f32).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/elementwise/fusion.h"
#include "ops/layout/index_moves.h"
#include "ops/layout/index_read.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

using namespace kgen::dsl;
using index_read::as;
using index_read::position;
using move::numel;

namespace {

const char* reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::None: return "none";
    case ScatterReduce::Add: return "add";
    case ScatterReduce::Mul: return "mul";
    case ScatterReduce::Max: return "max";
    case ScatterReduce::Min: return "min";
  }
  return "?";
}

void check_common(ir::ScalarKind dtype, ir::ScalarKind index_kind, ScatterReduce r, const std::string& w) {
  index_read::check_index_kind(index_kind, w);
  if (dtype == ir::ScalarKind::Void) throw std::invalid_argument(w + "dtype void");
  index_read::check_elem_bytes(int(ir::Type(dtype).bytes()), w);
  if (r < ScatterReduce::None || r > ScatterReduce::Min) throw std::invalid_argument(w + "unknown reduction");
  if (r != ScatterReduce::None && dtype == ir::ScalarKind::Bool) throw std::invalid_argument(w + "a reduction of bool");
}

// How the kernel sees a run of `elems` elements: words of wt, W of them.
struct Words {
  ir::Type wt;
  int64_t W;
};
Words words_of(ir::ScalarKind dtype, ScatterReduce r, int64_t elems) {
  const int64_t eb = int64_t(ir::Type(dtype).bytes());
  if (r != ScatterReduce::None) return {ir::Type(dtype), elems};
  const int wb = index_read::word_bytes(elems * eb);
  return {move::word_type(wb), elems * eb / wb};
}

Value combine(ScatterReduce r, ir::Type t, const Value& old, const Value& upd) {
  if (r == ScatterReduce::None) return upd;
  const bool half = t == f16 || t == bf16;
  Value a = half ? cast(f32, old) : old, b = half ? cast(f32, upd) : upd;
  Value c = r == ScatterReduce::Add ? a + b : r == ScatterReduce::Mul ? a * b : r == ScatterReduce::Max ? max(a, b) : min(a, b);
  return half ? cast(t, c) : c;
}

// The output starts as a copy of the data.
void plan_copy(Plan& pl, ir::ScalarKind dtype, int64_t n, int data_slot, int out_slot, const MoveVariant& v) {
  if (n == 0) return;
  StridedCopy c;
  c.elem_bytes = int(ir::Type(dtype).bytes());
  c.shape = {n};
  c.in_strides = {1};
  plan_strided_copy(pl, c, data_slot, out_slot, v);
}

// ---- ScatterElements ----

void validate(const ScatterElements& s) {
  const std::string w = "ScatterElements: ";
  check_common(s.dtype, s.index_kind, s.reduce, w);
  index_read::check_shape(s.data_shape, 1, 8, w + "data: ");
  index_read::check_shape(s.index_shape, 1, 8, w + "indices: ");
  const size_t R = s.data_shape.size();
  if (s.index_shape.size() != R) throw std::invalid_argument(w + "indices must have the data's rank");
  if (s.axis < 0 || s.axis >= int64_t(R)) throw std::invalid_argument(w + "axis out of range");
  for (size_t k = 0; k < R; ++k)
    if (int64_t(k) != s.axis && s.index_shape[k] > s.data_shape[k])
      throw std::invalid_argument(w + "indices larger than the data on axis " + std::to_string(k));
}

ir::Kernel scatter_elements_kernel(const ScatterElements& s, const Words& wd, ir::Type it, const MoveVariant& v) {
  const size_t R = s.data_shape.size();
  const bool i64 = s.index_kind == ir::ScalarKind::I64;
  const std::string name = std::string("scatter_elements_") + reduce_name(s.reduce) + "_r" + std::to_string(R) + "_" +
                           wd.wt.str() + (i64 ? "_i64_" : "_i32_") + it.str();
  return kernel(name, [&](KernelBuilder& kb) {
    auto idx = kb.input("indices", u32);
    auto upd = kb.input("updates", wd.wt);
    auto y = kb.inout("y", wd.wt);
    move::Walk walk(kb, it, v);
    auto L = kb.scalar("axis_len", u32);
    auto along = kb.scalar("along", it);  // updates along the axis, per line
    auto istep = kb.scalar("index_stride", it), dstep = kb.scalar("data_stride", it);
    std::vector<Value> dims, istrides, dstrides;  // the other axes
    for (size_t k = 0; k + 1 < R; ++k) {
      dims.push_back(kb.scalar("dim" + std::to_string(k), it));
      istrides.push_back(kb.scalar("index_stride" + std::to_string(k), it));
      dstrides.push_back(kb.scalar("data_stride" + std::to_string(k), it));
    }
    const Value& W = walk.inner();
    walk.for_element([&](const Value& line, const Value& col) {
      const std::vector<Value> c = move::unflatten(line, dims);
      Value bi = constant(it, 0), bo = constant(it, 0);
      for (size_t k = 0; k < c.size(); ++k) bi = bi + c[k] * istrides[k], bo = bo + c[k] * dstrides[k];
      for_range(constant(it, 0), along, [&](Value a) {
        Value e = bi + a * istep;
        auto [i, ok] = position(idx, e, i64, L);
        if_(ok, [&] {
          Value t = (bo + as(it, i) * dstep) * W + col;
          y[t] = combine(s.reduce, wd.wt, y[t], upd[e * W + col]);
        });
      });
    });
  });
}

// ---- ScatterND ----

void validate(const ScatterND& s) {
  const std::string w = "ScatterND: ";
  check_common(s.dtype, s.index_kind, s.reduce, w);
  index_read::check_shape(s.data_shape, 1, 8, w + "data: ");
  index_read::check_shape(s.index_shape, 1, 8, w + "indices: ");
  const int64_t k = s.index_shape.back();
  if (k < 1 || k > int64_t(s.data_shape.size()))
    throw std::invalid_argument(w + "index tuples of " + std::to_string(k) + " for rank " + std::to_string(s.data_shape.size()));
}

ir::Kernel scatter_nd_kernel(const ScatterND& s, const Words& wd, ir::Type it, const MoveVariant& v) {
  const int64_t k = s.index_shape.back();
  const bool i64 = s.index_kind == ir::ScalarKind::I64;
  const std::string name = std::string("scatter_nd_") + reduce_name(s.reduce) + "_k" + std::to_string(k) + "_" + wd.wt.str() +
                           (i64 ? "_i64_" : "_i32_") + it.str();
  return kernel(name, [&](KernelBuilder& kb) {
    auto idx = kb.input("indices", u32);
    auto upd = kb.input("updates", wd.wt);
    auto y = kb.inout("y", wd.wt);
    move::Walk walk(kb, it, v);
    auto tuples = kb.scalar("tuples", it);
    std::vector<Value> lens, strides;
    for (int64_t j = 0; j < k; ++j) {
      lens.push_back(kb.scalar("len" + std::to_string(j), u32));
      strides.push_back(kb.scalar("stride" + std::to_string(j), it));
    }
    const Value& W = walk.inner();  // words per slice
    walk.for_element([&](const Value&, const Value& col) {
      for_range(constant(it, 0), tuples, [&](Value t) {
        Value slice = constant(it, 0), ok;
        for (int64_t j = 0; j < k; ++j) {
          auto [i, in_range] = position(idx, t * uint32_t(k) + uint32_t(j), i64, lens[size_t(j)]);
          slice = slice + as(it, i) * strides[size_t(j)];
          ok = j == 0 ? in_range : (ok && in_range);
        }
        if_(ok, [&] {
          Value d = slice * W + col;
          y[d] = combine(s.reduce, wd.wt, y[d], upd[t * W + col]);
        });
      });
    });
  });
}

// ---- the host's combine, for the references ----

bool is_float(ir::ScalarKind k) { return ir::Type(k).is_float(); }

void host_combine(ScatterReduce r, ir::ScalarKind k, uint8_t* dst, const uint8_t* src) {
  const size_t eb = ir::Type(k).bytes();
  if (r == ScatterReduce::None) {
    std::memcpy(dst, src, eb);
    return;
  }
  auto pick = [&](auto a, auto b) {
    switch (r) {
      case ScatterReduce::Add: return decltype(a)(a + b);
      case ScatterReduce::Mul: return decltype(a)(a * b);
      case ScatterReduce::Max: return a > b ? a : b;
      default: return a < b ? a : b;
    }
  };
  if (k == ir::ScalarKind::F64) {
    double a, b;
    std::memcpy(&a, dst, 8), std::memcpy(&b, src, 8);
    const double c = pick(a, b);
    std::memcpy(dst, &c, 8);
  } else if (is_float(k)) {
    fusion::store_from_f32(k, dst, 0, pick(fusion::load_as_f32(k, dst, 0), fusion::load_as_f32(k, src, 0)));
  } else if (ir::Type(k).is_signed()) {  // sign-extended; add and mul wrap through u64
    auto load = [&](const uint8_t* p) {
      uint64_t v = 0;
      std::memcpy(&v, p, eb);
      const int sh = 64 - 8 * int(eb);
      return int64_t(v << sh) >> sh;
    };
    const int64_t a = load(dst), b = load(src);
    const uint64_t c = r == ScatterReduce::Add   ? uint64_t(a) + uint64_t(b)
                       : r == ScatterReduce::Mul ? uint64_t(a) * uint64_t(b)
                                                 : uint64_t(pick(a, b));
    std::memcpy(dst, &c, eb);
  } else {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, dst, eb), std::memcpy(&b, src, eb);
    const uint64_t c = pick(a, b);
    std::memcpy(dst, &c, eb);
  }
}

}  // namespace

void check_scatter_elements(const ScatterElements& s) { validate(s); }

void plan_scatter_elements(Plan& pl, const ScatterElements& s, int data_slot, int idx_slot, int upd_slot, int out_slot,
                           const MoveVariant& v) {
  validate(s);
  plan_copy(pl, s.dtype, numel(s.data_shape), data_slot, out_slot, v);
  const int64_t along = s.index_shape[size_t(s.axis)];
  if (numel(s.index_shape) == 0) return;
  const Words wd = words_of(s.dtype, s.reduce, 1);
  const int64_t lines = numel(s.index_shape) / along;
  const ir::Type it = move::index_type(std::max({numel(s.data_shape) * wd.W, numel(s.index_shape) * std::max<int64_t>(wd.W, 2)}));
  MoveVariant ev = v;
  ev.rows = false;
  Step st;
  st.kernel = scatter_elements_kernel(s, wd, it, ev);
  st.buffers = {idx_slot, upd_slot, out_slot};
  const std::vector<int64_t> is = move::contiguous_strides(s.index_shape), ds = move::contiguous_strides(s.data_shape);
  const size_t a = size_t(s.axis);
  st.scalars = {ir::scalar_slot(uint32_t(s.data_shape[a])), move::index_slot(it, along), move::index_slot(it, is[a]),
                move::index_slot(it, ds[a])};
  for (size_t k = 0; k < s.data_shape.size(); ++k)
    if (k != a)
      for (int64_t val : {s.index_shape[k], is[k], ds[k]}) st.scalars.push_back(move::index_slot(it, val));
  move::set_launch(st, ev, it, lines, wd.W);
  pl.steps.push_back(std::move(st));
}

void reference_scatter_elements(const ScatterElements& s, const void* data, const void* idx, const void* upd, void* out) {
  validate(s);
  const size_t R = s.data_shape.size(), eb = ir::Type(s.dtype).bytes();
  std::memcpy(out, data, size_t(numel(s.data_shape)) * eb);
  const std::vector<int64_t> ds = move::contiguous_strides(s.data_shape);
  std::vector<int64_t> c(R, 0);
  for (int64_t e = 0; e < numel(s.index_shape); ++e) {
    const int64_t p = index_read::host_position(s.index_kind, idx, e, s.data_shape[size_t(s.axis)]);
    if (p >= 0) {
      int64_t t = p * ds[size_t(s.axis)];
      for (size_t k = 0; k < R; ++k)
        if (int64_t(k) != s.axis) t += c[k] * ds[k];
      host_combine(s.reduce, s.dtype, static_cast<uint8_t*>(out) + size_t(t) * eb, static_cast<const uint8_t*>(upd) + size_t(e) * eb);
    }
    for (size_t a = R; a-- > 0;) {
      if (++c[a] < s.index_shape[a]) break;
      c[a] = 0;
    }
  }
}

std::vector<int64_t> scatter_nd_updates_shape(const ScatterND& s) {
  validate(s);
  std::vector<int64_t> u(s.index_shape.begin(), s.index_shape.end() - 1);
  u.insert(u.end(), s.data_shape.begin() + s.index_shape.back(), s.data_shape.end());
  return u;
}

void plan_scatter_nd(Plan& pl, const ScatterND& s, int data_slot, int idx_slot, int upd_slot, int out_slot, const MoveVariant& v) {
  validate(s);
  plan_copy(pl, s.dtype, numel(s.data_shape), data_slot, out_slot, v);
  const int64_t k = s.index_shape.back(), tuples = numel(s.index_shape) / k, inner = numel(s.data_shape, size_t(k));
  if (tuples == 0 || inner == 0) return;
  const Words wd = words_of(s.dtype, s.reduce, inner);
  const int64_t slice_words = wd.W, data_words = numel(s.data_shape) / inner * slice_words;
  const ir::Type it = move::index_type(std::max({data_words, tuples * slice_words, 2 * tuples * k}));
  MoveVariant ev = v;
  ev.rows = false;
  Step st;
  st.kernel = scatter_nd_kernel(s, wd, it, ev);
  st.buffers = {idx_slot, upd_slot, out_slot};
  st.scalars = {move::index_slot(it, tuples)};
  for (int64_t j = 0; j < k; ++j) {
    st.scalars.push_back(ir::scalar_slot(uint32_t(s.data_shape[size_t(j)])));
    st.scalars.push_back(move::index_slot(it, numel(s.data_shape, size_t(j + 1), size_t(k))));
  }
  move::set_launch(st, ev, it, 1, slice_words);
  pl.steps.push_back(std::move(st));
}

void reference_scatter_nd(const ScatterND& s, const void* data, const void* idx, const void* upd, void* out) {
  validate(s);
  const size_t eb = ir::Type(s.dtype).bytes();
  std::memcpy(out, data, size_t(numel(s.data_shape)) * eb);
  const int64_t k = s.index_shape.back(), tuples = numel(s.index_shape) / k, inner = numel(s.data_shape, size_t(k));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t slice = 0;
    for (int64_t j = 0; j < k && slice >= 0; ++j) {
      const int64_t p = index_read::host_position(s.index_kind, idx, t * k + j, s.data_shape[size_t(j)]);
      slice = p < 0 ? -1 : slice + p * numel(s.data_shape, size_t(j + 1), size_t(k));
    }
    if (slice < 0) continue;
    for (int64_t i = 0; i < inner; ++i)
      host_combine(s.reduce, s.dtype, static_cast<uint8_t*>(out) + size_t(slice * inner + i) * eb,
                   static_cast<const uint8_t*>(upd) + size_t(t * inner + i) * eb);
  }
}

}  // namespace kgen::ops
