#include "ops/rowwise/rowwise.h"

#include <cmath>
#include <functional>
#include <mutex>
#include <string>

#include "dsl/dsl.h"
#include "dsl/registry.h"
#include "ops/common/fast_exp.h"
#include "ops/common/fast_math.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

// Lane helpers so one kernel body serves lanes = 1 (scalars) and lines.
struct Lanes {
  int n;
  ir::Type elem(ir::Type dt) const { return n == 1 ? dt : line(dt, n); }
  Value bcast(const Value& s) const { return n == 1 ? s : splat(s, n); }
  Value bcast(float f) const { return bcast(constant(f32, f)); }
  Value hsum(const Value& v) const { return n == 1 ? v : reduce_add(v); }
  Value hmax(const Value& v) const { return n == 1 ? v : reduce_max(v); }
  // Running max m' = v > m ? v : m: one vmaxps (x86's maxps(v, m) is exactly
  // that), where max() (IEEE maxNum) adds a NaN compare and blend per line.
  // A NaN v is skipped here; its exp is NaN and makes the row's sum NaN.
  static Value grow_max(const Value& m, const Value& v) { return select(v > m, v, m); }
  // Storage (f32, f16, bf16) <-> f32 math: loads widen, stores narrow.
  Value widen(const Value& v) const { return v.type().kind == ir::ScalarKind::F32 ? v : cast(elem(f32), v); }
  Value st(ir::Type dt, const Value& v) const { return dt == f32 ? v : cast(elem(dt), v); }
};

// How a kernel walks its rows. Line buffers (lanes 1, or 16 with cols % 16
// == 0): a row is ncols lines, line j at base + j. tail (lanes 16, any cols
// >= 16): scalar buffers, ncols elements per row, line j read at element
// base + 16·j (rows start anywhere, so the loads are unaligned), and when
// cols % 16 != 0 one more line over the row's last 16 elements, whose first
// 16 - cols % 16 lanes (walked already) are masked: reductions take the
// neutral value there, stores of a pure function of the inputs rewrite the
// same values, and in-place updates keep the old ones.
struct Walk {
  Lanes L;
  bool tail;
  Value ncols;  // the kernel's "ncols" scalar: lines per row, or elements (tail)

  Value row(const Value& r) const { return r * ncols; }  // a row's start, in buffer elements
  Value ld(const Array& a, const Value& at) const { return L.widen(tail ? load_line(a, at, 16) : Value(a[at])); }
  void st(const Array& a, const Value& at, ir::Type dt, const Value& v, bool stream = false) const {
    if (tail) return store_line(a, at, L.st(dt, v));
    ElemRef r = a[at];
    if (stream) r.stream(L.st(dt, v));
    else r = L.st(dt, v);
  }
  // fn(off, mask) for each line of a row: off its offset from the row's
  // start (buffer elements), mask null for whole lines, else the bool line
  // of the lanes this line adds.
  void each(const std::function<void(const Value&, const Value*)>& fn) const {
    for_range(0u, tail ? ncols / 16u : ncols, [&](Value j) { fn(tail ? j * 16u : j, nullptr); });
    last(fn);
  }
  // The same as two interleaved chains, fn(off, chain, mask): one chain is a
  // dependency chain of adds or FMAs (4 cycles each), and a 1024-wide row
  // took ~256 cycles of latency per statistic where the loads need ~32.
  void each2(const std::function<void(const Value&, int, const Value*)>& fn) const {
    Value nl = tail ? ncols / 16u : ncols;
    auto off = [&](const Value& j) { return tail ? j * 16u : j; };
    for_range(0u, nl / 2u, [&](Value i) {
      fn(off(i * 2u), 0, nullptr);
      fn(off(i * 2u + 1u), 1, nullptr);
    });
    if_(nl % 2u != 0u, [&] { fn(off(nl - 1u), 0, nullptr); });
    last([&](const Value& o, const Value* m) { fn(o, 1, m); });
  }
  // Prefetch the line at `off` of the row after the one at `base` (read, or
  // for writing): rows of 1024 f32 are a 4 KiB page, where the hardware
  // prefetcher stops, so without it each row starts on DRAM misses. Lines of
  // 16 lanes only (one prefetch per line; scalar rows would issue 16 per
  // cache line). Past the last row it is harmless: prefetches never fault.
  void prefetch_next(const Array& a, const Value& base, const Value& off, bool write = false) const {
    if (L.n != 16) return;
    ElemRef r = a[base + ncols + off];
    if (write) r.prefetch_write();
    else r.prefetch();
  }
  // v where the mask adds lanes, `neutral` where they were walked already.
  Value keep(const Value* mask, const Value& v, const Value& neutral) const { return mask ? select(*mask, v, neutral) : v; }
  Value cols() const { return tail ? cast(f32, ncols) : cast(f32, ncols) * float(L.n); }

