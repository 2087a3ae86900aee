// The "transpose" op: y = x permuted (numpy's x.transpose(perm), made
// contiguous). dims = x's shape (rank 1..6), attr perm: the permutation as
// decimal digits, output axis k = input axis perm[k] (perm=213 or 0213 swaps
// the middle axes of a 4-D tensor: attributes are read in base 10, so a
// leading 0 is only a digit; in C++ write 213, since 0213 is an octal
// literal). Default: the last two axes swapped. dtype f32, f16, bf16 (a copy: no arithmetic).
//
// Output axes that are consecutive in the input merge first. Then:
//  - the input's contiguous axis is still innermost: a strided copy with a
//    contiguous inner axis, which is the fusion kernel over an explicit
//    layout (lines, one load and one store per element);
//  - otherwise (the last-two-axes transpose, with batch axes around): tiles
//    (output inner axis x the output axis that is contiguous in the input),
//    so both the reads and the writes use whole cache lines: on a GPU 32 x 32
//    elements; on the CPU 16 x 16 blocks transposed in registers, with
//    streaming stores for large outputs of whole lines (lines_kernel).
// Which of them a target gets untuned: ops/layout/strategy.cpp.
#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "dsl/dsl.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/fusion.h"
#include "ops/layout/data_movement_ops.h"
#include "ops/layout/index_moves.h"
#include "ops/layout/strategy.h"
#include "ops/layout/transpose.h"
#include "ops/layout/transpose_batch.h"
#include "ops/layout/transpose_block.h"
#include "ops/layout/transpose_narrow.h"
#include "ops/layout/transpose_view.h"

