#include "ops/elementwise/fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ir/half.h"
#include "ops/common/fast_math.h"
#include "ops/common/fast_exp.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops::fusion {

using namespace kgen::dsl;
using ir::Op;
using ir::ScalarKind;

namespace {

Expr node(Node n) { return Expr{std::make_shared<const Node>(std::move(n))}; }

bool is_compare(Op op) { return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq || op == Op::Ne; }
int arity(Op op) {
  switch (op) {
    case Op::Neg: case Op::Abs: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Sqrt:
    case Op::Rsqrt: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Erf: case Op::Floor: case Op::Ceil:
    case Op::Round: case Op::Trunc:
      return 1;
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Min: case Op::Max: case Op::Pow:
      return 2;
    case Op::Fma: case Op::Select: return 3;
    default: return is_compare(op) ? 2 : 0;
  }
}

bool storage_ok(ScalarKind k) { return k == ScalarKind::F32 || k == ScalarKind::F16 || k == ScalarKind::BF16; }

}  // namespace

Expr in(int input) {
  Node n;
  n.kind = Node::Kind::Input;
  n.input = input;
  return node(std::move(n));
}
Expr lit(double v) {
  Node n;
  n.kind = Node::Kind::Const;
  n.value = v;
  return node(std::move(n));
}
Expr apply(Op op, std::vector<Expr> args) {
  if (arity(op) == 0 || size_t(arity(op)) != args.size())
    throw std::invalid_argument("fusion: op '" + std::string(ir::op_name(op)) + "' is not an elementwise op of " +
                                std::to_string(args.size()) + " operands");
  Node n;
  n.kind = Node::Kind::Op;
  n.op = op;
  n.args = std::move(args);
  return node(std::move(n));
}
Expr round_to(ScalarKind to, Expr a) {
  Node n;
  n.kind = Node::Kind::Round;
  n.to = to;
  n.args = {std::move(a)};
  return node(std::move(n));
}
Expr operator+(Expr a, Expr b) { return apply(Op::Add, {a, b}); }
Expr operator-(Expr a, Expr b) { return apply(Op::Sub, {a, b}); }
Expr operator*(Expr a, Expr b) { return apply(Op::Mul, {a, b}); }
Expr operator/(Expr a, Expr b) { return apply(Op::Div, {a, b}); }
Expr operator-(Expr a) { return apply(Op::Neg, {a}); }
Expr max(Expr a, Expr b) { return apply(Op::Max, {a, b}); }
Expr min(Expr a, Expr b) { return apply(Op::Min, {a, b}); }
Expr exp(Expr a) { return apply(Op::Exp, {a}); }
Expr tanh(Expr a) { return apply(Op::Tanh, {a}); }
Expr sigmoid(Expr a) { return lit(1.0) / (lit(1.0) + exp(-a)); }
Expr silu(Expr a) { return a * sigmoid(a); }
// 0.5 (1 + tanh(z)) == sigmoid(2 z): the same function through one exp and
// one division, ~3x cheaper than the (bit-exact, fdlibm) tanh on lines.
// -2z = a (-2k c a^2 - 2k) (k = sqrt(2/pi), c = 0.044715): one multiply and
// one fma after a^2, where the textbook form takes five ops and a negation
// (the CPU's gelu chain is bound by its arithmetic, not by DRAM).
Expr gelu(Expr a) {
  const double k2 = 2 * 0.7978845608028654;
  Expr minus_z2 = a * apply(Op::Fma, {a * a, lit(-k2 * 0.044715), lit(-k2)});
  return a / (lit(1.0) + exp(minus_z2));
}
Expr relu(Expr a) { return max(a, lit(0.0)); }

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

