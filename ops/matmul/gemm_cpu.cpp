// The CPU GEMM macro-kernel over packed panels (see ops/matmul/matmul.h). One
// single-work-item workgroup owns an MC×NC block of C and walks
//   for each KC slice of K:            (the B micropanel KC×NR stays in L1)
//     for each NR panel of the block:
//       for each MR panel of the block: (the A block MC×KC stays in L2)
//         acc[MR][NR/16] = slice == 0 ? 0 : C;  acc += Ap·Bp over the slice;  C = acc
// The accumulators are C++ locals that clang keeps in zmm registers
// (MR·NR/16 of the 32, plus NR/16 for the B lines); the loops over rows and
// lines are unrolled here, at record time. Edges never reach the inner loop:
// the packed panels are zero-padded, and only the C loads/stores are guarded:
// as lines with a row/line guard on edge tiles when C's rows are whole lines,
// else through a small scratch tile and a runtime loop over the valid part.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/matmul/bf16_round.h"
#include "ops/common/fast_exp.h"
#include "ops/matmul/epilogue.h"
#include "ops/matmul/gemm_panels.h"
#include "ops/matmul/k_split.h"
#include "ops/matmul/matmul.h"
#include "ops/common/widen.h"
#include "ops/common/wrapped_group.h"

namespace kgen::ops {

using namespace kgen::dsl;

std::string GemmTile::str() const {
  return "mr" + std::to_string(mr) + "_nr" + std::to_string(nr()) + "_kc" + std::to_string(kc) + "_mc" +
         std::to_string(mc) + "_nc" + std::to_string(nc) + (ak ? "_ak" + std::to_string(ak) : "") +
         (ks > 1 ? "_ks" + std::to_string(ks) : "") + (gm ? "_gm" : "") + (bpf ? "_bpf" : "") + (apf ? "_apf" : "") + (pb ? "_pb" : "") +
         (bf2 ? "_bf2" : "");
}

namespace {

// silu(g)·u on lines: g / (1 + exp(-g)) · u.
Value silu_mul(const Value& g, const Value& u) {
  Value e = fast_exp(-g);
  return g / (e + 1.0f) * u;
}

}  // namespace

ir::Kernel gated_silu_cpu_kernel(bool round_bf16, bool store_bf16) {
  if (store_bf16 && !round_bf16) throw std::invalid_argument("gated_silu_cpu_kernel: H stored as bf16 is H rounded to bf16");
  return kernel(std::string("gated_mlp_silu_mul_lines") + (store_bf16 ? "_hbf16" : round_bf16 ? "_hbf" : ""),
                [&](KernelBuilder& kb) {
    auto g = kb.input("g", f32);
    auto u = kb.input("u", f32);
    auto h = kb.output("h", store_bf16 ? bf16 : f32);
    auto n = kb.scalar("n", u32);
    kb.workgroup(1);
    const uint32_t CH = uint32_t(kGatedSiluChunk);
    Value e0 = wrapped_group_id() * CH, e1 = min(e0 + CH, n);
    // f32 H, H rounded to bf16 (f32 storage), or stored as bf16 (the DSL
    // cast rounds as bf16_upper_bits does: one vcvtneps2bf16 on AVX512-BF16).
    auto put = [&](const Value& at, const Value& hv, bool whole_line) {
      Value out = hv;
      if (store_bf16) {
        out = cast(whole_line ? line(bf16, 16) : ir::Type(bf16), hv);
      } else if (round_bf16) {
        out = bitcast(whole_line ? line(f32, 16) : ir::Type(f32), bf16_upper_bits(hv));
      }
      if (whole_line) store_line(h, at, out);
      else h[at] = out;
    };
    Value lines = (e1 - e0) / 16u;
    for_range(0u, lines, [&](Value j) {
      Value at = e0 + j * 16u;
      put(at, silu_mul(load_line(g, at, 16), load_line(u, at, 16)), true);
    });
    for_range(e0 + lines * 16u, e1, [&](Value i) { put(i, silu_mul(g[i], u[i]), false); });
  });
}

namespace {

// The macro-kernel's form, fixed at record time: the tile, C's layout, the
// epilogue and B's source, and what follows from them.
struct MacroForm {
  MacroForm(const GemmTile& t, bool c_lines, GemmEpilogue ep, const GemmBSource& src, const EpilogueSpec* epi)
      : t(t),
        c_lines(c_lines),
        src(src),
        pair_out(ep == GemmEpilogue::GatedSiluPairsA),
        packed_out(ep == GemmEpilogue::GatedSiluPackedA || ep == GemmEpilogue::GatedSiluBf16PackedA || pair_out),
        round_h(ep == GemmEpilogue::GatedSiluBf16 || ep == GemmEpilogue::GatedSiluBf16PackedA || pair_out),
        gated(ep != GemmEpilogue::Store),
        own_pack(src.kind != GemmBSource::Packed),
        KCAP(uint32_t(t.kc ? t.kc : t.pbk)),
        pairs(t.bf2 != 0),
        et(pairs ? u32 : f32),
        MR(uint32_t(t.mr)),
        NL(uint32_t(t.nl)),
        OL(gated ? NL / 2 : NL),
        NRO(16 * OL),
        widen_a(t.ak == 1 && src.a_dt.bytes() == 2),
        epi(epi),
        narrow_c(epi && epi->out != ir::ScalarKind::F32) {}

