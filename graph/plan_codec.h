// The plan cache's file format (graph/plan_cache.h). Layout: a 64-byte header
//   "KGENPLAN" | u64 format version | u64 payload bytes | u64 payload checksum
//   | u64 structure bytes | zero padding
// then the payload: the structure (the key text, slots, launches, kernel
// signatures, input and output slots) and, 64-byte aligned in the file, the
// bytes of the constants lowering made, so they are used in place. Every
// count, index and size is checked while decoding.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/plan_cache.h"

namespace kgen::graph {

// A plan file that cannot be used (truncated, corrupt, another format or key).
struct PlanFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A fast 64-bit hash of bytes (four xxHash64-style lanes): constants' bytes in
// plan keys and the file checksum.
uint64_t hash_bytes(const void* data, size_t n, uint64_t seed);

std::string encode_plan(const std::string& key_text, const Graph& g, const Program& p,
                        const std::vector<uint64_t>& kernel_hashes, const LowerStats& stats);

// `file` (n bytes, 64-byte aligned, kept alive by `owner`) as a plan for `g`;
// throws PlanFormatError when it is not a complete plan stored under `key_text`.
CachedPlan decode_plan(const uint8_t* file, size_t n, const std::shared_ptr<const void>& owner,
                       const std::string& key_text, const Graph& g);

}  // namespace kgen::graph
