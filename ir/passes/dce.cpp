// Dead code elimination by one backward sweep per round: in program order
// every use follows its definition, so walking blocks backwards (nested
// blocks before the instruction that owns them) sees all uses of a value
// before reaching its definition, and whole dead chains go in one sweep.
// Rounds repeat only for variables whose last load was just removed.
#include "ir/passes.h"
#include "ir/passes/pass_util.h"

namespace kgen::ir {

namespace {

class Dce {
 public:
  explicit Dce(Kernel& k) : k_(k), n_(pass::value_capacity(k)) {}

  bool run() {
    bool changed = false;
    while (round()) changed = true;
    return changed;
  }

 private:
  bool round() {
    live_.assign(n_, false);
    loaded_.assign(n_, false);
    nonzero_.assign(n_, false);
    walk(k_.body, [&](const Instr& in) {
      if (in.op == Op::VarLoad) loaded_[in.args[0]] = true;
      if (in.op == Op::Const && in.imm.i != 0) nonzero_[in.id] = true;
    });
    return sweep(k_.body);
  }

  // Integer division traps on a zero divisor; removing it would hide that.
  bool may_trap(const Instr& in) const {
    return (in.op == Op::Div || in.op == Op::Rem) && in.type.is_int() && !nonzero_[in.args[1]];
  }

  bool removable(const Instr& in) const {
    switch (in.op) {
      case Op::Var: return !loaded_[in.id];
      case Op::VarStore: return !loaded_[in.args[0]];
      case Op::If: return in.blocks[0].instrs.empty() && in.blocks[1].instrs.empty();
      default: return in.has_result() && !live_[in.id] && !has_side_effects(in.op) && !may_trap(in);
    }
  }

  bool sweep(Block& b) {
    bool changed = false;
    // Nothing after a break, continue or return in the same block executes.
    for (size_t i = 0; i < b.instrs.size(); ++i) {
      Op op = b.instrs[i].op;
      if ((op == Op::Break || op == Op::Continue || op == Op::Return) && i + 1 < b.instrs.size()) {
        b.instrs.resize(i + 1);
        changed = true;
        break;
      }
    }
    std::vector<bool> keep(b.instrs.size(), true);
    for (size_t i = b.instrs.size(); i-- > 0;) {
      Instr& in = b.instrs[i];
      for (size_t j = in.blocks.size(); j-- > 0;) changed |= sweep(in.blocks[j]);
      if (removable(in)) {
        keep[i] = false;
        changed = true;
      } else {
        for (ValueId a : in.args) live_[a] = true;
      }
    }
    size_t out = 0;
    for (size_t i = 0; i < b.instrs.size(); ++i)
      if (keep[i]) {
        if (out != i) b.instrs[out] = std::move(b.instrs[i]);
        ++out;
      }
    b.instrs.resize(out);
    return changed;
  }

  Kernel& k_;
  size_t n_;
  std::vector<bool> live_, loaded_, nonzero_;
};

}  // namespace

bool dce(Kernel& k) { return Dce(k).run(); }

}  // namespace kgen::ir