namespace kgen::ops {

using namespace kgen::dsl;
using namespace transpose_detail;

namespace {

void validate(const Problem& p) {
  if (p.dims.empty() || p.dims.size() > 6) throw std::invalid_argument("dims: the input shape, rank 1..6");
  if (p.dtype != ir::ScalarKind::F32 && p.dtype != ir::ScalarKind::F16 && p.dtype != ir::ScalarKind::BF16)
    throw std::invalid_argument("dtype f32, f16 or bf16");
  for (int64_t d : p.dims)
    if (d < 1) throw std::invalid_argument("sizes must be >= 1");
  if (double(fusion::numel(p.dims)) >= 4e9) throw std::invalid_argument("too large: 32-bit indices");
  perm_of(p);
}

constexpr int kTile = 32;

// Tiled: the output is (batch..., A, B) with B innermost; the input is
// contiguous along output axis `a` (= A after ordering) and strided (sb)
// along B. Group (tile of B, tile of A, batch).
ir::Kernel tiled_kernel(ir::Type dt, int nbatch) {
  return kernel("transpose_tiled_" + dt.str() + "_b" + std::to_string(nbatch), [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", dt);
    auto A = kb.scalar("A", u32);
    auto B = kb.scalar("B", u32);
    auto sa = kb.scalar("sa", u32);  // input stride of output axis A (1 when A is the input's inner axis)
    auto sb = kb.scalar("sb", u32);  // input stride of output axis B
    const BatchAxes batch = batch_axes(kb, nbatch);
    kb.workgroup(1);
    Value b0 = group_id(0) * uint32_t(kTile), a0 = group_id(1) * uint32_t(kTile);
    Value ibase = batch.input_base();
    Value obase = group_id(2) * A * B;
    Value an = min(A - a0, uint32_t(kTile)), bn = min(B - b0, uint32_t(kTile));
    // Output rows of the tile (contiguous writes); the reads walk the input's
    // contiguous axis across the rows, within the L1-resident tile.
    for_range(0u, an, [&](Value i) {
      Value orow = obase + (a0 + i) * B + b0;
      Value irow = ibase + (a0 + i) * sa + b0 * sb;
      for_range(0u, bn, [&](Value j) { y[orow + j] = x[irow + j * sb]; });
    });
  });
}

// CPU, input contiguous along A (sa == 1): tiles of ta x tb blocks of 16 x 16.
// A full block reads 16 input lines (16 consecutive A values at 16
// consecutive B), transposes them in registers (transpose16: 64 two-source
// shuffles) and writes 16 output lines, so every access is a whole line
// (a scratch tile of scalar stores and loads ran at 5-7 GB/s whatever the
// pitch). The blocks of a tile go along A first: each of the 16 input rows is
// then read as one sequential run of ta lines. Edge blocks go element by
// element. (16-bit lines are half cache lines: see the block pairs below, and
// pairs32_kernel.) The blocks go in runtime loops: unrolled, a tile of 16
// blocks was 1.7x slower.
// stream: B % 16 == 0, so every output line (16 B values of one output row)
// is whole and aligned; the output is then written with streaming stores
// (no read for ownership: a third less traffic) as a buffer of lines, and
// blocks past A load clamped indices and store only their rows below A.
// Output line at element (or word) o: a streaming store into a buffer of
// lines (o a multiple of 16), else 16 element stores merged into one.
// A tile's coordinates: grid x (the fastest in the CPU's order) along B,
// or along A with a_fast: then consecutive tiles read the same input rows
// (the next 16·ta values of each) and write other output rows (wide tiles
// B-fast would write 64 rows at a time and not continue their reads).
Value tile_a_id(bool a_fast) { return a_fast ? group_id(0) : group_id(1); }
Value tile_b_id(bool a_fast) { return a_fast ? group_id(1) : group_id(0); }

void put_line(const Array& y, bool stream, const Value& o, const Value& v) {
  if (stream) y[o / 16u].stream(v);
  else store_line(y, o, v);
}

ir::Kernel lines_kernel(ir::Type dt, int nbatch, int ta, int tb, bool stream, bool diag, bool a_fast) {
  // A copy moves bits: 16-bit values go as u16, one kernel for f16 and bf16
  // (bf16 lines would be shuffled through f32 conversions).
  if (dt.bytes() == 2) dt = u16;
  const std::string name = "transpose_lines_" + dt.str() + "_b" + std::to_string(nbatch) + "_t" + std::to_string(ta) + "x" +
                           std::to_string(tb) + (stream ? "_nt" : "") + (diag ? "_dg" : "") + (a_fast ? "_af" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", stream ? line(dt, 16) : dt);
    auto A = kb.scalar("A", u32);
    auto B = kb.scalar("B", u32);
    auto sa = kb.scalar("sa", u32);
    auto sb = kb.scalar("sb", u32);
    const BatchAxes batch = batch_axes(kb, nbatch);
    kb.workgroup(1);
    Value ibase = batch.input_base();
    Value obase = group_id(2) * A * B;
    // 16-bit values: a line is half a cache line, so blocks go in pairs
    // along B (tb even) and each output row gets both halves of its cache
    // line back to back (a streaming store of half a line left the
    // write-combining buffer to flush partial lines).
    const uint32_t BP = dt.bytes() == 2 && tb % 2 == 0 ? 2 : 1;  // blocks per step along B
    for_range(0u, uint32_t(tb) / BP, [&](Value bstep) {
      for_range(0u, uint32_t(ta), [&](Value ai) {
        Value a1 = tile_a_id(a_fast) * uint32_t(16 * ta) + ai * 16u;
        Value bs = diag ? (bstep + ai) % (uint32_t(tb) / BP) : bstep;
        Value b0 = tile_b_id(a_fast) * uint32_t(16 * tb) + bs * (16u * BP);
        // The 16 × 16 block at B offset b1 transposed (edge: lanes past A
        // read A's last value; their rows are not stored).
        auto transposed = [&](const Value& b1, bool edge) {
          std::array<Value, 16> rows;
          for (int k = 0; k < 16; ++k) {
            Value row = ibase + (b1 + uint32_t(k)) * sb;
            if (!edge) {
              rows[size_t(k)] = load_line(x, row + a1);
            } else {
              std::vector<Value> l;
              for (uint32_t j = 0; j < 16; ++j) l.push_back(x[row + min(a1 + j, A - 1u)]);
              rows[size_t(k)] = make_line(l);
            }
          }
          return transpose16(rows);
        };
        // One 16 x 16 block at B offset b1: whole, or at an edge.
        auto block = [&](const Value& b1, bool edge) {
          auto cols = transposed(b1, edge);
          for (int q = 0; q < 16; ++q) {
            Value o = obase + (a1 + uint32_t(q)) * B + b1;
            auto put = [&] { put_line(y, stream, o, cols[size_t(q)]); };
            if (edge) if_(a1 + uint32_t(q) < A, put);
            else put();
          }
        };
        auto single = [&](const Value& b1) {
          if_(a1 + 16u <= A && b1 + 16u <= B, [&] { block(b1, false); }).else_([&] {
            if (stream) {
              if_(a1 < A && b1 < B, [&] { block(b1, true); });
              return;
            }
            if_(a1 < A && b1 < B, [&] {
              Value an = min(A - a1, 16u), bn = min(B - b1, 16u);
              for_range(0u, an, [&](Value i) {
                for_range(0u, bn, [&](Value j) { y[obase + (a1 + i) * B + b1 + j] = x[ibase + (a1 + i) * sa + (b1 + j) * sb]; });
              });
            });
          });
        };
        if (BP == 1) return single(b0);
        // Both blocks whole: each output row's two halves stored together;
        // else the blocks one by one.
        if_(a1 + 16u <= A && b0 + 32u <= B, [&] {
          auto c0 = transposed(b0, false), c1 = transposed(b0 + 16u, false);
          for (int q = 0; q < 16; ++q) {
            Value o = obase + (a1 + uint32_t(q)) * B + b0;
            put_line(y, stream, o, c0[size_t(q)]);
            put_line(y, stream, o + 16u, c1[size_t(q)]);
          }
        }).else_([&] {
          single(b0);
          single(b0 + 16u);
        });
      });
    });
  });
}

// CPU, 16-bit values in whole 32 × 32 blocks (A and B multiples of 32, even
// strides), read and written as u32 words: each of the block's 32 input rows
// is one 64-byte line of 16 words. Rows 2I and 2I + 1 interleave into the
// words (x[2I][2w], x[2I+1][2w]) and (x[2I][2w+1], x[2I+1][2w+1]), which are
// output rows 2w and 2w + 1 at column pair I; two transpose16 of those words
// give the block's 32 output rows as whole 64-byte lines. A 16-bit 16 × 16
// block transposed 32 bytes per 64 shuffles; this, 64 bytes. The rows are
// loaded twice (from L1), once per parity, so 16 lines are live, not 32.
ir::Kernel pairs32_kernel(int nbatch, int ta, int tb, bool stream, bool diag, bool a_fast) {
  const std::string name = "transpose_pairs32_b" + std::to_string(nbatch) + "_t" + std::to_string(ta) + "x" +
                           std::to_string(tb) + (stream ? "_nt" : "") + (diag ? "_dg" : "") + (a_fast ? "_af" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", u32);
    auto y = kb.output("y", stream ? line(u32, 16) : u32);
    auto A = kb.scalar("A", u32);  // sizes and strides in 16-bit elements
    auto B = kb.scalar("B", u32);
    kb.scalar("sa", u32);  // 1 (the plan checks)
    auto sb = kb.scalar("sb", u32);
    const BatchAxes batch = batch_axes(kb, nbatch);
    kb.workgroup(1);
    Value ibase = batch.input_base();
    Value obase = group_id(2) * A * B;
    for_range(0u, uint32_t(tb), [&](Value bi) {
      for_range(0u, uint32_t(ta), [&](Value ai) {
        Value a1 = tile_a_id(a_fast) * uint32_t(32 * ta) + ai * 32u;
        Value b1 = tile_b_id(a_fast) * uint32_t(32 * tb) + (diag ? (bi + ai) % uint32_t(tb) : bi) * 32u;
        if_(a1 < A && b1 < B, [&] {
          for (uint32_t parity = 0; parity < 2; ++parity) {
            std::array<Value, 16> words;
            for (uint32_t i = 0; i < 16; ++i) {
              Value r0 = load_line(x, (ibase + (b1 + 2u * i) * sb + a1) / 2u);
              Value r1 = load_line(x, (ibase + (b1 + 2u * i + 1u) * sb + a1) / 2u);
              words[i] = parity ? (r0 >> 16u) | (r1 & 0xffff0000u) : (r0 & 0xffffu) | (r1 << 16u);
            }
            auto rows = transpose16(words);
            for (uint32_t w = 0; w < 16; ++w) {
              put_line(y, stream, (obase + (a1 + 2u * w + parity) * B + b1) / 2u, rows[w]);  // o in words
            }
          }
        });
      });
    });
  });
}

