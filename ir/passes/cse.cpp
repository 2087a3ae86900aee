// Common subexpression elimination with a scoped hash table: an expression
// recorded in a block is forgotten when the block ends, so a value is only
// reused where its definition is visible (same block or an enclosing one).
#include <unordered_map>

#include "ir/hash.h"
#include "ir/passes.h"
#include "ir/passes/pass_util.h"

namespace kgen::ir {

namespace {

struct Key {
  Op op;
  Type type;
  int64_t attr;
  uint64_t imm;
  std::vector<ValueId> args;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    Hasher h;
    h.add(uint64_t(k.op) | uint64_t(k.type.kind) << 16 | uint64_t(k.type.lanes) << 24 | uint64_t(k.type.space) << 32);
    h.add(uint64_t(k.attr));
    h.add(k.imm);
    for (ValueId a : k.args) h.add(a);
    return size_t(h.finish());
  }
};

bool cse_able(const Instr& in) {
  return in.has_result() && in.blocks.empty() && !has_side_effects(in.op) && !reads_state(in.op);
}

class Cse {
 public:
  explicit Cse(Kernel& k) : k_(k), subst_(pass::value_capacity(k)), dead_(pass::value_capacity(k)) {}

  bool run() {
    block(k_.body);
    if (changed_) pass::remove_values(k_.body, dead_);
    return changed_;
  }

 private:
  void block(Block& b) {
    std::vector<Key> inserted;  // forgotten when the block ends
    for (Instr& in : b.instrs) {
      subst_.apply(in);
      if (cse_able(in)) {
        Key key{in.op, in.type, in.attr, in.op == Op::Const ? pass::imm_key(in.type, in.imm) : 0, in.args};
        auto it = table_.find(key);
        if (it != table_.end()) {
          subst_.replace(in.id, it->second);
          dead_[in.id] = true;
          changed_ = true;
        } else {
          inserted.push_back(key);
          table_.emplace(std::move(key), in.id);
        }
      }
      for (Block& nb : in.blocks) block(nb);
    }
    for (const Key& key : inserted) table_.erase(key);
  }

  Kernel& k_;
  pass::Substitution subst_;
  std::vector<bool> dead_;
  std::unordered_map<Key, ValueId, KeyHash> table_;
  bool changed_ = false;
};

}  // namespace

bool cse(Kernel& k) { return Cse(k).run(); }

}  // namespace kgen::ir
