#include "ir/verifier.h"

#include <functional>
#include <memory>
#include <unordered_map>

#include "ir/printer.h"
#include "ir/typing.h"
#include "ir/uniformity.h"

namespace kgen::ir {

namespace {

std::string at(const Instr& in) { return in.loc.str(); }
std::string val(ValueId v) { return "%" + std::to_string(v); }

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k) {}

  void run() {
    signature();
    index_definitions();
    u_ = analyze_uniformity(k_);
    walk(k_.body, [&](const Instr& in) {
      if (in.op == Op::Barrier && !first_barrier_) first_barrier_ = &in;
    });
    visible_.assign(size_t(max_id_) + 1, false);
    block(k_.body);
  }

 private:
  [[noreturn]] void fail(const Instr& in, const std::string& msg) const { throw Error(in.loc, msg); }

  void signature() {
    const auto& w = k_.workgroup_size;
    bool all_zero = w[0] == 0 && w[1] == 0 && w[2] == 0;
    bool all_set = w[0] > 0 && w[1] > 0 && w[2] > 0;
    std::string ws = "(" + std::to_string(w[0]) + ", " + std::to_string(w[1]) + ", " + std::to_string(w[2]) + ")";
    if (!all_zero && !all_set)
      throw Error({}, "kernel '" + k_.name + "': workgroup size " + ws + " must be all positive or all zero (dynamic)");
    if (all_set && uint64_t(w[0]) * w[1] * w[2] > 1024)
      throw Error({}, "kernel '" + k_.name + "': workgroup size " + ws + " has more than 1024 work-items");
    for (const BufferParam& b : k_.buffers)
      if (b.elem.is_pointer() || b.elem.is_void() || !valid_lanes(b.elem.lanes))
        throw Error({}, "buffer '" + b.name + "' has invalid element type " + b.elem.str());
    for (const ScalarParam& s : k_.scalars)
      if (s.type.is_pointer() || s.type.is_void() || !valid_lanes(s.type.lanes))
        throw Error({}, "scalar parameter '" + s.name + "' has invalid type " + s.type.str());
  }

  // First pass: where every value is defined. (What only error messages
  // need, the walk order and each store's enclosing instructions, is
  // indexed on the first error: links().)
  void index_definitions() {
    defs_.assign(k_.num_values, nullptr);
    walk(k_.body, [&](const Instr& in) {
      if (!in.has_result()) return;
      if (in.id >= k_.num_values)
        fail(in, "value id " + val(in.id) + " is out of range (the kernel has " + std::to_string(k_.num_values) + " values)");
      if (defs_[in.id]) fail(in, "value " + val(in.id) + " is defined twice (first at " + at(*defs_[in.id]) + ")");
      defs_[in.id] = &in;
      max_id_ = std::max(max_id_, in.id);
    });
  }

  // For messages: each instruction's place in the walk, its enclosing
  // control instruction, and the stores that feed each variable.
  struct Links {
    std::unordered_map<const Instr*, uint32_t> order;
    std::unordered_map<ValueId, std::vector<const Instr*>> stores;  // per variable
    std::unordered_map<const Instr*, const Instr*> parent;          // enclosing control instruction
  };
  const Links& links() const {
    if (links_) return *links_;
    links_ = std::make_unique<Links>();
    uint32_t order = 0;
    std::function<void(const Block&, const Instr*)> index = [&](const Block& b, const Instr* owner) {
      for (const Instr& in : b.instrs) {
        links_->order[&in] = order++;
        if (owner) links_->parent[&in] = owner;
        if (in.op == Op::VarStore && !in.args.empty()) links_->stores[in.args[0]].push_back(&in);
        for (const Block& nb : in.blocks) index(nb, &in);
      }
    };
    index(k_.body, nullptr);
    return *links_;
  }

  const Instr* def(ValueId v) const { return v < defs_.size() ? defs_[v] : nullptr; }

  void block(const Block& b) {
    std::vector<ValueId> defined_here;
    for (const Instr& in : b.instrs) {
      instr(in);
      if (in.has_result()) {
        visible_[in.id] = true;
        defined_here.push_back(in.id);
      }
    }
    for (ValueId v : defined_here) visible_[v] = false;  // out of scope with the block
  }