// CPU, input contiguous along the output's inner axis C (rows of C
// elements, C % 16 == 0), the output as (batch..., A, B, C): tiles of 16 A ×
// 16 B rows, each copied as 16-element lines. Walking the output in order
// (the strided chain) reads one row per B step: at 64x512x16x64 0213 each
// 256-byte row is on another 4 KiB page, 512 streams that the hardware
// prefetchers (which stop at page boundaries) cannot follow. A tile's rows
// go along the axis with the smaller input stride first (a_inner: A, as in
// the head reshapes, where a tile's 16 A rows are one contiguous run of the
// input), so the reads are sequential and the writes 16 runs that advance by
// a row per step. stream: the rows go out with streaming stores (C % 16 ==
// 0, so every output line is whole and aligned), and the scattered writes
// then cost no reads for ownership.
// Zen 5, 64x512x16x64 0213: input order streamed 4.9 ms, output order plain 9.9.
// rb > 1: rb rows of the outer axis per step of the inner one, so each
// output run grows by rb rows before the next (short rows: a 256-byte run
// per switch kept few lines in flight per write stream).
ir::Kernel rows_kernel(ir::Type dt, int nbatch, bool stream, bool a_inner, int rb) {
  if (rb < 1 || kRowTile % rb != 0) throw std::invalid_argument("transpose rows_kernel: rb must divide 16");
  return kernel("transpose_rows_" + dt.str() + "_b" + std::to_string(nbatch) + (stream ? "_nt" : "") + (a_inner ? "_ai" : "") +
                    (rb > 1 ? "_rb" + std::to_string(rb) : ""),
                [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", stream ? line(dt, 16) : dt);
    auto A = kb.scalar("A", u32);
    auto B = kb.scalar("B", u32);
    auto C = kb.scalar("C", u32);
    auto sa = kb.scalar("sa", u32);
    auto sb = kb.scalar("sb", u32);
    const BatchAxes batch = batch_axes(kb, nbatch);
    kb.workgroup(1);
    Value ibase = batch.input_base();
    Value obase = group_id(2) * A * B * C;
    Value a0 = group_id(1) * uint32_t(kRowTile), b0 = group_id(0) * uint32_t(kRowTile);
    Value an = min(A - a0, uint32_t(kRowTile)), bn = min(B - b0, uint32_t(kRowTile));
    auto copy = [&](const Value& i, const Value& j) {
      Value irow = ibase + (a0 + i) * sa + (b0 + j) * sb;
      Value orow = cast(u64, obase + ((a0 + i) * B + b0 + j) * C);
      for_range(0u, C / 16u, [&](Value c) {
        Value v = load_line(x, irow + c * 16u);
        if (stream) y[orow / uint64_t(16) + cast(u64, c)].stream(v);
        else store_line(y, orow + cast(u64, c) * uint64_t(16), v);
      });
    };
    // rb rows of the outer axis per inner step; outer rows past the tile's
    // edge skipped one by one.
    auto walk = [&](const Value& n_outer, const Value& n_inner, const std::function<void(const Value&, const Value&)>& f) {
      for_range(0u, (n_outer + uint32_t(rb - 1)) / uint32_t(rb), [&](Value q) {
        for_range(0u, n_inner, [&](Value in) {
          for (int r = 0; r < rb; ++r) {
            Value o = q * uint32_t(rb) + uint32_t(r);
            if (rb == 1) f(o, in);
            else if_(o < n_outer, [&] { f(o, in); });
          }
        });
      });
    };
    if (a_inner) walk(bn, an, [&](const Value& j, const Value& i) { copy(i, j); });
    else walk(an, bn, [&](const Value& i, const Value& j) { copy(i, j); });
  });
}

