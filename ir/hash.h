// Structural identity of kernels, for compile caches and tests. Two kernels
// are structurally equal when they compute the same thing in the same way:
// same parameter types and access modes, workgroup size and instruction tree,
// with value ids compared by definition order (so numbering does not matter).
// The kernel's name, parameter names and source locations are NOT part of it:
// kernels that differ only there compile to the same code, once.
// Only the immediate field that a Const's type gives meaning to is compared
// (the bits of `f` for floats, `i` otherwise); non-Const immediates are unused.
#pragma once
#include <cstdint>
#include <string_view>

#include "ir/ir.h"

namespace kgen::ir {

uint64_t structural_hash(const Kernel& k);
bool structurally_equal(const Kernel& a, const Kernel& b);

// A 64-bit streaming hash in the style of xxHash64 (multiply-rotate rounds and
// a final avalanche), for callers that extend kernel hashes into cache keys.
class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0) : h_(seed + kP5) {}
  void add(uint64_t v) {
    h_ ^= round(v);
    h_ = rotl(h_, 27) * kP1 + kP4;
    ++n_;
  }
  void add(std::string_view s);
  uint64_t finish() const;

 private:
  static constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                            kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;
  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t round(uint64_t v) { return rotl(v * kP2, 31) * kP1; }
  uint64_t h_;
  uint64_t n_ = 0;
};

}  // namespace kgen::ir
