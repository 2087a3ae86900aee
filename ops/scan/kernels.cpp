// The prefix-sum kernels of ops/scan/scan.h. Row length n and block counts are
// runtime scalars; only the dtype, workgroup size and mode are baked.
#include <string>

#include "dsl/dsl.h"
#include "ops/scan/scan.h"
#include "ops/layout/transpose_block.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {
std::string tag(ir::Type dt, bool exclusive) { return "_" + dt.str() + (exclusive ? "_excl" : "_incl"); }
}  // namespace

// Blelloch's work-efficient scan of one 2·wg block (GPU Gems 3, ch. 39).
ir::Kernel scan_block_kernel(ir::Type dt, int wg, bool exclusive) {
  const int nb2 = 2 * wg;
  return kernel("scan_blelloch_w" + std::to_string(wg) + tag(dt, exclusive), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto sums = kb.output("sums", dt);
    auto n = kb.scalar("n", i32);
    auto nb = kb.scalar("nb", i32);
    kb.workgroup(uint32_t(wg));
    auto tmp = shared_array(dt, nb2);
    Value t = cast(i32, local_id(0));
    Value blk = cast(i32, group_id(0)), row = cast(i32, group_id(1));
    Value base = row * n;
    Value i0 = blk * nb2 + 2 * t, i1 = i0 + 1;
    Var a0 = var(constant(dt, 0)), a1 = var(constant(dt, 0));
    if_(i0 < n, [&] { a0 = x[base + i0]; });
    if_(i1 < n, [&] { a1 = x[base + i1]; });
    tmp[2 * t] = a0;
    tmp[2 * t + 1] = a1;
    int offset = 1;
    for (int d = wg; d > 0; d >>= 1) {  // up-sweep: partial sums in place
      barrier();
      if_(t < d, [&] {
        Value ai = (2 * t + 1) * offset - 1, bi = (2 * t + 2) * offset - 1;
        tmp[bi] = tmp[bi] + tmp[ai];
      });
      offset *= 2;
    }
    barrier();
    if_(t == 0, [&] {
      sums[row * nb + blk] = tmp[nb2 - 1];
      tmp[nb2 - 1] = constant(dt, 0);
    });
    for (int d = 1; d < nb2; d *= 2) {  // down-sweep: exclusive prefixes
      offset >>= 1;
      barrier();
      if_(t < d, [&] {
        Value ai = (2 * t + 1) * offset - 1, bi = (2 * t + 2) * offset - 1;
        Value l = tmp[ai];
        tmp[ai] = tmp[bi];
        tmp[bi] = tmp[bi] + l;
      });
    }
    barrier();
    if_(i0 < n, [&] { y[base + i0] = exclusive ? tmp[2 * t].load() : tmp[2 * t] + a0; });
    if_(i1 < n, [&] { y[base + i1] = exclusive ? tmp[2 * t + 1].load() : tmp[2 * t + 1] + a1; });
  });
}

ir::Kernel scan_add_back_kernel(ir::Type dt, int block) {
  return kernel("scan_add_back_b" + std::to_string(block) + "_" + dt.str(), [&](KernelBuilder& kb) {
    auto y = kb.inout("y", dt);
    auto offs = kb.input("offs", dt);
    auto n = kb.scalar("n", i32);
    auto nb = kb.scalar("nb", i32);
    kb.workgroup(64);
    Value i = cast(i32, global_id(0)), row = cast(i32, group_id(1));
    if_(i < n, [&] { y[row * n + i] = y[row * n + i] + offs[row * nb + i / block]; });
  });
}

namespace {
struct Chunk {
  Value n, cl, row, c, start, end;
};
Chunk chunk_setup(KernelBuilder& kb) {
  Chunk ch;
  ch.n = kb.scalar("n", i32);
  ch.cl = kb.scalar("chunk", i32);  // chunk length
  kb.workgroup(1);
  ch.c = cast(i32, group_id(0));
  ch.row = cast(i32, group_id(1));
  ch.start = min(ch.c * ch.cl, ch.n);
  ch.end = min(ch.start + ch.cl, ch.n);
  return ch;
}
}  // namespace

// sums[row*nchunks + c] = Σ of chunk c: 8 independent accumulators.
ir::Kernel scan_chunk_sums_kernel(ir::Type dt) {
  return kernel("scan_chunk_sums_" + dt.str(), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto sums = kb.output("sums", dt);
    Chunk ch = chunk_setup(kb);
    auto nch = kb.scalar("nchunks", i32);
    Value base = ch.row * ch.n;
    std::vector<Var> acc;
    for (int k = 0; k < 8; ++k) acc.push_back(var(constant(dt, 0)));
    Value len8 = (ch.end - ch.start) / 8 * 8;
    for_range(0, len8, [&](Value j) {
      for (int k = 0; k < 8; ++k) acc[k] += x[base + ch.start + j + k];
    }, 8);
    Var tail = var(constant(dt, 0));
    for_range(ch.start + len8, ch.end, [&](Value j) { tail += x[base + j]; });
    Value s = tail.get();
    for (int k = 0; k < 8; ++k) s = s + acc[k];
    sums[ch.row * nch + ch.c] = s;
  });
}