  // Throws std::invalid_argument for a form the kernel does not have.
  void check() const {
    if (own_pack && (KCAP == 0 || KCAP % 16 || int64_t(KCAP) * t.nl * 64 > (1 << 20)))
      throw std::invalid_argument("gemm_cpu_kernel: packing B in the kernel needs a scratch depth (kc or pbk) that is a multiple of 16 and at most 1 MiB of panel");
    if (src.kind == GemmBSource::GateUp && !gated)
      throw std::invalid_argument("gemm_cpu_kernel: the [G;U] source goes with the gated epilogue");
    if (gated && (!c_lines || t.nl % 2 || t.kc != 0))
      throw std::invalid_argument("gemm_cpu_kernel: the gated epilogue needs line-aligned C, an even nl and kc = 0");
    if (pair_out && t.nl % 4) throw std::invalid_argument("gemm_cpu_kernel: H as bf16 pairs needs nl % 4 == 0 (32 features per panel line pair)");
    if ((t.ak != 0 && t.ak != 1 && t.ak != 2 && t.ak != 16) || (t.ak && t.kc % 16))
      throw std::invalid_argument("gemm_cpu_kernel: A layout ak must be 0, 1, 2 or 16, with kc a multiple of 16");
    if ((t.bpf || t.apf) && (t.ak == 0 || t.ak == 2)) throw std::invalid_argument("gemm_cpu_kernel: bpf and apf need ak = 1 or 16");
    if (t.ks < 1 || (gated && t.ks != 1)) throw std::invalid_argument("gemm_cpu_kernel: ks must be >= 1 (1 for the gated epilogue)");
    if (t.ak == 2 && (pairs || src.a_dt.bytes() == 2)) throw std::invalid_argument("gemm_cpu_kernel: ak = 2 reads f32 A");
    if (epi && (gated || t.ks != 1 || (narrow_c && t.kc)))
      throw std::invalid_argument("gemm_cpu_kernel: a fused epilogue needs the plain store, no K split, and an f32 C with K slices");
    if (pairs && src.kind != GemmBSource::Packed && src.dt != u32 && !(src.kind == GemmBSource::Raw && !src.trans_b && src.dt == u16))
      throw std::invalid_argument("gemm_cpu_kernel: bf16 pairs (bf2) read B as u32 pair words (u16 rows for a K×N B)");
  }

  std::string name() const {
    std::string name = std::string(gated ? "gated_mlp_gemm_" : "matmul_gemm_") + t.str() + (c_lines ? "_cl" : "_cs") +
                       (packed_out ? "_hp" : "") + (round_h ? (pair_out ? "_h2bf" : "_hbf") : "");
    if (src.kind == GemmBSource::Raw) name += "_b" + src.dt.str() + (src.trans_b ? "t" : "n");
    if (own_pack) name += "_k" + std::to_string(KCAP);
    if (t.ak == 1 && src.a_dt.bytes() == 2) name += "_a" + src.a_dt.str();
    if (epi) name += epi->tag();
    return name;
  }

