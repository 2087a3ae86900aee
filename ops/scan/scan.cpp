// The "scan" op: inclusive/exclusive prefix sums of each row.
//
// dims "n" or "rows n"; dtype f32 or i32; attrs exclusive=0|1.
// Variants: impl=0 Blelloch (wg work-items, blocks of 2·wg, multi-level),
// impl=1 CPU chunked sequential scan (chunks per row: 1 = one pass),
// impl=2 CPU single pass in lines, chunks of cl elements (0: one per row)
// with look-back, impl=3 CPU rows of 2..24 values, 16 rows in lanes. The
// choice among them: ops/scan/strategy.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "ops/core/op.h"
#include "ops/scan/problem.h"
#include "ops/scan/scan.h"
#include "ops/scan/ssm.h"
#include "ops/scan/strategy.h"

namespace kgen::ops {

namespace {

using namespace scan_detail;

void validate(const Problem& p) {
  if (p.dims.empty() || p.dims.size() > 2) throw std::invalid_argument("expected dims n or rows n");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::I32) throw std::invalid_argument("only f32 and i32");
  Shape s = shape_of(p);
  if (s.rows < 1 || s.n < 1) throw std::invalid_argument("rows and n must be >= 1");
  if (double(s.rows) * double(s.n) >= 2e9) throw std::invalid_argument("too large: indices are 32-bit");
}

std::vector<Variant> candidates(const Problem& p, const TargetCaps& caps) {
  std::vector<Variant> c;
  for (int wg : {64, 128, 256}) {
    if (caps.max_workgroup_threads && uint32_t(wg) > caps.max_workgroup_threads) continue;
    if (!is_cpu(caps) || wg == 128) c.push_back(Variant{}.set("impl", kBlelloch).set("wg", wg));
  }
  if (is_cpu(caps)) {
    const Shape sh = shape_of(p);
    if (narrow_rows(sh)) c.push_back(Variant{}.set("impl", kNarrow));
    for (int ch : {1, 2, 4, 8}) c.push_back(Variant{}.set("impl", kChunked).set("chunks", ch));
    const bool lines = whole_lines(shape_of(p));
    for (int cl : {0, 8192, 32768, 65536, 131072}) {
      c.push_back(Variant{}.set("impl", kLookback).set("cl", cl));
      if (lines) c.push_back(Variant{}.set("impl", kLookback).set("cl", cl).set("nt", 1));
      if (lines && cl) c.push_back(Variant{}.set("impl", kLookback).set("cl", cl).set("nt", 1).set("pa", 1));
    }
  }
  return c;
}

// Scans `in` (rows × len) into `out`, adding kernels to `pl`; recursive over
// the block totals.
void blelloch_level(Plan& pl, const Shape& s, int in, int out, int64_t len, bool exclusive, int wg) {
  const size_t n_io = 2;
  const int64_t block = 2 * wg, nb = (len + block - 1) / block;
  const size_t eb = 4;
  int sums = pl.add_temp(n_io, size_t(s.rows * nb) * eb);
  Step st{scan_block_kernel(s.dt, wg, exclusive), {}, {in, out, sums},
          {ir::scalar_slot(int32_t(len)), ir::scalar_slot(int32_t(nb))}};
  st.dims.grid = {uint32_t(nb), uint32_t(s.rows), 1};
  st.dims.workgroup = {uint32_t(wg), 1, 1};
  pl.steps.push_back(std::move(st));
  if (nb == 1) return;
  int offs = pl.add_temp(n_io, size_t(s.rows * nb) * eb);
  blelloch_level(pl, s, sums, offs, nb, true, wg);
  Step ab{scan_add_back_kernel(s.dt, int(block)), {}, {out, offs},
          {ir::scalar_slot(int32_t(len)), ir::scalar_slot(int32_t(nb))}};
  ab.dims.grid = {groups_for(len, 64), uint32_t(s.rows), 1};
  ab.dims.workgroup = {64, 1, 1};
  pl.steps.push_back(std::move(ab));
}

Plan plan(const Problem& p, const Variant& v, const TargetCaps& caps) {
  Shape s = shape_of(p);
  Plan pl;
  if (v.get("impl") == kBlelloch) {
    int wg = int(v.get("wg", 128));
    if (wg < 1 || (wg & (wg - 1))) throw std::invalid_argument("scan: wg must be a power of two");
    blelloch_level(pl, s, 0, 1, s.n, s.exclusive, wg);
    return pl;
  }
  if (v.get("impl") == kNarrow) {
    if (!is_cpu(caps) || !narrow_rows(s)) throw std::invalid_argument("scan: impl=3 (16 rows in lanes) is for the CPU and rows of 2..24");
    Step st{scan_narrow_kernel(s.dt, int(s.n), s.exclusive), {}, {0, 1}, {ir::scalar_slot(uint32_t(s.rows))}};
    st.dims.grid = {groups_for(s.rows, kNarrowScanRows), 1, 1};
    pl.steps.push_back(std::move(st));
    return pl;
  }
  if (v.get("impl") == kLookback) {
    // cl = 0: one chunk per row (one pass, no look-back).
    const int64_t asked = v.get("cl", 32768), cl = asked ? asked : std::max<int64_t>(16, (s.n + 15) / 16 * 16);
    if (cl < 16 || cl % 16 || cl >= (int64_t(1) << 31)) throw std::invalid_argument("scan: cl (chunk length) 0 or a multiple of 16 below 2^31");
    const int64_t cpr = (s.n + cl - 1) / cl, count = 1 + s.rows * cpr;
    if (count >= (int64_t(1) << 31)) throw std::invalid_argument("scan: too many chunks");
    int state = pl.add_temp(2, size_t(count) * 8);
    Step r{scan_lookback_reset_kernel(), {}, {state}, {ir::scalar_slot(uint32_t(count))}};
    r.dims.grid = {uint32_t((count + 255) / 256), 1, 1};
    pl.steps.push_back(std::move(r));
    const bool nt = v.get("nt", 0) != 0;
    if (nt && !whole_lines(s)) throw std::invalid_argument("scan: nt=1 (streaming stores) needs rows a multiple of 16 long");
    Step b{scan_lookback_kernel(s.dt, s.exclusive, nt), {}, {0, 1, state},
           {ir::scalar_slot(uint32_t(s.n)), ir::scalar_slot(uint32_t(cl)), ir::scalar_slot(uint32_t(cpr)),
            ir::scalar_slot(uint32_t(v.get("pa", 0) && cpr > 1 ? std::min<int64_t>(cl * std::max<int64_t>(caps.threads, 1), INT32_MAX) : 0))}};
    b.dims.grid = {uint32_t(s.rows * cpr), 1, 1};
    pl.steps.push_back(std::move(b));
    return pl;
  }
  if (v.get("impl") != kChunked) throw std::invalid_argument("scan: unknown impl " + std::to_string(v.get("impl")));
  // Chunks of at least 4096 elements (fewer chunks for short rows).
  int64_t ch = std::clamp<int64_t>(v.get("chunks", 1), 1, 64);
  ch = std::max<int64_t>(1, std::min(ch, s.n / 4096));
  const int64_t cl = (s.n + ch - 1) / ch;
  std::vector<uint64_t> sc = {ir::scalar_slot(int32_t(s.n)), ir::scalar_slot(int32_t(cl)), ir::scalar_slot(int32_t(ch))};
  int sums = pl.add_temp(2, size_t(s.rows * ch) * 4);
  if (ch > 1) {
    Step a{scan_chunk_sums_kernel(s.dt), {}, {0, sums}, sc};
    a.dims.grid = {uint32_t(ch - 1), uint32_t(s.rows), 1};
    pl.steps.push_back(std::move(a));
  }
  Step b{scan_chunk_kernel(s.dt, s.exclusive), {}, {0, sums, 1}, sc};
  b.dims.grid = {uint32_t(ch), uint32_t(s.rows), 1};
  pl.steps.push_back(std::move(b));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Shape s = shape_of(p);
  for (int64_t r = 0; r < s.rows; ++r) {
    if (s.dt == ir::types::F32) {
      const float* x = static_cast<const float*>(in[0]) + r * s.n;
      float* y = static_cast<float*>(out[0]) + r * s.n;
      double acc = 0;
      for (int64_t i = 0; i < s.n; ++i) {
        if (s.exclusive) y[i] = float(acc);
        acc += x[i];
        if (!s.exclusive) y[i] = float(acc);
      }
    } else {  // i32 wraps around (the kernels' -fwrapv arithmetic)
      const int32_t* x = static_cast<const int32_t*>(in[0]) + r * s.n;
      int32_t* y = static_cast<int32_t*>(out[0]) + r * s.n;
      uint32_t acc = 0;
      for (int64_t i = 0; i < s.n; ++i) {
        if (s.exclusive) y[i] = int32_t(acc);
        acc += uint32_t(x[i]);
        if (!s.exclusive) y[i] = int32_t(acc);
      }
    }
  }
}

Problem prob(std::vector<int64_t> dims, ir::ScalarKind dt, bool exclusive) {
  Problem p;
  p.op = "scan";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs["exclusive"] = exclusive;
  return p;
}

}  // namespace

