// The kernel under construction. kernel() installs a KernelContext as this
// thread's current one; every DSL handle operation records into it through
// the single choke point `record`/`builder_at` below, which (like CubeCL's
// frontend `expand` functions all funnelling into one scope) is the only place
// that touches the ir::Builder. The builder in turn validates every
// instruction with the shared IR type rules and throws ir::Error carrying the
// user's source location.
#pragma once
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace kgen::dsl {

class KernelContext {
 public:
  explicit KernelContext(std::string name);
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  ir::Kernel kernel;
  ir::Builder builder{kernel};  // refers to `kernel`: the context never moves
  const uint64_t serial;        // unique per kernel() call; handles remember it

  // An if_ whose else_/else_if_ may still follow. Its blocks stay open until
  // the next recording (or the end of the enclosing block) closes them, so
  // `if_(c, f).else_(g)` can add the else branch without reopening anything.
  struct PendingIf {
    uint64_t chain = 0;  // 0: none
    int open_ifs = 0;    // If instructions to close (else_if_ nests them)
  } pending_if;
  uint64_t next_chain = 1;

  // Closes a pending if chain. Called before anything is recorded.
  void settle();
};

// This thread's kernel under construction, or nullptr.
KernelContext* current_context();

// Makes `ctx` current for its lifetime, restoring the previous one after (so a
// kernel may be built while building another, e.g. from a registry lambda).
class ContextScope {
 public:
  explicit ContextScope(KernelContext& ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  KernelContext* prev_;
};

ir::SourceLoc to_loc(const std::source_location& loc);

// The current context; throws ir::Error at `loc` when there is none ("<what>
// used outside of a kernel").
KernelContext& context_at(ir::SourceLoc loc, const char* what = "DSL operation");

// THE recording choke point: settles pending control flow, stamps `loc` on
// the builder and returns it. Everything the DSL records goes through here.
ir::Builder& builder_at(ir::SourceLoc loc, const char* what = "DSL operation");

// Records one instruction at `loc`; returns its value (kNoValue for statements).
ir::ValueId record(ir::SourceLoc loc, ir::Op op, std::vector<ir::ValueId> args = {}, int64_t attr = 0,
                   ir::Type type = {});

}  // namespace kgen::dsl
