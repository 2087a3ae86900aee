// The "selective_scan" op (ops/scan/ssm.h): kernels, variants, plan and reference.
//
// dims "B L Dm N"; attrs delta_softplus=0|1 (default 0), d_skip=0|1
// (default 1: the D input exists). Inputs u, delta, A, Bm, C[, D]; output y.
// Variants: impl=0 generic (wg work-items), impl=1 CPU lines (Dm >= 16; a
// last overlapping line where Dm % 16 != 0).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsl/dsl.h"
#include "ops/common/fast_exp.h"
#include "ops/core/op.h"
#include "ops/scan/problem.h"
#include "ops/scan/ssm.h"
#include "ops/scan/strategy.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// softplus(x) = log(1 + e^x), = x beyond 20 where e^x swamps the 1.
Value softplus(const Value& x, bool fast) {
  Value e = fast ? fast_exp(x) : exp(x);
  return select(x > 20.0f, x, log(e + 1.0f));
}

std::string name_of(const char* base, int n, bool softplus, bool d_skip) {
  return std::string(base) + "_n" + std::to_string(n) + (softplus ? "_softplus" : "") + (d_skip ? "_dskip" : "");
}

struct Params {
  Array u, delta, a, bm, c, d, y;
  Value len, dm;
};
Params params(KernelBuilder& kb, ir::Type io, bool d_skip) {
  Params p;
  p.u = kb.input("u", io);
  p.delta = kb.input("delta", io);
  p.a = kb.input("a", f32);
  p.bm = kb.input("bm", f32);
  p.c = kb.input("c", f32);
  if (d_skip) p.d = kb.input("d", io);
  p.y = kb.output("y", io);
  p.len = kb.scalar("len", i32);
  p.dm = kb.scalar("dm", i32);  // in elements of `io` (channels or 16-channel lines)
  return p;
}

}  // namespace

ir::Kernel selective_scan_generic_kernel(int n, bool sp, bool d_skip, int wg) {
  return kernel(name_of("selective_scan_generic", n, sp, d_skip) + "_w" + std::to_string(wg), [&](KernelBuilder& kb) {
    Params p = params(kb, f32, d_skip);
    auto total = kb.scalar("total", i32);  // B * Dm
    kb.workgroup(uint32_t(wg));
    Value gid = cast(i32, global_id(0));
    if_(gid < total, [&] {
      Value b = gid / p.dm, ch = gid % p.dm;
      std::vector<Value> arow;
      for (int k = 0; k < n; ++k) arow.push_back(p.a[ch * n + k]);
      Value dsk = d_skip ? p.d[ch].load() : Value();
      std::vector<Var> h;
      for (int k = 0; k < n; ++k) h.push_back(var(constant(f32, 0.0f)));
      for_range(0, p.len, [&](Value t) {
        Value bt = b * p.len + t;
        Value at = bt * p.dm + ch;
        Value dt = p.delta[at];
        if (sp) dt = softplus(dt, false);
        Value uu = p.u[at];
        Value du = dt * uu;
        Value acc = constant(f32, 0.0f);
        for (int k = 0; k < n; ++k) {
          Value hk = fma(exp(dt * arow[k]), h[k], du * p.bm[bt * n + k]);
          h[k] = hk;
          acc = fma(p.c[bt * n + k], hk, acc);
        }
        if (d_skip) acc = fma(dsk, uu, acc);
        p.y[at] = acc;
      });
    });
  });
}

