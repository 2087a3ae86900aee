// Prefix sums ("scan", inclusive or exclusive) over each row of a rows × n
// matrix, f32 or i32, and the Mamba-style selective scan (ops/scan/ssm.h).
//
// Kernels:
//  - Blelloch (any target): a workgroup of `wg` work-items scans a block of
//    2·wg elements in shared memory (up-sweep, down-sweep: work-efficient),
//    writing the block's total; the block totals are scanned the same way
//    (recursively, exclusive) and added back. Any n, any number of levels.
//  - CPU: a work-item scans a chunk sequentially (8 elements per step, their
//    local prefix computed off the carried sum's dependency chain). With
//    `chunks` > 1 a row is split over that many work-items: a first kernel
//    sums every chunk but the last, the second scans each chunk starting
//    from the sum of the chunks before it.
//  - CPU, one pass (look-back): chunks in ticket order; each sums its chunk,
//    takes the previous chunk's inclusive prefix, publishes its own and
//    scans in 16-lane lines (scan_lookback_kernel).
#pragma once
#include "ir/ir.h"

namespace kgen::ops {

// x → y (rows × n, grid (nb, rows)), sums[row*nb + block] = block total.
ir::Kernel scan_block_kernel(ir::Type dt, int wg, bool exclusive);
// y[row*n + i] += offs[row*nb + i / block] (grid (ceil(n/64), rows)).
ir::Kernel scan_add_back_kernel(ir::Type dt, int block);
// CPU: chunk sums (grid (chunks-1, rows)) and chunk scans (grid (chunks, rows)).
ir::Kernel scan_chunk_sums_kernel(ir::Type dt);
ir::Kernel scan_chunk_kernel(ir::Type dt, bool exclusive);
// CPU, one pass: chunks of cl elements in ticket order with look-back
// (grid = rows · chunks per row; state: 1 + that many u64, zeroed first by
// the reset kernel, grid ceil(count / 256)). stream: y is a buffer of
// 16-lane lines written with streaming stores (rows a multiple of 16 long).
ir::Kernel scan_lookback_kernel(ir::Type dt, bool exclusive, bool stream = false);
ir::Kernel scan_lookback_reset_kernel();
// Rows of n = 2..24 values, 16 at a time with a row per lane (CPU): buffers
// x, y; scalar rows; kNarrowScanRows rows per work-item, grid ceil(rows /
// kNarrowScanRows).
constexpr uint32_t kNarrowScanRows = 256;
ir::Kernel scan_narrow_kernel(ir::Type dt, int n, bool exclusive);

void register_scan_ops();  // "scan" and "selective_scan"

}  // namespace kgen::ops