uint64_t u32_slot(int64_t x) { return ir::scalar_slot(uint32_t(x)); }

// The step of a tiled kernel: grid (x, y, the batch elements), the kernel's
// own scalars followed by the batch axes' sizes and input strides (BatchAxes).
Step tiled_step(ir::Kernel k, const View& v, int nb, uint32_t gx, uint32_t gy, std::vector<uint64_t> scalars) {
  Step st;
  st.kernel = std::move(k);
  int64_t batch = 1;
  for (size_t a = 0; a < size_t(nb); ++a) {
    batch *= v.dims[a];
    scalars.push_back(u32_slot(v.dims[a]));
    scalars.push_back(u32_slot(v.in_stride[a]));
  }
  st.dims.grid = {gx, gy, uint32_t(batch)};
  st.buffers = {0, 1};
  st.scalars = std::move(scalars);
  return st;
}

Plan plan(const Problem& p, const Variant& var, const TargetCaps& caps) {
  View v = view_of(p);
  Plan pl;
  if (var.get("impl") == kRows) {
    if (!rows_fit(v)) throw std::invalid_argument("transpose: impl=3 (row tiles) needs rows of a multiple of 16 contiguous elements under two other axes");
    size_t R = v.dims.size();
    ir::Type et(p.dtype);
    // 16-bit rows of a multiple of 32 elements at even offsets move as u32
    // words: the same copy with every size and stride halved, in whole
    // 64-byte lines (16-bit lines are half cache lines).
    bool words = et.bytes() == 2 && v.dims[R - 1] % 32 == 0;
    for (size_t a = 0; a + 1 < R; ++a) words = words && v.in_stride[a] % 2 == 0;
    if (words) {
      et = ir::Type(ir::ScalarKind::U32);
      v.dims[R - 1] /= 2;
      for (size_t a = 0; a + 1 < R; ++a) v.in_stride[a] /= 2;
    }
    pl.steps.push_back(tiled_step(rows_kernel(et, int(R) - 3, var.get("nt", 0) != 0, rows_a_inner(v), int(var.get("rb", 1))), v,
                                  int(R) - 3, groups_for(v.dims[R - 2], kRowTile), groups_for(v.dims[R - 3], kRowTile),
                                  {u32_slot(v.dims[R - 3]), u32_slot(v.dims[R - 2]), u32_slot(v.dims[R - 1]),
                                   u32_slot(v.in_stride[R - 3]), u32_slot(v.in_stride[R - 2])}));
    return pl;
  }
  if (inner_contiguous(v)) {
    fusion::Chain c;
    c.name = "transpose";
    c.inputs = {{"x", p.dtype, v.dims}};  // the strided view (the layout gives the real strides)
    c.shape = v.dims;
    c.out_dtype = p.dtype;
    c.out = fusion::in(0);
    fusion::Layout l;
    l.dims = v.dims;
    l.strides = {v.in_stride};
    fusion::ChainVariant cv = fusion::chain_variant_for(c, caps);
    fusion::plan_chain_layout(pl, c, l, {0}, 1, cv);
    return pl;
  }
  // The output as (batch..., A, B): A = output axis R-2, whatever its input
  // stride (1 for the plain last-two-axes transpose); batch axes decoded
  // per group with their input strides.
  const size_t R = v.dims.size();
  const int nb = int(R) - 2;
  if (var.get("impl") == kNarrow) {
    const int mode = narrow_mode(v), u = int(var.get("u", 4));
    if (!is_cpu(caps) || !mode)
      throw std::invalid_argument("transpose: impl=4 (narrow axis) is for the CPU, an input contiguous along the output's "
                                  "second-last axis, and 2..24 values on the last (2..16 on the second-last, its rows packed)");
    const int64_t n = mode == 1 ? v.dims[R - 1] : v.dims[R - 2], wide = mode == 1 ? v.dims[R - 2] : v.dims[R - 1];
    const bool nt = var.get("nt", 0) != 0;
    if (nt && !narrow_streams(v))
      throw std::invalid_argument("transpose: impl=4 with nt=1 needs the wide axis a multiple of 16 (and A·B too)");
    pl.steps.push_back(tiled_step(transpose_narrow_kernel(ir::Type(p.dtype), nb, int(n), mode == 1, u, nt), v, nb,
                                  groups_for(wide, 16 * int64_t(u)), 1,
                                  {u32_slot(v.dims[R - 2]), u32_slot(v.dims[R - 1]), u32_slot(v.in_stride[R - 1])}));
    return pl;
  }
  const bool lines = var.get("impl") == kLines && v.in_stride[R - 2] == 1;
  const int ta = int(var.get("ta", 8)), tb = int(var.get("tb", 8));
  const int tile_a = lines ? 16 * ta : kTile, tile_b = lines ? 16 * tb : kTile;
  const bool stream = lines && var.get("nt", 0) != 0;
  const bool a_fast = lines && var.get("af", 0) != 0;
  if (stream && v.dims[R - 1] % 16 != 0) throw std::invalid_argument("transpose: nt=1 (streaming stores) needs the output's inner size a multiple of 16");
  if (var.get("w32", 0)) {  // 16-bit 32 × 32 word blocks; ta × tb of them per group
    if (!lines || !pairs32_fit(p, v))
      throw std::invalid_argument("transpose: w32=1 needs 16-bit values, A and B multiples of 32 and even strides");
    const uint32_t gb = groups_for(v.dims[R - 1], 32 * tb), ga = groups_for(v.dims[R - 2], 32 * ta);
    pl.steps.push_back(tiled_step(pairs32_kernel(nb, ta, tb, stream, var.get("dg", 0) != 0, a_fast), v, nb, a_fast ? ga : gb, a_fast ? gb : ga,
                                  {u32_slot(v.dims[R - 2]), u32_slot(v.dims[R - 1]), u32_slot(v.in_stride[R - 2]),
                                   u32_slot(v.in_stride[R - 1])}));
    return pl;
  }
  const uint32_t gb = groups_for(v.dims[R - 1], tile_b), ga = groups_for(v.dims[R - 2], tile_a);
  pl.steps.push_back(tiled_step(lines ? lines_kernel(ir::Type(p.dtype), nb, ta, tb, stream, var.get("dg", 0) != 0, a_fast) : tiled_kernel(ir::Type(p.dtype), nb), v, nb,
                                a_fast ? ga : gb, a_fast ? gb : ga,
                                {u32_slot(v.dims[R - 2]), u32_slot(v.dims[R - 1]), u32_slot(v.in_stride[R - 2]),
                                 u32_slot(v.in_stride[R - 1])}));
  return pl;
}

