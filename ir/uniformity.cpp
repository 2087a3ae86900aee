// Workgroup uniformity as a monotone fixed point. Every fact only moves from
// "uniform" to "varying" (values, variable contents, loops with a varying
// exit), so repeating the sweep until nothing changes terminates, and the
// facts from one sweep are safe inputs to the next: a later store or break can
// only make earlier code more divergent, never less.
#include <algorithm>
#include <functional>
#include <unordered_set>

#include "ir/uniformity.h"

namespace kgen::ir {

bool Uniformity::is_divergent(const Instr* in) const {
  return std::binary_search(divergent_instrs.begin(), divergent_instrs.end(), in, std::less<const Instr*>());
}

namespace {

class Analysis {
 public:
  explicit Analysis(const Kernel& k) : k_(k) {
    size_t n = k.num_values;
    walk(k.body, [&](const Instr& in) {
      if (in.has_result()) n = std::max<size_t>(n, size_t(in.id) + 1);
    });
    varying_.assign(n, false);
    var_varying_.assign(n, false);
  }

  Uniformity run() {
    do {
      changed_ = false;
      divergent_.clear();
      after_divergent_return_ = false;
      block(k_.body, false);
    } while (changed_);

    Uniformity u;
    u.uniform_value.assign(varying_.size(), false);
    walk(k_.body, [&](const Instr& in) {
      if (in.has_result()) u.uniform_value[in.id] = !varying_[in.id];
    });
    std::sort(divergent_.begin(), divergent_.end(), std::less<const Instr*>());
    u.divergent_instrs = std::move(divergent_);
    return u;
  }

 private:
  bool vary(ValueId v) const { return v >= varying_.size() || varying_[v]; }
  bool any_varying(const Instr& in) const {
    return std::any_of(in.args.begin(), in.args.end(), [&](ValueId v) { return vary(v); });
  }
  void mark(std::vector<bool>& facts, ValueId v, bool is_varying) {
    if (is_varying && v < facts.size() && !facts[v]) {
      facts[v] = true;
      changed_ = true;
    }
  }
  void mark_exit(const Instr* loop) {
    if (exits_.insert(loop).second) changed_ = true;
  }

  void block(const Block& b, bool divergent) {
    for (const Instr& in : b.instrs) {
      // Work-items that took a divergent return are gone for everything after it.
      bool d = divergent || after_divergent_return_;
      if (d) divergent_.push_back(&in);
      instr(in, d);
    }
  }

  void body(const Instr& loop, bool divergent) {
    loops_.push_back(&loop);
    // A loop some work-items leave early runs divergently on later iterations,
    // and after the exit point on this one: treat the whole body as divergent.
    block(loop.blocks[0], divergent || exits_.count(&loop));
    loops_.pop_back();
  }

  void instr(const Instr& in, bool d) {
    switch (op_class(in.op)) {
      case OpClass::Leaf: return;  // constants, parameters, buffers, shared arrays
      case OpClass::Builtin:
        mark(varying_, in.id, in.op == Op::GlobalId || in.op == Op::LocalId || in.op == Op::SubgroupLane);
        return;
      case OpClass::Atomic:
      case OpClass::Subgroup:
      case OpClass::SubgroupReduce: mark(varying_, in.id, true); return;
      case OpClass::Local:
        if (in.op == Op::Var) {
          mark(var_varying_, in.id, d || any_varying(in));
          mark(varying_, in.id, var_varying_[in.id]);
        } else if (in.op == Op::VarLoad) {
          ValueId var = in.args[0];
          mark(varying_, in.id, d || var >= var_varying_.size() || var_varying_[var]);
        } else if (in.args.size() == 2) {  // VarStore
          ValueId var = in.args[0];
          if (d || vary(in.args[1])) {
            mark(var_varying_, var, true);
            mark(varying_, var, true);
          }
        }
        return;
      case OpClass::Control: control(in, d); return;
      default:
        // Pure ops, loads, stores, barriers: varying with any varying operand,
        // and under divergent control (see uniformity.h: "under uniform control").
        if (in.has_result()) mark(varying_, in.id, d || any_varying(in));
        return;
    }
  }

  void control(const Instr& in, bool d) {
    switch (in.op) {
      case Op::If: {
        bool div = d || any_varying(in);
        for (const Block& b : in.blocks) block(b, div);
        return;
      }
      case Op::For: {
        bool bounds = any_varying(in);
        mark(varying_, in.id, d || bounds);
        if (!in.blocks.empty()) body(in, d || bounds);
        return;
      }
      case Op::Loop:
        if (!in.blocks.empty()) body(in, d);
        return;
      case Op::Break:
      case Op::Continue:
        if (d && !loops_.empty()) mark_exit(loops_.back());
        return;
      case Op::Return:
        if (d) {
          for (const Instr* l : loops_) mark_exit(l);
          after_divergent_return_ = true;
        }
        return;
      default: return;
    }
  }

  const Kernel& k_;
  std::vector<bool> varying_;      // per value id
  std::vector<bool> var_varying_;  // per Var id: some work-items may hold a different value
  std::unordered_set<const Instr*> exits_;  // loops with a work-item-dependent exit
  std::vector<const Instr*> loops_;         // enclosing loops during a sweep
  std::vector<const Instr*> divergent_;
  bool after_divergent_return_ = false;
  bool changed_ = false;
};

}  // namespace

Uniformity analyze_uniformity(const Kernel& k) { return Analysis(k).run(); }

}  // namespace kgen::ir
