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
#include <algorithm>

#include "ops/op.h"

namespace kgen::ops {

// Outputs of at least half the last-level cache stream (CPU only), and
// never below 65 MiB where the LLC is larger: such an output and its input
// fill the LLC, so the tensors around it in a model evict it before its
// reader comes. Below that the reader (often the very next op) finds it in
// cache, which a streaming store would have sent to DRAM. Measured:
// - 2-core Sapphire Rapids (L3 260 MiB): rmsnorm/layernorm 2048x1024 (8 MiB
//   out) and softmax 4096x4096 (64 MiB) stay in L3 between runs and
//   streaming costs 5-15%; with 128 MiB outputs (ew_chain 8192x4096) and the
//   bandwidth suite's 256 MiB arrays it gains 20-100%.
// - 2-core AMD EPYC Zen 5 (L3 32 MiB, bound 16 MiB): rmsnorm 2048x1024 run
//   back to back (LLC-warm, as after the op producing its input) takes 0.21
//   ms streamed against 0.20 plain on 1 thread, 0.21 against 0.11 on 2
//   (streaming is bound by DRAM writes); with inputs rotating through more
//   than the L3 (`kgen tune`, session 7 on Zen 3) streaming won, 0.95-1.0 ms
//   against 1.29-1.36 on 1 thread. The bound favours the first case, the
//   usual one in a model; softmax 4096x4096 (64 MiB) streams.
// Without a known LLC size the Sapphire Rapids bound applies.
inline constexpr double kStreamMinOutputBytes = 65.0 * 1024 * 1024;

inline double stream_min_output_bytes(const TargetCaps& caps) {
  return caps.llc_bytes ? std::min(double(caps.llc_bytes) / 2, kStreamMinOutputBytes) : kStreamMinOutputBytes;
}

inline bool stream_output(const TargetCaps& caps, double output_bytes) {
  return is_cpu(caps) && output_bytes >= stream_min_output_bytes(caps);
}

}  // namespace kgen::ops
