// Byte permutes over a two-register table, the plain C++ twins of
// samples/kernels/permute.cpp: an index from memory (a run-time lookup) and
// constant ones (a shuffle known at compile time), for 64- and 16-byte
// results, with index bytes past the table (they wrap). One kernel per table
// width (u32, u32x4, u32x8, u32x16 per half); CPU targets only.
//   kgen run-kernel samples/cpp/permute.cpp --kernel permute_bytes_t64
#include "kgen_kernel.h"

using namespace kgen;

// Index byte k: every kind of entry, both tables, repeats and bytes >= 2·table.
constexpr unsigned permute_index(int k, int table_bytes) {
  return unsigned(k % 5 == 0 ? k % (2 * table_bytes) : (k * 37 + 11) % 256);
}

// Index word w: bytes 4w .. 4w + 3, the lowest first.
constexpr unsigned permute_word(int w, int table_bytes) {
  return permute_index(4 * w, table_bytes) | permute_index(4 * w + 1, table_bytes) << 8 |
         permute_index(4 * w + 2, table_bytes) << 16 | permute_index(4 * w + 3, table_bytes) << 24;
}

// y gets 2 results per element (run-time index, constant index); z one
// 16-byte result of the swapped table under a constant index.
template <class T>
void permute_all(const T* a, const T* b, const u32x16* idx, u32x16* y, u32x4* z, unsigned n) {
  constexpr int tb = sizeof(T);
  unsigned i = global_id(0);
  if (i < n) {
    T av = a[i], bv = b[i];
    y[i * 2u] = permute_bytes(av, bv, idx[i]);
    constexpr u32x16 wide = {permute_word(0, tb),  permute_word(1, tb),  permute_word(2, tb),  permute_word(3, tb),
                             permute_word(4, tb),  permute_word(5, tb),  permute_word(6, tb),  permute_word(7, tb),
                             permute_word(8, tb),  permute_word(9, tb),  permute_word(10, tb), permute_word(11, tb),
                             permute_word(12, tb), permute_word(13, tb), permute_word(14, tb), permute_word(15, tb)};
    y[i * 2u + 1u] = permute_bytes(av, bv, wide);
    constexpr u32x4 narrow = {permute_word(0, tb), permute_word(1, tb), permute_word(2, tb), permute_word(3, tb)};
    z[i] = permute_bytes(bv, av, narrow);
  }
}

KGEN_KERNEL void permute_bytes_t4(const u32* a, const u32* b, const u32x16* idx, u32x16* y, u32x4* z, unsigned n) {
  permute_all(a, b, idx, y, z, n);
}
KGEN_KERNEL void permute_bytes_t16(const u32x4* a, const u32x4* b, const u32x16* idx, u32x16* y, u32x4* z, unsigned n) {
  permute_all(a, b, idx, y, z, n);
}
KGEN_KERNEL void permute_bytes_t32(const u32x8* a, const u32x8* b, const u32x16* idx, u32x16* y, u32x4* z, unsigned n) {
  permute_all(a, b, idx, y, z, n);
}
KGEN_KERNEL void permute_bytes_t64(const u32x16* a, const u32x16* b, const u32x16* idx, u32x16* y, u32x4* z,
                                   unsigned n) {
  permute_all(a, b, idx, y, z, n);
}
