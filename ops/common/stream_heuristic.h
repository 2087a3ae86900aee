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

#include "ops/core/op.h"

namespace kgen::ops {

// Outputs of at least half the last-level cache stream (CPU only), and
// never below 65 MiB where the LLC is larger: such an output and its input
// fill the LLC, so the tensors around it in a model evict it before its
// reader comes. Below that the reader (often the very next op) finds it in
// cache, which a streaming store would have sent to DRAM (rmsnorm 2048x1024
// on a 32 MiB L3 ran at half speed streamed on 2 threads). Without a known
// LLC size the 65 MiB bound applies.
inline constexpr double kStreamMinOutputBytes = 65.0 * 1024 * 1024;

inline double stream_min_output_bytes(const TargetCaps& caps) {
  return caps.llc_bytes ? std::min(double(caps.llc_bytes) / 2, kStreamMinOutputBytes) : kStreamMinOutputBytes;
}

inline bool stream_output(const TargetCaps& caps, double output_bytes) {
  return is_cpu(caps) && output_bytes >= stream_min_output_bytes(caps);
}

}  // namespace kgen::ops