  const GemmTile& t;
  const bool c_lines;
  const GemmBSource& src;
  const bool pair_out;    // H as bf16 pair words
  const bool packed_out;  // H in the next GEMM's packed-A layout
  const bool round_h;     // H rounded to bf16
  const bool gated;       // the SiLU·product epilogue
  const bool own_pack;    // panels packed here, into bs
  const uint32_t KCAP;    // bs depth in k
  const bool pairs;       // bf16 pair words (GemmTile::bf2)
  const ir::Type et;      // packed A and B elements
  const uint32_t MR, NL;
  const uint32_t OL;      // output lines per panel
  const uint32_t NRO;     // output columns per panel
  const bool widen_a;     // f16/bf16 A, widened as it is read
  const EpilogueSpec* epi;  // applied where the last K slice stores C (null: none)
  const bool narrow_c;      // ... into a C other than f32 (scalar elements, lines stored by store_line)
};

// One MR×NRO tile of C in registers, over a K slice of one B panel.
struct TileState {
  Value row0, col0;  // the tile's first row and column of C
  uint32_t NL;
  std::vector<Var> acc;  // MR·NL accumulator lines
  Value b_at;            // line index of (k = 0, line 0) of this panel in the packed B
  Value b_k0;            // line index of (k0, line 0) in the panel's source: (k, l) at b_k0 + (k - k0)·NL + l
  Var& operator()(uint32_t r, uint32_t l) { return acc[r * NL + l]; }
};

// Where a 16-step chunk's A values are: A itself (ak = 1: row pointers,
// rows past M clamped to its last row, read and never stored), or the
// packed chunk layout (ak = 16).
struct ChunkA {
  bool direct;
  Value a_at;                // this row panel's packed chunks
  std::vector<Value> a_row;  // ak = 1: each row's start
  Value at(const Value& ch, uint32_t r, uint32_t kk, uint32_t MR) const {
    return direct ? a_row[r] + ch * uint64_t(16) + uint64_t(kk) : a_at + ch * uint64_t(MR * 16) + uint64_t(r * 16 + kk);
  }
};

// The walk over a slice's 16-step chunks and what each chunk prefetches.
struct ChunkWalk {
  Value ch0;  // the slice's first chunk
  // bpf, B packed ahead: this pass (j-th of the block's passes over panel p)
  // covers PL lines per chunk of panel p + 1's slice, in order, from next_at.
  uint32_t PL;
  Value next_at;
  // bpf, packing in the kernel (rows along K): pass j prefetches rows
  // [j·PR, (j+1)·PR) of the next panel's source, from next_row.
  uint32_t PR;
  Value K64, next_row;
  // bpf, a K×N source (kn_pf): the rows of the panel slice packed next, KPC
  // per chunk of RK rows per k, from row kn_first to kn_last.
  bool kn_pf;
  uint32_t RK, KPC;
  Value kn_first, kn_last;
};

// Records the macro-kernel's body: its operands, this workgroup's block of
// C, and per K slice, B panel and A row panel one tile of accumulators.
class MacroKernel : public MacroForm {
 public:
  using MacroForm::MacroForm;

  void record(KernelBuilder& kb) {
    if (widen_a && pairs) throw std::invalid_argument("gemm_cpu_kernel: bf16 pairs read A as u32 words, not 16-bit values");
    declare_operands(kb);
    locate_block();
    if (t.kc) {
      const uint32_t KC = uint32_t(t.kc);
      // At least one slice: a K split's empty range (its K past the others'
      // whole 16-steps) still stores its partial C, as zeros.
      const Value kstop = KSPLIT > 1 ? max(kend, kbeg + 1u) : kend;
      for_range(kbeg, kstop, [&](Value k0) { slice(k0, min(k0 + KC, kend)); }, KC);
    } else {
      slice(kbeg, kend);
    }
  }

 private:
  void declare_operands(KernelBuilder& kb) {
    ap = kb.input("ap", widen_a ? src.a_dt : et);
    if (src.kind == GemmBSource::Packed) bp = kb.input("bp", line(et, 16));
    else if (src.kind == GemmBSource::Raw) braw = kb.input("b", src.dt);
    else gw = kb.input("g", src.dt), uw = kb.input("u", src.dt);
    const ir::Type ct = narrow_c ? ir::Type(epi->out) : pair_out ? line(u32, 16) : c_lines ? line(f32, 16) : f32;
    c = t.kc ? kb.inout("c", ct) : kb.output("c", ct);
    if (epi) em = std::make_unique<EpilogueEmitter>(*epi), em->declare(kb);
    M = kb.scalar("m", u32);
    N = kb.scalar("n", u32);  // output columns
    K = kb.scalar("k", u32);
    F = src.kind == GemmBSource::GateUp ? kb.scalar("f", u32) : Value();
    if (em) em->sizes(M, N);
    kb.workgroup(1);
    // This workgroup's copy of the current panel's K slice (own_pack).
    bs = own_pack ? shared_array(line(et, 16), int64_t(KCAP) * NL) : Array();
    bsrc = own_pack ? bs : bp;
    // A C with rows that are not whole lines (N % 16 != 0) is read and
    // written through this MR×NRO scratch: straight-line vector stores into
    // it, then a runtime loop over the tile's valid rows and columns, since
    // per-lane guarded scalar accesses to C took seconds to compile.
    tile = c_lines ? Array() : shared_array(f32, int64_t(MR * NRO));
    awide = widen_a ? shared_array(line(f32, 16), int64_t(MR)) : Array();  // a 16-step chunk of A's rows in f32
  }

