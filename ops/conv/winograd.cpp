// conv2d 3×3, stride 1, dilation 1 by Winograd's minimal filtering F(2×2, 3×3)
// (Lavin & Gray 2016): each 2×2 block of outputs ("tile") is
//   Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
// over the 4×4 input patch d under it, so the 36 multiplies per tile and
// channel pair of the direct form become 16, and summed over input channels
// they are 16 independent GEMMs (one per position ξ of the 4×4 transformed
// patch): M[ξ] (OCg × tiles) = U[ξ] (OCg × Cg) · V[ξ] (Cg × tiles). The
// GEMMs run on the matmul family's packed macro-kernel (ops/matmul/matmul.h), 2.25×
// fewer FLOPs than the direct conv; the transforms are additions only
// (Bᵀ, Aᵀ: 0 and ±1; G: 0, ±1/2, 1) and stream the input and output once.
//
// Steps, per chunk (whole images, or tile rows of one image: as many as keep
// the chunk's V and M within `ck` KiB, so the GEMM reads them from the cache
// the transform just wrote them to, and the output transform M):
//   pad:     x into xq, zero-padded and split into the 4 phase planes of
//            stride 2 (conv_pad_phase_kernel with sh = sw = 2): tile
//            (ti, tj)'s patch element (r, c) is plane (r % 2, c % 2) at row
//            ti + r/2, column tj + c/2, so with virtual tiles p = ti·wq2 + tj
//            (wq2: a plane's width, one column more than the tiles) every
//            patch element of 16 consecutive tiles is one contiguous line,
//            whatever the rows; virtual tiles past the map are dropped.
//   weights: U[ξ] as row-major OCg × Cg matrices, which the GEMM reads as
//            they are (once per call).
//   input:   V[ξ] straight into the packed-B panels, 16 tiles per line.
//   GEMM:    batch g·16 + ξ, C rows of each image's virtual tiles padded to
//            whole panels.
//   output:  Aᵀ M A per tile, bias and ReLU, y rows written as lines (the two
//            columns of 16 tiles interleaved), the ragged end lane by lane.
// Rounding: every V is a sum of 4 inputs and every U of up to 9 halved
// weights, so |U|·|V| terms stay within a few times the direct conv's and the
// error within 4x dot_tolerance (tests/ops/conv_test.cpp checks every test
// problem that fits).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "ops/conv/conv.h"
#include "ops/conv/strategy.h"
#include "ops/matmul/matmul.h"
#include "ops/matmul/plan.h"

