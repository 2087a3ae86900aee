// Builds IR into a Kernel. emit() is the single choke point every instruction
// goes through (DSL, text parser, tests): it infers and checks the type with
// the shared rules in typing.h, assigns the value id and appends the
// instruction at the insertion point. Errors carry `loc`.
#pragma once
#include <cmath>
#include <vector>

#include "ir/ir.h"
#include "ir/typing.h"

namespace kgen::ir {

class Builder {
 public:
  explicit Builder(Kernel& k);

  Kernel& kernel() { return k_; }
  SourceLoc loc;  // attached to every emitted instruction

  // Appends `in` (op, args, attr, imm, type hint for Const/Cast/...; blocks
  // are created empty) and returns its result id or kNoValue.
  ValueId emit(Instr in);
  ValueInfo info(ValueId v) const;
  Type type_of(ValueId v) const { return info(v).type; }

  // Convenience factories.
  ValueId constant(Type t, Imm v);
  ValueId const_int(Type t, int64_t v) { return constant(t, Imm{v, double(v)}); }
  ValueId const_float(Type t, double v) {
    // int64_t(v) is undefined for NaN, inf and out-of-range values.
    return constant(t, Imm{std::isfinite(v) && std::fabs(v) < 9.2e18 ? int64_t(v) : 0, v});
  }
  ValueId op(Op op, std::vector<ValueId> args, int64_t attr = 0, Type type = {});
  ValueId param(int index) { return op(Op::Param, {}, index); }
  ValueId buffer(int index) { return op(Op::Buffer, {}, index); }
  ValueId shared(Type elem, int64_t count) { return op(Op::SharedAlloc, {}, count, elem.pointer_to(AddrSpace::Shared)); }
  ValueId builtin(Op b, int axis = 0) { return op(b, {}, axis); }
  ValueId cast(Type t, ValueId v) { return op(Op::Cast, {v}, 0, t); }
  ValueId load(ValueId p, ValueId i) { return op(Op::Load, {p, i}); }
  void store(ValueId p, ValueId i, ValueId v, StoreHint hint = kStorePlain) { op(Op::Store, {p, i, v}, hint); }
  ValueId var(ValueId init) { return op(Op::Var, {init}); }
  ValueId var_load(ValueId var) { return op(Op::VarLoad, {var}); }
  void var_store(ValueId var, ValueId v) { op(Op::VarStore, {var, v}); }
  void barrier() { op(Op::Barrier, {}); }

  // Structured control flow. The body blocks become the insertion point until
  // the matching end_*; blocks must be closed in order.
  ValueId begin_for(ValueId start, ValueId end, ValueId step, int unroll = 0);
  void end_for();
  void begin_if(ValueId cond);
  void begin_else();  // optional, between begin_if and end_if
  void end_if();
  void begin_loop();
  void end_loop();
  void break_() { op(Op::Break, {}); }
  void continue_() { op(Op::Continue, {}); }
  void return_() { op(Op::Return, {}); }

  int depth() const { return int(stack_.size()); }
  int loop_depth() const;

 private:
  struct Frame {
    Block* block;
    Op owner;         // op of the instruction owning the block (Const = kernel body)
    Instr* owner_in;  // owning instruction (stable while we are nested in it)
    int size_at_entry;
  };
  Instr& append(Instr in);
  void pop(Op expected, const char* what);

  Kernel& k_;
  std::vector<Frame> stack_;
  std::vector<ValueInfo> values_;
  std::vector<uint32_t> scope_depth_;  // per value: nesting depth where defined
  std::vector<std::vector<ValueId>> scopes_;
};

}  // namespace kgen::ir
