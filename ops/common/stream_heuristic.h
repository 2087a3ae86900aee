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
#include "ops/core/op.h"

namespace kgen::ops {

// The bound (codegen::stream_min_output_bytes, shared with the CPU runtime's
// streaming entry of plain SIMT kernels): outputs of at least half the
// last-level cache, and never below 65 MiB where the LLC is larger. Below it
// the reader (often the very next op) finds the output in cache, which a
// streaming store would have sent to DRAM.
using codegen::kStreamMinOutputBytes;
using codegen::stream_min_output_bytes;

inline bool stream_output(const TargetCaps& caps, double output_bytes) {
  return is_cpu(caps) && output_bytes >= stream_min_output_bytes(caps);
}

}  // namespace kgen::ops
