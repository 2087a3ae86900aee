// Resize (ops/layout/data_movement.h): one kernel for all coordinate modes.
// The host reduces every mode to x_in = (x_out·m + p) / d + q per axis
// (the reference's own order of operations, so exact cases stay exact in
// f32); the kernel takes the taps around x_in as the reference picks them
// (an integer x_in counts as the right end of the interval to its left,
// ratio 1) and sums their tensor product. Nearest copies the picked element's
// bits. Unresized axes next to each other merge; u32 indices.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/layout/data_movement.h"
#include "ops/layout/move_walk.h"

namespace kgen::ops {

using namespace kgen::dsl;
using move::numel;

namespace {

struct ResizeAxis {
  int64_t in = 1, out = 1, stride = 1;
  bool resized = false;
  double m = 1, p = 0, d = 1, q = 0;  // x_in = (x_out·m + p) / d + q
};

double scale_of(const Resize& r, size_t a) {
  return r.scales.empty() ? double(r.out_shape[a]) / double(r.in_shape[a]) : r.scales[a];
}

void validate_resize(const Resize& r) {
  const std::string w = "Resize: ";
  if (r.dtype != ir::ScalarKind::F32 && r.dtype != ir::ScalarKind::F16 && r.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument(w + "dtype must be f32, f16 or bf16");
  const size_t R = r.in_shape.size();
  if (R < 1 || R > 6) throw std::invalid_argument(w + "rank must be 1..6");
  if (r.out_shape.size() != R) throw std::invalid_argument(w + "out_shape must have the input's rank");
  if (!r.scales.empty() && r.scales.size() != R) throw std::invalid_argument(w + "scales must be empty or one per axis");
  if (r.mode < Resize::Nearest || r.mode > Resize::Cubic) throw std::invalid_argument(w + "unknown mode");
  if (r.coord < Resize::HalfPixel || r.coord > Resize::HalfPixelSymmetric) throw std::invalid_argument(w + "unknown coord");
  if (r.nearest < Resize::RoundPreferFloor || r.nearest > Resize::Ceil) throw std::invalid_argument(w + "unknown nearest");
  for (size_t a = 0; a < R; ++a) {
    const std::string ax = "axis " + std::to_string(a) + ": ";
    if (r.in_shape[a] < 1 || r.in_shape[a] >= (int64_t(1) << 24))
      throw std::invalid_argument(w + ax + "input sizes must be 1..2^24");
    if (r.out_shape[a] < 0 || r.out_shape[a] >= (int64_t(1) << 24))
      throw std::invalid_argument(w + ax + "output sizes must be 0..2^24");
    const double s = scale_of(r, a);
    if (!(s > 0) || !std::isfinite(s)) throw std::invalid_argument(w + ax + "scales must be positive");
    if (std::abs(double(r.out_shape[a]) - double(r.in_shape[a]) * s) >= 1.0 + 1e-6)
      throw std::invalid_argument(w + ax + "out_shape must be floor(in_shape * scale)");
  }
  if (double(numel(r.in_shape)) >= 2e9 || double(numel(r.out_shape)) >= 2e9)
    throw std::invalid_argument(w + "too large: the kernels index in u32");
}

// Axis a's transform, as onnx/reference/ops/op_resize.py writes it.
ResizeAxis axis_of(const Resize& r, size_t a, int64_t stride) {
  ResizeAxis x;
  x.in = r.in_shape[a], x.out = r.out_shape[a], x.stride = stride;
  const double s = scale_of(r, a), out_w = s * double(x.in);
  x.d = s;
  switch (r.coord) {
    case Resize::HalfPixel: x.p = 0.5, x.q = -0.5; break;
    case Resize::Asymmetric: break;
    case Resize::TfHalfPixelForNn: x.p = 0.5; break;
    case Resize::PytorchHalfPixel:
      if (out_w == 1) x.m = 0, x.d = 1, x.q = -0.5;
      else x.p = 0.5, x.q = -0.5;
      break;
    case Resize::AlignCorners:
      if (out_w == 1) x.m = 0, x.d = 1;
      else x.m = double(x.in - 1), x.d = out_w - 1;
      break;
    case Resize::HalfPixelSymmetric: {
      const double offset = double(x.in) / 2 * (1 - double(x.out) / out_w);
      x.p = 0.5, x.q = offset - 0.5;
      break;
    }
  }
  // Unresized where the map is the identity (not for tf_half_pixel_for_nn:
  // half a pixel off), or one element to one, whose every tap is that
  // element (but Nearest's pick may fall outside, which exclude_outside zeroes).
  auto map = [&](double c) { return (c * x.m + x.p) / x.d + x.q; };
  const bool identity = s == 1.0 && x.in == x.out && map(0) == 0 && (x.out == 1 || map(1) == 1);
  const bool single = x.in == 1 && x.out == 1 && !(r.mode == Resize::Nearest && r.exclude_outside);
  x.resized = !(identity || single);
  return x;
}

// Axes with their transforms; unresized neighbours merged, unresized
// size-1 axes dropped.
std::vector<ResizeAxis> layout_of(const Resize& r) {
  const std::vector<int64_t> strides = move::contiguous_strides(r.in_shape);
  std::vector<ResizeAxis> axes;
  for (size_t a = 0; a < r.in_shape.size(); ++a) {
    ResizeAxis x = axis_of(r, a, strides[a]);
    if (!x.resized && x.in == 1) continue;
    if (!axes.empty() && !axes.back().resized && !x.resized) {
      axes.back().in *= x.in, axes.back().out *= x.out, axes.back().stride = x.stride;
    } else {
      axes.push_back(x);
    }
  }
  if (axes.empty()) axes.push_back(ResizeAxis{});
  return axes;
}

// A term of the interpolation sum: an input offset and its weight (none
// for Nearest: weight 1). inside (Nearest with exclude_outside): whether the
// picked element is in the input; else the result is 0, as the reference's
// weights, all zero, give.
struct Term {
  Value off, w, inside;
};

// The kernel's scalars of one axis.
struct AxisVals {
  Value out, stride, in_max, m, p, d, q;
  bool resized = false;
};

struct Options {
  Resize::Mode mode;
  Resize::NearestRound nearest;
  bool exclude_outside;
  Value a;  // cubic_coeff_a
};

std::vector<Value> cubic_weights(const Value& r, const Value& A) {
  auto outer = [&](const Value& t) { return ((A * t - A * 5.0f) * t + A * 8.0f) * t - A * 4.0f; };  // 1 < |x| < 2
  auto inner = [&](const Value& t) { return ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f; };       // |x| <= 1
  Value s = 1.0f - r;
  return {outer(r + 1.0f), inner(r), inner(s), outer(s + 1.0f)};
}

// The taps of output coordinate c on a resized axis: input indices (u32,
// clamped: edge padding) and weights.
std::vector<Term> axis_taps(const AxisVals& ax, const Value& c, const Options& o) {
  Value xin = (cast(f32, c) * ax.m + ax.p) / ax.d + ax.q;
  Value fl0 = floor(xin), r0 = xin - fl0;
  Value whole = r0 == 0.0f;
  Value fl = select(whole, fl0 - 1.0f, fl0), r = select(whole, 1.0f, r0);
  auto clamped = [&](const Value& f) { return cast(u32, min(max(f, 0.0f), ax.in_max)); };
  auto outside = [&](const Value& f) { return f < 0.0f || f > ax.in_max; };
  if (o.mode == Resize::Nearest) {
    Value f;
    switch (o.nearest) {
      case Resize::RoundPreferFloor: f = fl + select(r > 0.5f, 1.0f, 0.0f); break;
      case Resize::RoundPreferCeil: f = fl + select(r >= 0.5f, 1.0f, 0.0f); break;
      case Resize::Floor: f = fl + select(r == 1.0f, 1.0f, 0.0f); break;
      case Resize::Ceil: f = fl + 1.0f; break;
    }
    return {{clamped(f), Value(), o.exclude_outside ? !outside(f) : Value()}};
  }
  const bool cubic = o.mode == Resize::Cubic;
  std::vector<Value> w = cubic ? cubic_weights(r, o.a) : std::vector<Value>{1.0f - r, r};
  std::vector<Term> t;
  Value sum;
  for (size_t k = 0; k < w.size(); ++k) {
    Value f = fl + float(int(k) - (cubic ? 1 : 0));
    if (o.exclude_outside) w[k] = select(outside(f), 0.0f, w[k]);
    sum = k ? sum + w[k] : w[k];
    t.push_back({clamped(f), w[k], Value()});
  }
  if (o.exclude_outside)
    for (auto& x : t) x.w = x.w / sum;
  return t;
}

// Every term times every tap (an index along an axis of `stride`).
std::vector<Term> combine(const std::vector<Term>& terms, const std::vector<Term>& taps, const Value& stride) {
  auto both = [](const Value& a, const Value& b, auto op) { return a.valid() && b.valid() ? op(a, b) : a.valid() ? a : b; };
  std::vector<Term> out;
  for (const Term& a : terms)
    for (const Term& b : taps)
      out.push_back({a.off + b.off * stride, both(a.w, b.w, [](const Value& x, const Value& y) { return x * y; }),
                     both(a.inside, b.inside, [](const Value& x, const Value& y) { return x && y; })});
  return out;
}

// Σ w·x[off] over the terms (lanes 1 or a line of 16 from each offset), in f32.
Value weighted_sum(const Array& x, const std::vector<Term>& terms, int lanes, const Value& j) {
  Value acc;
  for (const Term& t : terms) {
    Value v = lanes == 1 ? cast(f32, x[t.off + j]) : cast(line(f32, lanes), load_line(x, t.off + j, lanes));
    // No weight: no axis is resized (a copy).
    Value term = !t.w.valid() ? v : (lanes == 1 ? t.w : splat(t.w, lanes)) * v;
    acc = acc.valid() ? acc + term : term;
  }
  return acc;
}

std::string mask_of(const std::vector<ResizeAxis>& axes) {
  std::string s;
  for (const auto& a : axes) s += a.resized ? 'r' : 'u';
  return s;
}

std::string kernel_name(const Resize& r, const std::vector<ResizeAxis>& axes, ir::Type et, const MoveVariant& v) {
  static const char* kModes[] = {"nearest", "linear", "cubic"};
  static const char* kRound[] = {"_prefer_floor", "_prefer_ceil", "_floor", "_ceil"};
  std::string s = std::string("resize_") + kModes[r.mode];
  if (r.mode == Resize::Nearest) s += kRound[r.nearest];
  if (r.exclude_outside) s += "_excl";
  return s + "_" + et.str() + "_" + mask_of(axes) + (v.rows ? "_rows" : "_el");
}

// The rows form tabulates the inner axis's taps once per group (they are
// the same in every row) for at most this many columns.
constexpr int64_t kTableColumns = 2048;

ir::Kernel resize_kernel(const Resize& r, const std::vector<ResizeAxis>& axes, const MoveVariant& v) {
  const size_t R = axes.size();
  const bool nearest = r.mode == Resize::Nearest;
  const int T = nearest ? 1 : r.mode == Resize::Linear ? 2 : 4;  // taps per axis
  const ir::Type et = nearest ? move::word_type(ir::Type(r.dtype).bytes()) : ir::Type(r.dtype);  // Nearest moves bits
  return kernel(kernel_name(r, axes, et, v), [&](KernelBuilder& kb) {
    auto x = kb.input("x", et);
    auto y = kb.output("y", et);
    move::Walk walk(kb, u32, v);
    Options o{r.mode, r.nearest, r.exclude_outside, Value()};
    if (r.mode == Resize::Cubic) o.a = kb.scalar("cubic_a", f32);
    std::vector<AxisVals> ax(R);
    for (size_t a = 0; a < R; ++a) {
      const std::string k = std::to_string(a);
      ax[a].out = kb.scalar("out" + k, u32);
      ax[a].stride = kb.scalar("stride" + k, u32);
      ax[a].resized = axes[a].resized;
      if (!ax[a].resized) continue;
      ax[a].in_max = kb.scalar("in_max" + k, f32);
      ax[a].m = kb.scalar("m" + k, f32);
      ax[a].p = kb.scalar("p" + k, f32);
      ax[a].d = kb.scalar("d" + k, f32);
      ax[a].q = kb.scalar("q" + k, f32);
    }
    // The terms of a row's outer coordinates c.
    std::vector<Value> dims;
    for (size_t a = 0; a + 1 < R; ++a) dims.push_back(ax[a].out);
    auto outer_terms = [&](const std::vector<Value>& c) {
      std::vector<Term> t = {{constant(u32, 0u), Value(), Value()}};
      for (size_t a = 0; a + 1 < R; ++a) {
        if (ax[a].resized) t = combine(t, axis_taps(ax[a], c[a], o), ax[a].stride);
        else for (Term& x : t) x.off = x.off + c[a] * ax[a].stride;
      }
      return t;
    };
    // The inner axis's stride is 1: it is the input's last axis, or unresized ones merged into it.
    const AxisVals& in = ax[R - 1];
    auto with_inner = [&](const std::vector<Term>& t, const Value& col) {
      if (in.resized) return combine(t, axis_taps(in, col, o), in.stride);
      std::vector<Term> s = t;
      for (Term& x : s) x.off = x.off + col;
      return s;
    };
    auto store = [&](const Value& dst, const std::vector<Term>& t) {
      if (!nearest) y[dst] = cast(et, weighted_sum(x, t, 1, constant(u32, 0u)));
      else if (t[0].inside.valid()) y[dst] = select(t[0].inside, x[t[0].off], constant(et, 0));  // the offset is clamped: a safe load
      else y[dst] = x[t[0].off];
    };
    if (!v.rows) {
      walk.for_element([&](const Value& row, const Value& col) {
        store(row * walk.inner() + col, with_inner(outer_terms(move::unflatten(row, dims)), col));
      });
      return;
    }
    if (!in.resized) {
      walk.for_rows(dims, [&](const std::vector<Value>& c, const Value& row, const Value& c0, const Value& c1) {
        std::vector<Term> t = outer_terms(c);
        Value ob = row * walk.inner();
        if (nearest && t[0].inside.valid()) {
          if_(t[0].inside, [&] { move::copy_run(x, t[0].off, y, ob, c0, c1); }).else_([&] {
            Value zero = constant(et, 0);
            move::fill_run(y, ob, c0, c1, splat(zero, 16), [&](const Value&) { return zero; });
          });
        } else if (nearest) {
          move::copy_run(x, t[0].off, y, ob, c0, c1);
        } else {  // lines along the unresized inner axis
          Value full = c0 + (c1 - c0) / 16u * 16u;
          for_range(c0, full, [&](Value j) { store_line(y, ob + j, cast(line(et, 16), weighted_sum(x, t, 16, j))); }, 16u);
          for_range(full, c1, [&](Value j) { y[ob + j] = cast(et, weighted_sum(x, t, 1, j)); });
        }
      });
      return;
    }
    // A resized inner axis: the group's columns' taps in tables, then per
    // row one load (Nearest) or a weighted sum of loads per output.
    Array idx_tab = shared_array(u32, kTableColumns * T);
    Array w_tab = nearest ? Array() : shared_array(f32, kTableColumns * T);
    Array inside_tab = nearest && o.exclude_outside ? shared_array(u32, kTableColumns) : Array();
    auto tabulate = [&](const Value& c0, const Value& c1) {
      for_range(c0, c1, [&](Value j) {
        std::vector<Term> taps = axis_taps(in, j, o);
        Value k = (j - c0) * uint32_t(T);
        for (int i = 0; i < T; ++i) {
          idx_tab[k + uint32_t(i)] = taps[size_t(i)].off;
          if (!nearest) w_tab[k + uint32_t(i)] = taps[size_t(i)].w;
        }
        if (inside_tab.pointer().valid()) inside_tab[j - c0] = select(taps[0].inside, 1u, 0u);
      });
    };
    auto tabulated = [&](const Value& j, const Value& c0) {
      Value k = (j - c0) * uint32_t(T);
      std::vector<Term> taps;
      for (int i = 0; i < T; ++i)
        taps.push_back({idx_tab[k + uint32_t(i)], nearest ? Value() : Value(w_tab[k + uint32_t(i)]),
                        inside_tab.pointer().valid() ? inside_tab[j - c0] != 0u : Value()});
      return taps;
    };
    walk.for_rows(
        dims,
        [&](const std::vector<Value>& c, const Value& row, const Value& c0, const Value& c1) {
          std::vector<Term> t = outer_terms(c);
          Value ob = row * walk.inner();
          for_range(c0, c1, [&](Value j) { store(ob + j, combine(t, tabulated(j, c0), in.stride)); });
        },
        tabulate);
  });
}

}  // namespace

void check_resize(const Resize& r) { validate_resize(r); }

void plan_resize(Plan& pl, const Resize& r, int in_slot, int out_slot, const MoveVariant& v) {
  validate_resize(r);
  if (numel(r.out_shape) == 0) return;
  const std::vector<ResizeAxis> axes = layout_of(r);
  const int64_t resized = std::count_if(axes.begin(), axes.end(), [](const ResizeAxis& a) { return a.resized; });
  if (r.mode == Resize::Cubic && resized > 3)
    throw std::invalid_argument("Resize: cubic interpolates on at most 3 axes (this one resizes " + std::to_string(resized) + ")");
  MoveVariant rv = v;
  if (rv.rows && axes.back().resized) rv.chunk = std::min(rv.chunk, kTableColumns);  // the tables' columns
  Step s;
  s.kernel = resize_kernel(r, axes, rv);
  s.buffers = {in_slot, out_slot};
  if (r.mode == Resize::Cubic) s.scalars.push_back(ir::scalar_slot(float(r.cubic_coeff_a)));
  for (const ResizeAxis& a : axes) {
    s.scalars.push_back(ir::scalar_slot(uint32_t(a.out)));
    s.scalars.push_back(ir::scalar_slot(uint32_t(a.stride)));
    if (a.resized)
      for (double f : {double(a.in - 1), a.m, a.p, a.d, a.q}) s.scalars.push_back(ir::scalar_slot(float(f)));
  }
  move::set_launch(s, rv, u32, numel(r.out_shape) / axes.back().out, axes.back().out);
  pl.steps.push_back(std::move(s));
}

}  // namespace kgen::ops
