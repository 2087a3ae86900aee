// IR-to-IR passes and the manager that sequences them.
//
// Every pass takes a verified kernel and leaves a verified kernel; it returns
// true when it changed something, so pipelines can iterate to a fixed point.
// Passes may leave gaps in the value numbering; PassManager::run closes them
// with renumber() at the end.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace kgen::ir {

// Folds operations whose operands are all constants into constants, computing
// with the scalar semantics of ir/semantics.h (bit-identical to the
// interpreter): unary, binary, compare, fma, cast, bitcast (same lane count),
// splat, construct (equal lanes), extract, insert (equal lanes), reductions.
// Constants of vector type hold one value for every lane, so lines of equal
// lanes fold too. Integer division or remainder by zero is left for run time.
bool fold_constants(Kernel& k);

// Algebraic identities that hold bit-exactly for the type at hand: x+0, x-0,
// x*1, x/1, shifts by 0, x&~0, x|0, x^0, min/max(x,x), neg(neg x), not(not x),
// cast/bitcast to the same type, select on a constant or between equal values;
// for integers only also x*0, x-x, x^x, x==x (floats: NaN, -0.0, inf).
// Constants move to the right of commutative ops (lt/gt/le/ge flip), and an if
// on a constant condition is replaced by the block it takes.
bool simplify(Kernel& k);

// Common subexpression elimination of pure ops (not has_side_effects, not
// reads_state): equal op, type, attribute, immediate and operands. A value
// replaces a later one only when its block encloses the later one's.
bool cse(Kernel& k);

// Dead code elimination: unused pure results (integer div/rem only with a
// known nonzero divisor, they may trap), variables never read together with
// their stores, ifs with two empty blocks, code after break/continue/return in
// the same block. Loops stay.
bool dce(Kernel& k);

// Renumbers values densely in definition order (the order the printer and the
// parser use) and sets num_values.
void renumber(Kernel& k);

using PassFn = std::function<bool(Kernel&)>;

class PassManager {
 public:
  // Picks up KGEN_DEBUG >= 3 (dump after every pass) and KGEN_DUMP_AFTER
  // (comma-separated pass names, or "all").
  PassManager();

  PassManager& add(std::string name, PassFn fn);
  // Adds a registered pass by name (see pass_names()); throws
  // std::invalid_argument for an unknown name.
  PassManager& add(std::string_view registered_name);

  // Runs the passes in order, repeating the whole sequence while some pass
  // reports a change, at most max_iterations times. Verifies after each pass
  // when verify_each (an Error then names the pass). Returns true when the
  // kernel changed; then its values are renumbered densely.
  bool run(Kernel& k) const;

  std::vector<std::string> names() const;

  int max_iterations = 1;
  // Re-verify after every pass: on by default in builds without NDEBUG and
  // when KGEN_DEBUG >= 1.
  bool verify_each;
  // Pass names after which to dump the IR, or "all".
  std::set<std::string, std::less<>> dump_after;
  // Where dumps go; by default stderr via debug_log as "[kgen:ir] after <pass>".
  std::function<void(std::string_view pass, const Kernel&)> dump;

 private:
  struct Entry {
    std::string name;
    PassFn fn;
  };
  std::vector<Entry> passes_;
};

// fold, simplify, cse, dce, iterated to a fixed point (at most 8 rounds).
PassManager default_pipeline();

// Registered passes: "fold", "simplify", "cse", "dce", "renumber".
std::vector<std::string> pass_names();
// Runs one registered pass (throws std::invalid_argument for an unknown name).
// Returns whether it changed the kernel.
bool run_pass(Kernel& k, std::string_view name);

}  // namespace kgen::ir