  void instr(const Instr& in) {
    if (int(in.blocks.size()) != num_blocks(in.op))
      fail(in, std::string(op_name(in.op)) + " must own " + std::to_string(num_blocks(in.op)) + " block(s), has " +
                   std::to_string(in.blocks.size()));
    operands(in);
    types(in);
    placement(in);
    divergence(in);

    // The result becomes visible in the nested blocks (the for induction variable).
    if (in.has_result()) visible_[in.id] = true;
    bool loop = in.op == Op::For || in.op == Op::Loop;
    if (loop) ++loop_depth_;
    enclosing_.push_back(&in);
    for (const Block& nb : in.blocks) block(nb);
    enclosing_.pop_back();
    if (loop) --loop_depth_;
  }

  void operands(const Instr& in) {
    for (size_t i = 0; i < in.args.size(); ++i) {
      ValueId v = in.args[i];
      const Instr* d = def(v);
      if (!d) fail(in, std::string(op_name(in.op)) + ": operand " + val(v) + " is not defined anywhere");
      if (v > max_id_ || !visible_[v]) {
        if (links().order.at(d) >= links().order.at(&in))
          fail(in, std::string(op_name(in.op)) + ": operand " + val(v) + " is used before its definition at " + at(*d));
        fail(in, std::string(op_name(in.op)) + ": operand " + val(v) + " is defined at " + at(*d) +
                     " in a block that does not enclose this use");
      }
      bool var_slot = (in.op == Op::VarLoad || in.op == Op::VarStore) && i == 0;
      if (d->op == Op::Var && !var_slot)
        fail(in, std::string(op_name(in.op)) + ": variable " + val(v) + " used as a value (read it with var_load)");
    }
  }

  void types(const Instr& in) {
    Type t = infer_type(in, k_, [&](ValueId v) -> ValueInfo {
      const Instr* d = def(v);
      if (!d || v > max_id_ || !visible_[v]) return {};
      return {d->type, d->op, d->attr, true};
    });
    if (t != in.type)
      fail(in, std::string(op_name(in.op)) + ": recorded type " + in.type.str() + " but the type rules give " + t.str());
    bool want_result = !t.is_void() && in.op != Op::If && in.op != Op::Loop;
    if (want_result != in.has_result())
      fail(in, std::string(op_name(in.op)) + (want_result ? ": result has no value id" : ": statement has a value id"));
  }

  void placement(const Instr& in) {
    if ((in.op == Op::Break || in.op == Op::Continue) && loop_depth_ == 0)
      fail(in, std::string(op_name(in.op)) + " outside of a loop");
    if (in.op == Op::SharedAlloc && !enclosing_.empty())
      fail(in, "shared arrays must be declared at the top level of the kernel, not inside control flow");
    if (in.op == Op::Return && first_barrier_)
      fail(in, "return in a kernel that uses barriers: work-items that return early never arrive at the barrier at " +
                   at(*first_barrier_));
  }

  void divergence(const Instr& in) {
    bool sync = in.op == Op::Barrier;
    bool subgroup = op_class(in.op) == OpClass::Subgroup || op_class(in.op) == OpClass::SubgroupReduce;
    if ((sync || subgroup) && u_.is_divergent(&in))
      fail(in, std::string(op_name(in.op)) + " in divergent control flow: " + divergence_reason() +
                   (sync ? "; every work-item of the group must reach the same barriers"
                         : "; subgroup operations need all lanes of the subgroup"));
  }

  // Names the outermost enclosing construct that makes the current point divergent.
  std::string divergence_reason() const {
    for (const Instr* c : enclosing_) {
      if (c->op == Op::If && !u_.is_uniform(c->args[0]))
        return "the enclosing if at " + at(*c) + " depends on a per-work-item value" + origin(c->args[0]);
      if (c->op == Op::For) {
        for (ValueId a : c->args)
          if (!u_.is_uniform(a)) return "the enclosing for at " + at(*c) + " has a per-work-item bound" + origin(a);
      }
      if (c->op == Op::For || c->op == Op::Loop) {
        if (const Instr* e = divergent_exit(*c))
          return "the enclosing " + std::string(op_name(c->op)) + " at " + at(*c) + " is left early by some work-items (" +
                 std::string(op_name(e->op)) + " at " + at(*e) + " under a per-work-item condition)";
      }
    }
    const Instr* ret = nullptr;
    walk(k_.body, [&](const Instr& r) {
      if (!ret && r.op == Op::Return && u_.is_divergent(&r)) ret = &r;
    });
    if (ret) return "some work-items have left the kernel at the return at " + at(*ret);
    return "an enclosing branch depends on a per-work-item value";
  }