 private:
  void last(const std::function<void(const Value&, const Value*)>& fn) const {
    if (!tail) return;
    Value rem = ncols % 16u;
    if_(rem != 0u, [&] {
      Value mask = lane_index(16) >= splat(cast(i32, 16u - rem), 16);
      fn(ncols - 16u, &mask);
    });
  }
};

// exp for the softmax family: the DSL-level fast_exp (CPU: ~17 vector ops)
// or the target's exp (the C++ dialect's vectorised kg_expf, ~24 ops with
// denormal results and clamps, measured ~5% slower on the 4096x4096 softmax;
// GPUs' native exp: fast_exp's rounding trick is not safe under their
// compilers' reassociation).
Value row_exp(const Value& x, bool fast, bool nonpositive = false) { return fast ? fast_exp(x, nonpositive) : exp(x); }

void check_variant(ir::Type dt, int lanes, bool stream, bool tail) {
  if (dt != f32 && dt != f16 && dt != bf16) throw std::invalid_argument("row kernels: f32, f16 or bf16");
  if (lanes != 1 && lanes != 16) throw std::invalid_argument("row kernels: lanes must be 1 or 16");
  // The CPU streams whole lines only (a scalar nontemporal store would stop
  // the work-item loop from vectorising); lanes 1 would carry a dead hint.
  if (stream && lanes != 16) throw std::invalid_argument("row kernels: stream needs lanes 16");
  // Rows at any element offset: their lines are not 64-byte aligned.
  if (tail && (lanes != 16 || stream)) throw std::invalid_argument("row kernels: tail needs lanes 16 and no stream");
}

std::string suffix(ir::Type dt, int lanes, bool stream, bool tail) {
  return std::string(stream ? "_stream" : "") + "_" + dt.str() + (lanes == 1 ? "" : "_l" + std::to_string(lanes)) +
         (tail ? "_tail" : "");
}

// Buffers of the kernel's rows: lines, or scalars (tail).
ir::Type row_elem(const Lanes& L, ir::Type dt, bool tail) { return tail ? dt : L.elem(dt); }

// Common parameters: one workgroup of one work-item per row.
Walk row_setup(KernelBuilder& kb, const Lanes& L, bool tail) {
  auto ncols = kb.scalar("ncols", u32);
  kb.workgroup(1);
  return Walk{L, tail, ncols};
}

}  // namespace

// Softmax family: a workgroup takes `rpg` consecutive rows. The max of row
// r + 1 is computed inside row r's exp pass, so the DRAM stream of the next
// row overlaps the exp arithmetic of this one (otherwise a max pass waits on
// DRAM, then the exp passes run from L1 with DRAM idle). Only a group's first
// row has its own max pass. The last row's "next" is itself (an L1 re-read).
// prefetch: the same loop also prefetches the row after next, so the
// next-row loads hit L2 instead of waiting on DRAM (the hardware prefetcher
// alone keeps too few lines in flight while the core is busy with exp).
// Past the buffer's end a prefetch is harmless (it never faults).
namespace {

struct SoftmaxRows {
  Walk w;
  Value r0, r_end;
};
SoftmaxRows softmax_setup(KernelBuilder& kb, const Lanes& L, bool tail, int rpg) {
  auto ncols = kb.scalar("ncols", u32);
  auto nrows = kb.scalar("nrows", u32);
  kb.workgroup(1);
  Value r0 = group_id(0) * uint32_t(rpg);
  return {Walk{L, tail, ncols}, r0, min(r0 + uint32_t(rpg), nrows)};
}

Value row_max(const Walk& W, const Array& x, const Value& base) {
  Var m = var(W.L.bcast(-INFINITY));
  W.each([&](const Value& off, const Value* mask) {
    m = Lanes::grow_max(m.get(), W.keep(mask, W.ld(x, base + off), W.L.bcast(-INFINITY)));
  });
  return W.L.hmax(m.get());
}

}  // namespace