namespace kgen::ops {

using namespace kgen::dsl;

namespace {

uint64_t u(int64_t v) { return ir::scalar_slot(uint32_t(v)); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int kXi = 16;            // transformed patch positions (4×4)
constexpr int kChanChunk = 16;     // channels per input-transform work-item

// The padded, phase-split geometry: rows and columns enough for every tile's
// 4×4 patch (one more than the direct conv needs where OH or OW is odd).
ConvShape phase_shape(const ConvShape& s) {
  ConvShape q = s;
  const int64_t th = cdiv(s.oh(), 2), tw = cdiv(s.ow(), 2);
  q.sh = q.sw = 2;
  q.pb = std::max(s.pb, 2 * th + 2 - s.h - s.pt);
  q.pr = std::max(s.pr, 2 * tw + 2 - s.w - s.pl);
  return q;
}

// Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] on 4 values.
std::array<Value, 4> bt4(const std::array<Value, 4>& d) { return {d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3]}; }
// Aᵀ = [1 1 1 0; 0 1 -1 -1].
std::array<Value, 2> at4(const std::array<Value, 4>& m) { return {m[0] + m[1] + m[2], m[1] - m[2] - m[3]}; }

}  // namespace

double conv_winograd_saving(const ConvShape& s, int nr) {
  const int64_t th = cdiv(s.oh(), 2), wq2 = phase_shape(s).wq();
  return double(9 * s.oh() * s.ow()) / double(kXi * cdiv(th * wq2, nr) * nr);
}

bool conv_winograd_fits(const ConvShape& s) {
  return s.kh == 3 && s.kw == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 &&
         (s.w_layout == 0 || s.w_layout == kWeightsWinograd);
}

// U[g·16 + ξ] (OCg × Cg, row-major: the GEMM reads it as A in place, ak=1)
// for 16 input channels k0.. of one filter row per work-item, in lines along
// k: the 16 filters' 144 weights are 9 contiguous lines, regrouped into 9
// lines of one tap each; then G g Gᵀ line-wise, and 16 line stores (scalar
// code with 16 ξ per filter costs ~4 cycles per U value). Grid: x = blocks
// of 16 channels, y = OCg, z = groups.
ir::Kernel conv_winograd_weights_kernel() {
  return kernel("conv_wino_w", [&](KernelBuilder& kb) {
    auto w = kb.input("w", f32);
    auto u_ = kb.output("u", f32);
    auto OCG = kb.scalar("ocg", u32);
    auto K = kb.scalar("cg", u32);
    kb.workgroup(1);
    Value k0 = group_id(0) * 16u, oc = group_id(1), g = group_id(2);
    Value src = cast(u64, (g * OCG + oc) * K + k0) * uint64_t(9);
    auto dst = [&](int xi) { return cast(u64, ((g * uint32_t(kXi) + uint32_t(xi)) * OCG + oc) * K + k0); };
    // Lines (or scalars, lanes = 1) of taps t = 3a + c -> the 16 U forms.
    auto transform = [&](const std::array<Value, 9>& tap, auto&& store) {
      std::array<std::array<Value, 3>, 4> col;  // (G g)[i][c]
      for (int c = 0; c < 3; ++c) {
        Value g0 = tap[c], g1 = tap[3 + c], g2 = tap[6 + c];
        Value h = (g0 + g2) * 0.5f, h1 = g1 * 0.5f;
        col[0][c] = g0, col[1][c] = h + h1, col[2][c] = h - h1, col[3][c] = g2;
      }
      for (int i = 0; i < 4; ++i) {
        Value h = (col[i][0] + col[i][2]) * 0.5f, h1 = col[i][1] * 0.5f;
        store(4 * i + 0, col[i][0]);
        store(4 * i + 1, h + h1);
        store(4 * i + 2, h - h1);
        store(4 * i + 3, col[i][2]);
      }
    };
    if_(k0 + 16u <= K, [&] {
      std::array<Value, 9> lines, tap;
      for (int q = 0; q < 9; ++q) lines[q] = load_line(w, src + uint64_t(16 * q));
      for (int t = 0; t < 9; ++t) {
        std::vector<Value> l;
        for (int f = 0; f < 16; ++f) l.push_back(extract(lines[(9 * f + t) / 16], (9 * f + t) % 16));
        tap[t] = make_line(l);
      }
      transform(tap, [&](int xi, const Value& v) { store_line(u_, dst(xi), v); });
    }).else_([&] {
      for_range(0u, K - k0, [&](Value f) {
        std::array<Value, 9> tap;
        Value at = src + cast(u64, f) * uint64_t(9);
        for (int t = 0; t < 9; ++t) tap[t] = w[at + uint64_t(t)];
        transform(tap, [&](int xi, const Value& v) { u_[dst(xi) + cast(u64, f)] = v; });
      });
    });
  });
}

// Bp[g·16 + ξ][panel][k][l] = V[ξ] of channel g·Cg + k for virtual tiles
// pbase + panel·NR + 16·l .. + 15 (panels numbered over the chunk's images,
// np per image). Grid: x = panels of an image, y = chunks of channels, z =
// images of the chunk × groups.
ir::Kernel conv_winograd_input_kernel(int nl) {
  const uint32_t NL = uint32_t(nl), NR = 16 * NL;
  return kernel("conv_wino_in_nr" + std::to_string(NR), [&](KernelBuilder& kb) {
    auto xq = kb.input("xq", f32);
    auto bp = kb.output("bp", line(f32, 16));
    auto C = kb.scalar("c", u32);
    auto CG = kb.scalar("cg", u32);
    auto G = kb.scalar("groups", u32);
    auto PLANE = kb.scalar("plane", u32);  // one phase plane: hq2·wq2
    auto WQ2 = kb.scalar("wq2", u32);
    auto NP = kb.scalar("np", u32);        // panels per image
    auto NB = kb.scalar("images", u32);    // images in the chunk
    auto N0 = kb.scalar("n0", u32);        // the chunk's first image
    auto PBASE = kb.scalar("pbase", u32);  // its first virtual tile (ti0·wq2)
    kb.workgroup(1);
    Value panel = group_id(0), bz = group_id(2);
    Value n = bz / G, g = bz - n * G;
    Value k0 = group_id(1) * uint32_t(kChanChunk), k1 = min(k0 + uint32_t(kChanChunk), CG);
    Value npt = NB * NP;
    Value pglob = n * NP + panel;
    for_range(k0, k1, [&](Value k) {
      Value base = cast(u64, (N0 + n) * C + g * CG + k) * cast(u64, PLANE * 4u) + cast(u64, PBASE + panel * NR);
      for (uint32_t l = 0; l < NL; ++l) {
        std::array<std::array<Value, 4>, 4> t;  // t[r] = Bᵀ applied along row r of the patches
        for (int r = 0; r < 4; ++r) {
          std::array<Value, 4> d;
          for (int c = 0; c < 4; ++c) {
            Value at_ = base + cast(u64, PLANE * uint32_t((r % 2) * 2 + c % 2) + WQ2 * uint32_t(r / 2)) +
                        uint64_t(16 * l + c / 2);
            d[c] = load_line(xq, at_);
          }
          t[r] = bt4(d);
        }
        for (int j = 0; j < 4; ++j) {
          const std::array<Value, 4> v = bt4({t[0][j], t[1][j], t[2][j], t[3][j]});
          for (int i = 0; i < 4; ++i) {
            Value b = g * uint32_t(kXi) + uint32_t(4 * i + j);
            bp[(cast(u64, (b * npt + pglob) * CG + k)) * uint64_t(NL) + uint64_t(l)] = v[i];
          }
        }
      }
    });
  });
}

// y[n0 + n][oc][2ti + i][2tj + j] = relu(Aᵀ M A + b[oc]) from the GEMM's C
// (rows (g·16 + ξ)·OCg + o, columns n·ppad + (ti - ti0)·wq2 + tj). One
// work-item per tile row of one output channel and image: grid (the chunk's
// tile rows, OC, images).
ir::Kernel conv_winograd_output_kernel(bool bias, bool relu) {
  std::string name = std::string("conv_wino_out") + (bias ? "_bias" : "") + (relu ? "_relu" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto c = kb.input("c", f32);
    Array b;
    if (bias) b = kb.input("b", f32);
    auto y = kb.output("y", f32);
    auto OH = kb.scalar("oh", u32);
    auto OW = kb.scalar("ow", u32);
    auto OC = kb.scalar("oc", u32);
    auto OCG = kb.scalar("ocg", u32);
    auto WQ2 = kb.scalar("wq2", u32);
    auto PPAD = kb.scalar("ppad", u32);  // C columns per image
    auto NCOL = kb.scalar("ncols", u32);  // C columns: the chunk's images × ppad
    auto N0 = kb.scalar("n0", u32);
    auto TI0 = kb.scalar("ti0", u32);  // the chunk's first tile row
    kb.workgroup(1);
    Value ti = TI0 + group_id(0), oc = group_id(1), n = group_id(2);
    Value g = oc / OCG, o = oc - g * OCG;
    Value tw = (OW + 1u) / 2u, twf = OW / 2u;  // tiles; tiles with both columns inside
    Value col0 = cast(u64, n * PPAD + group_id(0) * WQ2);
    std::vector<Value> rows;
    for (int xi = 0; xi < kXi; ++xi)
      rows.push_back(cast(u64, (g * uint32_t(kXi) + uint32_t(xi)) * OCG + o) * cast(u64, NCOL) + col0);
    Value oh0 = ti * 2u;
    Value row_ok = oh0 + 1u < OH;  // the tile's second output row exists
    Value y0 = (cast(u64, (N0 + n) * OC + oc) * cast(u64, OH) + cast(u64, oh0)) * cast(u64, OW);
    Value y1 = y0 + cast(u64, OW);
    Value bv = bias ? Value(b[oc]) : constant(f32, 0.0f);
    Array tmp = shared_array(f32, 64);  // the ragged tiles' 4 output lines
    // The 2×2 outputs of the 16 tiles from tj0 on, as lines [i][j].
    auto tiles = [&](const Value& tj0) {
      std::array<std::array<Value, 4>, 4> m;
      for (int xi = 0; xi < kXi; ++xi) m[xi / 4][xi % 4] = load_line(c, rows[xi] + cast(u64, tj0));
      std::array<std::array<Value, 2>, 4> s;  // s[j] = Aᵀ along column j
      for (int j = 0; j < 4; ++j) s[j] = at4({m[0][j], m[1][j], m[2][j], m[3][j]});
      std::array<std::array<Value, 2>, 2> out;
      for (int i = 0; i < 2; ++i) {
        const std::array<Value, 2> r = at4({s[0][i], s[1][i], s[2][i], s[3][i]});
        for (int j = 0; j < 2; ++j) {
          Value v = r[j];
          if (bias) v = v + splat(bv, 16);
          if (relu) v = max(v, splat(0.0f, 16));
          out[i][j] = v;
        }
      }
      return out;
    };
    // All 16 tiles inside: each output row as two lines of interleaved columns.
    auto full = [&](const Value& tj0) {
      auto out = tiles(tj0);
      auto emit = [&](const Value& dst, const std::array<Value, 2>& r) {
        for (int h = 0; h < 2; ++h) {
          std::vector<Value> l;
          for (int e = 0; e < 8; ++e) {
            l.push_back(extract(r[0], 8 * h + e));
            l.push_back(extract(r[1], 8 * h + e));
          }
          store_line(y, dst + cast(u64, tj0 * 2u) + uint64_t(16 * h), make_line(l));
        }
      };
      emit(y0, out[0]);
      if_(row_ok, [&] { emit(y1, out[1]); });
    };
    // Tiles tj0 + e for e with tj0 + e in [from, tw), element by element
    // through a scratch of the 4 lines (one runtime loop: 16 unrolled
    // guarded lanes made this kernel the plan's slowest compile).
    auto ragged = [&](const Value& tj0, const Value& from) {
      auto out = tiles(tj0);
      for (int q = 0; q < 4; ++q) store_line(tmp, constant(u64, uint64_t(16 * q)), out[q / 2][q % 2]);
      for_range(from - tj0, tw - tj0, [&](Value e) {
        Value x0 = cast(u64, (tj0 + e) * 2u);
        Value ee = cast(u64, e);
        Value two = (tj0 + e) * 2u + 1u < OW;
        y[y0 + x0] = tmp[ee];
        if_(two, [&] { y[y0 + x0 + uint64_t(1)] = tmp[ee + uint64_t(16)]; });
        if_(row_ok, [&] {
          y[y1 + x0] = tmp[ee + uint64_t(32)];
          if_(two, [&] { y[y1 + x0 + uint64_t(1)] = tmp[ee + uint64_t(48)]; });
        });
      });
    };
    // Whole lines of 16 tiles, the last one ending at the last whole tile
    // (overlapping the line before); then what is left lane by lane: all of
    // a row under 16 whole tiles, else an odd OW's last tile.
    Value big = twf >= 16u;
    for_range(0u, select(big, (twf + 15u) / 16u, constant(u32, 0u)), [&](Value q) { full(min(q * 16u, twf - 16u)); });
    if_(!big || tw > twf, [&] { ragged(select(big, tw - 16u, constant(u32, 0u)), select(big, twf, constant(u32, 0u))); });
  });
}

