#include "dsl/control.h"

namespace kgen::dsl {
namespace detail {

Value begin_for(const Operand& start, const Operand& end, const Operand& step, int unroll, ir::SourceLoc loc) {
  std::vector<ir::ValueId> b = resolve_together({&start, &end});
  ir::Type t = wrap(b[0], loc).type();
  ir::ValueId s = step.is_literal() ? literal_for(t, step.literal(), step.loc().known() ? step.loc() : loc)
                                    : use(step.value(), step.loc());
  if (unroll < 0) throw ir::Error(loc, "for_range: unroll must be >= 0");
  return wrap(builder_at(loc, "for_range").begin_for(b[0], b[1], s, unroll), loc);
}

void end_for(ir::SourceLoc loc) { builder_at(loc, "for_range").end_for(); }

void begin_if(const Operand& cond, ir::SourceLoc loc) {
  ir::ValueId c = cond.is_literal() ? resolve(cond, ir::types::Bool) : resolve(cond);
  builder_at(loc, "if_").begin_if(c);
}

void begin_loop(ir::SourceLoc loc) { builder_at(loc, "loop").begin_loop(); }
void end_loop(ir::SourceLoc loc) { builder_at(loc, "loop").end_loop(); }

void break_unless(const Value& cond, ir::SourceLoc loc) {
  if (!cond.type().is_bool() || cond.type().is_vector())
    throw ir::Error(loc, "while_: the condition must return a bool, got " + cond.type().str());
  ir::ValueId nc = record(loc, ir::Op::Not, {use(cond, loc)});
  ir::Builder& b = builder_at(loc, "while_");
  b.begin_if(nc);
  b.break_();
  b.end_if();
}

void close_body(ir::SourceLoc loc) { context_at(loc).settle(); }

uint64_t open_chain(ir::SourceLoc loc, int open_ifs) {
  KernelContext& c = context_at(loc);
  c.pending_if = {c.next_chain++, open_ifs};
  return c.pending_if.chain;
}

int take_chain(uint64_t chain, const char* what, ir::SourceLoc loc) {
  KernelContext& c = context_at(loc, what);
  if (c.pending_if.chain != chain)
    throw ir::Error(loc, std::string(what) +
                             " must directly follow its if_ in the same statement (something was recorded in "
                             "between, or the chain already has an else_)");
  int n = c.pending_if.open_ifs;
  c.pending_if = {};
  return n;
}

void else_branch(ir::SourceLoc loc) {
  KernelContext& c = context_at(loc);
  c.builder.loc = loc;
  c.builder.begin_else();
}

void end_ifs(int n, ir::SourceLoc loc) {
  ir::Builder& b = builder_at(loc, "if_");
  for (int i = 0; i < n; ++i) b.end_if();
}

}  // namespace detail

void break_(std::source_location loc) { builder_at(to_loc(loc), "break_").break_(); }
void continue_(std::source_location loc) { builder_at(to_loc(loc), "continue_").continue_(); }
void return_(std::source_location loc) { builder_at(to_loc(loc), "return_").return_(); }

}  // namespace kgen::dsl
