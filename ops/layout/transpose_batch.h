// The batch axes of the tiled transpose kernels (ops/layout/transpose.cpp,
// ops/layout/transpose_narrow.cpp): their sizes and input strides as scalars after the
// kernel's own, and the input offset of group z's batch element (grid z
// numbers the batch elements, the last axis fastest).
#pragma once
#include <string>
#include <vector>

#include "dsl/dsl.h"

namespace kgen::ops {

struct BatchAxes {
  std::vector<dsl::Value> dims, strides;
  dsl::Value input_base() const {
    using namespace kgen::dsl;
    Value rem = group_id(2), base = constant(u32, 0u);
    for (int k = int(dims.size()) - 1; k >= 0; --k) {
      Value ck = k == 0 ? rem : rem % dims[size_t(k)];
      if (k > 0) rem = rem / dims[size_t(k)];
      base = base + ck * strides[size_t(k)];
    }
    return base;
  }
};

inline BatchAxes batch_axes(dsl::KernelBuilder& kb, int nbatch) {
  BatchAxes b;
  for (int k = 0; k < nbatch; ++k) {
    b.dims.push_back(kb.scalar("bd" + std::to_string(k), dsl::u32));
    b.strides.push_back(kb.scalar("bs" + std::to_string(k), dsl::u32));
  }
  return b;
}

}  // namespace kgen::ops
