#include "ops/elementwise/fusion.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ops/common/wrapped_group.h"
#include "ops/elementwise/chain_eval.h"

namespace kgen::ops::fusion {

using namespace kgen::dsl;
using ir::Op;
using ir::ScalarKind;

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> broadcast_shape(const Chain& c) {
  size_t rank = 0;
  for (const auto& i : c.inputs) rank = std::max(rank, i.shape.size());
  if (rank > 6) throw std::invalid_argument("fusion: rank > 6");
  std::vector<int64_t> out(rank, 1);
  for (const auto& i : c.inputs) {
    size_t off = rank - i.shape.size();
    for (size_t a = 0; a < i.shape.size(); ++a) {
      int64_t d = i.shape[a], &o = out[off + a];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else throw std::invalid_argument("fusion: input '" + i.name + "' does not broadcast (axis size " +
                                       std::to_string(d) + " against " + std::to_string(o) + ")");
    }
  }
  return out;
}

namespace {

// Every Input node names an input and reads it in its compute kind.
void check_inputs(const Chain& c, const Expr& e) {
  if (!e.node) throw std::invalid_argument("fusion: empty expression");
  const Node& n = *e.node;
  if (n.kind == Node::Kind::Input) {
    if (n.input < 0 || size_t(n.input) >= c.inputs.size())
      throw std::invalid_argument("fusion: input index " + std::to_string(n.input) + " out of range");
    const Input& i = c.inputs[size_t(n.input)];
    if (compute_kind(i.dtype) != n.type)
      throw std::invalid_argument("fusion: input '" + i.name + "' is " + std::string(ir::scalar_name(i.dtype)) +
                                  " but the expression reads it as " + std::string(ir::scalar_name(n.type)) +
                                  " (in(" + std::to_string(n.input) + ", dtype))");
  }
  for (const auto& a : n.args) check_inputs(c, a);
}

}  // namespace

void validate_chain(const Chain& c) {
  if (c.inputs.empty()) throw std::invalid_argument("fusion: a chain needs an input");
  if (c.shape.size() > 6) throw std::invalid_argument("fusion: rank > 6");
  if (c.out_dtype == ScalarKind::Void) throw std::invalid_argument("fusion: the output needs a dtype");
  for (const auto& i : c.inputs) {
    if (i.dtype == ScalarKind::Void) throw std::invalid_argument("fusion: input '" + i.name + "' needs a dtype");
    if (i.shape.size() > c.shape.size()) throw std::invalid_argument("fusion: input '" + i.name + "' has a higher rank than the output");
    size_t off = c.shape.size() - i.shape.size();
    for (size_t a = 0; a < i.shape.size(); ++a)
      if (i.shape[a] != 1 && i.shape[a] != c.shape[off + a])
        throw std::invalid_argument("fusion: input '" + i.name + "' does not broadcast to the output shape");
  }
  for (int64_t d : c.shape)
    if (d < 1) throw std::invalid_argument("fusion: sizes must be >= 1");
  if (double(numel(c.shape)) >= 4e9) throw std::invalid_argument("fusion: too large: indices are 32-bit");
  check_inputs(c, c.out);
}

namespace {

void collect_kinds(const Expr& e, std::vector<ScalarKind>& kinds) {
  kinds.push_back(e.kind());
  if (e.node->kind != Node::Kind::Op && e.node->kind != Node::Kind::Input && e.node->kind != Node::Kind::Const)
    kinds.push_back(e.node->to);
  for (const auto& a : e.node->args) collect_kinds(a, kinds);
}

// What the target lacks to hold kind k, or null.
const char* lacks(ScalarKind k, const TargetCaps& caps) {
  if (k == ScalarKind::F64 && !caps.f64) return "has no f64 support";
  if ((k == ScalarKind::I64 || k == ScalarKind::U64) && !caps.i64) return "has no 64-bit integer support";
  if (k == ScalarKind::F16 && !caps.f16) return "has no f16 support";
  if (k == ScalarKind::BF16 && !caps.bf16) return "has no bf16 support";
  return nullptr;
}

}  // namespace

void check_chain_target(const Chain& c, const TargetCaps& caps) {
  std::vector<ScalarKind> kinds = {c.out_dtype};
  for (const auto& i : c.inputs) kinds.push_back(i.dtype);
  if (c.out.node) collect_kinds(c.out, kinds);
  for (ScalarKind k : kinds)
    if (const char* why = lacks(k, caps))
      throw ir::Error(ir::SourceLoc{}, "fusion: chain '" + c.name + "' uses " + std::string(ir::scalar_name(k)) +
                                           " but target '" + caps.name + "' " + why);
}

int64_t Layout::rows() const {
  int64_t r = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) r *= dims[i];
  return r;
}

