// Algebraic simplification. Every rule must hold bit-exactly under the
// semantics of ir/semantics.h for the type it fires on; float rules are the
// few that survive NaN, infinities and signed zeros (x + -0.0, x - +0.0, x*1,
// x/1), the rest are integer-only.
#include "ir/passes.h"
#include "ir/passes/pass_util.h"

namespace kgen::ir {

namespace {

bool commutative(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Mul:
    case Op::And:
    case Op::Or:
    case Op::Xor:
    case Op::Eq:
    case Op::Ne:
    // sem_Min/sem_Max are symmetric: NaN yields the other operand, and the
    // signed-zero tie is broken by sign, not by position.
    case Op::Min:
    case Op::Max: return true;
    default: return false;
  }
}

// lt(c, x) == gt(x, c) etc.
std::optional<Op> mirrored(Op op) {
  switch (op) {
    case Op::Lt: return Op::Gt;
    case Op::Gt: return Op::Lt;
    case Op::Le: return Op::Ge;
    case Op::Ge: return Op::Le;
    default: return std::nullopt;
  }
}

// What a constant operand is, in the terms the rules need.
struct ConstFacts {
  bool zero = false;      // integer 0, bool false, float +0.0 or -0.0
  bool pos_zero = false;  // float +0.0
  bool neg_zero = false;  // float -0.0
  bool one = false;       // integer 1 or float 1.0
  bool all_ones = false;  // integer ~0, bool true
};

ConstFacts facts(const Instr& c) {
  ConstFacts f;
  visit_kind(c.type.kind, [&](auto t) {
    using T = typename decltype(t)::type;
    T v = pass::imm_value<T>(c.imm);
    if constexpr (FloatLike<T>) {
      double d = sem_cast<double>(v);
      f.zero = d == 0.0;
      f.pos_zero = f.zero && !std::signbit(d);
      f.neg_zero = f.zero && std::signbit(d);
      f.one = d == 1.0;
    } else if constexpr (std::same_as<T, bool>) {
      f.zero = !v;
      f.all_ones = v;
    } else {
      f.zero = v == T(0);
      f.one = v == T(1);
      f.all_ones = v == T(~T(0));
    }
  });
  return f;
}

class Simplifier {
 public:
  explicit Simplifier(Kernel& k) : k_(k), defs_(k), subst_(pass::value_capacity(k)), dead_(pass::value_capacity(k)) {}

  bool run() {
    walk_mut(k_.body, [&](Instr& in) {
      subst_.apply(in);
      if (in.has_result() && in.op != Op::Const) rewrite(in);
    });
    // Splicing and removal move instructions: defs_ is stale from here on.
    walk(k_.body, [&](const Instr& in) {
      if (in.op == Op::Const && in.type == types::Bool) const_cond_[in.id] = in.imm.i ? 1 : 0;
    });
    changed_ |= splice_constant_ifs(k_.body);
    if (changed_) pass::remove_values(k_.body, dead_);
    return changed_;
  }

 private:
  void replace(Instr& in, ValueId with) {
    subst_.replace(in.id, with);
    dead_[in.id] = true;
    changed_ = true;
  }
  void to_const(Instr& in, Imm v) {
    pass::make_const(in, v);
    changed_ = true;
  }
  const Instr* cst(const Instr& in, size_t i) const { return i < in.args.size() ? defs_.constant(in.args[i]) : nullptr; }
  const Instr* def(ValueId v) const { return defs_[v]; }

  void rewrite(Instr& in) {
    OpClass cls = op_class(in.op);
    if (cls == OpClass::Binary || cls == OpClass::Compare) {
      canonicalize(in);
      binary(in);
    } else if (cls == OpClass::Unary) {
      // neg(neg x), not(not x): both involutions, also for wrapping ints and floats.
      if ((in.op == Op::Neg || in.op == Op::Not) && def(in.args[0]) && def(in.args[0])->op == in.op)
        replace(in, def(in.args[0])->args[0]);
    } else if (cls == OpClass::Convert) {
      if (def(in.args[0]) && def(in.args[0])->type == in.type) replace(in, in.args[0]);
    } else if (in.op == Op::Select) {
      if (in.args[1] == in.args[2]) return replace(in, in.args[1]);
      if (const Instr* c = cst(in, 0)) replace(in, c->imm.i ? in.args[1] : in.args[2]);
    }
  }

