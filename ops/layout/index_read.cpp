#include "ops/layout/index_read.h"

#include <cstring>
#include <stdexcept>

namespace kgen::ops::index_read {

using namespace kgen::dsl;

Value as(ir::Type t, const Value& v) { return v.type() == t ? v : cast(t, v); }

// i32 values in [-L, 0) wrap onto [0, L) when L is added; an i64 one is in
// range when its high word is 0 (then lo < L) or all ones (then lo + L
// wraps below L).
std::pair<Value, Value> position(const Array& idx, const Value& j, bool i64, const Value& L) {
  if (!i64) {
    Value w = idx[j];
    Value i = select(w < L, w, w + L);
    return {i, i < L};
  }
  Value lo = idx[j * 2u], hi = idx[j * 2u + 1u];
  Value i = select(hi == 0u, lo, lo + L);
  Value ok = (hi == 0u && lo < L) || (hi == 0xffffffffu && lo + L < L);
  return {i, ok};
}

int64_t host_position(ir::ScalarKind index_kind, const void* idx, int64_t j, int64_t L) {
  int64_t i = 0;
  if (index_kind == ir::ScalarKind::I32) {
    int32_t w;
    std::memcpy(&w, static_cast<const uint8_t*>(idx) + 4 * size_t(j), 4);
    i = w;
  } else {
    std::memcpy(&i, static_cast<const uint8_t*>(idx) + 8 * size_t(j), 8);
  }
  if (i < -L || i >= L) return -1;
  return i < 0 ? i + L : i;
}

void check_index_kind(ir::ScalarKind k, const std::string& what) {
  if (k != ir::ScalarKind::I32 && k != ir::ScalarKind::I64) throw std::invalid_argument(what + "index_kind must be I32 or I64");
}

void check_elem_bytes(int eb, const std::string& what) {
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
    throw std::invalid_argument(what + "elem_bytes must be 1, 2, 4 or 8 (got " + std::to_string(eb) + ")");
}

void check_shape(const std::vector<int64_t>& s, size_t lo, size_t hi, const std::string& what) {
  if (s.size() < lo || s.size() > hi)
    throw std::invalid_argument(what + "rank " + std::to_string(s.size()) + " (must be " + std::to_string(lo) + ".." +
                                std::to_string(hi) + ")");
  for (int64_t d : s)
    if (d < 0) throw std::invalid_argument(what + "negative size");
    else if (d >= (int64_t(1) << 31)) throw std::invalid_argument(what + "sizes must be below 2^31");
}

int word_bytes(int64_t bytes) { return bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1; }

}  // namespace kgen::ops::index_read
