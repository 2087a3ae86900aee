// permute_bytes (ir/ops.h): bytes of a two-register table picked by a byte
// index, the building block of decoders that regroup packed bytes (x86
// vpermi2b / vpermb). The kernel takes the index from memory (a run-time
// table lookup) and as constants (a shuffle known at compile time, what the
// quantized GEMVs use), for 64- and 16-byte results, with index bytes past
// the table (they wrap).
#include <string>
#include <vector>

#include "samples/kernels/common.h"
#include "samples/kernels/kernels.h"

namespace kgen::samples {

using namespace dsl;

uint8_t permute_sample_index(int k, int table_bytes) {
  // Every kind of entry: both tables, repeats, and bytes >= 2·table (they wrap).
  return uint8_t(k % 5 == 0 ? k % (2 * table_bytes) : (k * 37 + 11) % 256);
}

namespace {

std::vector<Value> pattern_words(int words, int table_bytes) {
  std::vector<Value> w;
  for (int i = 0; i < words; ++i) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= uint32_t(permute_sample_index(4 * i + b, table_bytes)) << (8 * b);
    w.push_back(constant(u32, v));
  }
  return w;
}

}  // namespace

ir::Kernel permute_bytes_kernel(int table_bytes) {
  return kernel("permute_bytes_t" + std::to_string(table_bytes), [&](KernelBuilder& kb) {
    const int tl = table_bytes / 4;
    const ir::Type T = tl == 1 ? ir::Type(u32) : line(u32, tl);
    auto a = kb.input("a", T);
    auto b = kb.input("b", T);
    auto idx = kb.input("idx", line(u32, 16));
    auto y = kb.output("y", line(u32, 16));  // 2 per element: run-time index, constant index
    auto z = kb.output("z", line(u32, 4));   // a 16-byte result, constant index
    auto n = kb.scalar("n", u32);
    auto i = global_id(0);
    if_(i < n, [&] {
      Value av = a[i], bv = b[i];
      y[i * 2u] = permute_bytes(av, bv, idx[i]);
      y[i * 2u + 1u] = permute_bytes(av, bv, make_line(pattern_words(16, table_bytes)));
      z[i] = permute_bytes(bv, av, make_line(pattern_words(4, table_bytes)));
    });
  });
}

void register_permute() {
  for (int tb : {4, 16, 32, 64}) {
    register_kernel({permute_bytes_kernel(tb).name,
                     "y = bytes of a ++ b picked by an index from memory and by constant ones (permute_bytes)",
                     [tb] { return permute_bytes_kernel(tb); },
                     [](int64_t n) {
                       ir::Workload w;
                       w.dims = grid_1d(n, 64);
                       w.buffers = {input_spec(n, 0, 4294967295.0), input_spec(n, 0, 4294967295.0),
                                    input_spec(16 * n, 0, 4294967295.0), output_spec(2 * n), output_spec(n)};
                       w.scalars = {ir::scalar_slot(uint32_t(n))};
                       w.tolerance = 0;
                       return w;
                     },
                     1 << 14, {1, 7, 100}});
  }
}

}  // namespace kgen::samples