Layout layout_of(const Chain& c, bool periodic) {
  const size_t R = c.shape.size(), ni = c.inputs.size();
  // Per input and output axis: broadcast (size 1 there) and element stride.
  std::vector<std::vector<int64_t>> stride(ni, std::vector<int64_t>(R, 0));
  for (size_t i = 0; i < ni; ++i) {
    const auto& s = c.inputs[i].shape;
    size_t off = R - s.size();
    int64_t st = 1;
    for (size_t a = s.size(); a-- > 0;) {
      stride[i][off + a] = s[a] == 1 ? 0 : st;
      st *= s[a];
    }
  }
  Layout l;
  // Drop size-1 output axes, then merge an axis into the one inside it when
  // every input treats both alike (then the inner stride times the inner
  // size is the outer stride, or both are 0).
  for (size_t a = 0; a < R; ++a) {
    if (c.shape[a] == 1) continue;
    bool merge = !l.dims.empty();
    for (size_t i = 0; i < ni && merge; ++i) {
      int64_t outer = l.strides[i].back(), inner = stride[i][a];
      merge = (outer == 0 && inner == 0) || (outer != 0 && inner != 0 && outer == inner * c.shape[a]);
    }
    if (merge) {
      l.dims.back() *= c.shape[a];
      for (size_t i = 0; i < ni; ++i) l.strides[i].back() = stride[i][a];
    } else {
      if (l.strides.empty()) l.strides.resize(ni);
      l.dims.push_back(c.shape[a]);
      for (size_t i = 0; i < ni; ++i) l.strides[i].push_back(stride[i][a]);
    }
  }
  if (l.dims.empty()) {
    l.dims = {1};
    l.strides.assign(ni, std::vector<int64_t>{0});
  }
  // A short inner axis (under a line) merges with the axis outside it when
  // each input either merges as above or is contiguous along the inner axis
  // and broadcast along the outer one (it becomes periodic), so rows of a
  // few elements still run as whole lines.
  const size_t D = l.dims.size();
  if (periodic && D >= 2 && l.inner() < 16) {
    const int64_t P = l.inner();
    std::vector<int64_t> period(ni, 0);
    bool fold = false, ok = true;
    for (size_t i = 0; i < ni && ok; ++i) {
      int64_t outer = l.strides[i][D - 2], inner = l.strides[i][D - 1];
      if (outer == 0 && inner == 1) period[i] = P;  // repeats along the outer axis
      ok = period[i] || (outer == 0 && inner == 0) || (outer != 0 && inner != 0 && outer == inner * P);
      fold = fold || period[i];
    }
    if (fold && ok) {
      l.period = period;
      for (size_t i = 0; i < ni; ++i) {
        l.strides[i][D - 2] = l.strides[i][D - 1];
        l.strides[i].pop_back();
      }
      l.dims[D - 2] *= P;
      l.dims.pop_back();
    }
  }
  return l;
}

namespace {

std::string kernel_name(const Chain& c, const Layout& l, const ChainVariant& v) {
  std::string s = c.name + "_r" + std::to_string(l.dims.size()) + "_l" + std::to_string(v.lanes);
  if (v.wg > 1) s += "_wg" + std::to_string(v.wg);
  for (size_t i = 0; i < c.inputs.size(); ++i)
    s += "_" + std::string(ir::scalar_name(c.inputs[i].dtype)) + (l.strides[i].back() == 0 ? "b" : "") +
         (l.period_of(i) ? "p" + std::to_string(l.period_of(i)) : "");
  return s + "_" + std::string(ir::scalar_name(c.out_dtype)) + (v.stream ? "_stream" : "") +
         (v.prefetch ? "_pf" + std::to_string(v.prefetch) : "") +
         (v.divide && chain_has_sigmoid(c) ? "_div" : "");
}

}  // namespace

bool chain_has_sigmoid(const Chain& c) { return has_sigmoid_div(c.out); }