  // This workgroup's batch, K range and block of panels.
  void locate_block() {
    // With a K split (ks > 1) grid z enumerates (batch, split) pairs; split s
    // sums K range [s·KS, (s+1)·KS) (KS a multiple of 16) into its own
    // partial C, which a second kernel adds up (matmul_ksplit_sum_kernel).
    KSPLIT = uint32_t(t.ks);
    bz = KSPLIT > 1 ? group_id(2) / KSPLIT : group_id(2);
    kbeg = constant(u32, 0u);
    kend = K;
    if (KSPLIT > 1) {
      const KRange r = k_split_range(K, KSPLIT, 16, group_id(2) % KSPLIT);
      kbeg = r.begin, kend = r.end;
    }
    np = (N + (NRO - 1)) / NRO;
    mp = (M + (MR - 1)) / MR;
    // Grid order: gm = 0 walks the N blocks fastest (consecutive groups share
    // the A block), gm = 1 the M blocks (they share the larger B block).
    p0 = group_id(t.gm ? 1 : 0) * uint32_t(t.nc);
    p1 = min(p0 + uint32_t(t.nc), np);
    q0 = group_id(t.gm ? 0 : 1) * uint32_t(t.mc);
    q1 = min(q0 + uint32_t(t.mc), mp);
    abase = bz * mp * K * MR;
    bbase = bz * np * K * NL;
    kl = (K + 15u) / 16u;           // 16-step chunks of K (ak = 16)
    cbase = group_id(2) * M * N;  // in elements (this batch's, or this split's partial, C)
    nlines = N / (pair_out ? 32u : 16u);  // C row length in lines (c_lines only; pair lines: 32 columns)
  }

  // One K slice [k0, k1) of the block: per B panel (packed here first with
  // own_pack), per A row panel, a tile.
  void slice(const Value& k0, const Value& k1) {
    for_range(p0, p1, [&](Value p) {
      if (own_pack) pack_own_panel(p, k0, k1);
      for_range(q0, q1, [&](Value q) { tile_product(p, q, k0, k1); });
    });
  }

  void pack_own_panel(const Value& p, const Value& k0, const Value& k1) {
    auto store = [&](const Value& k, int l, const Value& v) {
      bs[(k - cast(u64, k0)) * uint64_t(NL) + uint64_t(l)] = v;
    };
    if (src.kind == GemmBSource::Raw) pack_b_panel(braw, src.trans_b, int(NL), N, K, bz * N * K, p, k0, k1, store, pairs);
    else pack_gate_up_panel(gw, uw, int(NL), F, K, p, k0, k1, store, pairs);
  }

  // The tile of B panel p and A row panel q over the slice: from zero (or,
  // past the first slice, from C), the products, the epilogue.
  void tile_product(const Value& p, const Value& q, const Value& k0, const Value& k1) {
    Value row0 = q * MR, col0 = p * NRO;
    TileState A{row0, col0, NL};
    for (uint32_t i = 0; i < MR * NL; ++i) A.acc.push_back(var(splat(0.0f, 16)));
    Value full = row0 + MR <= M && col0 + NRO <= N;
    if (t.kc) continue_from_c(A, q, k0, full);
    // 64-bit indices in the inner loop: u32 arithmetic must wrap before
    // it is widened, which stops clang from folding the per-row offsets
    // into the addressing modes (an extra lea per broadcast).
    A.b_at = cast(u64, bbase + p * K * NL);
    A.b_k0 = own_pack ? Value(constant(u64, uint64_t(0))) : A.b_at + cast(u64, k0 * NL);
    if (t.ak == 16 || t.ak == 1) accumulate_chunks(A, p, q, k0, k1);
    else if (t.ak == 2) accumulate_column_major(A, k0, k1);
    else accumulate_k_major(A, q, k0, k1);
    if (em) store_epilogue(A, q, full, k1);
    else store_tile(A, q, full);
  }

