// What the index moves (ops/layout/index_moves.h) share: reading an index
// (i32, or i64 as two u32 words, so no kernel needs 64-bit integers for
// them) as a position on an axis, on the device and on the host, and the
// words an element or row moves as.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dsl/dsl.h"
#include "ir/ir.h"

namespace kgen::ops::index_read {

// Kernel side: index j of `idx` (u32 words) as its position on an axis of
// L (u32) elements, and whether it is one (in [-L, L)).
std::pair<dsl::Value, dsl::Value> position(const dsl::Array& idx, const dsl::Value& j, bool i64, const dsl::Value& L);

// Host side: index j (i32 or i64) as a position in [0, L), or -1 outside [-L, L).
int64_t host_position(ir::ScalarKind index_kind, const void* idx, int64_t j, int64_t L);

// Throws std::invalid_argument (prefixed `what`) unless k is I32 or I64.
void check_index_kind(ir::ScalarKind k, const std::string& what);
void check_elem_bytes(int eb, const std::string& what);
// Every size >= 0 (sizes of data and indices); a rank in [lo, hi].
void check_shape(const std::vector<int64_t>& s, size_t lo, size_t hi, const std::string& what);

// The widest word (1, 2 or 4 bytes) `bytes` bytes are made of.
int word_bytes(int64_t bytes);

dsl::Value as(ir::Type t, const dsl::Value& v);

}  // namespace kgen::ops::index_read