ir::Kernel softmax_rows(ir::Type dt, int lanes, bool online, int rpg, bool fast, bool stream, bool prefetch, bool tail) {
  check_variant(dt, lanes, stream, tail);
  if (tail && online) throw std::invalid_argument("softmax_rows: tail is a form of the two-pass kernel");
  Lanes L{lanes};
  const bool scratch = softmax_needs_scratch(online, stream);
  return kernel(std::string(online ? "softmax_online_rows" : "softmax_rows") + (fast ? "" : "_exp") + (prefetch ? "_pf" : "") + suffix(dt, lanes, stream, tail), [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    // The two-pass form re-reads y (L1-resident) to scale it: read-write;
    // streamed, it parks exp(x - max) in this group's scratch row instead.
    auto y = online || scratch ? kb.output("y", L.elem(dt)) : kb.inout("y", row_elem(L, dt, tail));
    Array e;
    if (scratch) e = kb.inout("scratch", L.elem(f32));
    auto [W, r0, r_end] = softmax_setup(kb, L, tail, rpg);
    const Value nc = W.ncols;
    if (online) {
      // Per-lane running max and sum rescaled to it (2 exps per element), one
      // statistics pass; lanes merge at the end. The max starts at the
      // lowest finite float, not -inf: a lane's -inf entries then rescale by
      // exp(0), where exp(-inf - -inf) would be NaN.
      for_range(r0, r_end, [&](Value r) {
        Value base = r * nc;
        Var m = var(L.bcast(-3.40282347e38f));
        Var s = var(L.bcast(0.0f));
        for_range(0u, nc, [&](Value j) {
          Value v = W.ld(x, base + j);
          Value mn = Lanes::grow_max(m.get(), v);
          s = s * row_exp(m - mn, fast) + row_exp(v - mn, fast);
          m = mn;
        });
        Value mx = L.hmax(m.get());
        Value inv = L.bcast(1.0f / L.hsum(s * row_exp(m - L.bcast(mx), fast)));
        Value mxv = L.bcast(mx);
        for_range(0u, nc, [&](Value j) { W.st(y, base + j, dt, row_exp(W.ld(x, base + j) - mxv, fast, true) * inv, stream); });
      });
      return;
    }
    // Per row: an exp pass storing e = exp(x - max) into y (and computing the
    // next row's max, so the DRAM stream overlaps the exp arithmetic), then a
    // scale pass over the L1-resident y. 1 exp per element. (Fusing the scale
    // of row r-1 into row r's exp pass measured no better: the exp loop is
    // limited by how many of its DRAM loads the core keeps in flight.)
    Var mx = var(row_max(W, x, W.row(r0)));
    Value sbase = group_id(0) * nc;  // this group's scratch row (scratch only)
    for_range(r0, r_end, [&](Value r) {
      Value base = W.row(r), next = W.row(min(r + 1u, r_end - 1u));
      Value mxv = L.bcast(mx.get());
      Var s = var(L.bcast(0.0f));
      Var mn = var(L.bcast(-INFINITY));
      W.each([&](const Value& off, const Value* mask) {
        Value ex = row_exp(W.ld(x, base + off) - mxv, fast, true);
        if (scratch) e[sbase + off] = ex;
        else W.st(y, base + off, dt, ex);
        s += W.keep(mask, ex, L.bcast(0.0f));
        mn = Lanes::grow_max(mn.get(), W.keep(mask, W.ld(x, next + off), L.bcast(-INFINITY)));
        if (prefetch) x[next + nc + off].prefetch();
      });
      Value inv = L.bcast(1.0f / L.hsum(s.get()));
      W.each([&](const Value& off, const Value* mask) {
        auto at = base + off;
        if (scratch) {
          y[at].stream(L.st(dt, e[sbase + off] * inv));
        } else {
          Value old = W.ld(y, at);
          W.st(y, at, dt, W.keep(mask, old * inv, old));
        }
      });
      mx = L.hmax(mn.get());
    });
  });
}

ir::Kernel log_softmax_rows(ir::Type dt, int lanes, int rpg, bool fast, bool stream, bool prefetch, bool tail) {
  check_variant(dt, lanes, stream, tail);
  Lanes L{lanes};
  return kernel(std::string("log_softmax_rows") + (fast ? "" : "_exp") + (prefetch ? "_pf" : "") + suffix(dt, lanes, stream, tail), [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    // Plain: y is re-read from L1 in the output pass. Streamed: written once,
    // the output pass recomputes x - max from the L1-resident x row.
    auto y = stream ? kb.output("y", L.elem(dt)) : kb.inout("y", row_elem(L, dt, tail));
    auto [W, r0, r_end] = softmax_setup(kb, L, tail, rpg);
    // As softmax: the exp pass also stores d = x - max (so the DRAM writes
    // overlap the exp arithmetic); the output pass y = d - log(sum) runs from
    // L1. Streamed, the exp pass stores nothing (a store there would read the
    // line for ownership) and the output pass streams (x - max) - log(sum).
    Var mx = var(row_max(W, x, W.row(r0)));
    for_range(r0, r_end, [&](Value r) {
      Value base = W.row(r), next = W.row(min(r + 1u, r_end - 1u));
      Value mxv = L.bcast(mx.get());
      Var s = var(L.bcast(0.0f));
      Var mn = var(L.bcast(-INFINITY));
      W.each([&](const Value& off, const Value* mask) {
        Value d = W.ld(x, base + off) - mxv;
        if (!stream) W.st(y, base + off, dt, d);
        s += W.keep(mask, row_exp(d, fast, true), L.bcast(0.0f));
        mn = Lanes::grow_max(mn.get(), W.keep(mask, W.ld(x, next + off), L.bcast(-INFINITY)));
        if (prefetch) x[next + W.ncols + off].prefetch();
      });
      Value c = L.bcast(log(L.hsum(s.get())));
      W.each([&](const Value& off, const Value* mask) {
        auto at = base + off;
        if (stream) {
          W.st(y, at, dt, (W.ld(x, at) - mxv) - c, true);
        } else {
          Value old = W.ld(y, at);
          W.st(y, at, dt, W.keep(mask, old - c, old));
        }
      });
      mx = L.hmax(mn.get());
    });
  });
}