  void canonicalize(Instr& in) {
    if (!cst(in, 0) || cst(in, 1)) return;
    if (commutative(in.op)) {
      std::swap(in.args[0], in.args[1]);
      changed_ = true;
    } else if (auto m = mirrored(in.op)) {
      in.op = *m;
      std::swap(in.args[0], in.args[1]);
      changed_ = true;
    }
  }

  void binary(Instr& in) {
    ValueId x = in.args[0];
    bool same = in.args[0] == in.args[1];
    Type t = def(x) ? def(x)->type : in.type;
    bool is_int = t.is_int(), is_float = t.is_float();
    auto zero = [&] { return pass::make_imm<int64_t>(0); };  // also false for bool results

    if (same) {
      switch (in.op) {
        case Op::And:
        case Op::Or:
        case Op::Min:
        case Op::Max: return replace(in, x);
        case Op::Sub:
        case Op::Xor:
          if (is_int || t.is_bool()) return to_const(in, zero());
          return;
        case Op::Eq:
        case Op::Le:
        case Op::Ge:
          if (!is_float) return to_const(in, pass::make_imm(true));
          return;
        case Op::Ne:
        case Op::Lt:
        case Op::Gt:
          if (!is_float) return to_const(in, pass::make_imm(false));
          return;
        default: return;
      }
    }

    const Instr* c = cst(in, 1);
    if (!c) return;
    ConstFacts f = facts(*c);
    switch (in.op) {
      case Op::Add:
        if ((is_int && f.zero) || (is_float && f.neg_zero)) replace(in, x);
        return;
      case Op::Sub:
        if ((is_int && f.zero) || (is_float && f.pos_zero)) replace(in, x);
        return;
      case Op::Mul:
        if (f.one) return replace(in, x);
        if (is_int && f.zero) to_const(in, zero());
        return;
      case Op::Div:
        if (f.one) replace(in, x);
        return;
      case Op::And:
        if (f.all_ones) return replace(in, x);
        if (f.zero) to_const(in, c->imm);
        return;
      case Op::Or:
        if (f.zero) return replace(in, x);
        if (f.all_ones) to_const(in, c->imm);
        return;
      case Op::Xor:
        if (f.zero) replace(in, x);
        return;
      case Op::Shl:
      case Op::Shr: {
        // The shift amount is taken modulo the width (sem_shift_amount).
        bool by_zero = visit_kind(t.kind, [&](auto tt) {
          using T = typename decltype(tt)::type;
          if constexpr (IntLike<T>) return sem_shift_amount(pass::imm_value<T>(c->imm)) == 0;
          return false;
        });
        if (by_zero) replace(in, x);
        return;
      }
      default: return;
    }
  }

  // if true { A } else { B }  ->  A  (values of A stay visible to A's uses only,
  // which all follow A, so widening their scope is harmless).
  bool splice_constant_ifs(Block& b) {
    bool changed = false;
    for (size_t i = 0; i < b.instrs.size();) {
      Instr& in = b.instrs[i];
      int8_t c = in.op == Op::If ? const_cond_[in.args[0]] : -1;
      if (c < 0) {
        for (Block& nb : in.blocks) changed |= splice_constant_ifs(nb);
        ++i;
        continue;
      }
      Block taken = std::move(in.blocks[c ? 0 : 1]);
      b.instrs.erase(b.instrs.begin() + ptrdiff_t(i));
      b.instrs.insert(b.instrs.begin() + ptrdiff_t(i), std::make_move_iterator(taken.instrs.begin()),
                      std::make_move_iterator(taken.instrs.end()));
      changed = true;  // revisit from i: the spliced code may hold more constant ifs
    }
    return changed;
  }

  Kernel& k_;
  pass::Defs defs_;
  pass::Substitution subst_;
  std::vector<bool> dead_;
  std::vector<int8_t> const_cond_ = std::vector<int8_t>(dead_.size(), -1);  // bool constants by id
  bool changed_ = false;
};

}  // namespace

bool simplify(Kernel& k) { return Simplifier(k).run(); }

}  // namespace kgen::ir
