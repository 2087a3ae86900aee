// Elementwise ops with numpy broadcasting and casts, and fused chains:
// OpDefs over ops/elementwise/fusion.h (see ops/elementwise/broadcast.h for the problem encoding).
#include "ops/elementwise/broadcast.h"

#include <functional>
#include <map>
#include <stdexcept>

#include "ops/elementwise/strategy.h"

namespace kgen::ops {

using fusion::Chain;
using fusion::Expr;
using ir::Op;
using ir::ScalarKind;

namespace {

struct Fn {
  const char* name;
  Op op;
  double lo, hi;  // input range where the function is tame
};
// Unary "copy" is a pure cast (op unused).
const std::vector<Fn> kUnary = {{"neg", Op::Neg, -2, 2},   {"abs", Op::Abs, -2, 2},     {"exp", Op::Exp, -4, 4},
                                {"log", Op::Log, 0.05, 4},  {"sqrt", Op::Sqrt, 0, 4},    {"rsqrt", Op::Rsqrt, 0.05, 4},
                                {"tanh", Op::Tanh, -4, 4},  {"erf", Op::Erf, -3, 3},     {"sin", Op::Sin, -4, 4},
                                {"cos", Op::Cos, -4, 4},    {"floor", Op::Floor, -8, 8}, {"copy", Op::Add, -2, 2}};
const std::vector<Fn> kBinary = {{"add", Op::Add, -2, 2}, {"sub", Op::Sub, -2, 2}, {"mul", Op::Mul, -2, 2},
                                 {"div", Op::Div, 0.5, 2}, {"min", Op::Min, -2, 2}, {"max", Op::Max, -2, 2},
                                 {"pow", Op::Pow, 0.25, 2}};
// where: a > 0 ? b : c.
const std::vector<Fn> kTernary = {{"fma", Op::Fma, -2, 2}, {"where", Op::Select, -2, 2}};
const char* kChains[] = {"silu(x)*y", "(x+b)*s+r (b: row, s: scalar)", "gelu(x+b) (b: row)"};

std::string fn_help(const std::vector<Fn>& t) {
  std::string s = "fn=";
  for (size_t i = 0; i < t.size(); ++i) s += (i ? "|" : "") + std::to_string(i) + ":" + t[i].name;
  return s + " out=0(dtype)|1(f32)|2(f16)|3(bf16) ba/bb/bc=broadcast axis mask ra/rb/rc=input rank";
}

ScalarKind out_kind(const Problem& p) {
  switch (p.attr("out")) {
    case 0: return p.dtype;
    case 1: return ScalarKind::F32;
    case 2: return ScalarKind::F16;
    case 3: return ScalarKind::BF16;
    default: throw std::invalid_argument("out must be 0..3");
  }
}

const std::vector<Fn>& table_for(const std::string& op) {
  return op == "ew_unary" ? kUnary : op == "ew_binary" ? kBinary : kTernary;
}
int arity_of(const std::string& op) { return op == "ew_unary" ? 1 : op == "ew_binary" ? 2 : 3; }

Chain preset_chain(const Problem& p) {
  using namespace fusion;
  Chain c;
  c.name = "ew_chain" + std::to_string(p.attr("chain"));
  const auto& full = p.dims;
  std::vector<int64_t> row = {p.dims.back()};
  switch (p.attr("chain")) {
    case 0:
      c.inputs = {{"x", p.dtype, full}, {"y", p.dtype, full}};
      c.out = silu(in(0)) * in(1);
      break;
    case 1:
      c.inputs = {{"x", p.dtype, full}, {"b", p.dtype, row}, {"s", p.dtype, {1}}, {"r", p.dtype, full}};
      c.out = (in(0) + in(1)) * in(2) + in(3);
      break;
    case 2:
      c.inputs = {{"x", p.dtype, full}, {"b", p.dtype, row}};
      c.out = gelu(in(0) + in(1));
      break;
    default: throw std::invalid_argument("chain must be 0..2");
  }
  return c;
}

}  // namespace

std::vector<int64_t> elementwise_input_shape(const Problem& p, char k) {
  const int R = int(p.dims.size());
  int64_t mask = p.attr(std::string("b") + k), rank = p.attr(std::string("r") + k, R);
  if (rank < 0 || rank > R) throw std::invalid_argument("input rank must be 0..rank of the output");
  std::vector<int64_t> s;
  for (int a = R - int(rank); a < R; ++a) s.push_back((mask >> a) & 1 ? 1 : p.dims[size_t(a)]);
  return s;
}

Chain elementwise_chain(const Problem& p) {
  if (p.dims.empty() || p.dims.size() > 6) throw std::invalid_argument("dims: the output shape, rank 1..6");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (p.op == "ew_typed") return typed_chain(p);
  Chain c;
  if (p.op == "ew_chain") {
    c = preset_chain(p);
  } else {
    const auto& t = table_for(p.op);
    int64_t fn = p.attr("fn");
    if (fn < 0 || size_t(fn) >= t.size()) throw std::invalid_argument("fn out of range (" + fn_help(t) + ")");
    const Fn& f = t[size_t(fn)];
    c.name = p.op + "_" + f.name;
    const int n = arity_of(p.op);
    for (int i = 0; i < n; ++i) c.inputs.push_back({std::string(1, char('a' + i)), p.dtype, elementwise_input_shape(p, char('a' + i))});
    using fusion::in;
    if (n == 1) c.out = std::string(f.name) == "copy" ? in(0) : fusion::apply(f.op, {in(0)});
    else if (n == 2) c.out = fusion::apply(f.op, {in(0), in(1)});
    else if (f.op == Op::Fma) c.out = fusion::apply(Op::Fma, {in(0), in(1), in(2)});
    else c.out = fusion::apply(Op::Select, {fusion::apply(Op::Gt, {in(0), fusion::lit(0)}), in(1), in(2)});
  }
  c.out_dtype = out_kind(p);
  c.shape = p.dims;
  fusion::validate_chain(c);
  return c;
}

namespace {

// Node n over new operands.
Expr rebuild(const fusion::Node& n, const std::vector<Expr>& args) {
  switch (n.kind) {
    case fusion::Node::Kind::Round: return fusion::round_to(n.to, args[0]);
    case fusion::Node::Kind::Cast: return fusion::cast(n.to, args[0]);
    case fusion::Node::Kind::SaturateCast: return fusion::saturate_cast(n.to, args[0]);
    default: return fusion::apply(n.op, args);
  }
}

}  // namespace

void plan_unfused(Plan& pl, const Chain& c, const std::vector<int>& in_slots, int out_slot, const fusion::ChainVariant& v) {
  const size_t n_io = c.inputs.size() + 1;
  std::map<const fusion::Node*, std::pair<int, fusion::Input>> done;
  std::function<std::pair<int, fusion::Input>(const Expr&, bool)> mat = [&](const Expr& e, bool root) {
    const fusion::Node& n = *e.node;
    if (n.kind == fusion::Node::Kind::Input) return std::pair{in_slots[size_t(n.input)], c.inputs[size_t(n.input)]};
    if (auto it = done.find(&n); it != done.end()) return it->second;
    Chain one;
    one.name = c.name + "_step";
    one.shape = c.shape;
    std::vector<int> slots;
    std::vector<Expr> args;
    for (const Expr& a : n.args) {
      if (a.node->kind == fusion::Node::Kind::Const) {
        args.push_back(a);
        continue;
      }
      auto [slot, spec] = mat(a, false);
      args.push_back(fusion::in(int(one.inputs.size()), spec.dtype));
      spec.name = "in" + std::to_string(one.inputs.size());
      one.inputs.push_back(spec);
      slots.push_back(slot);
    }
    if (one.inputs.empty()) {  // an op of constants only: read a dummy input (never happens in presets)
      throw std::invalid_argument("plan_unfused: an op of constants");
    }
    one.out = rebuild(n, args);
    // Temporaries hold the node's kind exactly, so the steps compute what the chain does.
    one.out_dtype = root ? c.out_dtype : n.type;
    int slot = root ? out_slot : pl.add_temp(n_io, size_t(fusion::numel(c.shape)) * size_t(ir::Type(n.type).bytes()));
    fusion::plan_chain(pl, one, slots, slot, v);
    auto r = std::pair{slot, fusion::Input{"t", one.out_dtype, c.shape}};
    done[&n] = r;
    return r;
  };
  if (c.out.node->kind == fusion::Node::Kind::Input) {
    fusion::plan_chain(pl, c, in_slots, out_slot, v);  // a pure cast: one kernel anyway
    return;
  }
  mat(c.out, true);
}

namespace {

fusion::ChainVariant chain_variant(const Variant& v, const TargetCaps& caps) {
  fusion::ChainVariant cv;
  cv.lanes = int(v.get("lanes", is_cpu(caps) ? 16 : 1));
  cv.wg = int(v.get("wg", is_cpu(caps) ? 1 : 64));
  cv.chunk = v.get("chunk", is_cpu(caps) ? 8192 : 4096);
  cv.stream = v.get("stream") != 0;
  cv.prefetch = cv.lanes == 16 ? v.get("pf") : 0;
  cv.divide = cv.lanes == 16 && v.get("div") != 0;
  return cv;
}

// Every key the candidates, the heuristic and chain_variant read.
std::vector<VariantKey> elementwise_variant_keys() {
  return {key_set("impl", "implementation", {kEwFused, kEwUnfused}, "0: the chain fused into one kernel, 1: one kernel per op"),
          key_set("lanes", "line_lanes", {1, 16}, "16: 16-lane lines per work-item (CPU), 1: an element per work-item step"),
          key_range("wg", "workgroup", 1, 1024, "work-items per workgroup striding a chunk (lanes 1, GPU)"),
          key_range("chunk", "chunk_elements", 1, 1 << 24, "elements of the inner axis per workgroup (rounded down to 16, at least 16)"),
          key_set("stream", "streaming_stores", {0, 1}, "1: aligned output lines by streaming stores (lanes 16)"),
          key_range("pf", "prefetch_distance", 0, 1 << 20, "software prefetch this many elements ahead in each input (lanes 16; 0: none)"),
          key_set("div", "line_division", {0, 1}, "1: the sigmoid's reciprocal by a line division, 0: Newton steps (lanes 16)")};
}

}  // namespace

OpDef elementwise_def(const std::string& name, const std::string& desc, const std::string& attrs_help) {
  OpDef d;
  d.name = name;
  d.description = desc;
  d.dims_help = "output shape (rank 1..6)";
  d.attrs_help = attrs_help;
  d.validate = [](const Problem& p) { elementwise_chain(p); };
  d.inputs = [](const Problem& p) {
    Chain c = elementwise_chain(p);
    double lo = -2, hi = 2;
    if (p.op != "ew_chain") {
      const Fn& f = table_for(p.op)[size_t(p.attr("fn"))];
      lo = f.lo;
      hi = f.hi;
    }
    std::vector<TensorSpec> t;
    for (const auto& i : c.inputs) t.push_back(tensor(i.name, ir::Type(i.dtype), i.shape, lo, hi));
    return t;
  };
  d.outputs = [](const Problem& p) {
    Chain c = elementwise_chain(p);
    return std::vector<TensorSpec>{tensor("y", ir::Type(c.out_dtype), c.shape)};
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    std::vector<Variant> v;
    std::vector<int> impls = {kEwFused};
    if (p.op == "ew_chain") impls.push_back(kEwUnfused);
    const Chain c = elementwise_chain(p);
    const bool sigmoid = fusion::chain_has_sigmoid(c);
    for (int impl : impls) {
      if (is_cpu(caps)) {
        for (int64_t chunk : {4096, 8192, 32768}) v.push_back(Variant{}.set("impl", impl).set("lanes", 16).set("chunk", chunk));
        if (sigmoid) v.push_back(Variant{}.set("impl", impl).set("lanes", 16).set("chunk", 8192).set("div", 1));
        v.push_back(Variant{}.set("impl", impl).set("lanes", 1).set("chunk", 8192));
        // Streamed (on any layout: lines that land unaligned store plainly).
        for (int64_t pf : {int64_t(0), fusion::kStreamPrefetch}) {
          Variant s = Variant{}.set("impl", impl).set("lanes", 16).set("chunk", 8192).set("stream", 1);
          if (pf) s.set("pf", pf);
          v.push_back(s);
          if (sigmoid) v.push_back(Variant(s).set("div", 1));
        }
      } else {
        for (int wg : {64, 256}) v.push_back(Variant{}.set("impl", impl).set("lanes", 1).set("wg", wg).set("chunk", 4096));
      }
    }
    return v;
  };
  d.heuristic = elementwise_heuristic;
  d.variant_keys = elementwise_variant_keys();
  d.plan = [](const Problem& p, const Variant& v, const TargetCaps& caps) {
    Chain c = elementwise_chain(p);
    fusion::check_chain_target(c, caps);
    std::vector<int> slots;
    for (size_t i = 0; i < c.inputs.size(); ++i) slots.push_back(int(i));
    Plan pl;
    if (v.get("impl") == kEwUnfused) plan_unfused(pl, c, slots, int(slots.size()), chain_variant(v, caps));
    else fusion::plan_chain(pl, c, slots, int(slots.size()), chain_variant(v, caps));
    return pl;
  };
  d.reference = [](const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
    fusion::reference_chain(elementwise_chain(p), in, out[0]);
  };
  // f32: the kernels' exp/tanh/... are within 1-2 ulp of libm, and chains
  // (gelu: 1 + tanh cancels for negative inputs) can lose a few bits more,
  // relative to the outputs' rms. Narrow outputs: one rounding step of the type.
  d.tolerance = [](const Problem& p) {
    ScalarKind o = out_kind(p);
    return o == ScalarKind::F16 ? 2e-3 : o == ScalarKind::BF16 ? 1.6e-2 : 2e-5;
  };
  d.flops = [](const Problem& p) { return fusion::chain_flops(elementwise_chain(p)); };
  d.bytes = [](const Problem& p) { return fusion::chain_bytes(elementwise_chain(p)); };
  d.memory_bound = true;
  return d;
}

namespace {

Problem prob(const std::string& op, std::vector<int64_t> dims, std::map<std::string, int64_t> attrs,
             ScalarKind dt = ScalarKind::F32) {
  Problem p;
  p.op = op;
  p.dims = std::move(dims);
  p.attrs = std::move(attrs);
  p.dtype = dt;
  return p;
}

}  // namespace

void register_elementwise_ops() {
  const auto F16 = ScalarKind::F16, BF16 = ScalarKind::BF16;
  {
    OpDef d = elementwise_def("ew_unary", "y = f(a) elementwise, with a cast to the output type", fn_help(kUnary));
    for (int fn = 0; fn < int(kUnary.size()); ++fn) d.test_problems.push_back(prob("ew_unary", {1000}, {{"fn", fn}}));
    d.test_problems.push_back(prob("ew_unary", {1}, {{"fn", 2}}));
    d.test_problems.push_back(prob("ew_unary", {3, 5, 17}, {{"fn", 6}}));
    d.test_problems.push_back(prob("ew_unary", {7, 33}, {{"fn", 11}, {"out", 1}}, F16));   // f16 -> f32
    d.test_problems.push_back(prob("ew_unary", {7, 33}, {{"fn", 11}, {"out", 2}}));        // f32 -> f16
    d.test_problems.push_back(prob("ew_unary", {5, 31}, {{"fn", 2}, {"out", 1}}, BF16));   // exp bf16 -> f32
    d.test_problems.push_back(prob("ew_unary", {4, 3, 2}, {{"fn", 0}, {"ba", 0b010}}));   // a: 4x1x2
    d.bench_problems.push_back(prob("ew_unary", {int64_t(1) << 26}, {{"fn", 0}}));
    d.bench_problems.push_back(prob("ew_unary", {int64_t(1) << 26}, {{"fn", 11}, {"out", 1}}, F16));
    register_op(std::move(d));
  }
  {
    OpDef d = elementwise_def("ew_binary", "y = f(a, b) elementwise with numpy broadcasting", fn_help(kBinary));
    for (int fn = 0; fn < int(kBinary.size()); ++fn) d.test_problems.push_back(prob("ew_binary", {1001}, {{"fn", fn}}));
    d.test_problems.push_back(prob("ew_binary", {37, 29}, {{"fn", 0}, {"bb", 0b01}, {"rb", 1}}));      // row vector + matrix
    d.test_problems.push_back(prob("ew_binary", {37, 29}, {{"fn", 2}, {"bb", 0b10}}));                 // column (37x1)
    d.test_problems.push_back(prob("ew_binary", {37, 29}, {{"fn", 1}, {"ba", 0b11}, {"ra", 0}}));      // scalar - matrix
    d.test_problems.push_back(prob("ew_binary", {5, 7, 48}, {{"fn", 0}, {"bb", 0b010}}));              // middle axis
    d.test_problems.push_back(prob("ew_binary", {3, 1, 5, 7}, {{"fn", 5}, {"ba", 0b0100}, {"bb", 0b1001}}));  // both
    d.test_problems.push_back(prob("ew_binary", {2, 3, 4, 5, 6, 7}, {{"fn", 0}, {"bb", 0b101010}, {"rb", 5}}));  // 6-D
    d.test_problems.push_back(prob("ew_binary", {9, 40}, {{"fn", 2}, {"bb", 0b01}, {"rb", 1}, {"out", 1}}, F16));  // f16 -> f32
    d.test_problems.push_back(prob("ew_binary", {1}, {{"fn", 0}}));
    // A short inner axis folded with periodic inputs (ops/elementwise/fusion.h: Layout::period): b (3) over 5x37 rows;
    // b per batch and channel (2x1x1x6); 3000 rows of 3 in two chunks (the second starts mid-period).
    d.test_problems.push_back(prob("ew_binary", {5, 37, 3}, {{"fn", 1}, {"bb", 0b011}, {"rb", 3}}));
    d.test_problems.push_back(prob("ew_binary", {2, 9, 7, 6}, {{"fn", 3}, {"bb", 0b0110}, {"rb", 4}}));
    d.test_problems.push_back(prob("ew_binary", {3000, 3}, {{"fn", 2}, {"bb", 0b01}, {"rb", 1}}));
    d.bench_problems.push_back(prob("ew_binary", {int64_t(1) << 26}, {{"fn", 0}}));
    d.bench_problems.push_back(prob("ew_binary", {16384, 4096}, {{"fn", 0}, {"bb", 0b01}, {"rb", 1}}));
    d.bench_problems.push_back(prob("ew_binary", {16384, 4096}, {{"fn", 2}, {"bb", 0b10}}));
    register_op(std::move(d));
  }
  {
    OpDef d = elementwise_def("ew_ternary", "y = fma(a, b, c) or where(a > 0, b, c) with broadcasting", fn_help(kTernary));
    d.test_problems.push_back(prob("ew_ternary", {500}, {{"fn", 0}}));
    d.test_problems.push_back(prob("ew_ternary", {11, 45}, {{"fn", 0}, {"bb", 0b01}, {"bc", 0b10}}));
    d.test_problems.push_back(prob("ew_ternary", {6, 5, 19}, {{"fn", 1}, {"ba", 0b001}, {"rc", 1}}));
    // two periodic inputs (period 7), and a column input that keeps the short axis unfolded
    d.test_problems.push_back(prob("ew_ternary", {300, 7}, {{"fn", 0}, {"bb", 0b01}, {"rb", 1}, {"bc", 0b01}, {"rc", 1}}));
    d.test_problems.push_back(prob("ew_ternary", {40, 5}, {{"fn", 1}, {"bb", 0b01}, {"rb", 1}, {"bc", 0b10}}));
    d.bench_problems.push_back(prob("ew_ternary", {int64_t(1) << 25}, {{"fn", 0}}));
    register_op(std::move(d));
  }
  {
    std::string help = "chain=";
    for (int i = 0; i < 3; ++i) help += std::string(i ? "|" : "") + std::to_string(i) + ":" + kChains[i];
    help += " out=0|1|2|3 (variants: impl=0 fused, impl=1 one kernel per op)";
    OpDef d = elementwise_def("ew_chain", "a preset elementwise chain fused into one kernel", help);
    for (int ch = 0; ch < 3; ++ch) {
      d.test_problems.push_back(prob("ew_chain", {1003}, {{"chain", ch}}));
      d.test_problems.push_back(prob("ew_chain", {5, 3, 37}, {{"chain", ch}}));
      d.test_problems.push_back(prob("ew_chain", {9, 64}, {{"chain", ch}, {"out", 1}}, F16));
      d.bench_problems.push_back(prob("ew_chain", {8192, 4096}, {{"chain", ch}}));
    }
    register_op(std::move(d));
  }
  register_op(typed_elementwise_def());
}

}  // namespace kgen::ops
