// A K split's range, shared by the kernels that split K across workgroups
// (the CPU GEMM's ks, the GEMV's K parts, the GPU line tiles' and the conv
// implicit GEMM's ks): split s of ks takes [begin, end), whole `step`s of K,
// the last splits shorter or empty.
#pragma once
#include <cstdint>

#include "dsl/dsl.h"

namespace kgen::ops {

struct KRange {
  dsl::Value begin, end;
};
KRange k_split_range(const dsl::Value& K, uint32_t ks, uint32_t step, const dsl::Value& s);

}  // namespace kgen::ops