void register_scan_ops() {
  OpDef d;
  d.name = "scan";
  d.attr_defaults = {{"exclusive", 0}};
  d.description = "prefix sum of each row (inclusive or exclusive), f32 or i32: Blelloch or chunked sequential";
  d.dims_help = "[rows] n";
  d.attrs_help = "exclusive=0|1";
  d.validate = validate;
  d.inputs = [](const Problem& p) {
    Shape s = shape_of(p);
    double lim = s.dt == ir::types::F32 ? 1.0 : 100.0;
    return std::vector<TensorSpec>{tensor("x", s.dt, {s.rows, s.n}, -lim, lim)};
  };
  d.outputs = [](const Problem& p) {
    Shape s = shape_of(p);
    return std::vector<TensorSpec>{tensor("y", s.dt, {s.rows, s.n})};
  };
  d.candidates = candidates;
  d.heuristic = scan_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {kBlelloch, kChunked, kLookback, kNarrow},
              "0 Blelloch, 1 CPU chunked sequential, 2 CPU one pass with look-back, 3 CPU 16 rows in lanes"),
      key_set("wg", "workgroup_size", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, "Blelloch: work-items per workgroup (blocks of 2·wg)"),
      key_range("chunks", "chunks_per_row", 1, 64, "chunked: work-items sharing a row (at least 4096 elements each)"),
      key_range("cl", "chunk_length", 0, INT32_MAX, "look-back: elements per chunk, a multiple of 16 (0: one chunk per row)"),
      key_set("nt", "streaming_stores", {0, 1}, "look-back: write y with non-temporal stores (rows of whole lines)"),
      key_set("pa", "prefetch_ahead", {0, 1}, "look-back: prefetch the chunk a work-item takes next while scanning"),
  };
  d.plan = plan;
  d.reference = reference;
  // i32 is exact. f32: the running sum's rounding errors add up like a
  // random walk, ~eps·sqrt(n) relative to the prefixes' rms; 16x margin.
  d.tolerance = [](const Problem& p) {
    Shape s = shape_of(p);
    return s.dt == ir::types::F32 ? 16 * 1.2e-7 * std::sqrt(double(s.n)) + 1e-6 : 0.0;
  };
  d.flops = [](const Problem& p) {
    Shape s = shape_of(p);
    return double(s.rows * s.n);
  };
  d.bytes = [](const Problem& p) {
    Shape s = shape_of(p);
    return 8.0 * double(s.rows * s.n);
  };
  d.memory_bound = true;
  for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::I32})
    for (bool ex : {false, true})
      for (int64_t n : {1, 2, 31, 1000, 4097}) d.test_problems.push_back(prob({n}, dt, ex));
  d.test_problems.push_back(prob({3, 1000}, ir::ScalarKind::F32, false));
  d.test_problems.push_back(prob({5, 33}, ir::ScalarKind::I32, true));
  d.test_problems.push_back(prob({1, 70001}, ir::ScalarKind::I32, false));  // three Blelloch levels at wg 128
  // Rows of 2..24 in lanes (impl=3): remainder rows, a second group of 256, both scans and types.
  d.test_problems.push_back(prob({300, 10}, ir::ScalarKind::F32, true));
  d.test_problems.push_back(prob({37, 3}, ir::ScalarKind::I32, false));
  d.test_problems.push_back(prob({40, 24}, ir::ScalarKind::F32, false));
  d.test_problems.push_back(prob({21, 16}, ir::ScalarKind::I32, true));
  for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::I32})
    d.bench_problems.push_back(prob({int64_t(1) << 26}, dt, false));
  d.bench_problems.push_back(prob({4096, 16384}, ir::ScalarKind::F32, false));
  register_op(std::move(d));
  register_selective_scan_op();
}

}  // namespace kgen::ops
