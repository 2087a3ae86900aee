// The attention family's strategy: which variant each target gets untuned.
// One rule per function, with why it holds; `kgen tune` may overrule any of
// them per shape, since every alternative stays a candidate.
#include "ops/attention/strategy.h"

#include <algorithm>
#include <optional>

#include "ops/attention/problem.h"
#include "ops/attention/rope.h"
#include "ops/common/stream_heuristic.h"
#include "ops/elementwise/fusion.h"

namespace kgen::ops {

namespace {

using namespace attention_detail;

// ---- attention on the CPU ----

// Few query rows (decode) take the naive composition: the flash plan first
// writes Kᵀ, a whole pass over K per call, and pads the rows to blocks of qb.
// Zen 5, S = 1, Skv = 2048, H32/8 D128: 0.79 ms against 3.9 for flash.
bool few_query_rows(const Att& a) { return a.s < 4 || (a.s < 8 && a.skv >= 1024); }

// With G >= 2 query heads per kv head (G <= 8), one work-item takes all G
// (rg): each K and V row is then read once for all of them, which keeps the
// naive form ahead of flash up to S = 16.
bool grouped_decode(const Att& a) { return grouped_fits(a) && a.h / a.hkv >= 2 && a.s <= 16; }

Variant cpu_naive(const Att& a) {
  Variant v = Variant{}.set("impl", kNaive);
  if (grouped_fits(a)) v.set("rg", a.h / a.hkv);
  return v;
}

// D of 96 and more (an even number of lines) on 32 zmm: the qb × D/16 output
// accumulators live in L1, walked 2 lines at a time, 6 rows per work-item, so
// the P·V key loop keeps its live set in registers.
bool accumulators_in_l1(const Att& a, const TargetCaps& caps) {
  return a.d >= 96 && (a.d / 16) % 2 == 0 && caps.vector_bits >= 512;
}

// The GEMM register tiles (impl 3) where an f32x16 line spans several
// registers (AVX2's 16 ymm): the line form's qb × D/16 accumulators and
// score lines then overflow the register file (or are walked from L1),
// where the tiles keep the matmul micro-kernel's block (6 rows × 16) in
// registers for both products; D off whole lines too (their rows padded).
// Zen 1, 1 thread, B1 H8 S1024 D64: 83 ms (impl 1, dc 1) against 59; H32
// S1024 D128 causal 325 against 240; H8 S512 D72: 412 (generic flash) against 21.
// Zen 4 (zmm as two halves) too: the 6 × 4-line block keeps more independent
// FMAs in flight than the line form's 4 rows; 2-11% faster on every bench shape.
// Intel AVX-512 (Granite Rapids) as well: 12-24% faster on every bench shape.
// And D off whole lines on every CPU, where the line forms do not apply and the
// generic (GPU-shaped) flash kernel is far slower: Zen 4, H8 S1024 D24, 1
// thread: 338 ms against 12.
bool tiles_pay(const Att& a, const TargetCaps& caps) {
  return tiles_fit(a, caps) && (codegen::registers_per_line(caps) >= 2 || caps.cpu.split_zmm ||
                                caps.cpu.family == codegen::CpuFamily::intel_avx512 || a.d % 16);
}

// Two tiles per work-item unless that pads S to noticeably more rows than
// one does (short S: the padded rows cost as much as real ones).
// Zen 1, S 16, Skv 512, H8 D64 causal: 0.59 ms with one tile, 0.76 with two.
int tiles_per_item(const Att& a, int mr) {
  auto padded = [&](int rows) { return double((a.s + rows - 1) / rows * rows); };
  return padded(2 * mr) <= 1.03 * padded(mr) ? 2 : 1;
}

// The first register block (the matmul's preferred) unless it pads S to
// over a tenth more rows than another (S of 8: 4-row tiles, 0.72 ms against
// 0.93 with 6 rows).
std::pair<int, int> tiles_block_for_rows(const Att& a, const TargetCaps& caps) {
  const auto blocks = tiles_blocks(a, caps);
  auto padded = [&](int mr) { return double((a.s + mr - 1) / mr * mr); };
  double least = padded(blocks.front().first);
  for (auto [mr, nl] : blocks) least = std::min(least, padded(mr));
  for (auto b : blocks)
    if (padded(b.first) <= 1.1 * least) return b;
  return blocks.front();
}

Variant cpu_tiles(const Att& a, const TargetCaps& caps) {
  const auto [mr, nl] = tiles_block_for_rows(a, caps);
  return Variant{}.set("impl", kFlashTiles).set("mr", mr).set("nl", nl).set("kb", tiles_keys(nl)).set("qt", tiles_per_item(a, mr));
}

// The line form (impl 1) for D of whole lines.
Variant cpu_lines(const Att& a, const TargetCaps& caps) {
  if (accumulators_in_l1(a, caps)) return Variant{}.set("impl", kFlashCpu).set("qb", 6).set("kb", 64).set("dc", 2);
  // 4 rows × D/16 accumulator lines that overflow the register file (AVX2 at
  // D = 64) spill in the P·V key loop; walked a line at a time from L1 they
  // do not, with 32-key blocks.
  if (!flash_acc_fit(a, caps, 4)) return Variant{}.set("impl", kFlashCpu).set("qb", 4).set("kb", 32).set("dc", 1);
  // 64-key blocks with 32 zmm; with AVX2's 16 ymm one 16-key score line per
  // query row keeps the live set small.
  return Variant{}.set("impl", kFlashCpu).set("qb", 4).set("kb", caps.vector_bits >= 512 ? 64 : 16);
}

// Split-key decode (impl 4) for up to 4 query rows where a kv head's G·S
// rows fit one work-item: each K and V row is read once for all of them, in
// chunks of 256 keys spread over the threads, where the naive form reads V
// once per G·dl column block and writes and rereads the score temporary.
// Zen 1, 1 thread, causal, Skv 2048: H32/Hkv8 D128 S1 2.15 ms against 2.44
// (grouped naive), S4 6.2 against 7.5 (naive), 8.4 (tiles); H8 D64 S1
// 0.41 against 0.45. Past 4 rows (or 16 per kv head) the rules below apply.
bool split_decode(const Att& a, const TargetCaps& caps) { return decode_fits(a, caps) && a.s <= 4; }

// But on Zen 4 one query row of G >= 2 heads per kv head takes the grouped
// naive form, which also reads each K and V row once, without the partials
// and their combine pass: from DRAM it took 0.61-0.95 of the split form's
// time in 11 of 12 bench rows (H32/Hkv8 Skv 2048 D128, 1 and 2 threads).
bool grouped_row_naive(const Att& a, const TargetCaps& caps) { return caps.cpu.split_zmm && a.s == 1 && grouped_decode(a); }

Variant cpu_attention(const Att& a, const TargetCaps& caps) {
  if (split_decode(a, caps) && !grouped_row_naive(a, caps)) return Variant{}.set("impl", kDecode).set("kc", 256);
  if (grouped_decode(a) || few_query_rows(a)) return cpu_naive(a);
  if (tiles_pay(a, caps)) return cpu_tiles(a, caps);
  return cpu_lines(a, caps);
}

// ---- attention on GPUs ----

// Key splits for the tiled kernel: the least that brings the workgroups to
// 4·kGpuGroupsWanted, so that few row groups (small B·H·S) still fill the
// GPU. Shapes with twice kGpuGroupsWanted row groups or more stay unsplit.
// H100, B1 H8 S1024 D64 causal: 0.078 ms at ks 8 against 0.161 unsplit.
int key_splits(const Att& a, int bq) {
  const int64_t groups = row_groups(a, bq);
  int ks = 1;
  if (groups >= 2 * kGpuGroupsWanted) return ks;
  while (ks < 16 && groups * ks < 4 * kGpuGroupsWanted && tiled_split(a, bq, 2 * ks)) ks *= 2;
  return ks;
}

// The register tiles where they fit: the first shape of kTiledShapes, with K
// and V through one buffer where apart they do not fit; the 4×4 tiles read a
// shared-memory line per 4 FMAs where a row per work-item reads a word per FMA.
std::optional<Variant> gpu_tiled(const Att& a, const TargetCaps& caps) {
  for (const auto& [bq, bk] : kTiledShapes)
    for (bool kv1 : {false, true})
      if (tiled_fits(a, caps, bq, bk, kv1)) {
        Variant v = Variant{}.set("impl", kFlashGpu).set("bq", bq).set("bk", bk).set("tile", 1);
        if (kv1) v.set("kv1", 1);
        if (int ks = key_splits(a, bq); ks > 1) v.set("ks", ks);
        return v;
      }
  return std::nullopt;
}

Variant gpu_attention(const Att& a, const TargetCaps& caps) {
  if (auto tiled = gpu_tiled(a, caps)) return *tiled;
  // Four work-items per row where subgroups allow: 4x the work-items, where
  // one per row leaves the GPU's cores short of warps.
  if (four_per_row(a, caps) && (!caps.max_workgroup_threads || caps.max_workgroup_threads >= 256))
    return Variant{}.set("impl", kFlashGpu).set("bq", 64).set("bk", gpu_bk(a, caps, 32)).set("tpr", 4);
  return Variant{}.set("impl", kFlashGpu).set("bq", 64).set("bk", gpu_bk(a, caps, 32));
}

}  // namespace

Variant attention_heuristic(const Problem& p, const TargetCaps& caps) {
  const Att a = att_of(p);
  return is_cpu(caps) ? cpu_attention(a, caps) : gpu_attention(a, caps);
}

std::optional<Variant> attention_cpu_line_form(const Problem& p, const TargetCaps& caps) {
  const Att a = att_of(p);
  if (!is_cpu(caps) || a.d % 16) return std::nullopt;
  return cpu_lines(a, caps);
}

std::optional<Variant> attention_cpu_tile_form(const Problem& p, const TargetCaps& caps) {
  const Att a = att_of(p);
  if (!tiles_fit(a, caps)) return std::nullopt;
  return cpu_tiles(a, caps);
}

// ---- rope ----

// GPUs: a work-item per (position, pair). CPU: the lines kernel where the
// head size allows (whole lines, one forward stream per position), else one
// work-item per position; streaming stores for outputs past the cache
// (ops/common/stream_heuristic.h), but never off whole lines, where they
// would share cache lines with plain stores.
Variant rope_heuristic(const Problem& p, const TargetCaps& caps) {
  using namespace rope_detail;
  const Shape s = shape_of(p);
  if (!is_cpu(caps)) return Variant{}.set("impl", 1).set("wg", 64);
  if (!lines_fit(s.mode, s.D)) return Variant{}.set("impl", 0);
  const bool stream = !neox_tail(s.mode, s.D) && stream_output(caps, 4.0 * double(fusion::numel(p.dims)));
  return Variant{}.set("impl", 2).set("st", stream ? 1 : 0);
}

}  // namespace kgen::ops