ir::Kernel selective_scan_lines_kernel(int n, bool sp, bool d_skip, bool tail) {
  return kernel(name_of("selective_scan_lines", n, sp, d_skip) + (tail ? "_tail" : ""), [&](KernelBuilder& kb) {
    // dm: lines of 16 channels, or channels (tail: Dm % 16 != 0, scalar
    // buffers; the last group takes the last 16 channels, overlapping the
    // previous group, and stores only the channels past it).
    Params p = params(kb, tail ? f32 : line(f32, 16), d_skip);
    kb.workgroup(1);
    Value cg = cast(i32, group_id(0)), b = cast(i32, group_id(1));
    Value whole = tail ? p.dm / 16 : p.dm;                             // whole lines of channels
    Value c0 = tail ? select(cg < whole, cg * 16, p.dm - 16) : cg * 16;  // the group's first channel
    auto ld = [&](const Array& arr, const Value& at) { return tail ? load_line(arr, cast(u32, at)) : Value(arr[at]); };
    // (in line buffers, channel c0's line; with tail, its element index)
    auto line_at = [&](const Value& row) { return tail ? row * p.dm + c0 : row * p.dm + cg; };
    // A's column k over this line's 16 channels (A is Dm × N: strided),
    // gathered once.
    std::vector<Value> acol;
    for (int k = 0; k < n; ++k) {
      Value ln = splat(constant(f32, 0.0f), 16);
      for (int l = 0; l < 16; ++l) ln = insert(ln, l, p.a[(c0 + l) * n + k]);
      acol.push_back(ln);
    }
    Value dsk = d_skip ? (tail ? load_line(p.d, cast(u32, c0)) : p.d[cg].load()) : Value();
    std::vector<Var> h;
    for (int k = 0; k < n; ++k) h.push_back(var(splat(constant(f32, 0.0f), 16)));
    for_range(0, p.len, [&](Value t) {
      Value bt = b * p.len + t;
      Value at = line_at(bt);
      Value dt = ld(p.delta, at);
      if (sp) dt = softplus(dt, true);
      Value uu = ld(p.u, at);
      Value du = dt * uu;
      Value acc = splat(constant(f32, 0.0f), 16);
      for (int k = 0; k < n; ++k) {
        Value hk = fma(fast_exp(dt * acol[k]), h[k], du * splat(p.bm[bt * n + k], 16));
        h[k] = hk;
        acc = fma(splat(p.c[bt * n + k], 16), hk, acc);
      }
      if (d_skip) acc = fma(dsk, uu, acc);
      if (!tail) {
        p.y[at] = acc;
        return;
      }
      if_(cg < whole, [&] { store_line(p.y, cast(u32, at), acc); }).else_([&] {
        // The last group: only its channels from 16 * whole on (the others
        // are the previous group's).
        const Value skip = whole * 16 - c0;
        for (int l = 0; l < 16; ++l)
          if_(skip <= l, [&] { p.y[at + l] = extract(acc, l); });
      });
    });
  });
}

namespace {

using namespace ssm_detail;

void validate(const Problem& p) {
  if (p.dims.size() != 4) throw std::invalid_argument("expected dims B L Dm N");
  if (p.dtype != ir::ScalarKind::F32) throw std::invalid_argument("only f32");
  Shape s = shape_of(p);
  if (s.b < 1 || s.l < 1 || s.dm < 1 || s.n < 1) throw std::invalid_argument("every size must be >= 1");
  if (s.n > 64) throw std::invalid_argument("N > 64 is not supported (the state lives in registers)");
  if (double(s.b) * double(s.l) * double(std::max(s.dm, s.n)) >= 2e9)
    throw std::invalid_argument("too large: indices are 32-bit");
}

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  Shape s = shape_of(p);
  std::vector<Variant> c;
  c.push_back(Variant{}.set("impl", kGeneric).set("wg", is_cpu(caps) ? 1 : 64));
  if (is_cpu(caps) && lines_fit(s)) c.push_back(Variant{}.set("impl", kLines));
  return c;
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  (void)caps;
  Shape s = shape_of(p);
  Plan pl;
  std::vector<int> bufs = {0, 1, 2, 3, 4};
  if (s.d_skip) bufs.push_back(5);
  bufs.push_back(s.d_skip ? 6 : 5);
  Step st;
  st.buffers = bufs;
  if (v.get("impl") == kLines) {
    if (!lines_fit(s)) throw std::invalid_argument("selective_scan lines: Dm must be at least 16");
    const bool tail = s.dm % 16 != 0;
    st.kernel = selective_scan_lines_kernel(int(s.n), s.softplus, s.d_skip, tail);
    st.scalars = {ir::scalar_slot(int32_t(s.l)), ir::scalar_slot(int32_t(tail ? s.dm : s.dm / 16))};
    st.dims.grid = {uint32_t((s.dm + 15) / 16), uint32_t(s.b), 1};
  } else if (v.get("impl") == kGeneric) {
    int wg = int(v.get("wg", 64));
    st.kernel = selective_scan_generic_kernel(int(s.n), s.softplus, s.d_skip, wg);
    st.scalars = {ir::scalar_slot(int32_t(s.l)), ir::scalar_slot(int32_t(s.dm)), ir::scalar_slot(int32_t(s.b * s.dm))};
    st.dims.grid = {groups_for(s.b * s.dm, wg), 1, 1};
    st.dims.workgroup = {uint32_t(wg), 1, 1};
  } else {
    throw std::invalid_argument("selective_scan: unknown impl " + std::to_string(v.get("impl")));
  }
  pl.steps.push_back(std::move(st));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Shape s = shape_of(p);
  auto f = [&](int i) { return static_cast<const float*>(in[size_t(i)]); };
  const float *u = f(0), *delta = f(1), *a = f(2), *bm = f(3), *c = f(4);
  const float* dsk = s.d_skip ? f(5) : nullptr;
  float* y = static_cast<float*>(out[0]);
  std::vector<double> h(size_t(s.n));
  for (int64_t b = 0; b < s.b; ++b)
    for (int64_t d = 0; d < s.dm; ++d) {
      std::fill(h.begin(), h.end(), 0.0);
      for (int64_t t = 0; t < s.l; ++t) {
        const int64_t bt = b * s.l + t, at = bt * s.dm + d;
        double dt = delta[at];
        if (s.softplus) dt = dt > 20 ? dt : std::log1p(std::exp(dt));
        double acc = 0;
        for (int64_t k = 0; k < s.n; ++k) {
          h[k] = std::exp(dt * a[d * s.n + k]) * h[k] + dt * u[at] * bm[bt * s.n + k];
          acc += c[bt * s.n + k] * h[k];
        }
        if (dsk) acc += double(dsk[d]) * u[at];
        y[at] = float(acc);
      }
    }
}

