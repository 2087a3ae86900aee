// When to write an op's output with streaming (nontemporal) stores, for the
// heuristics of the memory-bound ops (row ops, elementwise chains).
//
// A plain store first reads the output line for ownership, so a write-once
// output costs twice its bytes in DRAM traffic; a streaming store writes the
// line without reading it, but also without keeping it in the caches. That
// wins when the output would be evicted before anyone reads it anyway, and
// loses when it would still be in cache for the next op. Both forms stay in
// the ops' candidate lists, so `kgen tune` can overrule this per shape.
#pragma once
#include "ops/op.h"

namespace kgen::ops {

// Outputs larger than this stream (CPU only). Measured on the 2-core
// Sapphire Rapids box (L2 2 MiB/core, L3 260 MiB), the op run repeatedly on
// the same tensors (`kgen op`): rmsnorm/layernorm 2048x1024 (8 MiB out) and
// softmax 4096x4096 (64 MiB) stay in L3 between runs, and streaming them
// costs 5-15% (the next reader would have to go to DRAM); with 128 MiB
// outputs (ew_chain 8192x4096: 256 MiB in + out) and the 256 MiB arrays of
// the bandwidth suite, the data comes from DRAM anyway and streaming gains
// 20-100% (silu(x)*y 12 -> 28 GB/s at 2 threads).
inline constexpr double kStreamMinOutputBytes = 64.0 * 1024 * 1024;

inline bool stream_output(const TargetCaps& caps, double output_bytes) {
  return is_cpu(caps) && output_bytes > kStreamMinOutputBytes;
}

}  // namespace kgen::ops
