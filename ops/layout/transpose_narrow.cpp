#include "ops/layout/transpose_narrow.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dsl/dsl.h"
#include "ops/layout/transpose_batch.h"
#include "ops/layout/transpose_block.h"

namespace kgen::ops {

using namespace kgen::dsl;

constexpr uint32_t kL = 16;  // lanes per line

ir::Kernel transpose_narrow_kernel(ir::Type dt, int nbatch, int n, bool interleave, int u, bool stream) {
  if (n < 2 || n > 32) throw std::invalid_argument("transpose_narrow_kernel: the narrow axis has 2..16 values");
  if (u < 1 || u > 64) throw std::invalid_argument("transpose_narrow_kernel: u in 1..64");
  if (dt.bytes() != 2 && dt.bytes() != 4) throw std::invalid_argument("transpose_narrow_kernel: 2- or 4-byte values");
  dt = dt.bytes() == 2 ? u16 : u32;  // a copy moves bits
  const uint32_t N = uint32_t(n), U = uint32_t(u);
  const std::string name = std::string("transpose_narrow_") + (interleave ? "il" : "dl") + std::to_string(n) + "_" + dt.str() +
                           "_b" + std::to_string(nbatch) + "_u" + std::to_string(u) + (stream ? "_nt" : "");
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", dt);
    auto y = kb.output("y", stream ? line(dt, kL) : dt);
    auto A = kb.scalar("A", u32);
    auto B = kb.scalar("B", u32);
    auto sb = kb.scalar("sb", u32);
    const BatchAxes batch = batch_axes(kb, nbatch);
    kb.workgroup(1);
    Value ibase = batch.input_base();
    Value obase = group_id(2) * A * B;
    Value wide = interleave ? A : B;
    // Whole chunks of 16 along the wide axis.
    for_range(0u, U, [&](Value c) {
      Value w0 = (group_id(0) * U + c) * kL;
      if_(w0 + kL <= wide, [&] {
        std::vector<Value> in;
        for (uint32_t k = 0; k < N; ++k)
          in.push_back(interleave ? load_line(x, ibase + k * sb + w0) : load_line(x, ibase + w0 * N + k * kL));
        // interleave: the n input rows' lines are the columns of 16 output
        // rows; deinterleave: the n input lines are 16 rows of n values.
        std::vector<Value> out = interleave ? interleave_lines(in) : deinterleave_lines(in);
        for (uint32_t l = 0; l < N; ++l) {
          Value o = interleave ? obase + w0 * N + l * kL : obase + l * B + w0;
          if (stream) y[o / kL].stream(out[l]);
          else store_line(y, o, out[l]);
        }
      });
    });
    // The remainder of the wide axis, element by element.
    if (!stream) if_(group_id(0) + 1u == num_groups(0), [&] {
      for_range(wide / kL * kL, wide, [&](Value w) {
        for (uint32_t k = 0; k < N; ++k) {
          if (interleave) y[obase + w * N + k] = x[ibase + k * sb + w];
          else y[obase + k * B + w] = x[ibase + w * N + k];
        }
      });
    });
  });
}

}  // namespace kgen::ops
