#include "ir/byte_bound.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace kgen::ir {

namespace {

constexpr int kUnknown = 255;
constexpr int kMaxDepth = 12;  // operand chains of codes are short; deeper means unknown

int max_byte_of(uint64_t bits, int bytes) {
  int m = 0;
  for (int i = 0; i < bytes; ++i) m = std::max(m, int((bits >> (8 * i)) & 0xff));
  return m;
}

// The smallest all-ones value covering b (the bound of an or/xor of bytes <= b).
int ones_cover(int b) {
  int m = 0;
  while (m < b) m = m * 2 + 1;
  return m;
}

// The lanes of a constant operand (Const, splat of one, or a line built of them).
std::optional<std::vector<int64_t>> const_lanes(const ValueIndex& index, ValueId v) {
  const Instr* d = index.def(v);
  if (!d) return std::nullopt;
  if (d->op == Op::Const) return std::vector<int64_t>(size_t(d->type.lanes), d->imm.i);
  if (d->op == Op::Splat) {
    auto s = const_lanes(index, d->args[0]);
    if (!s) return std::nullopt;
    return std::vector<int64_t>(size_t(d->type.lanes), (*s)[0]);
  }
  if (d->op == Op::Construct) {
    std::vector<int64_t> out;
    for (ValueId a : d->args) {
      auto s = const_lanes(index, a);
      if (!s) return std::nullopt;
      out.insert(out.end(), s->begin(), s->end());
    }
    return out;
  }
  return std::nullopt;
}

int bound(const ValueIndex& index, ValueId v, int depth) {
  const Instr* d = index.def(v);
  if (!d || depth > kMaxDepth || !(d->type.is_int() || d->type.is_bool())) return kUnknown;
  const int elem_bytes = d->type.scalar_bytes();
  auto arg = [&](size_t i) { return bound(index, d->args[i], depth + 1); };
  switch (d->op) {
    case Op::Const: return max_byte_of(uint64_t(d->imm.i), elem_bytes);
    case Op::Splat:
    case Op::Extract:
    case Op::Bitcast: return arg(0);  // the same bytes, moved or relabelled
    case Op::Construct: {
      int m = 0;
      for (size_t i = 0; i < d->args.size(); ++i) m = std::max(m, arg(i));
      return m;
    }
    case Op::And: return std::min(arg(0), arg(1));
    case Op::Or:
    case Op::Xor: return ones_cover(std::max(arg(0), arg(1)));
    case Op::Shr:
    case Op::Shl: {
      // Byte elements only (wider ones move bits across bytes); unsigned
      // shifts right, and left shifts whose result stays within the byte.
      if (elem_bytes != 1) return kUnknown;
      auto k = const_lanes(index, d->args[1]);
      if (!k) return kUnknown;
      int64_t kmin = 7, kmax = 0;
      for (int64_t s : *k) kmin = std::min(kmin, s & 7), kmax = std::max(kmax, s & 7);
      int b = arg(0);
      if (d->op == Op::Shr) return d->type.is_signed() && b > 127 ? kUnknown : b >> kmin;  // sign bit clear: zeros fill
      return std::min(kUnknown, b << kmax);
    }
    default: return kUnknown;
  }
}

bool never_min(const ValueIndex& index, ValueId v, int depth) {
  const Instr* d = index.def(v);
  if (!d || depth > kMaxDepth || !d->type.is_int()) return false;
  if (bound(index, v, depth) < 128) return true;
  auto arg = [&](size_t i) { return never_min(index, d->args[i], depth + 1); };
  switch (d->op) {
    case Op::Const: {
      for (int i = 0; i < d->type.scalar_bytes(); ++i)
        if (((uint64_t(d->imm.i) >> (8 * i)) & 0xff) == 0x80) return false;
      return true;
    }
    case Op::Splat:
    case Op::Extract:
    case Op::Bitcast: return arg(0);
    case Op::Construct:
      for (size_t i = 0; i < d->args.size(); ++i)
        if (!arg(i)) return false;
      return true;
    case Op::Max: {
      // Signed byte lanes: max(x, c) >= c > -128 whatever x is.
      if (d->type.scalar_bytes() != 1 || !d->type.is_signed()) return false;
      for (size_t i = 0; i < 2; ++i) {
        auto k = const_lanes(index, d->args[i]);
        if (!k) continue;
        bool all = true;
        for (int64_t c : *k) all = all && int8_t(c) > -128;
        if (all) return true;
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace

int byte_bound(const ValueIndex& index, ValueId v) { return bound(index, v, 0); }

bool bytes_never_min(const ValueIndex& index, ValueId v) { return never_min(index, v, 0); }

}  // namespace kgen::ir
