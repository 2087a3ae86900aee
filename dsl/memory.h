// Memory the kernel can name: buffers and shared arrays (Array), their
// elements (ElemRef) and mutable locals (Var).
#pragma once
#include <cstdint>
#include <source_location>

#include "dsl/value.h"

namespace kgen::dsl {

// A reference to one element, `arr[i]`. Like a C++ reference it does not read
// anything by itself: assigning to it records a store, using it as a value
// records a load at that use. So `auto e = x[i]` names the element (each read
// loads again); `Value v = x[i]` loads once.
class ElemRef {
 public:
  ElemRef(Value ptr, Value index, ir::SourceLoc loc) : ptr_(ptr), index_(index), loc_(loc) {}
  ElemRef(const ElemRef&) = default;

  ElemRef& operator=(const Operand& v);
  ElemRef& operator=(const ElemRef& other);  // y[i] = x[i]: load other, store here
  ElemRef& operator+=(const Operand& v);
  ElemRef& operator-=(const Operand& v);
  ElemRef& operator*=(const Operand& v);
  ElemRef& operator/=(const Operand& v);
  ElemRef& operator%=(const Operand& v);
  ElemRef& operator&=(const Operand& v);
  ElemRef& operator|=(const Operand& v);
  ElemRef& operator^=(const Operand& v);
  ElemRef& operator<<=(const Operand& v);
  ElemRef& operator>>=(const Operand& v);

  // A streaming store, `y[i].stream(v)`: means exactly `y[i] = v`, and hints
  // that the value is not read again soon, so a CPU writes it around the
  // caches (a non-temporal store: no read for ownership of the output line).
  // For large write-once outputs of global buffers; GPU targets ignore it.
  // On the CPU only lines of 16, 32 or 64 bytes stream (aligned by buffer
  // layout); scalars are stored plainly.
  void stream(const Operand& v);

  // `x[i].prefetch()`: hints that x[i] is read soon (a CPU cache prefetch;
  // GPU targets drop it). Means nothing and never faults: i may be past the end.
  // `prefetch_l2()`: read a long way ahead, so into the second level only.
  void prefetch(std::source_location loc = std::source_location::current()) const;
  void prefetch_l2(std::source_location loc = std::source_location::current()) const;
  // `prefetch_write()`: x[i] is written soon (fetch the line for ownership).
  void prefetch_write(std::source_location loc = std::source_location::current()) const;

  Value load(std::source_location loc = std::source_location::current()) const;
  operator Value() const { return load_at(loc_); }  // at the indexing site

  const Value& pointer() const { return ptr_; }
  const Value& index() const { return index_; }
  ir::SourceLoc loc() const { return loc_; }
  Value load_at(ir::SourceLoc loc) const;

 private:
  void store_at(ir::SourceLoc loc, const Operand& v, ir::StoreHint hint = ir::kStorePlain);
  void prefetch_at(ir::SourceLoc loc, int64_t hint) const;
  ElemRef& update(ir::Op op, const Operand& v);

  Value ptr_, index_;
  ir::SourceLoc loc_;  // where `arr[i]` was written
};

// A buffer parameter or a shared array: a pointer to elements of elem_type()
// (which may be a vector line). Indices are scalar integers of any type.
class Array {
 public:
  Array() = default;
  explicit Array(Value ptr) : ptr_(ptr) {}

  ElemRef operator[](const Operand& index) const;
  ir::Type elem_type() const { return ptr_.type().element(); }
  const Value& pointer() const { return ptr_; }

 private:
  Value ptr_;
};

// Lines at any element offset of a buffer of scalars (rows of a tensor,
// GGML blocks): load_line reads a[at .. at + lanes - 1] as one line,
// store_line writes v's lanes there. Element accesses that clang merges into
// one vector load or store. `at` is widened to u64 first: u32 sums may wrap
// (-fwrapv), and clang could then not prove the addresses consecutive (it
// would gather).
// stream: the stores carry the streaming hint (ElemRef::stream); a CPU
// writes the line around the caches where `at` lands on a line-aligned
// address at run time, else plainly.
// Errors about the accesses (a target without 64-bit integers, say) point at
// the caller's line, not at this helper.
Value load_line(const Array& a, const Value& at, int lanes = 16, std::source_location loc = std::source_location::current());
void store_line(const Array& a, const Value& at, const Value& v, bool stream = false,
                std::source_location loc = std::source_location::current());

// tile_mma_bf16 (ir/ops.h): the block C[ci + i·ldc + j], i < m, j < n (each
// 1..32), becomes (accumulate ? itself : 0) + Σ_{p < kp} A pair (i, p) ·
// B[bi + p·ldb + j]: A holds bf16 (element ai + i·lda + 2p and the next), B
// u32 words of bf16 pairs, C f32. A CPU statement for targets with a matrix
// engine (TargetCaps::matrix_tiles); indices are widened to u64, sizes and
// strides are u32.
struct TileOperand {
  Array buf;
  Value at;
};
void tile_mma_bf16(const TileOperand& c, const TileOperand& a, const TileOperand& b, const Value& m, const Value& n,
                   const Value& kp, const Value& ldc, const Value& lda, const Value& ldb, bool accumulate,
                   std::source_location loc = std::source_location::current());

// A mutable local variable (one per work-item). Copying a Var copies the
// handle (both name the same variable); assigning to it records a store.
class Var {
 public:
  explicit Var(Value var) : var_(var) {}
  Var(const Var&) = default;
  // `a = b` between two Vars would otherwise silently rebind the handle, and
  // a copy-assignment operator cannot receive the caller's location, so it is
  // not available: write `a = b.get()`.
  Var& operator=(const Var&) = delete;
  Var& operator=(const Operand& v);
  Var& operator+=(const Operand& v);
  Var& operator-=(const Operand& v);
  Var& operator*=(const Operand& v);
  Var& operator/=(const Operand& v);
  Var& operator%=(const Operand& v);
  Var& operator&=(const Operand& v);
  Var& operator|=(const Operand& v);
  Var& operator^=(const Operand& v);
  Var& operator<<=(const Operand& v);
  Var& operator>>=(const Operand& v);

  // The current value (a VarLoad).
  Value get(std::source_location loc = std::source_location::current()) const;
  ir::Type type() const { return var_.type(); }
  const Value& handle() const { return var_; }

 private:
  Var& update(ir::Op op, const Operand& v);
  Value var_;
};

// A variable initialised to `init` (a literal gets its natural type:
// var(0.0f) is f32, var(0) is i32).
Var var(const Operand& init);
// A variable of type `t`; `init` must convert to `t` (var(f16, 0)).
Var var(ir::Type t, const Operand& init);

// A workgroup-shared array of `count` elements. Only at the top level of the
// kernel body (not inside control flow), so every work-item declares it.
Array shared_array(ir::Type elem, int64_t count, std::source_location loc = std::source_location::current());

}  // namespace kgen::dsl