// Sequential scan of chunk c starting from the sum of chunks 0..c-1. Eight
// elements per step: their local prefix p_k does not depend on the carried
// sum, so the loop-carried chain is one add per 8 elements, not 8.
ir::Kernel scan_chunk_kernel(ir::Type dt, bool exclusive) {
  return kernel("scan_chunk" + tag(dt, exclusive), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto sums = kb.input("sums", dt);
    auto y = kb.output("y", dt);
    Chunk ch = chunk_setup(kb);
    auto nch = kb.scalar("nchunks", i32);
    Value base = ch.row * ch.n;
    Var s = var(constant(dt, 0));
    for_range(0, ch.c, [&](Value c) { s += sums[ch.row * nch + c]; });
    Value len8 = (ch.end - ch.start) / 8 * 8;
    for_range(0, len8, [&](Value j) {
      Value at = base + ch.start + j;
      std::vector<Value> pre;
      Value run;
      for (int k = 0; k < 8; ++k) {
        Value xk = x[at + k];
        run = k == 0 ? xk : run + xk;
        pre.push_back(run);
      }
      Value s0 = s.get();
      for (int k = 0; k < 8; ++k) {
        if (exclusive) y[at + k] = k == 0 ? s0 : s0 + pre[k - 1];
        else y[at + k] = s0 + pre[k];
      }
      s = s0 + pre[7];
    }, 8);
    for_range(ch.start + len8, ch.end, [&](Value j) {
      Value xj = x[base + j];
      if (exclusive) {
        y[base + j] = s;
        s += xj;
      } else {
        s += xj;
        y[base + j] = s;
      }
    });
  });
}

// CPU, single pass over memory: a row is cut into chunks of `cl` elements
// (L2-sized), taken in ticket order (state[0], zeroed by the reset kernel
// below): work-item t sums its chunk in lines (reading it from DRAM into
// L2), waits for chunk t - 1's inclusive prefix, publishes its own
// (prefix and a ready flag in one 64-bit word, so no ordering between two
// stores is needed), then scans the chunk from L2 in 16-lane lines (a
// log-step scan in registers: 4 shifted adds, then the carry). Tickets, not
// group ids, number the chunks: a chunk's predecessor was taken earlier by a
// running thread, so the wait always ends, and with two threads consecutive
// chunks run side by side (the CPU pool hands out groups in ranges, so group
// ids would put whole ranges of chunks behind one another). The first chunk
// of each row starts from 0.
ir::Kernel scan_lookback_kernel(ir::Type dt, bool exclusive, bool stream) {
  return kernel("scan_lookback" + tag(dt, exclusive) + (stream ? "_nt" : ""), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    // stream: y as lines, written with streaming stores (rows a multiple of
    // 16 long, so every full line is aligned and no row has a tail).
    auto y = kb.output("y", stream ? line(dt, 16) : dt);
    auto state = kb.output("state", u64);
    auto n = kb.scalar("n", u32);
    auto cl = kb.scalar("cl", u32);    // chunk length, a multiple of 16
    auto cpr = kb.scalar("cpr", u32);  // chunks per row
    // Elements ahead to prefetch while scanning (0: none): the chunk this
    // work-item is likely to take next (threads · cl ahead), so its sum pass
    // reads L2 while this chunk's scan streams its output.
    auto ahead = kb.scalar("ahead", u32);
    kb.workgroup(1);
    Value t = cast(u32, atomic_add(state, 0u, constant(u64, uint64_t(1))));
    Value row = t / cpr, c = t - row * cpr;
    Value start = c * cl, end = min(start + cl, n);
    Value base = cast(u64, row) * cast(u64, n);
    Value nfull = (end - start) / 16u * 16u;
    const Value zero = constant(dt, 0);
    // With one chunk per row (cl >= n: the single-thread form) nothing
    // waits on a chunk: no sum, no publication, one read of the data.
    Var prefix = var(zero);
    if_(cpr > 1u, [&] {
      // The chunk's sum (four line accumulators, then the < 16 tail).
      std::vector<Var> acc;
      for (int k = 0; k < 4; ++k) acc.push_back(var(splat(zero, 16)));
      Value n64 = nfull / 64u * 64u;
      for_range(0u, n64, [&](Value j) {
        for (uint32_t k = 0; k < 4; ++k) acc[k] += load_line(x, base + cast(u64, start + j + 16u * k));
      }, 64u);
      for_range(n64, nfull, [&](Value j) { acc[0] += load_line(x, base + cast(u64, start + j)); }, 16u);
      Var sum = var(reduce_add((acc[0] + acc[1]) + (acc[2] + acc[3])));
      for_range(start + nfull, end, [&](Value j) { sum += x[base + cast(u64, j)]; });
      // The prefix before this chunk: chunk t - 1's published word.
      if_(c > 0u, [&] {
        Var w = var(constant(u64, uint64_t(0)));
        while_([&] { return (w.get() >> uint64_t(32)) == uint64_t(0); },
               [&] { w = atomic_add(state, cast(u64, t), constant(u64, uint64_t(0))); });  // state[1 + (t - 1)]
        prefix = bitcast(dt, cast(u32, w.get() & uint64_t(0xffffffffu)));
      });
      Value incl = prefix.get() + sum.get();
      atomic_exch(state, cast(u64, t) + uint64_t(1), (uint64_t(1) << 32) | cast(u64, bitcast(u32, incl)));
    });
    // The scan, in 16-lane lines: a log-step scan in registers (4 steps),
    // then the carry. f32: each step adds the line rotated by `by` lanes
    // into the lanes >= by (a rotation and a masked add); shifting zeros in
    // instead, clang lowered the f32 line to vexpandps and the scan ran at
    // half speed on Zen 5 (64M elements, 1 thread: 35 against 18 ms). i32
    // shifts zeros in (valignd; the masked form was 20% slower there).
    const Value lanes = lane_index(16);
    auto line_scan = [&](Value v) {
      for (int by : {1, 2, 4, 8}) {
        std::vector<Value> l;
        if (dt == ir::types::I32) {
          for (int i = 0; i < 16; ++i) l.push_back(i < by ? zero : extract(v, i - by));
          v = v + make_line(l);
        } else {
          for (int i = 0; i < 16; ++i) l.push_back(extract(v, (i - by) & 15));
          v = select(lanes >= by, v + make_line(l), v);
        }
      }
      return v;
    };
    // Exclusive: the inclusive line moved up a lane, the carry in lane 0.
    auto moved_up = [&](const Value& v, const Value& c) {
      std::vector<Value> l;
      for (int i = 0; i < 16; ++i) l.push_back(i == 0 ? extract(c, 0) : extract(v, i - 1));
      return make_line(l);
    };
    Var carry = var(splat(prefix.get(), 16));
    for_range(0u, nfull, [&](Value j) {
      Value at = base + cast(u64, start + j);
      if_(ahead > 0u, [&] { x[at + cast(u64, ahead)].prefetch(); });
      Value out = carry.get() + line_scan(load_line(x, at));
      Value res = exclusive ? moved_up(out, carry.get()) : out;
      if (stream) y[at / uint64_t(16)].stream(res);
      else store_line(y, at, res);
      carry = splat(extract(out, 15), 16);
    }, 16u);
    if (stream) return;  // rows of whole lines: no tail
    Var run = var(extract(carry.get(), 0));
    for_range(start + nfull, end, [&](Value j) {
      Value at = base + cast(u64, j);
      Value xj = x[at];
      if (exclusive) {
        y[at] = run;
        run += xj;
      } else {
        run += xj;
        y[at] = run;
      }
    });
  });
}