namespace {

// The block kernels' statistics: the 16 lines of `stat` (one per row) meet
// in one line, lane r = line r's sum (or max), and f of it is stored as the
// 16 per-row factors in `out`.
void meet_rows(const Array& stat, const Array& out, bool sum, const std::function<Value(const Value&)>& f) {
  std::vector<Value> lines;
  for (uint32_t r = 0; r < 16; ++r) lines.push_back(stat[r]);
  Value v = f(sum ? tree_add_lanes(lines) : tree_max_lanes(lines));
  for (uint32_t r = 0; r < 16; ++r) out[r] = extract(v, int(r));
}

}  // namespace

// Softmax / log-softmax over blocks of 16 rows (lanes 16; cols % 16 == 0,
// or tail): each pass walks the block's rows one after another (runtime
// loops over the rows and over each row's lines), and the rows' statistics
// meet in one line (meet_rows): 16 max lines -> tree_max_lanes, 16 sum lines ->
// tree_add_lanes, one division (or log) for the 16 rows. The row walk
// (softmax_rows) ends every row in two horizontal reductions and a scalar
// division, a latency chain of ~60 cycles that dominates rows of a few
// lines. The block (16 rows x cols) is re-read from L1/L2 by the exp and
// scale passes. Rows past the group's end are read clamped and not stored.
ir::Kernel softmax_block_rows(ir::Type dt, bool log_softmax, bool tail, int rpg) {
  check_variant(dt, 16, false, tail);
  if (rpg < 16 || rpg % 16) throw std::invalid_argument("softmax_block_rows: rows per group a multiple of 16");
  Lanes L{16};
  return kernel(std::string(log_softmax ? "log_softmax" : "softmax") + "_block_rows" + suffix(dt, 16, false, tail) + "_r" +
                    std::to_string(rpg),
                [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    auto y = kb.inout("y", row_elem(L, dt, tail));
    auto [W, r0, r_end] = softmax_setup(kb, L, tail, rpg);
    // The rows' statistic lines and per-row factors go through a small
    // stack scratch so each pass is one runtime loop over the 16 rows, not
    // 16 copies of it (which compiled slower and ran slower).
    Array stat = shared_array(line(f32, 16), 16);
    Array fac = shared_array(f32, 16);
    for_range(0u, (r_end - r0 + 15u) / 16u, [&](Value blk) {
      Value rb = r0 + blk * 16u;
      auto base = [&](const Value& r) { return W.row(min(rb + r, r_end - 1u)); };
      for_range(0u, 16u, [&](Value r) {
        Var m = var(L.bcast(-INFINITY));
        Value b = base(r);
        W.each([&](const Value& off, const Value* mask) {
          m = Lanes::grow_max(m.get(), W.keep(mask, W.ld(x, b + off), L.bcast(-INFINITY)));
        });
        stat[r] = m.get();
      });
      meet_rows(stat, fac, false, [](const Value& M) { return M; });
      // exp pass: e = exp(x - max) (softmax) or d = x - max (log-softmax)
      // into y, the row sums of e (rows past the end: sums of 1, not stored).
      for_range(0u, 16u, [&](Value r) {
        Var s = var(L.bcast(0.0f));
        if_(rb + r < r_end, [&] {
          Value mr = L.bcast(fac[r]), b = base(r);
          W.each([&](const Value& off, const Value* mask) {
            Value d = W.ld(x, b + off) - mr;
            Value e = row_exp(d, true, true);
            W.st(y, b + off, dt, log_softmax ? d : e);
            s += W.keep(mask, e, L.bcast(0.0f));
          });
        }).else_([&] { s = L.bcast(1.0f); });
        stat[r] = s.get();
      });
      meet_rows(stat, fac, true, [&](const Value& S) { return log_softmax ? fast_log(S) : L.bcast(1.0f) / S; });
      for_range(0u, 16u, [&](Value r) {
        if_(rb + r < r_end, [&] {
          Value fr = L.bcast(fac[r]), b = base(r);
          W.each([&](const Value& off, const Value* mask) {
            Value old = W.ld(y, b + off);
            W.st(y, b + off, dt, W.keep(mask, log_softmax ? old - fr : old * fr, old));
          });
        });
      });
    });
  });
}

