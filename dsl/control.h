// Structured control flow. Bodies are C++ lambdas run once, while recording,
// into the corresponding IR block; C++ `if`/`for` around DSL calls are
// compile-time metaprogramming (they choose what gets recorded).
//
//   for_range(0, n, [&](Value i) { ... });            // i = start; i < end; i += step
//   if_(i < n, [&] { ... }).else_if_([&] { return i < m; }, [&] { ... }).else_([&] { ... });
//   while_([&] { return j < n; }, [&] { ... });       // Loop { if (!cond) break; body }
//   loop_([&] { ...; if_(done, [&] { break_(); }); });
//
// Values defined inside a body are visible only there; carry results out in
// a var() (using them outside is an error at the use).
#pragma once
#include <concepts>
#include <cstdint>
#include <source_location>
#include <type_traits>

#include "dsl/value.h"

namespace kgen::dsl {

namespace detail {
Value begin_for(const Operand& start, const Operand& end, const Operand& step, int unroll, ir::SourceLoc loc);
void end_for(ir::SourceLoc loc);
void begin_if(const Operand& cond, ir::SourceLoc loc);
void begin_loop(ir::SourceLoc loc);
void end_loop(ir::SourceLoc loc);
void break_unless(const Value& cond, ir::SourceLoc loc);  // if (!cond) break
void close_body(ir::SourceLoc loc);                        // settle a trailing if_ chain
uint64_t open_chain(ir::SourceLoc loc, int open_ifs);
int take_chain(uint64_t chain, const char* what, ir::SourceLoc loc);  // returns its open ifs
void else_branch(ir::SourceLoc loc);                                 // switch innermost if to else
void end_ifs(int n, ir::SourceLoc loc);

template <class F>
void call_body(F& f, const Value& i) {
  if constexpr (std::is_invocable_v<F&, Value>)
    f(i);
  else
    f();
}
}  // namespace detail

// for (i = start; i < end; i += step) body(i). The bounds share one integer
// type: a literal bound takes the other's (for_range(0, n) with n: u32 counts
// in u32); all-literal bounds use the literals' natural type (i32 for plain
// ints). `unroll` is a hint to code generators (0: their choice).
template <class F>
void for_range(const Operand& start, const Operand& end, F&& body, const Operand& step = Operand(1, ir::SourceLoc{}),
               int unroll = 0, std::source_location loc = std::source_location::current()) {
  ir::SourceLoc l = to_loc(loc);
  Value i = detail::begin_for(start, end, step, unroll, l);
  detail::call_body(body, i);
  detail::end_for(l);
}

// The result of if_: chain else_if_/else_ onto it directly, in the same
// statement (`auto c = if_(...)` and a later `c.else_()` is an error, since
// anything recorded in between closes the if).
class IfChain {
 public:
  template <class F>
  void else_(F&& body, std::source_location loc = std::source_location::current()) && {
    ir::SourceLoc l = to_loc(loc);
    int open = detail::take_chain(chain_, "else_", l);
    detail::else_branch(l);
    body();
    detail::close_body(l);
    detail::end_ifs(open, l);
  }
  // The condition is a callable returning it, recorded inside the else
  // branch: it may only be evaluated when the earlier conditions are false
  // (e.g. a load guarded by them).
  template <class C, class F>
  IfChain else_if_(C&& cond, F&& body, std::source_location loc = std::source_location::current()) && {
    ir::SourceLoc l = to_loc(loc);
    int open = detail::take_chain(chain_, "else_if_", l);
    detail::else_branch(l);
    detail::begin_if(Operand(Value(cond()), l), l);
    body();
    detail::close_body(l);
    return IfChain(detail::open_chain(l, open + 1));
  }

  explicit IfChain(uint64_t chain) : chain_(chain) {}
  IfChain(const IfChain&) = delete;
  IfChain& operator=(const IfChain&) = delete;

 private:
  uint64_t chain_;
};

// Records `if (cond) body`. The IR if stays open until the next thing is
// recorded, so an else_/else_if_ chained directly onto the result joins it.
template <class F>
IfChain if_(const Operand& cond, F&& body, std::source_location loc = std::source_location::current()) {
  ir::SourceLoc l = to_loc(loc);
  detail::begin_if(cond, l);
  body();
  detail::close_body(l);
  return IfChain(detail::open_chain(l, 1));
}

// while (cond()) body(), lowered as loop { if (!cond()) break; body(); }.
// `cond` is recorded inside the loop, so it is re-evaluated every iteration.
template <class C, class F>
void while_(C&& cond, F&& body, std::source_location loc = std::source_location::current()) {
  ir::SourceLoc l = to_loc(loc);
  detail::begin_loop(l);
  Value c = cond();
  detail::break_unless(c, l);
  body();
  detail::end_loop(l);
}

// loop { body } until break_() / return_().
template <class F>
void loop_(F&& body, std::source_location loc = std::source_location::current()) {
  ir::SourceLoc l = to_loc(loc);
  detail::begin_loop(l);
  body();
  detail::end_loop(l);
}

void break_(std::source_location loc = std::source_location::current());
void continue_(std::source_location loc = std::source_location::current());
// Ends this work-item's execution of the kernel.
void return_(std::source_location loc = std::source_location::current());

}  // namespace kgen::dsl