// Zeroes the look-back state (ticket counter and one word per chunk).
ir::Kernel scan_lookback_reset_kernel() {
  return kernel("scan_lookback_reset", [&](KernelBuilder& kb) {
    auto state = kb.output("state", u64);
    auto count = kb.scalar("count", u32);
    kb.workgroup(1);
    Value i0 = group_id(0) * 256u;
    for_range(i0, min(i0 + 256u, count), [&](Value i) { state[i] = constant(u64, uint64_t(0)); });
  });
}

// Rows of 2..24 values (CPU): 16 rows at a time with a row per lane (the n
// lines holding them regrouped into column lines, ops/layout/transpose_block.h), the
// prefix sums lane-wise across the columns, then regrouped back. The
// per-row walk spent a loop and its setup on every row of a few values
// (Zen 5, 1 thread, 100000 × 10 f32: 8.7 GB/s).
ir::Kernel scan_narrow_kernel(ir::Type dt, int n, bool exclusive) {
  const uint32_t N = uint32_t(n);
  return kernel(std::string("scan_narrow") + std::to_string(n) + "_" + dt.str() + (exclusive ? "_ex" : ""), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto rows = kb.scalar("rows", u32);
    kb.workgroup(1);
    Value r0 = group_id(0) * kNarrowScanRows, r_end = min(r0 + kNarrowScanRows, rows);
    auto prefix = [&](const std::vector<Value>& cols, int lanes) {
      std::vector<Value> out;
      Value run = lanes > 1 ? splat(constant(dt, 0), lanes) : constant(dt, 0);
      for (uint32_t c = 0; c < N; ++c) {
        if (exclusive) out.push_back(run);
        run = c ? run + cols[c] : cols[c];
        if (!exclusive) out.push_back(run);
      }
      return out;
    };
    const Value zero = constant(u64, 0);
    map_rows_in_lanes(x, zero, N, y, zero, N, r0, r_end, prefix);
  });
}

}  // namespace kgen::ops