// rmsnorm / layernorm (weight, and bias) over blocks of 16 rows, as
// softmax_block_rows: per pass a runtime loop over the rows whose statistic
// lines meet in one (tree_add_lanes), then per-row factors. layernorm takes
// the mean first, then the centred squares (a second pass over the block in
// L1), then the output; rmsnorm Σx², then the output.
ir::Kernel norm_block_rows(ir::Type dt, bool rms, bool tail, int rpg) {
  check_variant(dt, 16, false, tail);
  if (rpg < 16 || rpg % 16) throw std::invalid_argument("norm_block_rows: rows per group a multiple of 16");
  Lanes L{16};
  return kernel(std::string(rms ? "rmsnorm" : "layernorm") + "_block_rows" + suffix(dt, 16, false, tail) + "_r" +
                    std::to_string(rpg),
                [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    auto w = kb.input("w", row_elem(L, dt, tail));
    Array b;
    if (!rms) b = kb.input("b", row_elem(L, dt, tail));
    auto y = kb.output("y", row_elem(L, dt, tail));
    auto eps = kb.scalar("eps", f32);
    auto ncols = kb.scalar("ncols", u32);
    auto nrows = kb.scalar("nrows", u32);
    kb.workgroup(1);
    Walk W{L, tail, ncols};
    Value r0 = group_id(0) * uint32_t(rpg), r_end = min(r0 + uint32_t(rpg), nrows);
    Value cols = W.cols();
    Array stat = shared_array(line(f32, 16), 16);
    Array mean = shared_array(f32, 16), scale = shared_array(f32, 16);
    for_range(0u, (r_end - r0 + 15u) / 16u, [&](Value blk) {
      Value rb = r0 + blk * 16u;
      auto base = [&](const Value& r) { return W.row(min(rb + r, r_end - 1u)); };
      if (!rms) {
        for_range(0u, 16u, [&](Value r) {
          Var s = var(L.bcast(0.0f));
          Value bs = base(r);
          W.each([&](const Value& off, const Value* mask) { s += W.keep(mask, W.ld(x, bs + off), L.bcast(0.0f)); });
          stat[r] = s.get();
        });
        meet_rows(stat, mean, true, [&](const Value& S) { return S / L.bcast(cols); });
      }
      // Σ(x - mean)² (layernorm) or Σx² (rmsnorm).
      for_range(0u, 16u, [&](Value r) {
        Var s = var(L.bcast(0.0f));
        Value bs = base(r), mr = rms ? Value() : L.bcast(mean[r]);
        W.each([&](const Value& off, const Value* mask) {
          Value v = W.ld(x, bs + off);
          Value d = W.keep(mask, rms ? v : v - mr, L.bcast(0.0f));
          s = fma(d, d, s.get());
        });
        stat[r] = s.get();
      });
      meet_rows(stat, scale, true, [&](const Value& S) { return rsqrt(S / L.bcast(cols) + L.bcast(eps)); });
      for_range(0u, 16u, [&](Value r) {
        if_(rb + r < r_end, [&] {
          Value bs = base(r), sr = L.bcast(scale[r]), mr = rms ? Value() : L.bcast(mean[r]);
          W.each([&](const Value& off, const Value*) {
            Value v = W.ld(x, bs + off);
            Value o = rms ? v * sr * W.ld(w, off) : fma((v - mr) * sr, W.ld(w, off), W.ld(b, off));
            W.st(y, bs + off, dt, o);
          });
        });
      });
    });
  });
}

ir::Kernel rmsnorm_rows(ir::Type dt, int lanes, bool with_weight, bool stream, bool tail) {
  check_variant(dt, lanes, stream, tail);
  Lanes L{lanes};
  return kernel(std::string(with_weight ? "rmsnorm_rows" : "rmsnorm_noweight_rows") + suffix(dt, lanes, stream, tail),
                [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    Array w;
    if (with_weight) w = kb.input("w", row_elem(L, dt, tail));
    auto y = kb.output("y", row_elem(L, dt, tail));
    auto eps = kb.scalar("eps", f32);
    Walk W = row_setup(kb, L, tail);
    Value base = W.row(group_id(0));
    Var ss0 = var(L.bcast(0.0f)), ss1 = var(L.bcast(0.0f));
    W.each2([&](const Value& off, int c, const Value* mask) {
      if (!mask) W.prefetch_next(x, base, off);
      Value v = W.keep(mask, W.ld(x, base + off), L.bcast(0.0f));
      Var& ss = c ? ss1 : ss0;
      ss = fma(v, v, ss.get());
    });
    Value r = L.bcast(rsqrt(L.hsum(ss0.get() + ss1.get()) / W.cols() + eps));
    W.each([&](const Value& off, const Value* mask) {
      if (!mask && !stream) W.prefetch_next(y, base, off, true);
      Value v = W.ld(x, base + off) * r;
      W.st(y, base + off, dt, with_weight ? v * W.ld(w, off) : v, stream);
    });
  });
}