// One workgroup per (row, chunk of the row): row = the outer coordinates
// (decoded once per group into each input's base offset), chunk = a range of
// the contiguous inner axis. Inputs broadcast along the inner axis are loaded
// once per group. Sizes and strides are scalars: one compiled kernel per
// (rank, inner-broadcast pattern, dtypes, expression) serves every shape.
ir::Kernel chain_kernel(const Chain& c, const Layout& l, const ChainVariant& v) {
  validate_chain(c);
  const int R = int(l.dims.size()), L = v.lanes;
  const size_t ni = c.inputs.size();
  if (L != 1 && L != 16) throw std::invalid_argument("fusion: lanes must be 1 or 16");
  if (v.stream && L != 16) throw std::invalid_argument("fusion: stream needs lanes 16");
  if (v.prefetch < 0 || (v.prefetch && L != 16)) throw std::invalid_argument("fusion: prefetch needs lanes 16 and a distance >= 0");
  return kernel(kernel_name(c, l, v), [&](KernelBuilder& kb) {
    std::vector<Array> x;
    for (const auto& i : c.inputs) x.push_back(kb.input(i.name, ir::Type(i.dtype)));
    // Not "y": inputs have user names. Streamed, each line's store goes
    // around the caches where it lands on an aligned address (every line of
    // rows that start on one: chain_can_stream), else plainly.
    auto y = kb.output("result", ir::Type(c.out_dtype));
    auto d0 = kb.scalar("d0", u32);  // row pitch: inner size
    auto col0 = kb.scalar("col0", u32);
    auto col_end = kb.scalar("col_end", u32);
    auto chunk = kb.scalar("chunk", u32);
    auto nchunks = kb.scalar("nchunks", u32);
    auto ngroups = kb.scalar("ngroups", u32);
    std::vector<Value> dim;
    for (int k = 0; k + 1 < R; ++k) dim.push_back(kb.scalar("d" + std::to_string(k + 1), u32));
    std::vector<std::vector<Value>> st(ni);
    for (size_t i = 0; i < ni; ++i)
      for (int k = 0; k + 1 < R; ++k) st[i].push_back(kb.scalar("s" + std::to_string(i) + "_" + std::to_string(k), u32));
    kb.workgroup(uint32_t(v.wg));
    Value g = wrapped_group_id();
    if_(g >= ngroups, [&] { return_(); });
    Value row = g / nchunks;
    Value ch = g - row * nchunks;
    std::vector<Value> off(ni, constant(u32, 0u));
    Value rem = row;
    for (int k = R - 2; k >= 0; --k) {
      Value ck = k == 0 ? rem : rem % dim[k];
      if (k > 0) rem = rem / dim[k];
      for (size_t i = 0; i < ni; ++i)
        if (l.strides[i][k] != 0) off[i] = off[i] + ck * st[i][k];
    }
    Value obase = row * d0;
    Value start = col0 + ch * chunk;
    Value end = min(start + chunk, col_end);
    // Each input converts to its compute kind as it is loaded (f16 -> f32).
    std::vector<ir::Type> ct;
    for (const auto& i : c.inputs) ct.push_back(ir::Type(compute_kind(i.dtype)));
    // Inputs constant along the inner axis: one load per group.
    std::vector<Value> bc(ni);
    for (size_t i = 0; i < ni; ++i)
      if (l.strides[i].back() == 0) bc[i] = cast(ct[i], x[i][off[i]]);
    // Periodic inputs (Layout::period): lines from `start` repeat every Q =
    // P / gcd(P, 16) lines; the group builds those Q lines once and the line
    // loop goes Q lines per step, each with its own pattern.
    uint32_t Q = 1;
    for (size_t i = 0; i < ni; ++i)
      if (int64_t P = l.period_of(i)) Q = std::lcm(Q, uint32_t(P / std::gcd(P, int64_t(16))));
    std::vector<std::vector<Value>> pattern(ni);
    if (L == 16)
      for (size_t i = 0; i < ni; ++i)
        if (uint32_t P = uint32_t(l.period_of(i)))
          for (uint32_t q = 0; q < Q; ++q) {
            std::vector<Value> lanes;
            for (uint32_t e = 0; e < 16; ++e) lanes.push_back(cast(ct[i], x[i][off[i] + (start + (16 * q + e)) % P]));
            pattern[i].push_back(make_line(lanes));
          }
    // q: the pattern line of element j's line (lanes 16).
    auto body = [&](int lanes, Value j, uint32_t q = 0) {
      // The CPU form (lanes 16) takes the division-free sigmoid; GPUs keep
      // their native exp and division (fast_exp's rounding trick is not safe
      // under their compilers' reassociation).
      auto input = [&](int i) -> Value {
        if (bc[i].valid()) return lanes == 1 ? bc[i] : splat(bc[i], lanes);
        if (uint32_t P = uint32_t(l.period_of(size_t(i)))) {
          if (lanes == 1) return cast(ct[i], x[i][off[i] + j % P]);
          return pattern[size_t(i)][q];
        }
        Value at = off[i] + j;
        if (lanes == 1) return cast(ct[i], x[i][at]);
        // 64-bit indices: clang merges the 16 loads into one vector load only
        // when it can prove the addresses consecutive, which u32 index
        // arithmetic (wrapping) does not let it.
        Value at64 = cast(u64, at);
        std::vector<Operand> ls;
        for (int q = 0; q < lanes; ++q) ls.emplace_back(Value(x[i][at64 + uint64_t(q)]), ir::SourceLoc{});
        Value ln = make_line({ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], ls[7], ls[8], ls[9], ls[10], ls[11],
                              ls[12], ls[13], ls[14], ls[15]});
        return cast(line(ct[i], lanes), ln);
      };
      Evaluator ev(lanes, input, L == 16, v.divide);
      Value r = ev.to_output(c.out.kind(), c.out_dtype, ev.eval(c.out));
      if (lanes == 1) y[obase + j] = r;
      else store_line(y, obase + j, r, v.stream);
    };
    if (L == 16) {
      // Whole lines (Q at a time), then the rest element by element.
      Value full = start + (end - start) / (16u * Q) * (16u * Q);
      for_range(start, full, [&](Value j) {
        for (uint32_t q = 0; q < Q; ++q) {
          if (v.prefetch)
            for (size_t i = 0; i < ni; ++i)
              if (!bc[i].valid() && !l.period_of(i)) x[i][cast(u64, off[i] + j + 16u * q) + uint64_t(v.prefetch)].prefetch();
          body(16, j + 16u * q, q);
        }
      }, 16u * Q);
      for_range(full, end, [&](Value j) { body(1, j); });
    } else {
      for_range(start + local_id(0), end, [&](Value j) { body(1, j); }, uint32_t(v.wg));
    }
  });
}