void reference(const Problem& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  View v = view_of(p);
  const int R = int(v.dims.size());
  const size_t eb = size_t(ir::Type(p.dtype).bytes());
  const int64_t n = fusion::numel(v.dims);
  std::vector<int64_t> c(static_cast<size_t>(R), 0);
  const auto* x = static_cast<const uint8_t*>(in[0]);
  auto* y = static_cast<uint8_t*>(out[0]);
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (int k = 0; k < R; ++k) at += c[size_t(k)] * v.in_stride[size_t(k)];
    std::memcpy(y + size_t(e) * eb, x + size_t(at) * eb, eb);
    for (int k = R - 1; k >= 0; --k) {
      if (++c[size_t(k)] < v.dims[size_t(k)]) break;
      c[size_t(k)] = 0;
    }
  }
}

Problem prob(std::vector<int64_t> dims, int64_t perm, ir::ScalarKind dt = ir::ScalarKind::F32) {
  Problem p;
  p.op = "transpose";
  p.dims = std::move(dims);
  p.dtype = dt;
  if (perm >= 0) p.attrs["perm"] = perm;
  return p;
}

}  // namespace

ir::Kernel transpose_lines_kernel(ir::Type dt, int nbatch, int ta, int tb, bool stream) {
  return lines_kernel(dt, nbatch, ta, tb, stream, false, false);
}

