// Pad (ops/layout/data_movement.h). The output's axes map back to the
// (cropped) input one by one: unpadded axes directly, padded ones by the
// mode, with unsigned arithmetic only (the host turns Reflect and Wrap into
// a modulo of a shifted coordinate). Runs of unpadded axes merge; 8-byte
// elements move as u32 word pairs.
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

// One axis as the kernel sees it: n input elements (after cropping) with
// `lb` padded before and `rb` after; Reflect and Wrap read (c + shift) %
// period (Reflect mirrored past n).
struct PadAxis {
  int64_t n = 1, lb = 0, rb = 0, stride = 1, shift = 0, period = 1;
  int64_t out() const { return lb + n + rb; }
  bool padded() const { return lb || rb; }
};

struct PadLayout {
  int word = 4;
  bool pairs = false;  // 8-byte elements: word j holds value word j % 2
  std::vector<PadAxis> axes;
  int64_t in_base = 0;  // the first element of the cropped input
  uint32_t value[2] = {0, 0};
};

void validate(const Pad& p) {
  const std::string w = "Pad: ";
  if (p.elem_bytes != 1 && p.elem_bytes != 2 && p.elem_bytes != 4 && p.elem_bytes != 8)
    throw std::invalid_argument(w + "elem_bytes must be 1, 2, 4 or 8 (got " + std::to_string(p.elem_bytes) + ")");
  const size_t R = p.in_shape.size();
  if (R > 8) throw std::invalid_argument(w + "rank " + std::to_string(R) + " > 8");
  if (p.pads_begin.size() != R || p.pads_end.size() != R)
    throw std::invalid_argument(w + "pads_begin and pads_end need one entry per axis (" + std::to_string(R) + ")");
  if (p.mode < Pad::Constant || p.mode > Pad::Wrap) throw std::invalid_argument(w + "unknown mode");
  for (size_t a = 0; a < R; ++a) {
    const std::string ax = "axis " + std::to_string(a) + ": ";
    if (p.in_shape[a] < 0) throw std::invalid_argument(w + ax + "negative size");
    const int64_t n = p.in_shape[a] + std::min<int64_t>(p.pads_begin[a], 0) + std::min<int64_t>(p.pads_end[a], 0);
    if (n < 0) throw std::invalid_argument(w + ax + "negative pads crop more than the axis holds");
    if (n == 0 && p.mode != Pad::Constant && (p.pads_begin[a] > 0 || p.pads_end[a] > 0))
      throw std::invalid_argument(w + ax + "reflect, edge and wrap need an element to pad from");
  }
}

// The value's bit pattern repeated over a word of `word` bytes (eb <= word).
uint32_t replicate(uint64_t bits, int eb, int word) {
  uint64_t v = eb == 8 ? bits : bits & ((uint64_t(1) << (8 * eb)) - 1), r = 0;
  for (int b = 0; b < word; b += eb) r |= v << (8 * b);
  return uint32_t(r);
}

PadAxis axis_of(const Pad& p, size_t a, int64_t stride) {
  PadAxis x;
  x.lb = std::max<int64_t>(p.pads_begin[a], 0);
  x.rb = std::max<int64_t>(p.pads_end[a], 0);
  x.n = p.in_shape[a] + std::min<int64_t>(p.pads_begin[a], 0) + std::min<int64_t>(p.pads_end[a], 0);
  x.stride = stride;
  x.period = p.mode == Pad::Reflect ? std::max<int64_t>(2 * (x.n - 1), 1) : std::max<int64_t>(x.n, 1);
  x.shift = (x.lb + x.period - 1) / x.period * x.period - x.lb;  // c + shift >= 0 and ≡ c - lb
  return x;
}

PadLayout layout_of(const Pad& p) {
  PadLayout l;
  std::vector<int64_t> strides = move::contiguous_strides(p.in_shape);
  std::vector<PadAxis> axes;
  for (size_t a = 0; a < p.in_shape.size(); ++a) {
    axes.push_back(axis_of(p, a, strides[a]));
    l.in_base += std::max<int64_t>(-p.pads_begin[a], 0) * strides[a];
  }
  l.word = p.elem_bytes;
  if (p.elem_bytes == 8) {
    for (auto& x : axes) x.stride *= 2;
    l.in_base *= 2;
    axes.push_back(PadAxis{2, 0, 0, 1, 0, 2});
    l.word = 4;
    l.pairs = true;
  }
  for (const PadAxis& x : axes) {
    if (!x.padded() && x.n == 1) continue;
    PadAxis* last = l.axes.empty() ? nullptr : &l.axes.back();
    if (last && !last->padded() && !x.padded() && last->stride == x.stride * x.n) {
      last->n *= x.n;
      last->stride = x.stride;
    } else {
      l.axes.push_back(x);
    }
  }
  if (l.axes.empty()) l.axes.push_back(PadAxis{});
  // Whole u32 (or u16) words where the inner axis is unpadded (and the
  // input buffer holds whole words: the runtimes check).
  PadAxis& in = l.axes.back();
  for (int to : {4, 2}) {
    const int64_t k = to / l.word;
    if (l.pairs || k < 2 || in.padded() || in.stride != 1 || in.n % k || l.in_base % k || numel(p.in_shape) % k) continue;
    bool ok = true;
    for (size_t a = 0; a + 1 < l.axes.size(); ++a) ok = ok && l.axes[a].stride % k == 0;
    if (!ok) continue;
    for (size_t a = 0; a + 1 < l.axes.size(); ++a) l.axes[a].stride /= k;
    in.n /= k;
    l.in_base /= k;
    l.word = to;
    break;
  }
  if (l.pairs) {
    l.value[0] = uint32_t(p.value_bits), l.value[1] = uint32_t(p.value_bits >> 32);
  } else {
    l.value[0] = l.value[1] = replicate(p.value_bits, p.elem_bytes, l.word);
  }
  return l;
}