// Checks the tree and returns whether it yields a bool (a comparison).
bool check_node(const Chain& c, const Expr& e) {
  if (!e.node) throw std::invalid_argument("fusion: empty expression");
  const Node& n = *e.node;
  switch (n.kind) {
    case Node::Kind::Input:
      if (n.input < 0 || size_t(n.input) >= c.inputs.size())
        throw std::invalid_argument("fusion: input index " + std::to_string(n.input) + " out of range");
      return false;
    case Node::Kind::Const: return false;
    case Node::Kind::Round:
      if (!storage_ok(n.to)) throw std::invalid_argument("fusion: round_to needs f32, f16 or bf16");
      if (check_node(c, n.args[0])) throw std::invalid_argument("fusion: round_to of a bool");
      return false;
    case Node::Kind::Op: {
      std::vector<bool> b;
      for (const auto& a : n.args) b.push_back(check_node(c, a));
      if (n.op == Op::Select) {
        if (!b[0] || b[1] || b[2]) throw std::invalid_argument("fusion: select(bool, number, number)");
        return false;
      }
      for (bool x : b)
        if (x) throw std::invalid_argument("fusion: a comparison's result used as a number");
      return is_compare(n.op);
    }
  }
  return false;
}

}  // namespace

void validate_chain(const Chain& c) {
  if (c.inputs.empty()) throw std::invalid_argument("fusion: a chain needs an input");
  if (c.shape.size() > 6) throw std::invalid_argument("fusion: rank > 6");
  if (!storage_ok(c.out_dtype)) throw std::invalid_argument("fusion: output dtype must be f32, f16 or bf16");
  for (const auto& i : c.inputs) {
    if (!storage_ok(i.dtype)) throw std::invalid_argument("fusion: input '" + i.name + "' dtype must be f32, f16 or bf16");
    if (i.shape.size() > c.shape.size()) throw std::invalid_argument("fusion: input '" + i.name + "' has a higher rank than the output");
    size_t off = c.shape.size() - i.shape.size();
    for (size_t a = 0; a < i.shape.size(); ++a)
      if (i.shape[a] != 1 && i.shape[a] != c.shape[off + a])
        throw std::invalid_argument("fusion: input '" + i.name + "' does not broadcast to the output shape");
  }
  for (int64_t d : c.shape)
    if (d < 1) throw std::invalid_argument("fusion: sizes must be >= 1");
  if (double(numel(c.shape)) >= 4e9) throw std::invalid_argument("fusion: too large: indices are 32-bit");
  if (check_node(c, c.out)) throw std::invalid_argument("fusion: the result is a comparison (bool); select a number");
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

// x / (1 + e^y) without the target's exp: the sigmoid inside silu and the
// tanh-form gelu, where the exact exp made the fused chain compute-bound on
// the CPU. `divide`: 1/d by a line division (strategy.h: cheap_line_division);
// else by Newton steps, where vdivps zmm (one per ~10 cycles) is the bound:
// y is clamped to [-87, 87], so d = 1 + e^y <= 6.1e37 < 2^126 and 1/d is a
// normal float, which the integer first guess (0x7ef311c3 - bits(d), within
// 12%) needs; three steps (the error squares each time: 1.4e-2, 2e-4, 4e-8)
// reach ~1 ulp. A NaN y stays NaN. Differs from the exact form only where
// |y| > 87: there the result is ~1.6e-38 * x instead of (nearly) 0, or
// x / (1 + 1.6e-38); and x = -inf with y = +inf (gelu/silu at -inf) gives
// -inf where the exact form's inf / inf is NaN (the limit is 0 for both).
Value sigmoid_div(const Value& x, const Value& y, bool divide) {
  const ir::Type ft = y.type(), ut = ft.lanes > 1 ? line(u32, ft.lanes) : ir::Type(u32);
  // The upper clamp as a select that keeps a NaN y (one vminps with the
  // NaN-passing operand order), as fast_exp's lower one does, so NaN reaches
  // d and the quotient without a compare and blend at the end.
  Value d = fast_exp(select(y > 87.0f, 87.0f, y), /*nonpositive=*/true) + 1.0f;  // "nonpositive": no upper clamp of its own
  if (divide) return x / d;
  Value r = bitcast(ft, 0x7ef311c3u - bitcast(ut, d));
  for (int i = 0; i < 3; ++i) r = fma(r, fma(-d, r, 1.0f), r);
  return x * r;
}

bool is_const(const Expr& e, double v) { return e.node->kind == Node::Kind::Const && e.node->value == v; }
bool is_op(const Expr& e, Op op) { return e.node->kind == Node::Kind::Op && e.node->op == op; }

// The exponent y when `d` is 1 + exp(y) (either order).
const Expr* one_plus_exp(const Expr& d) {
  if (!is_op(d, Op::Add)) return nullptr;
  const auto& a = d.node->args;
  if (is_const(a[0], 1.0) && is_op(a[1], Op::Exp)) return &a[1].node->args[0];
  if (is_const(a[1], 1.0) && is_op(a[0], Op::Exp)) return &a[0].node->args[0];
  return nullptr;
}

// Does the chain hold an x / (1 + exp(y)) (a sigmoid_div in the CPU form)?
bool has_sigmoid_div(const Expr& e) {
  if (is_op(e, Op::Div) && one_plus_exp(e.node->args[1])) return true;
  for (const auto& a : e.node->args)
    if (has_sigmoid_div(a)) return true;
  return false;
}

// The chain evaluated in f32 (lanes == 1) or f32 lines on DSL values.
// fast (CPU kernels): x / (1 + exp(y)) by sigmoid_div.
struct Evaluator {
  const Chain& c;
  int lanes;
  std::function<Value(int)> input;  // f32 value of input i at the current element(s)
  std::map<const Node*, Value> memo;
  bool fast = false;
  bool divide = false;  // fast: the reciprocal by a line division, not Newton steps

  ir::Type f32t() const { return lanes == 1 ? ir::Type(f32) : line(f32, lanes); }
  Value eval(const Expr& e) {
    auto it = memo.find(e.node.get());
    if (it != memo.end()) return it->second;
    Value v = compute(*e.node);
    memo[e.node.get()] = v;
    return v;
  }
  Value compute(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Input: return input(n.input);
      case Node::Kind::Const: {
        Value k = constant(f32, float(n.value));
        return lanes == 1 ? k : splat(k, lanes);
      }
      case Node::Kind::Round: {
        ir::Type t = lanes == 1 ? ir::Type(n.to) : line(ir::Type(n.to), lanes);
        return cast(f32t(), cast(t, eval(n.args[0])));
      }
      case Node::Kind::Op: break;
    }
    if (fast && n.op == Op::Div)
      if (const Expr* y = one_plus_exp(n.args[1])) return sigmoid_div(eval(n.args[0]), eval(*y), divide);
    std::vector<Value> a;
    for (const auto& x : n.args) a.push_back(eval(x));
    switch (n.op) {
      case Op::Neg: return -a[0];
      case Op::Abs: return abs(a[0]);
      case Op::Exp: return exp(a[0]);
      case Op::Exp2: return exp2(a[0]);
      case Op::Log: return log(a[0]);
      case Op::Log2: return log2(a[0]);
      case Op::Sqrt: return sqrt(a[0]);
      case Op::Rsqrt: return rsqrt(a[0]);
      case Op::Sin: return sin(a[0]);
      case Op::Cos: return cos(a[0]);
      // The CPU lines: polynomial forms (ops/common/fast_math.h), 6-20x faster
      // than the glibc-exact ones, within 1.4 ulp.
      case Op::Tanh: return fast ? fast_tanh(a[0]) : tanh(a[0]);
      case Op::Erf: return fast ? fast_erf(a[0]) : erf(a[0]);
      case Op::Floor: return floor(a[0]);
      case Op::Ceil: return ceil(a[0]);
      case Op::Round: return round(a[0]);
      case Op::Trunc: return trunc(a[0]);
      case Op::Add: return a[0] + a[1];
      case Op::Sub: return a[0] - a[1];
      case Op::Mul: return a[0] * a[1];
      case Op::Div: return a[0] / a[1];
      case Op::Min: return min(a[0], a[1]);
      case Op::Max: return max(a[0], a[1]);
      case Op::Pow: return pow(a[0], a[1]);
      case Op::Lt: return a[0] < a[1];
      case Op::Le: return a[0] <= a[1];
      case Op::Gt: return a[0] > a[1];
      case Op::Ge: return a[0] >= a[1];
      case Op::Eq: return a[0] == a[1];
      case Op::Ne: return a[0] != a[1];
      case Op::Fma: return fma(a[0], a[1], a[2]);
      case Op::Select: return select(a[0], a[1], a[2]);
      default: break;
    }
    throw std::invalid_argument("fusion: unsupported op " + std::string(ir::op_name(n.op)));
  }
};

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
    // Inputs constant along the inner axis: one load per group.
    std::vector<Value> bc(ni);
    for (size_t i = 0; i < ni; ++i)
      if (l.strides[i].back() == 0) bc[i] = cast(f32, x[i][off[i]]);
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
            for (uint32_t e = 0; e < 16; ++e) lanes.push_back(cast(f32, x[i][off[i] + (start + (16 * q + e)) % P]));
            pattern[i].push_back(make_line(lanes));
          }
    // q: the pattern line of element j's line (lanes 16).
    auto body = [&](int lanes, Value j, uint32_t q = 0) {
      // The CPU form (lanes 16) takes the division-free sigmoid; GPUs keep
      // their native exp and division (fast_exp's rounding trick is not safe
      // under their compilers' reassociation).
      Evaluator ev{c, lanes, {}, {}, L == 16, v.divide};
      ev.input = [&](int i) -> Value {
        if (bc[i].valid()) return lanes == 1 ? bc[i] : splat(bc[i], lanes);
        if (uint32_t P = uint32_t(l.period_of(size_t(i)))) {
          if (lanes == 1) return cast(f32, x[i][off[i] + j % P]);
          return pattern[size_t(i)][q];
        }
        Value at = off[i] + j;
        if (lanes == 1) return cast(f32, x[i][at]);
        // 64-bit indices: clang merges the 16 loads into one vector load only
        // when it can prove the addresses consecutive, which u32 index
        // arithmetic (wrapping) does not let it.
        Value at64 = cast(u64, at);
        std::vector<Operand> ls;
        for (int q = 0; q < lanes; ++q) ls.emplace_back(Value(x[i][at64 + uint64_t(q)]), ir::SourceLoc{});
        Value ln = make_line({ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], ls[7], ls[8], ls[9], ls[10], ls[11],
                              ls[12], ls[13], ls[14], ls[15]});
        return cast(line(f32, lanes), ln);
      };
      Value r = ev.eval(c.out);
      ir::Type ot = lanes == 1 ? ir::Type(c.out_dtype) : line(ir::Type(c.out_dtype), lanes);
      r = cast(ot, r);
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

