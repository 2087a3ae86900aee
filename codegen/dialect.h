// A Dialect is the per-target part of a C-like backend (tinygrad's
// renderer/cstyle.py idea): type names, one format-table row per math op, and
// small hooks for the few constructs whose shape differs between C++, CUDA,
// GLSL and WGSL. The CEmitter owns everything else (SSA statements, blocks,
// control flow), so adding an IR math op is one table row per dialect.
#pragma once
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace kgen::codegen {

// How one op is printed, per operand shape. Formats use {0} {1} {2} for the
// operands and these placeholders:
//   {T} operand type name   {E} operand element (lane) type name
//   {R} result type name    {f} C math suffix ("f" for f32, "" for f64)
//   {B} bit width - 1 (shift masks)
// A null vector format means "scalarise lane by lane with the scalar format";
// a null scalar format means the dialect cannot express the op for that kind.
struct OpRule {
  ir::Op op;
  const char* flt = nullptr;    // scalar float (after compute_type: f32/f64)
  const char* vflt = nullptr;   // float line
  const char* int_ = nullptr;   // scalar integer
  const char* vint = nullptr;   // integer line
  const char* bool_ = nullptr;  // scalar bool
  const char* vbool = nullptr;  // bool line
};

// Indexes a dialect's rule table by op.
class OpTable {
 public:
  explicit OpTable(std::span<const OpRule> rules);
  const OpRule* find(ir::Op op) const { return index_[size_t(op)]; }

 private:
  std::array<const OpRule*, size_t(ir::Op::NumOps)> index_{};
};

// Expands a format string (see OpRule) with operands and named placeholders.
struct FormatVars {
  std::string T, E, R, f, B;
};
std::string format_op(std::string_view fmt, std::span<const std::string> args, const FormatVars& vars);
// "kg_dot4_su" for dot4 of an i32 and a u32 operand (see Dialect::dot4).
std::string dot4_helper_name(ir::Type a, ir::Type b);

// What codegen proved of a dot4's bytes (ir/byte_bound.h), for lowerings
// that are exact only then.
enum class Dot4Form {
  Exact,            // nothing known
  SmallUnsigned,    // one operand unsigned with bytes < 128, the other signed
  SignedNoMinA,     // both signed; a's bytes are never -128
  SignedNoMinB,     // both signed; b's bytes are never -128
};

class Dialect {
 public:
  virtual ~Dialect() = default;
  virtual std::string_view name() const = 0;

  // Spelling of a value type (scalar or line); never called for pointers.
  virtual std::string type_name(ir::Type t) const = 0;
  // The type math on `t` is computed in; f16/bf16 are storage-only on most
  // C targets, computed in f32 and rounded back after each op.
  virtual ir::Type compute_type(ir::Type t) const { return t; }
  virtual const OpTable& ops() const = 0;

  virtual std::string literal(ir::Type t, const ir::Imm& v) const = 0;
  // Value conversion with the IR's semantics (saturating float->int, !=0 to bool).
  virtual std::string cast(ir::Type to, ir::Type from, const std::string& x) const = 0;
  virtual std::string bitcast(ir::Type to, ir::Type from, const std::string& x) const = 0;
  virtual std::string splat(ir::Type to, const std::string& x) const = 0;
  virtual std::string construct(ir::Type to, std::span<const std::string> lanes) const = 0;
  virtual std::string extract(ir::Type vec, const std::string& x, int lane) const = 0;
  // A line of type `to` whose lane i is lane pattern[i] of the table a ++ b
  // (a and b of type `to`), or empty where the dialect has no shuffle. The
  // emitter uses it for constructs made of extracts from at most two lines.
  virtual std::string shuffle(ir::Type to, const std::string& a, const std::string& b,
                              std::span<const int> pattern) const {
    (void)to, (void)a, (void)b, (void)pattern;
    return "";
  }
  // Assignment of one lane (statement without the ';').
  virtual std::string insert_lane(const std::string& target, int lane, const std::string& x) const = 0;
  virtual std::string select(ir::Type cond, ir::Type val, const std::string& c, const std::string& a,
                             const std::string& b) const = 0;
  // Horizontal fold of a line, lane 0 first (sequential, like the interpreter).
  virtual std::string reduce(ir::Op op, ir::Type vec, const std::string& x) const = 0;
  // An element index of type t as the dialect's subscripts take it (GLSL
  // subscripts are 32-bit: a u64 index, as load_line widens them, converts).
  virtual std::string index(ir::Type t, const std::string& idx) const { (void)t; return idx; }
  virtual std::string load(ir::Type elem, const std::string& ptr, const std::string& idx) const = 0;
  // True where a buffer may be offset as a pointer (C++): a load at a u64
  // index `x + c` (c constant) is then emitted as (ptr + x)[c], so clang
  // folds c into the addressing instead of vectorising the index adds of
  // neighbouring loads (SLP), which cost an extract per load.
  virtual bool pointer_offsets() const { return false; }
  virtual std::string store(ir::Type elem, const std::string& ptr, const std::string& idx,
                            const std::string& v) const = 0;
  // Lines at any element offset of a buffer of scalars: the expression
  // loading line type `line` from ptr[idx .. idx + lanes - 1] and the
  // statement storing v there, or empty where the dialect has none. The
  // emitter uses them for runs of element accesses that add up to a whole
  // line (dsl load_line/store_line), see CEmitter::find_line_accesses.
  virtual bool has_line_access() const { return false; }
  virtual std::string load_line(ir::Type line, const std::string& ptr, const std::string& idx) const {
    (void)line, (void)ptr, (void)idx;
    return {};
  }
  virtual std::string store_line(ir::Type line, const std::string& ptr, const std::string& idx,
                                 const std::string& v) const {
    (void)line, (void)ptr, (void)idx, (void)v;
    return {};
  }
  // store_line for a run of streaming stores (dsl store_line(stream)); the
  // line may be unaligned. A dialect without streaming stores keeps this.
  virtual std::string store_line_nontemporal(ir::Type line, const std::string& ptr, const std::string& idx,
                                             const std::string& v) const {
    return store_line(line, ptr, idx, v);
  }
  // A store with the nontemporal hint (ir.h StoreHint) into a global buffer.
  // Same meaning as store(); a dialect without streaming stores keeps the default.
  virtual std::string store_nontemporal(ir::Type elem, const std::string& ptr, const std::string& idx,
                                        const std::string& v) const {
    return store(elem, ptr, idx, v);
  }
  // Statement (without ';') for a prefetch of ptr[idx] (ir.h Prefetch, its
  // PrefetchHint), or empty where the target has none (GPUs): only a hint.
  virtual std::string prefetch(const std::string& ptr, const std::string& idx, int64_t hint) const {
    (void)ptr, (void)idx, (void)hint;
    return {};
  }
  // Statement (without ';') for tile_mma_bf16 (ir/ops.h): args are its 12
  // operands as printed (buffers as pointers), acc its attr. Only targets
  // with TargetCaps::matrix_tiles have one; the default throws.
  virtual std::string tile_mma_bf16(std::span<const std::string> args, bool acc) const;
  // Atomic read-modify-write returning the old value.
  virtual std::string atomic(ir::Op op, ir::Type elem, const std::string& ptr, const std::string& idx,
                             std::span<const std::string> args) const = 0;
  // The same, knowing the address space of the array: a dialect may use a
  // cheaper form where the space makes atomicity free (the CPU runs a whole
  // workgroup on one thread, so shared-memory atomics need no lock prefix).
  virtual std::string atomic_in(ir::AddrSpace space, ir::Op op, ir::Type elem, const std::string& ptr,
                                const std::string& idx, std::span<const std::string> args) const {
    return atomic(op, elem, ptr, idx, args);
  }
  // dot4 (ir/ops.h) of operands of types a, b (i32: signed bytes, u32:
  // unsigned) and an i32 accumulator: args {a, b, c}. The default calls the
  // prelude helper kg_dot4_<s|u><s|u>(a, b, c) on scalars, which every
  // GPU dialect defines; an empty string for a line means lane by lane.
  // `form` (ir/byte_bound.h) says when a saturating u8·i8 pair multiply
  // (x86 vpmaddubsw) is exact; dialects without one ignore it.
  virtual std::string dot4(ir::Type a, ir::Type b, std::span<const std::string> args, Dot4Form form) const;
  // dot4(a, b, dot4(a2, b2, c)) as one expression, args {a, b, a2, b2, c},
  // where codegen proved both unsigned operands' bytes below 64 (the other
  // operands signed): x86 without VNNI adds the two saturating u8·i8 pair
  // sums in 16 bits (4·63·128 < 2^15) and widens them with one vpmaddwd.
  // Empty (the default): two dot4.
  virtual std::string dot4_pair(ir::Type a, ir::Type b, std::span<const std::string> args) const;
  // dot2_bf16 (ir/ops.h) of u32 operands of type a and an f32 accumulator:
  // args {a, b, c}. The default calls the prelude helper kg_dot2_bf16(a, b,
  // c) on scalars, which every GPU dialect defines; an empty string for a
  // line means lane by lane.
  virtual std::string dot2_bf16(ir::Type a, std::span<const std::string> args) const;
  // dot2_i16 (ir/ops.h) of i32 operands of type a and an i32 accumulator:
  // args {a, b, c}. The default calls the prelude helper kg_dot2_i16(a, b,
  // c) on scalars, which every GPU dialect defines; an empty string for a
  // line means lane by lane.
  virtual std::string dot2_i16(ir::Type a, std::span<const std::string> args) const;
  // permute_bytes (ir/ops.h) with tables of type `table` and a result of
  // type `result`: args {a, b, idx}. `pattern` holds the result's table
  // byte per result byte when idx is a constant (else empty). Only the C++
  // dialect implements it; check_capabilities refuses it elsewhere.
  virtual std::string permute_bytes(ir::Type table, ir::Type result, std::span<const std::string> args,
                                    std::span<const int> pattern) const;
  // Statement (without ';') for a workgroup barrier.
  virtual std::string barrier() const = 0;
  // Subgroup shuffle/broadcast (args: value, lane) and reductions (args:
  // value) on a value of type `t`. Only GPU dialects implement it; kernels
  // using subgroups are refused by check_capabilities before reaching a
  // dialect without them, so the default is an internal error.
  virtual std::string subgroup(ir::Op op, ir::Type t, std::span<const std::string> args) const;
  virtual std::string shared_decl(ir::Type elem, int64_t count, const std::string& name) const = 0;
  // False when the target has no operators on lines of type `t` (GLSL beyond
  // 4 lanes, where lines are arrays): the emitter then computes every math op
  // on them lane by lane with the scalar formats.
  virtual bool vector_ops(ir::Type t) const { return true; }
  // Lines printed before `for` for an unroll hint (empty: none).
  virtual std::string unroll_hint(int factor) const { return {}; }
  // Declarations every generated file starts with.
  virtual std::string prelude() const = 0;
};

}  // namespace kgen::codegen