// The kernel's view of one axis: its scalars, and the input coordinate of
// output coordinate c (with whether it is inside, for Constant).
struct AxisVals {
  Value out, n, lb, shift, period, stride;
  bool padded = false;
  Value inside(const Value& c) const { return c >= lb && c < lb + n; }
  Value source(Pad::Mode mode, const Value& c) const {
    if (!padded) return c;
    switch (mode) {
      case Pad::Constant: return c - lb;
      case Pad::Edge: return select(c < lb, constant(c.type(), 0), min(c - lb, n - 1u));
      case Pad::Wrap: return (c + shift) % period;
      case Pad::Reflect: {
        Value u = (c + shift) % period;
        return select(u < n, u, period - u);
      }
    }
    return c;
  }
};

std::string mask_of(const PadLayout& l) {
  std::string s;
  for (const auto& x : l.axes) s += x.padded() ? 'p' : 'u';
  return s;
}

ir::Kernel pad_kernel(const PadLayout& l, Pad::Mode mode, ir::Type it, const MoveVariant& v) {
  const ir::Type wt = move::word_type(l.word);
  const size_t R = l.axes.size();
  static const char* kModes[] = {"constant", "reflect", "edge", "wrap"};
  // The inner axis has stride 1 unless the input's last was cropped to one element (and dropped).
  const bool unit = l.axes.back().stride == 1;
  const std::string name = std::string("pad_") + kModes[mode] + "_" + wt.str() + "_" + mask_of(l) + (l.pairs ? "_pairs" : "") +
                           (unit ? "" : "_strided") + "_" + it.str() + (v.rows ? "_rows" : "_el");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", wt);
    auto y = kb.output("y", wt);
    move::Walk walk(kb, it, v);
    auto in_base = kb.scalar("in_base", it);
    auto v0 = kb.scalar("value0", wt), v1 = kb.scalar("value1", wt);
    std::vector<AxisVals> ax(R);
    for (size_t a = 0; a < R; ++a) {
      const std::string k = std::to_string(a);
      ax[a] = {kb.scalar("out" + k, it), kb.scalar("n" + k, it), kb.scalar("lb" + k, it), kb.scalar("shift" + k, it),
               kb.scalar("period" + k, it), kb.scalar("stride" + k, it), l.axes[a].padded()};
    }
    const bool constant_mode = mode == Pad::Constant;
    // The constant's word at inner position j.
    auto value_at = [&](const Value& j) { return l.pairs ? select((j & 1u) == 0u, v0, v1) : Value(v0); };
    // A row's outer coordinates c: its input offset and (Constant) whether all are inside.
    std::vector<Value> dims;
    for (size_t a = 0; a + 1 < R; ++a) dims.push_back(ax[a].out);
    auto row_source = [&](const std::vector<Value>& c) {
      Value ib = in_base, inside = constant(bool_, true);
      for (size_t a = 0; a + 1 < R; ++a) {
        ib = ib + ax[a].source(mode, c[a]) * ax[a].stride;
        if (constant_mode && ax[a].padded) inside = inside && ax[a].inside(c[a]);
      }
      return std::pair{ib, inside};
    };
    const AxisVals& in = ax[R - 1];
    if (!v.rows) {
      walk.for_element([&](const Value& row, const Value& col) {
        auto [ib, inside] = row_source(move::unflatten(row, dims));
        if (constant_mode && in.padded) inside = inside && in.inside(col);
        Value dst = row * walk.inner() + col;
        auto copy = [&] { y[dst] = x[ib + in.source(mode, col) * in.stride]; };
        if (constant_mode) if_(inside, copy).else_([&] { y[dst] = value_at(col); });
        else copy();
      });
      return;
    }
    Value pattern = l.pairs ? make_line(std::vector<Value>{v0, v1, v0, v1, v0, v1, v0, v1, v0, v1, v0, v1, v0, v1, v0, v1})
                            : splat(v0, 16);
    walk.for_rows(dims, [&](const std::vector<Value>& c, const Value& row, const Value& c0, const Value& c1) {
      auto [ib, inside] = row_source(c);
      Value ob = row * walk.inner();
      auto fill = [&](const Value& a, const Value& b) { move::fill_run(y, ob, a, b, pattern, value_at); };
      auto span = [&] {
        // The input's run: lines where it is contiguous.
        auto run = [&](const Value& xb, const Value& a, const Value& b) {
          if (unit) move::copy_run(x, xb, y, ob, a, b);
          else for_range(a, b, [&](Value j) { y[ob + j] = x[xb + j * in.stride]; });
        };
        if (!in.padded) return run(ib, c0, c1);
        // Left padding, the input's run, right padding.
        Value a1 = max(c0, min(c1, in.lb));
        Value m1 = max(a1, min(c1, in.lb + in.n));
        run(ib - in.lb * in.stride, a1, m1);
        for (auto [lo, hi] : {std::pair{c0, a1}, std::pair{m1, c1}}) {
          if (constant_mode) fill(lo, hi);
          else for_range(lo, hi, [&](Value j) { y[ob + j] = x[ib + in.source(mode, j) * in.stride]; });
        }
      };
      if (constant_mode) if_(inside, span).else_([&] { fill(c0, c1); });
      else span();
    });
  });
}

}  // namespace