bool chain_can_stream(const Layout& l) { return l.inner() % 16 == 0 || l.dims.size() == 1; }

void plan_chain(Plan& pl, const Chain& c, const std::vector<int>& in_slots, int out_slot, const ChainVariant& v) {
  validate_chain(c);
  plan_chain_layout(pl, c, layout_of(c), in_slots, out_slot, v);
}

void plan_chain_layout(Plan& pl, const Chain& c, const Layout& l, const std::vector<int>& in_slots, int out_slot,
                       const ChainVariant& v) {
  if (in_slots.size() != c.inputs.size()) throw std::invalid_argument("plan_chain: one slot per input");
  for (const auto& s : l.strides)
    if (s.back() > 1) throw std::invalid_argument("plan_chain: the inner axis must be contiguous or broadcast");
  const int R = int(l.dims.size());
  const int64_t inner = l.inner(), rows = l.rows();
  int64_t chunk = std::max<int64_t>(16, v.chunk / 16 * 16);
  // Small rows: one chunk per row; a long row is split so threads share it.
  if (inner <= chunk) chunk = inner;
  const int64_t nchunks = (inner + chunk - 1) / chunk;
  const int64_t ngroups = rows * nchunks;
  Step s;
  s.kernel = chain_kernel(c, l, v);
  s.dims.grid = wrapped_grid(ngroups);
  s.dims.workgroup = {uint32_t(v.wg), 1, 1};
  s.buffers = in_slots;
  s.buffers.push_back(out_slot);
  for (int64_t x : {inner, int64_t(0), inner, chunk, nchunks, ngroups}) s.scalars.push_back(ir::scalar_slot(uint32_t(x)));
  for (int k = 0; k + 1 < R; ++k) s.scalars.push_back(ir::scalar_slot(uint32_t(l.dims[k])));
  for (size_t i = 0; i < c.inputs.size(); ++i)
    for (int k = 0; k + 1 < R; ++k) s.scalars.push_back(ir::scalar_slot(uint32_t(l.strides[i][k])));
  pl.steps.push_back(std::move(s));
}

namespace {

int count_ops(const Node& n) {
  int k = n.kind == Node::Kind::Op ? 1 : 0;
  for (const auto& a : n.args) k += count_ops(*a.node);
  return k;
}

}  // namespace

double chain_flops(const Chain& c) { return double(count_ops(*c.out.node)) * double(numel(c.shape)); }

double chain_bytes(const Chain& c) {
  double b = double(numel(c.shape)) * double(ir::Type(c.out_dtype).bytes());
  for (const auto& i : c.inputs) b += double(numel(i.shape)) * double(ir::Type(i.dtype).bytes());
  return b;
}

}  // namespace kgen::ops::fusion
