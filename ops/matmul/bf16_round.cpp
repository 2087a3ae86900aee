#include "ops/matmul/bf16_round.h"

namespace kgen::ops {

using namespace kgen::dsl;

Value bf16_upper_bits(const Value& x) {
  const int lanes = x.type().lanes;
  const ir::Type u = lanes > 1 ? line(u32, lanes) : ir::Type(u32);
  Value b = bitcast(u, x);
  Value rounded = (b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u;
  Value quiet_nan = (b | 0x400000u) & 0xffff0000u;  // ir::f32_to_bf16: sets bit 6 of the bf16
  return select((b & 0x7fffffffu) > 0x7f800000u, quiet_nan, rounded);
}

}  // namespace kgen::ops
