// The topk kernels of ops/select/topk.h, both for any k ≤ n without scratch
// memory: in the total order (value, then lower index first)
//  - selection: k passes, each taking the best value ranked strictly after
//    the previous pick;
//  - insertion: one pass keeping the best so far sorted in the outputs
//    themselves; a value enters only when it beats the current k-th, and
//    moves up past the values it beats (not equal ones: ties stay in index
//    order).
#include <string>

#include "dsl/dsl.h"
#include "ops/common/wrapped_group.h"
#include "ops/select/topk.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// Does a value a rank before b (ignoring indices)?
Value beats(const Value& a, const Value& b, bool largest) { return largest ? a > b : a < b; }

// One row's work: x's row starts at in_base, the outputs' at out_base,
// both with stride `inner`.
struct Row {
  Array x, values, indices;
  Value n, inner, k, in_base, out_base;
};

void select_passes(const Row& w, ir::Type dt, bool largest) {
  auto& [x, values, indices, n, inner, k, in_base, out_base] = w;
  Var prev_v = var(dt, constant(dt, 0)), prev_i = var(i32, -1);
  for_range(0, k, [&](Value t) {
    Var best_v = var(dt, constant(dt, 0)), best_i = var(i32, -1);
    for_range(0, n, [&](Value j) {
      Value v = x[in_base + j * inner];
      Value pv = prev_v.get(), pi = prev_i.get();
      Value after_prev = pi < 0 || beats(pv, v, largest) || (pv == v && pi < j);
      Value better = best_i.get() < 0 || beats(v, best_v.get(), largest);
      if_(after_prev && better, [&] {
        best_v = v;
        best_i = j;
      });
    });
    Value at = out_base + t * inner;
    values[at] = best_v.get();
    indices[at * 2] = bitcast(u32, best_i.get());
    indices[at * 2 + 1] = constant(u32, 0u);
    prev_v = best_v.get();
    prev_i = best_i.get();
  });
}

void insert_sorted(const Row& w, bool largest) {
  auto& [x, values, indices, n, inner, k, in_base, out_base] = w;
  Var count = var(i32, 0);
  for_range(0, n, [&](Value j) {
    Value v = x[in_base + j * inner];
    // Not full yet, or v beats the k-th (a load in bounds either way).
    Value enters = count.get() < k || beats(v, values[out_base + (k - 1) * inner], largest);
    if_(enters, [&] {
      Var p = var(i32, min(count.get(), k - 1));
      loop_([&] {
        if_(p.get() == 0, [&] { break_(); });
        Value above = out_base + (p.get() - 1) * inner;
        if_(!beats(v, values[above], largest), [&] { break_(); });
        Value at = above + inner;
        values[at] = values[above].load();
        indices[at * 2] = indices[above * 2].load();
        p -= 1;
      });
      Value at = out_base + p.get() * inner;
      values[at] = v;
      indices[at * 2] = bitcast(u32, j);
      count = min(count.get() + 1, k);
    });
  });
  for_range(0, k, [&](Value t) { indices[(out_base + t * inner) * 2 + 1] = constant(u32, 0u); });
}

}  // namespace

ir::Kernel topk_kernel(ir::Type dt, bool largest, bool insertion, int wg) {
  const std::string name = std::string("topk_") + (insertion ? "insert_" : "passes_") + dt.str() +
                           (largest ? "_largest" : "_smallest") + "_w" + std::to_string(wg);
  return kernel(name, [&](KernelBuilder& kb) {
    // Insertion reads back what it wrote.
    Row w{kb.input("x", dt), insertion ? kb.inout("values", dt) : kb.output("values", dt),
          insertion ? kb.inout("indices", u32) : kb.output("indices", u32)};
    w.n = kb.scalar("n", i32);
    w.inner = kb.scalar("inner", i32);
    w.k = kb.scalar("k", i32);
    auto rows = kb.scalar("rows", i32);
    kb.workgroup(uint32_t(wg));
    Value r = cast(i32, wrapped_group_id() * uint32_t(wg) + local_id(0));
    if_(r < rows, [&] {
      Value o = r / w.inner, q = r % w.inner;
      w.in_base = o * w.n * w.inner + q;
      w.out_base = o * w.k * w.inner + q;
      if (insertion) insert_sorted(w, largest);
      else select_passes(w, dt, largest);
    });
  });
}

}  // namespace kgen::ops