  // C as lines (c_lines): fn(r, l, C line index) for the tile's lines,
  // lines past C's edge skipped on edge tiles. Rows past M are skipped too,
  // except in the next GEMM's packed A (packed_out: line (q·nlines +
  // col/16)·MR + r), which reads them: they get zeros.
  template <class Fn>
  void each_out(const TileState& A, const Value& q, bool edge, Fn&& fn) {
    for (uint32_t r = 0; r < MR; ++r) {
      Value row = A.row0 + r;
      // (H as pairs: line l covers output lines 2l and 2l + 1, 32 columns.)
      const uint32_t CW = pair_out ? 32 : 16;
      auto lines = [&](auto&& put) {
        for (uint32_t l = 0; l < (pair_out ? OL / 2 : OL); ++l) {
          Value col = A.col0 + CW * l;
          Value at = packed_out ? (q * nlines + col / CW) * MR + r : cbase / 16u + row * nlines + col / 16u;
          if (edge) if_(col < N, [&] { put(l, at); });
          else put(l, at);
        }
      };
      auto body = [&] { lines([&](uint32_t l, const Value& at) { fn(r, l, at); }); };
      if (!edge) body();
      else if (!packed_out) if_(row < M, body);
      else if_(row < M, body).else_([&] {
        lines([&](uint32_t, const Value& at) { c[at] = pair_out ? splat(constant(u32, 0u), 16) : splat(0.0f, 16); });
      });
    }
  }

  // C through the scratch (!c_lines): fn(scratch index, C index, row in
  // the tile, column in the tile) over the tile's valid rows × columns.
  template <class Fn>
  void valid_walk(const TileState& A, Fn&& fn) {
    Value rows = min(M - A.row0, MR), cols = min(N - A.col0, NRO);
    for_range(0u, rows, [&](Value r) {
      for_range(0u, cols, [&](Value j) { fn(r * NRO + j, cbase + (A.row0 + r) * N + A.col0 + j, r, j); });
    });
  }
  void load_scratch(TileState& A) {
    for_range(0u, MR * NRO, [&](Value i) { tile[i] = 0.0f; });
    valid_walk(A, [&](const Value& ti, const Value& ci, const Value&, const Value&) { tile[ti] = c[ci]; });
    for (uint32_t r = 0; r < MR; ++r)
      for (uint32_t l = 0; l < OL; ++l)
        for (int i = 0; i < 16; ++i) A(r, l) = insert(A(r, l), i, tile[r * NRO + 16 * l + uint32_t(i)]);
  }
  // The tile's values into the scratch, then its valid part into C
  // (through `put`: the epilogue's, or as they are).
  template <class ValueOf, class Put>
  void store_scratch(TileState& A, ValueOf&& value, Put&& put) {
    for (uint32_t r = 0; r < MR; ++r)
      for (uint32_t l = 0; l < OL; ++l) {
        Value v = value(r, l);
        for (int i = 0; i < 16; ++i) tile[r * NRO + 16 * l + uint32_t(i)] = v.lane(i);
      }
    valid_walk(A, put);
  }
  template <class ValueOf>
  void store_scratch(TileState& A, ValueOf&& value) {
    store_scratch(A, value, [&](const Value& ti, const Value& ci, const Value&, const Value&) { c[ci] = tile[ti]; });
  }

  // Later K slices continue from C.
  void continue_from_c(TileState& A, const Value& q, const Value& k0, const Value& full) {
    auto load = [&](uint32_t r, uint32_t l, const Value& at) { A(r, l) = c[at]; };
    if_(k0 > kbeg, [&] {
      if (c_lines) if_(full, [&] { each_out(A, q, false, load); }).else_([&] { each_out(A, q, true, load); });
      else load_scratch(A);
    });
  }

  // One k step: B lines from b_line (NL consecutive), A(r) = a_val(r).
  template <class AVal>
  void step_values(TileState& A, const Value& b_line, AVal&& a_val) {
    std::vector<Value> bl;
    for (uint32_t l = 0; l < NL; ++l) bl.push_back(bsrc[b_line + uint64_t(l)]);
    for (uint32_t r = 0; r < MR; ++r) {
      Value av = splat(a_val(r), 16);
      for (uint32_t l = 0; l < NL; ++l) A(r, l) = pairs ? dot2_bf16(av, bl[l], A(r, l)) : fma(av, bl[l], A(r, l));
    }
  }
  // ... with A(r) at index a_of(r) of ap.
  template <class AOf>
  void step(TileState& A, const Value& b_line, AOf&& a_of) {
    step_values(A, b_line, [&](uint32_t r) { return widen_a ? as_f32(ap[a_of(r)]) : Value(ap[a_of(r)]); });
  }

