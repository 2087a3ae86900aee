// K split ranges (ops/matmul/k_split.h).
#include "ops/matmul/k_split.h"

namespace kgen::ops {

using namespace kgen::dsl;

KRange k_split_range(const Value& K, uint32_t ks, uint32_t step, const Value& s) {
  Value per = (K + (ks - 1)) / ks;
  if (step > 1) per = (per + (step - 1)) / step * step;
  Value begin = min(s * per, K);
  return {begin, min(begin + per, K)};
}

}  // namespace kgen::ops
