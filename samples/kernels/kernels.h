// The starter kernels, written in the DSL. Each family is one parameterised
// C++ function (dtype, tile size, vector width... are plain parameters); its
// registered variants are separate registry entries.
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace kgen::samples {

// Registers every sample kernel in the dsl registry. Idempotent.
void register_all();

// ---- builders (also used directly by tests) --------------------------------
ir::Kernel saxpy(ir::Type dt);                            // y = a*x + y
enum class Activation { Silu, GeluTanh, GeluErf };
ir::Kernel activation(Activation act, ir::Type dt);       // y = act(x)
ir::Kernel vec_add(ir::Type dt);                          // z = x + y
ir::Kernel reduce_sum(int items_per_thread);              // per-group partial sums, workgroup 256
ir::Kernel histogram(int bins, bool shared_privatized);   // u32 bins, atomics
ir::Kernel matmul_tiled(int tile);                        // C = A*B, f32, tile x tile workgroups
ir::Kernel softmax_rows();                                // one workgroup (256) per row
ir::Kernel saxpy_lines(int lanes);                        // y = a*x + y on f32 lines
ir::Kernel dot_lines(int lanes);                          // out[i] = sum(x[i]*y[i]) per f32 line
ir::Kernel dot4_packed(int lanes);                        // y = dot4(a, b, c), 4 signedness pairs (1: scalars)
ir::Kernel dot4_small_packed(int lanes);                  // dot4 of unsigned bytes < 128 and signed bytes
ir::Kernel dot4_pair_packed(int lanes);                   // dot4(a, b, dot4(a2, b2, c)), unsigned bytes < 64 and < 128
ir::Kernel dot2_bf16_packed(int lanes);                   // y = dot2_bf16 of bf16 pairs into f32 (1: scalars)
ir::Kernel dot2_i16_packed(int lanes);                    // y = dot2_i16 of i16 pairs into i32 (1: scalars)
ir::Kernel permute_bytes_kernel(int table_bytes);         // permute_bytes with run-time and constant indices
uint8_t permute_sample_index(int k, int table_bytes);     // its constant index: table byte of result byte k

// Shapes the workloads use, so tests can build matching references.
inline constexpr int kReduceWorkgroup = 256;
inline constexpr int kSoftmaxRows = 64;
inline constexpr int kSoftmaxWorkgroup = 256;

// ---- per-family registration (register_all calls these once) --------------
void register_elementwise();
void register_reduce();
void register_histogram();
void register_matmul();
void register_softmax();
void register_lines();
void register_dot4();
void register_dot2_bf16();
void register_dot2_i16();
void register_permute();

}  // namespace kgen::samples