void plan_conv_winograd(Plan& pl, size_t nio, const ConvShape& s, const Variant& v, const TargetCaps& caps) {
  if (!conv_winograd_fits(s))
    throw std::invalid_argument("conv2d: impl=9 (Winograd) needs a 3x3 kernel, stride 1, dilation 1, OIHW or Winograd (w_layout=16) weights");
  const ConvShape q = phase_shape(s);
  const int64_t th = cdiv(s.oh(), 2), wq2 = q.wq(), ptiles = th * wq2;
  const int64_t cg = s.cg(), ocg = s.ocg(), batch = s.groups * kXi;
  // The GEMM tile for one image's product; its panels fix the C row padding.
  GemmTile t = conv_gemm_tile(v, ocg, ptiles, cg, 1, caps);  // U is read as it is (row-major)
  t.pb = 0;  // B comes packed
  const int64_t nr = t.nr();
  // Chunks: whole images where one fits in ck KiB (V and M: 16·G·(Cg + OCg)
  // floats per virtual tile), else runs of tile rows of one image.
  const int64_t per_tile = batch * (cg + ocg) * 4, budget = (v.get("ck", 0) > 0 ? v.get("ck", 0) : conv_winograd_chunk_kib(caps)) << 10;
  const int64_t img_bytes = cdiv(ptiles, nr) * nr * per_tile;
  const int64_t rows = img_bytes <= budget ? th : std::clamp<int64_t>(budget / (per_tile * wq2), 1, th);
  const int64_t nb = rows < th ? 1 : std::clamp<int64_t>(budget / img_bytes, 1, s.n);
  const int64_t np = cdiv(rows * wq2, nr), ppad = np * nr;  // the chunk's panels per image
  // Virtual tiles past the last image's plane read up to a panel and a plane row further.
  const int xq = plan_conv_prep(pl, nio, q, 0, nr + wq2 + 32, false).xq;
  // U: the input itself where the weights come transformed (w_layout=16).
  const bool given = s.w_layout == kWeightsWinograd;
  const int ap = given ? 1 : pl.add_temp(nio, size_t(batch * ocg * cg) * 4);
  if (!given) {
    Step st;
    st.kernel = conv_winograd_weights_kernel();
    st.dims.grid = {uint32_t(cdiv(cg, 16)), uint32_t(ocg), uint32_t(s.groups)};
    st.buffers = {1, ap};
    st.scalars = {u(ocg), u(cg)};
    pl.steps.push_back(std::move(st));
  }
  const int bp = pl.add_temp(nio, size_t(batch * nb * ppad * cg) * 4);
  // C: 16 floats of slack, since the ragged tile line of a narrow map reads a whole line.
  const int c = pl.add_temp(nio, size_t(batch * ocg * nb * ppad + 16) * 4);
  const int yslot = s.bias ? 3 : 2;
  const ir::Kernel input = conv_winograd_input_kernel(t.nl), output = conv_winograd_output_kernel(s.bias, s.relu);
  for (int64_t n0 = 0; n0 < s.n; n0 += nb)
    for (int64_t ti0 = 0; ti0 < th; ti0 += rows) {
      const int64_t imgs = std::min(nb, s.n - n0), trows = std::min(rows, th - ti0);
      const int64_t cnp = cdiv(trows * wq2, nr);  // this chunk's panels per image
      {
        Step st;
        st.kernel = input;
        st.dims.grid = {uint32_t(cnp), uint32_t(cdiv(cg, kChanChunk)), uint32_t(imgs * s.groups)};
        st.buffers = {xq, bp};
        st.scalars = {u(s.c), u(cg), u(s.groups), u(q.plane()), u(wq2), u(cnp), u(imgs), u(n0), u(ti0 * wq2)};
        pl.steps.push_back(std::move(st));
      }
      plan_gemm_cpu(pl, t, ap, bp, c, batch, ocg, imgs * cnp * nr, cg);
      {
        Step st;
        st.kernel = output;
        st.dims.grid = {uint32_t(trows), uint32_t(s.oc), uint32_t(imgs)};
        st.buffers = {c};
        if (s.bias) st.buffers.push_back(2);
        st.buffers.push_back(yslot);
        st.scalars = {u(s.oh()), u(s.ow()), u(s.oc), u(ocg), u(wq2), u(cnp * nr), u(imgs * cnp * nr), u(n0), u(ti0)};
        pl.steps.push_back(std::move(st));
      }
    }
}

}  // namespace kgen::ops