  // A break/continue leaving `loop` (or a return) that is itself divergent.
  const Instr* divergent_exit(const Instr& loop) const {
    const Instr* found = nullptr;
    std::function<void(const Block&, int)> scan = [&](const Block& b, int depth) {
      for (const Instr& in : b.instrs) {
        if (found) return;
        bool exits = in.op == Op::Return || ((in.op == Op::Break || in.op == Op::Continue) && depth == 0);
        if (exits && u_.is_divergent(&in)) found = &in;
        int inner = depth + (in.op == Op::For || in.op == Op::Loop);
        for (const Block& nb : in.blocks) scan(nb, inner);
      }
    };
    scan(loop.blocks[0], 0);
    return found;
  }

  // ", derived from global_id at file:line" for the first intrinsically
  // per-work-item source feeding `v`, when one is found.
  std::string origin(ValueId v) const {
    std::vector<ValueId> work{v};
    std::vector<bool> seen(size_t(max_id_) + 1, false);
    while (!work.empty()) {
      ValueId x = work.back();
      work.pop_back();
      if (x > max_id_ || seen[x] || u_.is_uniform(x)) continue;
      seen[x] = true;
      const Instr* d = def(x);
      if (!d) continue;
      OpClass c = op_class(d->op);
      if (d->op == Op::GlobalId || d->op == Op::LocalId || d->op == Op::SubgroupLane || c == OpClass::Atomic ||
          c == OpClass::Subgroup || c == OpClass::SubgroupReduce)
        return " (" + val(v) + ", derived from " + std::string(op_name(d->op)) + " at " + at(*d) + ")";
      for (auto it = d->args.rbegin(); it != d->args.rend(); ++it) work.push_back(*it);
      if (d->op == Op::VarLoad && !d->args.empty()) {
        work.push_back(d->args[0]);
        const Links& l = links();
        auto st = l.stores.find(d->args[0]);
        if (st != l.stores.end())
          for (const Instr* s : st->second) {
            work.push_back(s->args.back());
            // A store under divergent control: the branch conditions and loop bounds above it.
            if (u_.is_divergent(s))
              for (auto p = l.parent.find(s); p != l.parent.end(); p = l.parent.find(p->second))
                for (ValueId a : p->second->args) work.push_back(a);
          }
      }
    }
    return " (" + val(v) + ")";
  }

  const Kernel& k_;
  Uniformity u_;
  std::vector<const Instr*> defs_;  // per value id
  mutable std::unique_ptr<Links> links_;
  std::vector<bool> visible_;
  std::vector<const Instr*> enclosing_;
  const Instr* first_barrier_ = nullptr;
  ValueId max_id_ = 0;
  int loop_depth_ = 0;
};

std::string warning(const Instr& in, const std::string& msg) {
  return (in.loc.known() ? in.loc.str() + ": " : std::string()) + "warning: " + msg + ": " + print_line(in);
}

}  // namespace

void verify(const Kernel& k) { Verifier(k).run(); }

std::vector<std::string> lint(const Kernel& k) {
  std::vector<std::string> out;
  std::unordered_map<ValueId, int> uses, loads;
  walk(k.body, [&](const Instr& in) {
    for (ValueId a : in.args) ++uses[a];
    if (in.op == Op::VarLoad && !in.args.empty()) ++loads[in.args[0]];
  });
  std::unordered_map<ValueId, const Instr*> consts;
  walk(k.body, [&](const Instr& in) {
    if (in.op == Op::Const) consts[in.id] = &in;
  });
  std::function<void(const Block&)> scan = [&](const Block& b) {
    bool dead = false;
    for (const Instr& in : b.instrs) {
      if (dead) {
        out.push_back(warning(in, "unreachable instruction"));
        break;
      }
      bool pure = !has_side_effects(in.op) && !reads_state(in.op);
      if (in.has_result() && pure && !uses.count(in.id)) out.push_back(warning(in, "unused result"));
      if (in.op == Op::Var && !loads.count(in.id)) out.push_back(warning(in, "variable is never read"));
      if (in.op == Op::For && in.args.size() == 3) {
        auto c = consts.find(in.args[2]);
        if (c != consts.end() && c->second->imm.i == 0) out.push_back(warning(in, "loop step is zero"));
      }
      dead = in.op == Op::Break || in.op == Op::Continue || in.op == Op::Return;
      for (const Block& nb : in.blocks) scan(nb);
    }
  };
  scan(k.body);
  return out;
}

}  // namespace kgen::ir
