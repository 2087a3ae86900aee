// Matrix multiply family: the "matmul" op (C = A·B, batched, B as K×N or as
// N×K, f32 or f16/bf16 inputs with f32 accumulation and output) and the
// "gated_mlp" op (an LLM feed-forward block: (silu(X·Gᵀ) ⊙ X·Uᵀ)·Dnᵀ).
//
// CPU (ops/matmul/gemm_cpu.cpp, ops/matmul/pack.cpp): GotoBLAS/BLIS structure in
// DSL kernels. B is packed into NR-wide panels of f32x16 lines and A into
// MR-tall panels (both zero-padded, converting f16/bf16 to f32 on the way), so
// the microkernel never sees an edge (B either by a packing launch or, where
// one workgroup is B's only user, by the macro-kernel itself into a stack
// scratch: GemmTile::pb); a single-work-item workgroup computes an
// MC×NC block of C as a loop over KC slices, NR panels and MR panels, keeping
// the MR×NR accumulator block in zmm registers (MR·NR/16 lines) with one
// broadcast A load per row and one line B load per 16 columns at each k.
// Only the stores of C are guarded (rows ≥ M, columns ≥ N).
// GEMV (ops/matmul/gemv.cpp): M ≤ a few rows, memory-bound; reads each weight once.
// GPU (ops/matmul/gemm_gpu.cpp): shared-memory tiles, per-thread register blocks.
#pragma once
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace kgen::ops {

// A fused epilogue as kernels apply it where they store C (ops/matmul/epilogue.h):
// the kernels below that take one (null: none) declare its operand buffers
// after their own and store C in its output type.
struct EpilogueSpec;

// Register block of the CPU microkernel and its cache blocking.
struct GemmTile {
  int mr = 14;   // rows of A per microkernel (broadcast loads)
  int nl = 2;    // f32x16 lines of B per microkernel: NR = 16·nl columns
  int kc = 256;  // K slice per pass over C (0: all of K in one pass)
  int mc = 8;    // MR panels per workgroup block (MC = mc·mr rows)
  int nc = 8;    // NR panels per workgroup block (NC = nc·NR columns)
  // Layout of packed A. 0: Ap[panel][k][r], MR floats per k. 16: Ap[panel][k/16][r][16],
  // one f32x16 line per row and 16-step chunk of K: the packer copies whole
  // lines (vector loads and stores instead of a scalar transpose) and the
  // microkernel, unrolled over the 16 steps of a chunk, broadcasts from one
  // base pointer plus constant offsets. Needs kc % 16 == 0. 1: A as it is
  // (f32, row-major, K per row: no packing launch), read in the same 16-step
  // chunks from MR row pointers. 2: A column-major as it is (f32, K × M, M
  // per k: B of a K×N product as the swapped product's A), MR scalars per k.
  int ak = 0;
  // K split across workgroups (tall-skinny products: few M×N blocks, long K):
  // each split accumulates a partial C, a second launch sums them.
  int ks = 1;
  int gm = 0;  // grid order: 0 = N blocks fastest, 1 = M blocks fastest
  // Prefetch the next B panel while computing on this one (needs ak = 16):
  // each of the block's mc passes over a panel brings in 1/mc of the next
  // panel's slice, a few lines per 16-step chunk, so the pass that first
  // reads a panel finds it in cache instead of streaming it from DRAM at
  // the microkernel's rate (256 bytes per k for nl = 4).
  int bpf = 0;
  // Prefetch the next A panel while computing on this one (needs ak = 16):
  // MR lines per 16-step chunk, one pass ahead. The pass that first reads an
  // A panel otherwise streams it from the LLC or DRAM at the microkernel's
  // rate (the block's first B panel, or every K slice of a long-K product).
  int apf = 0;
  // Pack each B panel inside the macro-kernel, into a workgroup scratch of
  // kc (or, with kc = 0, pbk) × NR floats, right before the block's passes
  // over it, instead of a packing launch ahead of the product: B goes from
  // DRAM to L2 once rather than out to DRAM packed and back. Worth it when
  // one row group covers all of M (each panel is then packed once).
  int pb = 0;
  int pbk = 0;  // pb's scratch depth in k when kc = 0 (K rounded up to 16; set by the plan)
  // bf16 pairs (bf16 inputs, even K): A and B are read as u32 words holding
  // two consecutive k of one row (A) or column (B), the packed panels hold
  // such words, and each microkernel step is one dot2_bf16 (vdpbf16ps: 32
  // multiply-adds per line, twice an fma's) over a pair of k. The kernel's k
  // (its scalar, kc, pbk, the chunks) then counts pairs.
  int bf2 = 0;
  int unroll = 0;  // unroll hint for the k loop (0: the compiler's choice); not a variant parameter
  int nr() const { return 16 * nl; }
  std::string str() const;
};

// Packing kernels: one work-item per group and (panel, chunk of K, batch).
// Where the source rows run along K (A, and B when trans_b) the chunk is long
// and the grid's fastest axis walks K (x = chunks, y = panels), so one
// thread's consecutive groups continue the same row streams; a short chunk
// read across many rows is latency-bound (2048² A packed at 2 ns/element).
// B as K×N reads rows across the panel: x = panels, y = chunks.
constexpr int kPackChunkAlongRows = 256;
constexpr int kPackChunkAcrossRows = 64;
// The K chunk of packers written elsewhere on this layout (conv's im2col).
constexpr int kPackKChunk = kPackChunkAcrossRows;
inline int pack_chunk(bool rows_along_k) { return rows_along_k ? kPackChunkAlongRows : kPackChunkAcrossRows; }
// Bp[b][panel][k][line] (f32x16 lines) from B (K×N, or N×K when trans_b).
// `pairs` (GemmTile::bf2): u32x16 lines of bf16 pairs, k counting pairs; B
// is then u32 words (N×K pairs) when trans_b, else u16 (bf16 bits, 2K×N).
ir::Kernel pack_b_kernel(ir::Type dt, bool trans_b, int nl, bool pairs = false);
// Ap (f32) from A (M×K row-major, row stride lda) in layout `ak` (GemmTile::ak):
// 0: Ap[b][panel][k][r]; 16: Ap[b][panel][k/16][r][k%16], zero past M and K.
// A u32 A holds bf16 pairs (GemmTile::bf2) and is copied as it is.
ir::Kernel pack_a_kernel(ir::Type dt, int mr, int ak = 0);

// Epilogue of the CPU macro-kernel. Store: C = A·B. GatedSilu: the packed B
// interleaves gate and up panels line by line (line 2i from G, 2i+1 from U,
// for the same 16 features), so each pair of accumulator lines becomes one
// line of H = silu(g)·u: a panel yields 8·nl output columns instead of 16·nl.
// GatedSiluPackedA: the same H written straight into the packed-A layout
// (ak = 16, MR = this tile's mr, zero rows past M) of the GEMM that consumes
// it, so that GEMM needs no packing launch. The Bf16 forms round H to bf16
// (the gated MLP's h_bf16), kept in f32 storage; GatedSiluPairsA writes the
// rounded H as bf16 pair words in the packed-A layout of a pair GEMM
// (GemmTile::bf2: one u32x16 line per row and 32 features; needs nl % 4 == 0
// and C's columns, H's padded features, a multiple of 32).
enum class GemmEpilogue { Store, GatedSilu, GatedSiluPackedA, GatedSiluBf16, GatedSiluBf16PackedA, GatedSiluPairsA };

// Where the macro-kernel's B panels come from. Packed: a packed Bp buffer
// (pack_b_kernel or the gated [G;U] packer). Raw: B itself (dt, K×N or N×K),
// each panel packed in the kernel (GemmTile::pb). GateUp: the gated MLP's G
// and U (dt F×K), packed in the kernel as interleaved [G;U] panels. With
// bf16 pairs (GemmTile::bf2) dt is u32 (pair words; u16 for a K×N B).
struct GemmBSource {
  enum Kind { Packed, Raw, GateUp };
  Kind kind = Packed;
  ir::Type dt = ir::Type(ir::ScalarKind::F32);  // Raw: B's element type
  bool trans_b = false;                         // Raw: B is N×K
  // A's element type where the kernel reads A unpacked (ak = 1): f32 (or u32
  // bf16 pair words), or f16/bf16 widened a 16-step chunk of each row at a time.
  ir::Type a_dt = ir::Type(ir::ScalarKind::F32);
};

// The CPU macro-kernel: buffers (ap f32, then B: bp f32x16 | b | g, u, then
// c f32 [inout when kc > 0: later K slices continue from C]); scalars (m, n,
// k[, f for GateUp: the feature count]) with n = C's columns. Grid: x =
// ceil(panels / nc), y = ceil(ceil(m / mr) / mc), z = batch.
// `c_lines`: C's rows are whole f32x16 lines (its column count % 16 == 0), so
// C is accessed as lines (required for GatedSilu).
// epi (Store only, ks = 1; an f16/bf16 C only with kc = 0): applied at the
// last K slice's store.
ir::Kernel gemm_cpu_kernel(const GemmTile& t, bool c_lines, GemmEpilogue ep = GemmEpilogue::Store,
                           const GemmBSource& src = {}, const EpilogueSpec* epi = nullptr);
// c[b][i] = Σ_s part[b][s][i] over `ks` partial products of mn elements each;
// workgroup 256, grid x = ceil(mn / 256), z = batch. index64 = false: u32
// indices (GLSL and WGSL have no 64-bit integers), for fewer than 2^32 partials.
// pitched: the partials' rows of n elements lie `pitch` apart (scalars mn,
// n, pitch), C's are packed: element i of C is row i / n, column i % n.
// The bf16 GEMM on a matrix engine (matmul impl=7, TargetCaps::matrix_tiles):
// C (f32) = A (bf16 rows, read where they are) · B packed as pair panels of
// 32 columns (pack_b_kernel with nl = 2, pairs), one tile_mma_bf16 per 32×32
// block of C over all of K. A workgroup takes nc panels × mc row blocks,
// the panel the outer loop (it stays in L1/L2 while the mc blocks of A,
// mc·32 rows, come from L2). Grid: (panel groups, row-block groups, batch);
// scalars m, n, k (k even).
// swapped (Bᵀ only): Cᵀ = B·Aᵀ, B's rows read in place as the tile op's A
// (no packing of the weights on every call) and A packed as the pair panels
// (pack_b_kernel of A as an M×K "Bᵀ"); buffers (b, A's panels, c), the grid
// (A panel groups of nc, B row-block groups of mc, batch), each 32×32 block
// of Cᵀ transposed into C through a stack scratch.
// kc (not swapped): K in slices of kc (a multiple of 32), the workgroup's
// blocks of C accumulated over the slices, so a long K's operands stay in L2.
// a_parts (not swapped): A's rows hold a_parts segments of K (row pitch
// a_parts·K), C = Σ_j A_j·B over the same panels (f32 A's bf16 terms [hi |
// lo] against bf16 B, which then needs no second copy).
ir::Kernel gemm_tile_kernel(int mc, int nc, bool swapped = false, int kc = 0, int a_parts = 1);

// epi: C = epi(the sum), scalar n after mn even when not pitched (C's columns).
ir::Kernel matmul_ksplit_sum_kernel(int ks, bool index64 = true, bool pitched = false, const EpilogueSpec* epi = nullptr);

// GEMV for small M on the CPU (C: M×N f32). trans_b: B is N×K (weights rows),
// needs K % 16 == 0 (else tail); each work-item takes `rows` consecutive outputs n and
// all M rows of A. !trans_b: B is K×N, needs N % 16 == 0; each work-item takes
// `rows` lines (16·rows columns). Grid x = groups, z = batch.
// pf (trans_b only): prefetch the rows that many workgroups ahead (0: none).
// pairs (bf16, trans_b, K % 32 == 0): A's and B's rows read as u32x16 lines of
// bf16 pairs, one dot2_bf16 (vdpbf16ps) per 32 weights instead of two
// conversions and two fmas.
// The GEMV over a K×N B (N % 16 == 0) split along K: work-item s of grid x
// (S of them) sums rows [s·kc, (s+1)·kc) of B, each read once as a whole
// row, into its partial C lines part[batch][s][M][N/16] (f32x16); scalars
// n, k, kc; grid (S, 1, batch). matmul_ksplit_sum_kernel(S) adds them up.
// tail (any N >= 16): B and part are scalar buffers (part[batch][s][M][P],
// P = N rounded up to 16: the partial rows stay line-aligned),
// rows walked in lines from any element offset, and each row's last 16
// columns as one more line with the columns already walked masked off.
// shifted (tail, 32-bit B; for hosts with a one-instruction 64-byte
// permute_bytes, TargetCaps::byte_lookup): B's rows read as aligned lines
// shifted into place instead of unaligned loads. kr (1..8): rows of B
// added per pass over the partial rows (fewer partial loads and stores when
// the partial rows spill L1). lb (1, 2, 4; unshifted rows): lines of the
// partial rows per block, each of A's broadcasts serving lb lines (for more
// than a few rows of A, where the broadcasts bound the loop).
ir::Kernel gemv_kn_split_kernel(ir::Type dt, int m, ir::Type a_dt = ir::Type(ir::ScalarKind::Void), bool tail = false,
                                bool shifted = false, int kr = 1, int lb = 1);
// mg (Bᵀ): A's rows in groups of mg, one pass over the work-item's rows of B
// each (0: all M at once).
// kp > 1 (Bᵀ): K in kp parts, grid y; each part's partial C goes to
// part[batch][kp][M][N] for matmul_ksplit_sum_kernel(kp).
// tail (Bᵀ, any K >= 16; not with pairs or kp): A and B are scalar buffers,
// rows walked in lines from any element offset, and each row's last 16 k as
// one more line with the k already walked masked off.
ir::Kernel gemv_kernel(ir::Type dt, bool trans_b, int rows, int m, int pf = 0, bool pairs = false, int mg = 0,
                       ir::Type a_dt = ir::Type(ir::ScalarKind::Void), int kp = 1,  // A's element type (Void: dt)
                       bool tail = false, const EpilogueSpec* epi = nullptr);  // epi: not with kp > 1
// The GPU GEMV (ops/matmul/gemv_gpu.cpp, matmul impl=3): Bᵀ rows, a workgroup of wg
// per output column, m (1..8) rows of A. Grid (gx, ceil(N / gx), batch);
// scalars n, k, gx.
ir::Kernel gemv_gpu_kernel(ir::Type dt, int m, int wg, bool subgroups, const EpilogueSpec* epi = nullptr);

// GPU tiled GEMM: workgroup (wg, wg), each work-item a (tm × tn) register
// block, tiles of (wg·tm) × (wg·tn) staged in shared memory with K steps of
// `tk`. Any M, N, K; f16/bf16 inputs convert to f32 on their way to shared
// memory. Grid: x = ceil(N / (wg·tn)), y = ceil(M / (wg·tm)), z = batch.
// vec = 1 (wg 16, tm = tn = 8: 128×128 tiles): shared memory as f32x4 lines,
// each work-item's 8 rows and 8 columns as two lines each (rows 4·ty + i and
// 64 + 4·ty + i), so a K step is 4 16-byte shared loads for 64 FMAs instead
// of 16 scalar ones (ops/matmul/gemm_gpu.cpp). vec = 2: the same with the next
// tile's global loads issued into registers before this tile's FMAs; vec =
// 3: that and two shared buffers, one barrier per K step.
// The line tiles also take tn = 4 (128×64 tiles, tk 16), and:
// - ks > 1: a K split; grid z = batch·ks, each split writes its partial C
//   (part[batch][ks][M][N]) and matmul_ksplit_sum_kernel adds them up. For
//   products with too few 128×128 tiles to fill the GPU (1024², skinny M).
// - sw = 1 (Bᵀ only): the swapped product Cᵀ = B·Aᵀ, B's N rows on the
//   tile's 128 rows and A's M rows on its 16·tn columns, C stored
//   transposed from the registers. For M ≤ 128 against a large N, where
//   A's rows would fill a fraction of the 128-row tile.
struct GpuTile {
  int wg = 16, tm = 4, tn = 4, tk = 16, vec = 0, ks = 1, sw = 0;
};
// epi: not with ks > 1 (the sum of the partials applies it).
ir::Kernel gemm_gpu_kernel(ir::Type dt, bool trans_b, const GpuTile& t, const EpilogueSpec* epi = nullptr);
// GPU epilogue of gated_mlp: h[i] = silu(g[i])·u[i] over n elements (g = X·Gᵀ,
// u = X·Uᵀ). Scalars n and gx; workgroup 256 on a wrapped grid (ops/core/op.h).
// h_bf16: H rounded to bf16 (f32 storage, or bf16 with store_bf16).
ir::Kernel gated_silu_gpu_kernel(bool round_bf16 = false, bool store_bf16 = false);
// The CPU form: one work-item per chunk of kGatedSiluChunk elements, as
// f32x16 lines (fast_exp, as the fused epilogue) and a scalar tail. The GPU
// form's scalar work-items took 185 ms for 2048x11008 on Zen 3 (2 threads),
// a sixth of the whole gated MLP. Scalar n; grid wrapped_grid(chunks).
inline constexpr int64_t kGatedSiluChunk = 4096;
ir::Kernel gated_silu_cpu_kernel(bool round_bf16 = false, bool store_bf16 = false);

// Scalar f32 SiLU·product (for the unfused baselines and tests):
// h = silu(g)·u with silu(x) = x / (1 + exp(-x)).
float silu_ref(float x);

void register_matmul_ops();

}  // namespace kgen::ops
