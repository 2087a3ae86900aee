// Shared printer for C-family targets: walks the structured IR and prints one
// statement per SSA value (`T vN = ...;`), nested blocks and for/if/loop
// control flow. What differs per target comes from the Dialect; how a kernel
// maps onto the target's execution model (the kernel signature, SIMT loops on
// a CPU, builtin variables on a GPU) is the job of a subclass, through the
// virtual hooks below.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/dialect.h"
#include "ir/ir.h"

namespace kgen::codegen {

class CEmitter {
 public:
  CEmitter(const ir::Kernel& k, const Dialect& d);
  virtual ~CEmitter() = default;

 protected:
  // ---- output ----
  void line(const std::string& s);  // one indented line
  void open(const std::string& head);  // "head {" and indent
  void close(const std::string& tail = "}");
  void open_more() { ++indent_; }  // after close("} else {")
  std::string& out() { return out_; }

  // ---- names ----
  // The expression naming value v at the current point (a variable, a
  // literal for constants, an array slot for values spilled across regions).
  virtual std::string ref(ir::ValueId v) const;
  // ref(v) of a memory access's index, as the dialect subscripts take it.
  std::string index_ref(ir::ValueId v) const { return d_.index(index_.type(v), ref(v)); }
  // Left-hand side that defines the result of `in` ("f32 v3" or "v3[lid]").
  virtual std::string def_lhs(const ir::Instr& in) const;
  static std::string vname(ir::ValueId v) { return "v" + std::to_string(v); }
  std::string tname(ir::Type t) const { return d_.type_name(t); }

  // ---- statements ----
  void emit_block(const ir::Block& b);
  virtual void emit_instr(const ir::Instr& in);
  // Builtins (local id, group id...) and leaves whose spelling is target specific.
  virtual std::string builtin(const ir::Instr& in) const = 0;
  virtual std::string param(const ir::Instr& in) const = 0;
  virtual std::string buffer(const ir::Instr& in) const = 0;
  virtual void emit_return(const ir::Instr& in) = 0;
  virtual void emit_barrier(const ir::Instr& in);
  // Printed first in every loop body (For, Loop), and after a For (whose
  // exit test is one more pass through the loop): GPU emitters count
  // iterations there on drivers that cap them (TargetCaps::loop_iteration_limit).
  virtual void loop_body_entry() {}
  virtual void for_exit() {}
  // True when `in` is printed inline at each use instead of as a statement.
  virtual bool is_inline(const ir::Instr& in) const;

  // The expression computing a pure value instruction; empty if it needs
  // several statements (lane-wise fallback), which emit_value then prints.
  std::string value_expr(const ir::Instr& in) const;
  // What the operands of dot4 `in` are known to hold (Dialect::dot4).
  Dot4Form dot4_form(const ir::Instr& in) const;
  // dot4(a, b, dot4(a2, b2, c)) as one dialect expression where it is exact
  // (Dialect::dot4_pair), else empty.
  std::string dot4_pair(const ir::Instr& in) const;
  std::vector<int> permute_pattern(const ir::Instr& in) const;
  // A construct made of extracts from at most two lines of its own type, as
  // a shuffle in the dialect; else empty.
  std::string construct_shuffle(const ir::Instr& in) const;
  // Its (at most two) source lines, and the lane pattern over them; empty
  // when the construct is not such a shuffle.
  std::vector<ir::ValueId> shuffle_sources(const ir::Instr& in, std::vector<int>* pattern) const;
  void emit_value(const ir::Instr& in);
  // Math via the dialect's table, with compute-type widening and lane-wise
  // fallback. Returns "" when no vector form exists.
  std::string math_expr(ir::Op op, ir::Type operand, ir::Type result, std::vector<std::string> args) const;
  void emit_lanewise(const ir::Instr& in);

  // Runs of element accesses that make whole lines, emitted as one vector
  // access where the dialect has them (Dialect::load_line/store_line):
  // constructs of loads at consecutive indices of one buffer, with no write
  // in the block between the first load and the construct; and stores of a
  // line's lanes, in order, at consecutive indices, with only pure
  // instructions between them (the line is stored at the first).
  void find_line_accesses(const ir::Block& b);
  std::unordered_set<ir::ValueId> line_loads_;                  // Construct ids
  std::unordered_map<const ir::Instr*, ir::ValueId> line_stores_;  // first Store -> the line
  std::unordered_set<const ir::Instr*> merged_stores_;           // the run's other Stores

  // Pure values that no printed statement names (with line accesses: the
  // element loads, index adds and lane extracts a line load or store
  // replaced) are not printed: they were 85% of a depthwise kernel's lines,
  // which clang parsed and then deleted. live_: the values printed
  // statements name, from the statements with effects back.
  void find_live_values();
  // The values the statement printed for `in` names (a superset is safe).
  std::vector<ir::ValueId> printed_operands(const ir::Instr& in) const;
  static bool removable(const ir::Instr& in);
  bool prune_ = false;
  std::unordered_set<ir::ValueId> live_;

  const ir::Kernel& k_;
  const Dialect& d_;
  ir::ValueIndex index_;

 private:
  std::string out_;
  int indent_ = 0;
};

}  // namespace kgen::codegen
