// Helpers shared by the passes in this folder (private to ir/passes).
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <vector>

#include "ir/ir.h"
#include "ir/semantics.h"

namespace kgen::ir::pass {

// The value a Const's immediate denotes in C++ type T, as the interpreter
// materialises it: floats convert the double with one rounding (sem_cast),
// ints hold their value in `i` (u64 its bit pattern), bool is i != 0.
template <class T>
T imm_value(const Imm& v) {
  if constexpr (FloatLike<T>) return sem_cast<T>(v.f);
  else if constexpr (std::same_as<T, bool>) return v.i != 0;
  else return T(v.i);
}

// The immediate denoting x; exact (every kgen scalar fits a double or int64).
// The unused field mirrors Builder::const_int / const_float.
template <class T>
Imm make_imm(T x) {
  if constexpr (FloatLike<T>) {
    double d = sem_cast<double>(x);
    return Imm{(std::isfinite(d) && std::fabs(d) < 9.2e18) ? int64_t(d) : 0, d};
  } else if constexpr (std::same_as<T, bool>) {
    return Imm{x ? 1 : 0, x ? 1.0 : 0.0};
  } else {
    return Imm{int64_t(x), double(int64_t(x))};
  }
}

// The immediate's meaningful bits for a constant of type t (see hash.h).
inline uint64_t imm_key(Type t, const Imm& v) {
  return t.is_float() ? std::bit_cast<uint64_t>(v.f) : uint64_t(v.i);
}

// Value substitution for forward rewriting: uses are visited after their
// definitions, so rewriting each instruction's operands as it is reached
// replaces every use.
class Substitution {
 public:
  explicit Substitution(size_t n) : to_(n) {
    for (size_t i = 0; i < n; ++i) to_[i] = ValueId(i);
  }
  void replace(ValueId from, ValueId with) {
    if (from < to_.size()) to_[from] = (*this)(with);
  }
  ValueId operator()(ValueId v) const {
    while (v < to_.size() && to_[v] != v) v = to_[v];
    return v;
  }
  void apply(Instr& in) const {
    for (ValueId& a : in.args) a = (*this)(a);
  }

 private:
  std::vector<ValueId> to_;
};

// Definitions by value id; pointers stay valid while no block is resized.
class Defs {
 public:
  explicit Defs(Kernel& k) : defs_(k.num_values, nullptr) {
    walk_mut(k.body, [&](Instr& in) {
      if (in.has_result()) {
        if (in.id >= defs_.size()) defs_.resize(size_t(in.id) + 1, nullptr);
        defs_[in.id] = &in;
      }
    });
  }
  Instr* operator[](ValueId v) const { return v < defs_.size() ? defs_[v] : nullptr; }
  const Instr* constant(ValueId v) const {
    Instr* d = (*this)[v];
    return d && d->op == Op::Const ? d : nullptr;
  }
  size_t size() const { return defs_.size(); }

 private:
  std::vector<Instr*> defs_;
};

// Turns `in` into a constant of its own type, keeping its id and location.
inline void make_const(Instr& in, const Imm& v) {
  in.op = Op::Const;
  in.args.clear();
  in.attr = 0;
  in.imm = v;
  in.blocks.clear();
}

// Removes the instructions with a result id marked in `dead`, everywhere.
inline bool remove_values(Block& b, const std::vector<bool>& dead) {
  bool changed = false;
  auto gone = [&](const Instr& in) { return in.has_result() && in.id < dead.size() && dead[in.id]; };
  size_t before = b.instrs.size();
  std::erase_if(b.instrs, gone);
  changed |= b.instrs.size() != before;
  for (Instr& in : b.instrs)
    for (Block& nb : in.blocks) changed |= remove_values(nb, dead);
  return changed;
}

inline size_t value_capacity(const Kernel& k) {
  size_t n = k.num_values;
  walk(k.body, [&](const Instr& in) {
    if (in.has_result()) n = std::max<size_t>(n, size_t(in.id) + 1);
  });
  return n;
}

}  // namespace kgen::ir::pass
