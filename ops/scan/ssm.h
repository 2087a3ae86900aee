// Mamba-style selective scan, forward (S6): for each batch b and channel d,
// with a state h of N values,
//   dt  = delta[b,t,d]                      (softplus(delta) with delta_softplus=1)
//   h_t = exp(dt·A[d,:]) ⊙ h_{t-1} + dt·u[b,t,d]·Bm[b,t,:]
//   y[b,t,d] = C[b,t,:]·h_t (+ D[d]·u[b,t,d] with d_skip=1)
// Parallel over (B, Dm), sequential over L; the state lives in registers.
//
// Kernels:
//  - generic (any target): one work-item per (b, d), N scalar state registers.
//  - CPU lines: one work-item per (b, 16 channels), the state as N f32x16
//    lines over channels (no horizontal sums). tail (Dm % 16 != 0, Dm >=
//    16): scalar buffers, the last group on the last 16 channels (storing
//    only those past the previous group's).
#pragma once
#include "ir/ir.h"

namespace kgen::ops {

ir::Kernel selective_scan_generic_kernel(int n, bool softplus, bool d_skip, int wg);
ir::Kernel selective_scan_lines_kernel(int n, bool softplus, bool d_skip, bool tail = false);

// Registers "selective_scan" (called by register_scan_ops()).
void register_selective_scan_op();

}  // namespace kgen::ops