std::vector<int64_t> pad_out_shape(const Pad& p) {
  validate(p);
  std::vector<int64_t> s;
  for (size_t a = 0; a < p.in_shape.size(); ++a) s.push_back(p.pads_begin[a] + p.in_shape[a] + p.pads_end[a]);
  return s;
}

void plan_pad(Plan& pl, const Pad& p, int in_slot, int out_slot, const MoveVariant& v) {
  const std::vector<int64_t> os = pad_out_shape(p);
  if (numel(os) == 0) return;
  const PadLayout l = layout_of(p);
  int64_t out_n = 1, in_hi = l.in_base;
  for (const auto& x : l.axes) out_n *= x.out(), in_hi += (x.n + x.period) * x.stride;
  const ir::Type it = move::index_type(std::max(out_n, in_hi), v);
  Step s;
  s.kernel = pad_kernel(l, p.mode, it, v);
  s.buffers = {in_slot, out_slot};
  s.scalars = {move::index_slot(it, l.in_base), ir::scalar_slot(l.value[0]), ir::scalar_slot(l.value[1])};
  for (const auto& x : l.axes)
    for (int64_t val : {x.out(), x.n, x.lb, x.shift, x.period, x.stride}) s.scalars.push_back(move::index_slot(it, val));
  move::set_launch(s, v, it, out_n / l.axes.back().out(), l.axes.back().out());
  pl.steps.push_back(std::move(s));
}

namespace {

// Input coordinate of output coordinate c on axis a of the cropped input
// [0, n), as numpy.pad defines the modes; -1 outside (Constant).
int64_t reference_source(Pad::Mode mode, int64_t c, int64_t lb, int64_t n) {
  int64_t i = c - lb;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case Pad::Constant: return -1;
    case Pad::Edge: return i < 0 ? 0 : n - 1;
    case Pad::Wrap: return ((i % n) + n) % n;
    case Pad::Reflect:
      if (n == 1) return 0;
      while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
  }
  return -1;
}

}  // namespace

void reference_pad(const Pad& p, const void* in, void* out) {
  const std::vector<int64_t> os = pad_out_shape(p);
  const size_t R = os.size(), eb = size_t(p.elem_bytes);
  const std::vector<int64_t> is = move::contiguous_strides(p.in_shape);
  const int64_t n = numel(os);
  std::vector<int64_t> c(R, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = 0;
    for (size_t a = 0; a < R && src >= 0; ++a) {
      const int64_t crop = std::max<int64_t>(-p.pads_begin[a], 0);
      const int64_t len = p.in_shape[a] - crop - std::max<int64_t>(-p.pads_end[a], 0);
      const int64_t i = reference_source(p.mode, c[a], std::max<int64_t>(p.pads_begin[a], 0), len);
      src = i < 0 ? -1 : src + (crop + i) * is[a];
    }
    uint8_t* dst = static_cast<uint8_t*>(out) + size_t(e) * eb;
    if (src < 0) std::memcpy(dst, &p.value_bits, eb);  // little endian: the low bytes
    else std::memcpy(dst, static_cast<const uint8_t*>(in) + size_t(src) * eb, eb);
    for (size_t a = R; a-- > 0;) {
      if (++c[a] < os[a]) break;
      c[a] = 0;
    }
  }
}

}  // namespace kgen::ops
