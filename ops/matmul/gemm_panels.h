// B panels of the CPU GEMM, recorded where they are needed: by the packing
// kernels (into the packed Bp buffer, ahead of the macro-kernel) and by the
// macro-kernel itself when it packs each panel into a workgroup scratch just
// before using it (GemmTile::pb; then B goes from DRAM to L2 once instead of
// being written out packed and read back).
// A panel is NR = 16·nl columns of B (features of the weights) as f32x16
// lines, one group of nl lines per k; columns past the edge are zero.
#pragma once
#include <functional>

#include "dsl/dsl.h"

namespace kgen::ops {

// Receives line l (0 <= l < nl) of the panel at k (u64).
using PanelLineStore = std::function<void(const dsl::Value& k, int l, const dsl::Value& line)>;

// Lines [k0, k1) (u32) of panel `panel` of B (K×N, or N×K when trans_b;
// `src` the u32 element offset of this batch's B), converted to f32.
// `pairs` (GemmTile::bf2): lines of u32 bf16 pairs and k counting pairs; b
// is u32 pair words when trans_b (N×K pairs, src in words), else u16 bf16
// bits (2K×N, src = N·K of them per batch, so the batch starts at 2·src).
void pack_b_panel(const dsl::Array& b, bool trans_b, int nl, const dsl::Value& N, const dsl::Value& K,
                  const dsl::Value& src, const dsl::Value& panel, const dsl::Value& k0, const dsl::Value& k1,
                  const PanelLineStore& store, bool pairs = false);

// The gated MLP's [G;U] panel: line l holds features panel·8·nl + 16·(l/2)
// + i of G (l even) or U (l odd), rows of G and U (F×K) running along K;
// f16/bf16 widened to f32. `pairs`: g and u are u32 bf16 pair words (F×K
// pairs), kept as they are.
void pack_gate_up_panel(const dsl::Array& g, const dsl::Array& u, int nl, const dsl::Value& F, const dsl::Value& K,
                        const dsl::Value& panel, const dsl::Value& k0, const dsl::Value& k1, const PanelLineStore& store,
                        bool pairs = false);

}  // namespace kgen::ops
