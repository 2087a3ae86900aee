// The prefix-sum kernels of scan.h. Row length n and block counts are
// runtime scalars; only the dtype, workgroup size and mode are baked.
#include <string>

#include "dsl/dsl.h"
#include "ops/scan.h"

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

}  // namespace kgen::ops