ir::Kernel layernorm_rows(ir::Type dt, int lanes, bool stream, bool tail) {
  check_variant(dt, lanes, stream, tail);
  Lanes L{lanes};
  return kernel("layernorm_rows" + suffix(dt, lanes, stream, tail), [&](KernelBuilder& kb) {
    auto x = kb.input("x", row_elem(L, dt, tail));
    auto w = kb.input("w", row_elem(L, dt, tail));
    auto b = kb.input("b", row_elem(L, dt, tail));
    auto y = kb.output("y", row_elem(L, dt, tail));
    auto eps = kb.scalar("eps", f32);
    Walk W = row_setup(kb, L, tail);
    Value base = W.row(group_id(0));
    Value cols = W.cols();
    // y = (x - mean)·rstd·w + b, with x - mean as centred(x).
    auto normalise = [&](const std::function<Value(const Value&)>& centred, const Value& rstd) {
      W.each([&](const Value& off, const Value* mask) {
        if (!mask && !stream) W.prefetch_next(y, base, off, true);
        W.st(y, base + off, dt, fma(centred(W.ld(x, base + off)) * rstd, W.ld(w, off), W.ld(b, off)), stream);
      });
    };
    if (lanes > 1) {
      // One statistics pass over shifted data: d = x - k with k the mean of
      // the row's first line, Σd and Σd² as two independent chains, then
      // Σ(x - mean)² = Σd² - (Σd)²/n. Shifting by an estimate of the mean
      // keeps the cancellation of E[x²] - E[x]² small (its error scales with
      // (mean - k)², about var/16 here, not mean²), and saves the second
      // statistics pass (mean, then centred squares) before the normalising one.
      const Value k = L.bcast(L.hsum(W.ld(x, base)) / float(lanes));
      // Every step of the statistics pass waits on k, so each row's first
      // line is on the critical path: with 4 KiB rows (a page, where the
      // hardware prefetcher stops) a DRAM miss per row stalled the pass.
      // The statistics pass prefetches the next row line by line (and the
      // normalising pass the next row's output, for writing); see
      // Walk::prefetch_next.
      Var s0 = var(L.bcast(0.0f)), sq0 = var(L.bcast(0.0f)), s1 = var(L.bcast(0.0f)), sq1 = var(L.bcast(0.0f));
      W.each2([&](const Value& off, int ch, const Value* mask) {
        if (!mask) W.prefetch_next(x, base, off);
        Value d = W.keep(mask, W.ld(x, base + off) - k, L.bcast(0.0f));
        Var& s = ch ? s1 : s0;
        Var& sq = ch ? sq1 : sq0;
        s += d;
        sq = fma(d, d, sq.get());
      });
      Value sum_d = L.hsum(s0.get() + s1.get());
      const Value c = L.bcast(sum_d / cols);  // mean - k
      Value var_sum = L.hsum(sq0.get() + sq1.get()) - sum_d * sum_d / cols;
      // x - mean as (x - k) - c, the same d as above: no k + c rounding.
      normalise([&](const Value& v) { return (v - k) - c; }, L.bcast(rsqrt(max(var_sum, 0.0f) / cols + eps)));
    } else {
      // Scalar rows (GPU targets): mean, then centred squares (reads cache).
      Var s = var(L.bcast(0.0f));
      W.each([&](const Value& off, const Value*) { s += W.ld(x, base + off); });
      Value meanv = L.bcast(L.hsum(s.get()) / cols);
      Var sq = var(L.bcast(0.0f));
      W.each([&](const Value& off, const Value*) {
        Value d = W.ld(x, base + off) - meanv;
        sq = fma(d, d, sq);
      });
      normalise([&](const Value& v) { return v - meanv; }, L.bcast(rsqrt(L.hsum(sq.get()) / cols + eps)));
    }
  });
}

