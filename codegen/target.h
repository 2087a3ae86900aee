// What a code generation target can do. Emitters and runtimes share this so a
// kernel is refused up front, with the capability named, instead of failing
// deep inside a backend compiler.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "codegen/cpu_traits.h"
#include "ir/ir.h"

namespace kgen::codegen {

struct TargetCaps {
  std::string name;                     // "cpu", "cuda:sm_90", ...
  bool f16 = false;                     // half-precision storage and math
  bool bf16 = false;
  bool f64 = false;
  bool i64 = true;
  bool subgroups = false;               // subgroup builtins, shuffles, reductions
  uint32_t subgroup_size = 0;           // 0 when subgroups is false
  uint32_t max_shared_bytes = 0;        // per workgroup
  uint32_t max_workgroup_threads = 0;
  std::array<uint32_t, 3> max_workgroup_size{0, 0, 0};
  bool atomics_f32 = false;             // float atomic add/min/max/exch
  bool atomics_64 = false;              // 64-bit integer atomics
  uint32_t max_vector_lanes = 16;
  // CPU register file, for the ops' register blocking (0 on GPU targets):
  // 512 bits × 32 (AVX-512), 256 × 16 (AVX2), 128 × 16 (SSE).
  uint32_t vector_bits = 0;
  uint32_t vector_registers = 0;
  // CPU last-level cache in bytes (0: unknown), for the memory-bound ops'
  // streaming-store choice. From sysfs: a VM's cpuid may report the host's.
  uint64_t llc_bytes = 0;
  // CPU: a u8·i8 byte dot-product instruction (AVX512-VNNI vpdpbusd), which
  // the int8 GEMVs lower dot4 to; without it signed·signed bytes are cheaper.
  bool byte_dot = false;
  // permute_bytes (ir/ops.h): the CPU only (GPU dialects have no byte
  // vectors; clang lowers it to vpermi2b/vpermt2w/vpshufb as the host has).
  bool byte_permute = false;
  // CPU: permute_bytes with an index computed at run time over 64-byte
  // tables is one instruction (AVX512-VBMI vpermi2b); elsewhere a byte loop.
  bool byte_lookup = false;
  // CPU: a bf16 pair dot product into f32 (AVX512-BF16 vdpbf16ps), which
  // dot2_bf16 lowers to: the bf16 GEMM then runs at twice the f32 rate.
  // Elsewhere dot2_bf16 is correct but slower than widening to f32. Only
  // where it issues at the FMA rate (AMD; Intel's cores: one port).
  bool bf16_dot = false;
  // CPU: a matrix engine for tile_mma_bf16 (x86 AMX-BF16, with the kernel's
  // permission for the tile state granted to this process): the bf16 GEMM's
  // 32×32 blocks run on it at several times the vector units' rate.
  bool matrix_tiles = false;
  // CPU: the family and its performance traits (codegen/cpu_traits.h), read
  // by the op families' strategy files only. Not part of the cache key.
  CpuTraits cpu;
  // CPU: the device's worker threads (0: unknown), for the ops' heuristics
  // that split work (the reduction's column groups). Not part of the cache
  // key: it changes which variant is chosen, never a kernel's binary.
  uint32_t threads = 0;
  // GPU drivers that stop loops silently: Mesa's llvmpipe (lavapipe, and
  // wgpu on it) ends every loop of a shader invocation once 65535 iterations
  // have run in all, leaving the rest of the work undone. Nonzero: the
  // GLSL/WGSL emitters count iterations and raise a flag at this count, which
  // the runtime turns into an error instead of a silently wrong result.
  uint32_t loop_iteration_limit = 0;
};

// Outputs of at least half the last-level cache go out with streaming
// (nontemporal) stores on the CPU, and never below 65 MiB where the LLC is
// larger: such an output and its input fill the LLC, so the tensors around
// it evict it before its reader comes (rmsnorm 2048x1024 on a 32 MiB L3 ran
// at half speed streamed on 2 threads). Without a known LLC size the 65 MiB
// bound applies. Read by the memory-bound ops' heuristics and by the CPU
// runtime's choice of a SIMT kernel's streaming entry.
inline constexpr double kStreamMinOutputBytes = 65.0 * 1024 * 1024;
inline double stream_min_output_bytes(const TargetCaps& caps) {
  return caps.llc_bytes ? std::min(double(caps.llc_bytes) / 2, kStreamMinOutputBytes) : kStreamMinOutputBytes;
}

// Native registers one f32x16 line takes on the CPU (1 on AVX-512, 2 on AVX2).
inline uint32_t registers_per_line(const TargetCaps& c) { return c.vector_bits ? (512 + c.vector_bits - 1) / c.vector_bits : 1; }
// Whether `lines` f32x16 values plus `extra` native registers (broadcasts)
// fit the register file without spilling.
inline bool lines_fit(const TargetCaps& c, int lines, int extra = 1) {
  const uint32_t regs = c.vector_registers ? c.vector_registers : 32;
  return uint32_t(lines) * registers_per_line(c) + uint32_t(extra) <= regs;
}

// Capabilities of the in-process CPU target (SIMT emulated with loops).
TargetCaps cpu_caps();

// Throws ir::Error naming the first capability `k` needs that `caps` lacks
// (e.g. "kernel 'k' uses subgroup operations (subgroup_add at a.cc:3) but
// target 'cpu' has no subgroups").
void check_capabilities(const ir::Kernel& k, const TargetCaps& caps);

}  // namespace kgen::codegen