float load_as_f32(ScalarKind k, const void* base, int64_t i) {
  switch (k) {
    case ScalarKind::F32: return static_cast<const float*>(base)[i];
    case ScalarKind::F16: return ir::f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case ScalarKind::BF16: return ir::bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    default: throw std::invalid_argument("load_as_f32: unsupported dtype");
  }
}
std::vector<float> load_all_as_f32(ScalarKind k, const void* base, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = load_as_f32(k, base, i);
  return v;
}
void store_from_f32(ScalarKind k, void* base, int64_t i, float v) {
  switch (k) {
    case ScalarKind::F32: static_cast<float*>(base)[i] = v; return;
    case ScalarKind::F16: static_cast<uint16_t*>(base)[i] = ir::f32_to_f16(v); return;
    case ScalarKind::BF16: static_cast<uint16_t*>(base)[i] = ir::f32_to_bf16(v); return;
    default: throw std::invalid_argument("store_from_f32: unsupported dtype");
  }
}

namespace {

float ref_eval(const Node& n, const std::vector<float>& inputs) {
  auto a = [&](int k) { return ref_eval(*n.args[size_t(k)].node, inputs); };
  switch (n.kind) {
    case Node::Kind::Input: return inputs[size_t(n.input)];
    case Node::Kind::Const: return float(n.value);
    case Node::Kind::Round: {
      float v = a(0);
      return n.to == ScalarKind::F16 ? ir::round_f16(v) : n.to == ScalarKind::BF16 ? ir::round_bf16(v) : v;
    }
    case Node::Kind::Op: break;
  }
  switch (n.op) {
    case Op::Neg: return -a(0);
    case Op::Abs: return std::fabs(a(0));
    case Op::Exp: return std::exp(a(0));
    case Op::Exp2: return std::exp2(a(0));
    case Op::Log: return std::log(a(0));
    case Op::Log2: return std::log2(a(0));
    case Op::Sqrt: return std::sqrt(a(0));
    case Op::Rsqrt: return 1.0f / std::sqrt(a(0));
    case Op::Sin: return std::sin(a(0));
    case Op::Cos: return std::cos(a(0));
    case Op::Tanh: return std::tanh(a(0));
    case Op::Erf: return std::erf(a(0));
    case Op::Floor: return std::floor(a(0));
    case Op::Ceil: return std::ceil(a(0));
    case Op::Round: return std::nearbyint(a(0));
    case Op::Trunc: return std::trunc(a(0));
    case Op::Add: return a(0) + a(1);
    case Op::Sub: return a(0) - a(1);
    case Op::Mul: return a(0) * a(1);
    case Op::Div: return a(0) / a(1);
    case Op::Min: return std::fmin(a(0), a(1));
    case Op::Max: return std::fmax(a(0), a(1));
    case Op::Pow: return std::pow(a(0), a(1));
    case Op::Lt: return a(0) < a(1);
    case Op::Le: return a(0) <= a(1);
    case Op::Gt: return a(0) > a(1);
    case Op::Ge: return a(0) >= a(1);
    case Op::Eq: return a(0) == a(1);
    case Op::Ne: return a(0) != a(1);
    case Op::Fma: return std::fma(a(0), a(1), a(2));
    case Op::Select: return a(0) != 0 ? a(1) : a(2);
    default: break;
  }
  throw std::invalid_argument("fusion reference: unsupported op");
}

int count_ops(const Node& n) {
  int k = n.kind == Node::Kind::Op ? 1 : 0;
  for (const auto& a : n.args) k += count_ops(*a.node);
  return k;
}

}  // namespace