  // ak = 16 or 1: whole 16-step chunks unrolled (offsets fold into the
  // addressing), with their prefetches, then the steps of a partial last
  // chunk (K % 16).
  void accumulate_chunks(TileState& A, const Value& p, const Value& q, const Value& k0, const Value& k1) {
    const ChunkA a = chunk_a(A, q);
    Value kf = k0 + (k1 - k0) / 16u * 16u;
    const ChunkWalk w = chunk_walk(A, p, q, k0, k1);
    for_range(w.ch0, cast(u64, kf / 16u), [&](Value ch) {
      Value bb = A.b_k0 + (ch - w.ch0) * uint64_t(16 * NL);
      prefetch_chunk(w, a, q, k0, k1, ch);
      chunk_steps(A, a, bb, ch);
    });
    for_range(cast(u64, kf), cast(u64, k1), [&](Value k) {
      Value ab = a.a_at + k / uint64_t(16) * uint64_t(MR * 16) + k % uint64_t(16);
      step(A, A.b_k0 + (k - cast(u64, k0)) * uint64_t(NL),
           [&](uint32_t r) { return a.direct ? a.a_row[r] + k : ab + uint64_t(r * 16); });
    });
  }

  ChunkA chunk_a(const TileState& A, const Value& q) {
    ChunkA a;
    a.direct = t.ak == 1;
    a.a_at = cast(u64, (bz * mp + q) * kl * (MR * 16u));
    if (a.direct)
      for (uint32_t r = 0; r < MR; ++r) a.a_row.push_back(cast(u64, bz * M + min(A.row0 + r, M - 1u)) * cast(u64, K));
    return a;
  }

  ChunkWalk chunk_walk(const TileState& A, const Value& p, const Value& q, const Value& k0, const Value& k1) {
    ChunkWalk w;
    w.PL = t.bpf && !own_pack ? (16 * NL + uint32_t(t.mc) - 1) / uint32_t(t.mc) : 0;
    const uint32_t rows = src.kind == GemmBSource::GateUp ? 8 * NL : src.trans_b ? 16 * NL : 0;
    w.PR = t.bpf && own_pack && rows ? (rows + uint32_t(t.mc) - 1) / uint32_t(t.mc) : 0;
    w.next_at = A.b_at + cast(u64, K * NL + k0 * NL + (q - q0) * ((k1 - k0) / 16u) * w.PL);
    w.K64 = cast(u64, K);
    w.next_row = w.PR ? cast(u64, (p + 1u) * rows + (q - q0) * w.PR) * w.K64 : Value();
    w.ch0 = cast(u64, k0 / 16u);
    // A K×N source: the panel slice packed next (panel p + 1, else this
    // block's first panel at the next slice, else the next workgroup's first
    // panel, which the pool's contiguous chunks mostly run on this thread) is
    // prefetched a few rows per chunk, spread over all of this slice's
    // passes: its strided rows are a few lines per page, which the hardware
    // prefetchers do not follow, and one burst per pass would fill the fill
    // buffers and stall the arithmetic.
    w.kn_pf = t.bpf && src.kind == GemmBSource::Raw && !src.trans_b;
    w.RK = pairs ? 2 : 1;  // (bf16 pairs: k counts pairs of u16 rows, both prefetched.)
    // KPC rows per chunk, unrolled (a runtime loop among the accumulators
    // made clang spill them): all rows when the block makes mc passes over
    // the panel.
    w.KPC = (16 * w.RK + uint32_t(t.mc) - 1) / uint32_t(t.mc);
    if (w.kn_pf) {
      Value more_p = p + 1u < p1, more_k = k1 < kend;
      Value np_next = select(more_p, p + 1u, select(more_k, p0, p1));
      Value k_next = select(more_p, k0, select(more_k, k1, kbeg));
      w.kn_last = max(min(kend - k_next, KCAP), 1u) * w.RK - 1u;
      w.kn_first = cast(u64, (bz * K + k_next) * w.RK) * cast(u64, N) + cast(u64, np_next * (16u * NL));
    }
    return w;
  }

  // Chunk ch's prefetches: the next packed B panel's lines (PL), the next
  // K×N rows to pack (kn_pf), the next A panel's lines one pass ahead (apf),
  // the next panel's source rows (PR).
  void prefetch_chunk(const ChunkWalk& w, const ChunkA& a, const Value& q, const Value& k0, const Value& k1, const Value& ch) {
    for (uint32_t i = 0; i < w.PL; ++i) bp[w.next_at + (ch - w.ch0) * uint64_t(w.PL) + uint64_t(i)].prefetch();
    if (w.kn_pf) {
      // This pass's chunk ch (of this slice): rows from ((q - q0)·chunks + ch - ch0)·KPC.
      Value row0 = ((q - q0) * ((k1 - k0) / 16u) + cast(u32, ch - w.ch0)) * w.KPC;
      for (uint32_t i = 0; i < w.KPC; ++i) {
        Value row = cast(u64, min(row0 + i, w.kn_last));
        for (uint32_t l = 0; l < NL; ++l) braw[w.kn_first + row * cast(u64, N) + uint64_t(16 * l)].prefetch_l2();
      }
    }
    if (t.apf)
      for (uint32_t r = 0; r < MR; ++r)
        ap[a.at(ch, r, 0, MR) + (a.direct ? cast(u64, K) * uint64_t(MR) : cast(u64, kl) * uint64_t(MR * 16))].prefetch();
    for (uint32_t i = 0; i < w.PR; ++i) {
      Value at = w.next_row + w.K64 * uint64_t(i) + ch * uint64_t(16);
      if (src.kind == GemmBSource::GateUp) gw[at].prefetch(), uw[at].prefetch();
      else braw[cast(u64, bz * N * K) + at].prefetch();
    }
  }

