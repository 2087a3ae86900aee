// C++ source for the in-process CPU JIT: SIMT kernels become loops over the
// work-items of each group (see cpu_simt.cpp for the execution model).
//
// Entry ABI (C linkage), one call runs the linear group ids [begin, end),
// x fastest:
//   struct KgenArgs { void* const* buffers; const unsigned long long* scalars;
//                     unsigned grid[3]; unsigned wg[3]; };
//   extern "C" void <entry>(const KgenArgs*, unsigned long long begin, unsigned long long end);
#pragma once
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace kgen::codegen {

// Mirrors the struct printed in the generated prelude.
struct KgenArgs {
  void* const* buffers;
  const unsigned long long* scalars;  // 8-byte slots, value in the low bytes
  unsigned grid[3];
  unsigned wg[3];
};
using KgenEntry = void (*)(const KgenArgs*, unsigned long long group_begin, unsigned long long group_end);

struct CppOptions {
  std::string entry;  // symbol name; empty: cpp_entry_symbol(kernel)
  // Tell the loop vectoriser the work-items of a barrier-free region carry no
  // memory dependences on each other (true under the SIMT memory model, where
  // such dependences are data races; false keeps LLVM's runtime alias checks).
  bool assume_independent_items = false;
  // Ask the loop vectoriser to run the work-item loop's last partial vector
  // as one masked step (tail folding) instead of a vector epilogue loop and
  // a scalar loop: one vector copy of the item body to compile, not three.
  // Cheap only where masked loads and stores are (AVX-512).
  bool fold_item_tail = false;
  // The streaming entry of a kernel that item_stream_store_bytes admits: the
  // emitter tells LLVM that the written buffers are 64-byte aligned and the
  // workgroup's x size a multiple of kStreamItemGroup (the runtime launches
  // this entry only then), so the item loop's vector stores are provably
  // aligned and jit::JitOptions::stream_aligned_stores can make them
  // nontemporal. Off with fold_item_tail (masked stores cannot stream).
  bool stream_item_stores = false;
};

std::string cpp_entry_symbol(const ir::Kernel& k, const CppOptions& opt = {});
// Throws ir::Error for kernels the CPU target cannot run (capabilities,
// barriers without a fixed workgroup size, 3-lane lines in memory).
std::string emit_cpp(const ir::Kernel& k, const CppOptions& opt = {});

struct TargetCaps;
// The widest vectors LLVM's loop and SLP vectorisers should use for k's
// loops on this CPU: the register width, or the family's streaming width
// (CpuTraits::streaming_vector_bits) where k streams: scalar items of cheap
// arithmetic (no division, root or transcendental function) that load and
// store only at their own x id.
uint32_t auto_vector_bits(const ir::Kernel& k, const TargetCaps& caps);
// Whether k's C++ optimises as well under the JIT's lean pass list
// (jit::JitOptions::lean_passes) as under -O2: each item is straight-line
// scalar code (branches, no loops, lines, atomics, barriers or workgroup
// memory), so the only loop in the source is the work-item loop.
bool lean_passes_suffice(const ir::Kernel& k);
// Whether v is the item's global x id itself: an access there walks its
// buffer contiguously along the item loop.
inline bool is_global_x_id(const ir::ValueIndex& index, ir::ValueId v) {
  const ir::Instr* d = index.def(v);
  return d && d->op == ir::Op::GlobalId && d->attr == 0;
}
// The workgroup x size a streaming entry needs a multiple of (64 items: 64
// bytes of the narrowest element), so every vector step starts aligned.
inline constexpr uint32_t kStreamItemGroup = 64;
// How far ahead (ids) a streaming entry prefetches its inputs: the op
// library's streamed lines' distance (ops/elementwise/fusion.h).
inline constexpr uint32_t kStreamPrefetchItems = 512;
// Bytes k writes per global x id when its item loop can stream its stores
// (CppOptions::stream_item_stores), else 0: a lean kernel (above) that sees
// only its global x id, with every store at that id, so the launch writes
// x extent × these bytes contiguously.
uint32_t item_stream_store_bytes(const ir::Kernel& k);

}  // namespace kgen::codegen