void reference_chain(const Chain& c, const std::vector<const void*>& in, void* out) {
  Layout l = layout_of(c, /*periodic=*/false);  // the plain walk, whatever the kernels' layout
  const int R = int(l.dims.size());
  const size_t ni = c.inputs.size();
  const int64_t inner = l.inner(), rows = l.rows();
  std::vector<float> vals(ni);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> off(ni, 0);
    int64_t rem = r;
    for (int k = R - 2; k >= 0; --k) {
      int64_t ck = rem % l.dims[size_t(k)];
      rem /= l.dims[size_t(k)];
      for (size_t i = 0; i < ni; ++i) off[i] += ck * l.strides[i][size_t(k)];
    }
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t i = 0; i < ni; ++i) vals[i] = load_as_f32(c.inputs[i].dtype, in[i], off[i] + j * l.strides[i].back());
      store_from_f32(c.out_dtype, out, r * inner + j, ref_eval(*c.out.node, vals));
    }
  }
}

double chain_flops(const Chain& c) { return double(count_ops(*c.out.node)) * double(numel(c.shape)); }

double chain_bytes(const Chain& c) {
  double b = double(numel(c.shape)) * double(ir::Type(c.out_dtype).bytes());
  for (const auto& i : c.inputs) b += double(numel(i.shape)) * double(ir::Type(i.dtype).bytes());
  return b;
}

}  // namespace kgen::ops::fusion