void register_layout_ops() {
  OpDef d;
  d.name = "transpose";
  d.description = "y = x.transpose(perm) made contiguous: strided copy, tiled for a transposed inner axis";
  d.dims_help = "input shape (rank 1..6)";
  d.attrs_help = "perm=<digits> (output axis k = input axis digit k, e.g. perm=0213 or 213; default: last two swapped)";
  d.validate = validate;
  d.inputs = [](const Problem& p) { return std::vector<TensorSpec>{tensor("x", ir::Type(p.dtype), p.dims)}; };
  d.outputs = [](const Problem& p) {
    auto perm = perm_of(p);
    std::vector<int64_t> os;
    for (int a : perm) os.push_back(p.dims[size_t(a)]);
    return std::vector<TensorSpec>{tensor("y", ir::Type(p.dtype), os)};
  };
  d.candidates = [](const Problem& p, const TargetCaps& caps) {
    if (inner_contiguous(view_of(p))) {
      std::vector<Variant> v = {Variant{}.set("impl", kStrided)};
      if (is_cpu(caps) && rows_fit(view_of(p)))
        for (int nt : {0, 1})
          for (int rb : {1, 4, 16}) v.push_back(Variant{}.set("impl", kRows).set("nt", nt).set("rb", rb));
      return v;
    }
    std::vector<Variant> v = {Variant{}.set("impl", kTiled)};
    if (is_cpu(caps) && narrow_mode(view_of(p)))
      for (int u : {1, 4, 16})
        for (int nt : {0, 1})
          if (!nt || narrow_streams(view_of(p))) v.push_back(Variant{}.set("impl", kNarrow).set("u", u).set("nt", nt));
    if (is_cpu(caps)) {
      const bool can_stream = view_of(p).dims.back() % 16 == 0;
      for (auto [ta, tb] : {std::pair{4, 4}, {8, 8}, {16, 1}, {32, 2}, {64, 2}, {64, 4}})
        for (int nt : {0, 1})
          if (!nt || can_stream) {
            v.push_back(Variant{}.set("impl", kLines).set("ta", ta).set("tb", tb).set("nt", nt));
            if (ta == 8 && tb == 8) v.push_back(Variant{}.set("impl", kLines).set("ta", ta).set("tb", tb).set("nt", nt).set("dg", 1));
          }
      // Wide tiles in A-fast order (af).
      for (auto [ta, tb] : {std::pair{4, 32}, {8, 32}})
        for (int nt : {0, 1})
          if (!nt || can_stream) v.push_back(Variant{}.set("impl", kLines).set("ta", ta).set("tb", tb).set("nt", nt).set("af", 1));
      if (pairs32_fit(p, view_of(p))) {
        for (auto [ta, tb] : {std::pair{32, 1}, {16, 2}, {8, 4}, {4, 4}})
          for (int nt : {0, 1}) {
            Variant w = Variant{}.set("impl", kLines).set("w32", 1).set("ta", ta).set("tb", tb).set("nt", nt);
            v.push_back(w);
            if (tb > 1) v.push_back(w.set("dg", 1));
          }
        for (auto [ta, tb] : {std::pair{2, 16}, {4, 16}, {4, 8}})
          for (int nt : {0, 1}) v.push_back(Variant{}.set("impl", kLines).set("w32", 1).set("ta", ta).set("tb", tb).set("nt", nt).set("af", 1));
      }
    }
    return v;
  };
  d.heuristic = transpose_heuristic;
  d.variant_keys = {
      key_set("impl", "implementation", {kStrided, kTiled, kLines, kRows, kNarrow},
              "0 strided copy, 1 tiles of 32 × 32, 2 CPU 16 × 16 blocks in registers, 3 CPU row tiles, 4 CPU narrow axis"),
      key_set("nt", "streaming_stores", {0, 1}, "CPU: write y with non-temporal stores (whole output lines)"),
      key_set("rb", "outer_rows_per_step", {1, 2, 4, 8, 16}, "row tiles: rows of the outer axis per step of the inner one"),
      key_range("u", "chunks_per_item", 1, 64, "narrow axis: chunks of 16 along the wide axis per work-item"),
      key_range("ta", "tile_blocks_a", 1, 1024, "blocks: blocks per tile along A (the input's contiguous axis)"),
      key_range("tb", "tile_blocks_b", 1, 1024, "blocks: blocks per tile along B (the output's inner axis)"),
      key_set("dg", "diagonal_blocks", {0, 1}, "blocks: a tile's blocks in diagonal order (spreads the stores over L1 sets)"),
      key_set("af", "a_fast_tiles", {0, 1}, "blocks: consecutive tiles along A (continuing the same input rows)"),
      key_set("w32", "word_blocks", {0, 1}, "blocks: 16-bit values in 32 × 32 blocks moved as u32 words"),
  };
  d.plan = plan;
  d.reference = reference;
  d.tolerance = [](const Problem&) { return 0.0; };  // a copy
  d.flops = [](const Problem&) { return 0.0; };
  d.bytes = [](const Problem& p) { return 2.0 * double(fusion::numel(p.dims)) * double(ir::Type(p.dtype).bytes()); };
  d.memory_bound = true;
  d.test_problems = {prob({37, 29}, -1),           prob({1, 1}, -1),           prob({5, 7, 9}, 102),
                     prob({5, 7, 9}, 210),        prob({5, 7, 9}, 120),      prob({5, 7, 9}, 201),
                     prob({3, 5, 7, 11}, 213),    prob({3, 5, 7, 11}, 312),  prob({2, 3, 4, 5, 6}, 43210),
                     prob({33, 65}, -1, ir::ScalarKind::F16), prob({2, 1, 3, 1, 2, 5}, 54321), prob({100}, 0),
                     prob({70, 45}, -1), prob({3, 64, 40}, 210), prob({2, 48, 5, 33}, 231),
                     // rows of 16k contiguous elements: the row tiles, edge tiles and a batch axis
                     prob({3, 5, 7, 32}, 213), prob({2, 17, 3, 48}, 2103), prob({4, 19, 3, 32}, 213, ir::ScalarKind::F16),
                     // ... with B's input stride the smaller (B rows first), an edge tile along B
                     prob({5, 19, 9, 32}, 2013),
                     // output rows of 16k elements (streaming stores): edge blocks along A, a batch axis, f16
                     prob({48, 37}, -1), prob({2, 32, 21}, 21), prob({64, 45}, -1, ir::ScalarKind::BF16),
                     prob({16, 300}, -1),
                     // 16-bit: blocks in pairs along B, whole and at the edges, streamed and not, batched
                     prob({80, 50}, -1, ir::ScalarKind::BF16), prob({2, 70, 50}, 21, ir::ScalarKind::F16),
                     // 16-bit 32 × 32 word blocks: partial tiles of them, a batch axis
                     prob({96, 64}, -1, ir::ScalarKind::BF16), prob({3, 64, 160}, 21, ir::ScalarKind::F16),
                     // a narrow axis (2..24 / 16 values): interleaved (NCHW -> NHWC) and back, remainders of
                     // the wide axis, batched, 16-bit, streamable (A·n % 16 == 0), 16 values
                     prob({2, 3, 37, 5}, 231), prob({2, 37, 5, 3}, 312), prob({5, 64}, 10), prob({48, 7}, -1, ir::ScalarKind::F16),
                     prob({3, 2, 70}, 21, ir::ScalarKind::BF16), prob({3, 16, 40}, 21), prob({2, 32, 9}, 21),
                     // ... n = 2^s·m: even/odd stages, then chains of m (ops/layout/transpose_block.h)
                     prob({2, 12, 33}, 21), prob({40, 6}, -1), prob({3, 8, 20}, 21), prob({64, 16}, -1, ir::ScalarKind::F16),
                     prob({2, 20, 37}, 21), prob({24, 50}, -1),
                     // 16-bit row tiles as u32 words (C % 32 == 0), and as 16-bit lines (C = 48)
                     prob({3, 5, 7, 64}, 213, ir::ScalarKind::BF16), prob({2, 5, 3, 48}, 213, ir::ScalarKind::BF16)};
  d.bench_problems = {prob({4096, 4096}, -1), prob({4096, 4096}, -1, ir::ScalarKind::BF16), prob({64, 512, 16, 64}, 213)};
  register_op(std::move(d));
  register_data_movement_ops();
  register_index_move_ops();
}

}  // namespace kgen::ops