ir::Workload rowwise_workload(RowOp op, int lanes, bool with_weight, int64_t rows, int64_t cols, float eps,
                              bool scratch, bool tail) {
  if (tail ? lanes != 16 || cols < 16 : cols % lanes != 0)
    throw std::invalid_argument("rowwise_workload: cols must be a multiple of lanes (tail: lanes 16, cols >= 16)");
  const size_t r = size_t(rows), nc = size_t(tail ? cols : cols / lanes), elems = r * size_t(cols);
  ir::Workload w;
  const bool norm = op == RowOp::RmsNorm || op == RowOp::LayerNorm;
  const int64_t rpg = norm ? 1 : kSoftmaxRowsPerGroup;
  w.dims.grid = {uint32_t((rows + rpg - 1) / rpg), 1, 1};
  w.dims.workgroup = {1, 1, 1};
  const double lim = norm ? 2.0 : 8.0;
  w.buffers.push_back({r * nc, -lim, lim, true, false});
  int params = op == RowOp::LayerNorm ? 2 : (op == RowOp::RmsNorm && with_weight ? 1 : 0);
  if (params >= 1) w.buffers.push_back({nc, 0.5, 1.5, true, false});   // weight
  if (params >= 2) w.buffers.push_back({nc, -1.0, 1.0, true, false});  // bias
  w.buffers.push_back({r * nc, 0.0, 0.0, false, true});
  if (scratch) w.buffers.push_back({size_t(softmax_scratch_lines(rows, cols, lanes)), 0.0, 0.0, false, false});
  if (norm) w.scalars.push_back(ir::scalar_slot(eps));
  w.scalars.push_back(ir::scalar_slot(uint32_t(nc)));
  if (!norm) w.scalars.push_back(ir::scalar_slot(uint32_t(rows)));
  w.bytes = 8.0 * double(elems) + 4.0 * double(params) * double(cols);
  w.flops = 5.0 * double(elems);
  // Vectorised exp/log may differ from libm by an ulp or two; log-softmax
  // outputs near zero magnify that through cancellation (the checker's floor
  // is 1e-6 of the largest output).
  w.tolerance = op == RowOp::LogSoftmax ? 1e-3 : 1e-5;
  if (op == RowOp::LayerNorm) w.floor = kLayerNormCheckFloor;
  return w;
}

namespace {

void add(RowOp op, const std::string& desc, std::function<ir::Kernel()> build, int lanes, bool with_weight,
         int64_t default_cols, bool scratch = false, bool tail = false) {
  auto shape_of = [lanes, default_cols, tail](int64_t n) {
    int64_t rows, cols;
    if (n >= (int64_t(1) << 32)) {
      rows = n >> 32;
      cols = n & 0xffffffff;
    } else {
      cols = std::min(n, default_cols);
      rows = std::max<int64_t>(1, n / cols);
    }
    cols = tail ? std::max<int64_t>(cols, 16) : (cols + lanes - 1) / lanes * lanes;  // whole lines
    return std::pair{rows, cols};
  };
  std::vector<int64_t> sizes =
      lanes == 1 ? std::vector<int64_t>{pack_shape(1, 1), pack_shape(3, 17), pack_shape(5, 1000), pack_shape(7, 4097),
                                        pack_shape(2, 1024)}
      : tail     ? std::vector<int64_t>{pack_shape(1, 16), pack_shape(3, 17), pack_shape(5, 1000), pack_shape(7, 4097),
                                        pack_shape(2, 31), pack_shape(67, 33)}
                 : std::vector<int64_t>{pack_shape(1, 16), pack_shape(3, 48), pack_shape(5, 1008), pack_shape(7, 4112),
                                        pack_shape(2, 4096), 100};
  ir::Kernel k = build();
  dsl::register_kernel({k.name, desc, build,
                        [=](int64_t n) {
                          auto [rows, cols] = shape_of(n);
                          return rowwise_workload(op, lanes, with_weight, rows, cols, 1e-5f, scratch, tail);
                        },
                        default_cols * 1024, sizes, lanes == 1 ? "" : "bandwidth"});
}

// The GPU forms (ops/rowwise/rowwise.h: row_op_gpu) at the scalar kernels' odd sizes.
void add_gpu(RowOp op, const std::string& desc, int wg, bool subgroups) {
  auto build = [=] { return row_op_gpu(op, f32, wg, subgroups); };
  const int64_t default_cols = op == RowOp::RmsNorm || op == RowOp::LayerNorm ? 1024 : 4096;
  std::vector<int64_t> sizes = {pack_shape(1, 1), pack_shape(3, 17), pack_shape(5, 1000), pack_shape(7, 4097),
                                pack_shape(2, 1024)};
  dsl::register_kernel({build().name, desc, build,
                        [=](int64_t n) {
                          const int64_t rows = n >> 32, cols = n & 0xffffffff;
                          return n >= (int64_t(1) << 32) ? rowwise_gpu_workload(op, wg, rows, cols)
                                                         : rowwise_gpu_workload(op, wg, std::max<int64_t>(1, n / default_cols),
                                                                                std::min(n, default_cols));
                        },
                        default_cols * 1024, sizes, ""});
}

}  // namespace