  // The 16 steps of chunk ch, its B lines from bb.
  void chunk_steps(TileState& A, const ChunkA& a, const Value& bb, const Value& ch) {
    if (widen_a) {
      // f16/bf16 A rows: each row's 16 values of the chunk widened as one
      // line, then broadcast lane by lane (clang keeps the MR lines in
      // registers), rather than widening each value as it is broadcast.
      // Swapped 16 × 11008 × 4096 f16 (mr 5): 12.5 ms -> 10.4.
      for (uint32_t r = 0; r < MR; ++r) awide[r] = as_f32(load_line(ap, a.at(ch, r, 0, MR)));
      for (uint32_t kk = 0; kk < 16; ++kk)
        step_values(A, bb + uint64_t(kk * NL), [&](uint32_t r) { return Value(awide[r]).lane(int(kk)); });
    } else {
      for (uint32_t kk = 0; kk < 16; ++kk) step(A, bb + uint64_t(kk * NL), [&](uint32_t r) { return a.at(ch, r, kk, MR); });
    }
  }

  // ak = 2: A column-major in place (K × M: row r's k at k·M + r), rows past
  // M clamped to its last row (read, never stored).
  void accumulate_column_major(TileState& A, const Value& k0, const Value& k1) {
    std::vector<Value> a_col;
    const Value M64 = cast(u64, M);
    for (uint32_t r = 0; r < MR; ++r) a_col.push_back(cast(u64, bz) * M64 * cast(u64, K) + cast(u64, min(A.row0 + r, M - 1u)));
    // Each k is another line (M apart), which the hardware prefetcher does
    // not follow: the block's first and last rows' line 64 k ahead
    // (prefetches past K never fault).
    // Zen 5, 64 × 11008 × 4096 K×N: 42.2 ms -> 28.4.
    constexpr uint64_t AHEAD = 64;
    for_range(cast(u64, k0), cast(u64, k1), [&](Value k) {
      ap[a_col[0] + (k + AHEAD) * M64].prefetch();
      ap[a_col[MR - 1] + (k + AHEAD) * M64].prefetch();
      step(A, A.b_k0 + (k - cast(u64, k0)) * uint64_t(NL), [&](uint32_t r) { return a_col[r] + k * M64; });
    }, 1, t.unroll);
  }

  // ak = 0: packed A, MR values per k.
  void accumulate_k_major(TileState& A, const Value& q, const Value& k0, const Value& k1) {
    Value a_at = cast(u64, abase + q * K * MR);
    for_range(cast(u64, k0), cast(u64, k1), [&](Value k) {
      step(A, A.b_k0 + (k - cast(u64, k0)) * uint64_t(NL), [&](uint32_t r) { return a_at + k * uint64_t(MR) + uint64_t(r); });
    }, 1, t.unroll);
  }

  // The tile into C: the sums, or the gated epilogue's H (rounded to bf16,
  // or as bf16 pair words).
  void store_tile(TileState& A, const Value& q, const Value& full) {
    auto out_value = [&](uint32_t r, uint32_t l) {
      if (!gated) return A(r, l).get();
      Value h = silu_mul(A(r, 2 * l).get(), A(r, 2 * l + 1).get());
      return round_h ? bitcast(line(f32, 16), bf16_upper_bits(h)) : h;
    };
    // H as bf16 pairs: features 2j and 2j + 1 of the 32 in output lines
    // 2l, 2l + 1 become pair j (low half: the even feature).
    auto pair_value = [&](uint32_t r, uint32_t l) {
      Value lo = bf16_upper_bits(silu_mul(A(r, 4 * l).get(), A(r, 4 * l + 1).get()));
      Value hi = bf16_upper_bits(silu_mul(A(r, 4 * l + 2).get(), A(r, 4 * l + 3).get()));
      std::vector<Value> even, odd;
      for (int j = 0; j < 16; ++j) {
        const Value& half = j < 8 ? lo : hi;
        even.push_back(extract(half, 2 * (j % 8)));
        odd.push_back(extract(half, 2 * (j % 8) + 1));
      }
      return make_line(odd) | (make_line(even) >> 16u);
    };
    auto store = [&](uint32_t r, uint32_t l, const Value& at) { c[at] = pair_out ? pair_value(r, l) : out_value(r, l); };
    if (c_lines) if_(full, [&] { each_out(A, q, false, store); }).else_([&] { each_out(A, q, true, store); });
    else store_scratch(A, out_value);
  }