Problem prob(std::vector<int64_t> dims, bool softplus, bool d_skip) {
  Problem p;
  p.op = "selective_scan";
  p.dims = std::move(dims);
  p.attrs["delta_softplus"] = softplus;
  p.attrs["d_skip"] = d_skip;
  return p;
}

}  // namespace

void register_selective_scan_op() {
  OpDef d;
  d.name = "selective_scan";
  d.attr_defaults = {{"delta_softplus", 0}, {"d_skip", 1}};
  d.description = "Mamba selective scan forward: h = exp(dt*A) h + dt*B*u, y = C.h (+ D*u)";
  d.dims_help = "B L Dm N";
  d.attrs_help = "delta_softplus=0|1 d_skip=0|1 (default 1)";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Shape s = shape_of(p);
    std::vector<TensorSpec> t = {
        tensor("u", ir::types::F32, {s.b, s.l, s.dm}),
        // Positive step sizes unless softplus maps them; decaying A (< 0).
        tensor("delta", ir::types::F32, {s.b, s.l, s.dm}, s.softplus ? -2.0 : 0.0, s.softplus ? 1.0 : 0.5),
        tensor("a", ir::types::F32, {s.dm, s.n}, -2.0, -0.05),
        tensor("bm", ir::types::F32, {s.b, s.l, s.n}),
        tensor("c", ir::types::F32, {s.b, s.l, s.n})};
    if (s.d_skip) t.push_back(tensor("d", ir::types::F32, {s.dm}));
    return t;
  };
  d.outputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("y", ir::types::F32, {s.b, s.l, s.dm})};
  };
  d.candidates = candidates;
  d.heuristic = selective_scan_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {kGeneric, kLines}, "0 a work-item per (batch, channel), 1 CPU lines of 16 channels"),
      key_range("wg", "workgroup", 1, 1024, "generic: work-items per workgroup"),
  };
  d.plan = plan;
  d.reference = reference;
  // Each y sums N terms of a state that is itself a decaying sum; the exps
  // (fast_exp ~2 ulp) and f32 rounding stay within a few ulp per term.
  d.tolerance = [](const Problem& p) { return 2e-5 * std::max(1.0, std::sqrt(double(shape_of(p).n))); };
  d.flops = [](const Problem& p) {
    Shape s = shape_of(p);
    return double(s.b * s.l * s.dm) * double(6 * s.n + 3);  // exp counted as one
  };
  d.bytes = [](const Problem& p) {
    Shape s = shape_of(p);
    return 4.0 * double(s.b * s.l * (3 * s.dm + 2 * s.n) + s.dm * (s.n + 1));
  };
  d.test_problems = {
      prob({1, 1, 1, 1}, false, true),
      prob({2, 7, 3, 5}, false, true),      // odd everything: the generic kernel
      prob({2, 33, 32, 16}, false, true),   // the lines kernel
      prob({1, 20, 48, 16}, true, true),    // softplus
      prob({2, 17, 16, 4}, true, false),    // no D skip
      prob({2, 9, 37, 16}, false, true),    // lines off whole lines: the last group overlaps (11 channels shared)
      prob({1, 5, 17, 3}, true, false),     // ... by 15 channels
  };
  d.bench_problems = {prob({2, 1024, 768, 16}, true, true)};
  register_op(std::move(d));
}

}  // namespace kgen::ops