void register_rowwise() {
  // Lines of 16: the two-pass softmax family with its row prefetch (the op's
  // CPU default), so the bandwidth suite measures what models run.
  for (int lanes : {16, 1}) {
    std::string how = lanes == 1 ? " (scalar, any cols)" : " (f32x16 lines, cols % 16 == 0)";
    add(RowOp::Softmax, "softmax of each row, max/exp/scale passes over an L1-resident row" + how,
        [=] { return softmax_rows(f32, lanes, false, kSoftmaxRowsPerGroup, true, false, lanes == 16); }, lanes, false, 4096);
    add(RowOp::Softmax, "softmax of each row, online max + rescaled sum in one statistics pass" + how,
        [=] { return softmax_rows(f32, lanes, true); }, lanes, false, 4096);
    add(RowOp::LogSoftmax, "log-softmax of each row" + how, [=] { return log_softmax_rows(f32, lanes, kSoftmaxRowsPerGroup, true, false, lanes == 16); }, lanes, false,
        4096);
    add(RowOp::RmsNorm, "rmsnorm of each row with a weight, eps 1e-5" + how, [=] { return rmsnorm_rows(f32, lanes); },
        lanes, true, 1024);
    add(RowOp::LayerNorm, "layernorm of each row with weight and bias, eps 1e-5" + how,
        [=] { return layernorm_rows(f32, lanes); }, lanes, true, 1024);
  }
  // Lines of 16 over rows of any length (ops/rowwise/rowwise.h: tail).
  const std::string tl = " (f32x16 lines from any element offset, a masked last line)";
  add(RowOp::Softmax, "softmax of each row" + tl,
      [] { return softmax_rows(f32, 16, false, kSoftmaxRowsPerGroup, true, false, true, true); }, 16, false, 4096, false, true);
  add(RowOp::LogSoftmax, "log-softmax of each row" + tl,
      [] { return log_softmax_rows(f32, 16, kSoftmaxRowsPerGroup, true, false, true, true); }, 16, false, 4096, false, true);
  add(RowOp::RmsNorm, "rmsnorm of each row with a weight" + tl, [] { return rmsnorm_rows(f32, 16, true, false, true); }, 16,
      true, 1023, false, true);
  add(RowOp::LayerNorm, "layernorm of each row with weight and bias" + tl,
      [] { return layernorm_rows(f32, 16, false, true); }, 16, true, 1023, false, true);
  // The same with streaming stores of the output (ops/rowwise/rowwise.h: stream).
  const std::string nt = ", output by streaming stores (f32x16 lines)";
  add(RowOp::Softmax, "softmax of each row, exp(x - max) parked in an L1 scratch row" + nt,
      [] { return softmax_rows(f32, 16, false, kSoftmaxRowsPerGroup, true, true, true); }, 16, false, 4096, true);
  add(RowOp::Softmax, "softmax of each row, online statistics" + nt,
      [] { return softmax_rows(f32, 16, true, kSoftmaxRowsPerGroup, true, true); }, 16, false, 4096);
  add(RowOp::LogSoftmax, "log-softmax of each row" + nt,
      [] { return log_softmax_rows(f32, 16, kSoftmaxRowsPerGroup, true, true, true); }, 16, false, 4096);
  add(RowOp::RmsNorm, "rmsnorm of each row with a weight" + nt, [] { return rmsnorm_rows(f32, 16, true, true); }, 16,
      true, 1024);
  add(RowOp::LayerNorm, "layernorm of each row with weight and bias" + nt, [] { return layernorm_rows(f32, 16, true); },
      16, true, 1024);
  // GPU forms: a workgroup per row, with and without subgroup reductions.
  const std::string g = ", a workgroup of 64 per row (GPU form)";
  add_gpu(RowOp::Softmax, "softmax of each row, subgroup reductions" + g, 64, true);
  add_gpu(RowOp::Softmax, "softmax of each row, shared-memory tree" + g, 64, false);
  add_gpu(RowOp::LogSoftmax, "log-softmax of each row, subgroup reductions" + g, 64, true);
  add_gpu(RowOp::RmsNorm, "rmsnorm of each row, shared-memory tree" + g, 64, false);
  add_gpu(RowOp::LayerNorm, "layernorm of each row, subgroup reductions" + g, 64, true);
}

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] { register_rowwise(); });
}

}  // namespace kgen::ops