  // The tile through the epilogue. With K slices (C f32) only the last
  // slice applies it: the earlier ones store the sums the next continues from.
  void store_epilogue(TileState& A, const Value& q, const Value& full, const Value& k1) {
    auto fused = [&] {
      auto value = [&](uint32_t r, uint32_t l) { return em->apply(A(r, l).get(), bz, A.row0 + r, A.col0 + 16 * l); };
      auto store = [&](uint32_t r, uint32_t l, const Value& at) {
        if (narrow_c) store_line(c, at * 16u, value(r, l));
        else c[at] = value(r, l);
      };
      if (c_lines) if_(full, [&] { each_out(A, q, false, store); }).else_([&] { each_out(A, q, true, store); });
      else store_scratch(A, [&](uint32_t r, uint32_t l) { return A(r, l).get(); },
                         [&](const Value& ti, const Value& ci, const Value& r, const Value& j) {
                           c[ci] = em->apply(tile[ti], bz, A.row0 + r, A.col0 + j);
                         });
    };
    if (t.kc) if_(k1 >= kend, fused).else_([&] { store_tile(A, q, full); });
    else fused();
  }

  std::unique_ptr<EpilogueEmitter> em;  // the fused epilogue (epi)
  // Operands.
  Array ap, bp, braw, gw, uw, c;
  Value M, N, K, F;
  Array bs, bsrc, tile, awide;  // scratch: own panel, B's panel source, C tile, widened A chunk
  // This workgroup's batch (bz), K range and block: panels [p0, p1) of np,
  // row panels [q0, q1) of mp.
  uint32_t KSPLIT = 1;
  Value bz, kbeg, kend, np, mp, p0, p1, q0, q1, abase, bbase, kl, cbase, nlines;
};

}  // namespace

ir::Kernel gemm_cpu_kernel(const GemmTile& t, bool c_lines, GemmEpilogue ep, const GemmBSource& src, const EpilogueSpec* epi) {
  MacroKernel mk(t, c_lines, ep, src, epi);
  mk.check();
  return kernel(mk.name(), [&](KernelBuilder& kb) { mk.record(kb); });
}

ir::Kernel matmul_ksplit_sum_kernel(int ks, bool index64, bool pitched, const EpilogueSpec* epi) {
  const std::string name = "matmul_ksplit_sum_" + std::to_string(ks) + (index64 ? "" : "_32") + (pitched ? "_p" : "") + (epi ? epi->tag() : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto part = kb.input("part", f32);
    auto c = kb.output("c", epi ? ir::Type(epi->out) : f32);
    std::unique_ptr<EpilogueEmitter> em;
    if (epi) em = std::make_unique<EpilogueEmitter>(*epi), em->declare(kb);
    auto MN = kb.scalar("mn", u32);
    Value N, P;
    if (pitched || epi) N = kb.scalar("n", u32);
    if (pitched) P = kb.scalar("pitch", u32);
    if (em) em->sizes(MN / N, N);
    kb.workgroup(256);
    auto ix = [&](const Value& v) { return index64 ? cast(u64, v) : v; };
    auto lit = [&](int j) { return index64 ? constant(u64, uint64_t(j)) : constant(u32, uint32_t(j)); };
    Value i = global_id(0), bz = group_id(2);
    if_(i < MN, [&] {
      // One partial's size, and element i's place in it.
      Value ps = pitched ? ix(MN / N) * ix(P) : ix(MN), at = pitched ? ix(i / N) * ix(P) + ix(i % N) : ix(i);
      Value base = ix(bz) * lit(ks) * ps + at;
      Value s = part[base];
      for (int j = 1; j < ks; ++j) s = s + part[base + ps * lit(j)];
      c[ix(bz) * ix(MN) + ix(i)] = em ? em->apply(s, bz, i / N, i % N) : s;
    });
  });
}

}  // namespace kgen::ops
