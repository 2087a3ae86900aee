// Constant folding through the scalar semantics of ir/semantics.h, so a folded
// constant is bit-for-bit what the interpreter would have computed. Dispatch
// over ops is generated from the X-macro lists; dispatch over element types
// goes through visit_kind, and `if constexpr (domain_accepts<T>(...))` keeps
// the semantic templates from being instantiated outside their domains.
#include <array>
#include <span>

#include "ir/passes.h"
#include "ir/passes/pass_util.h"

namespace kgen::ir {

namespace {

using pass::imm_value;
using pass::make_imm;

template <class T>
std::optional<Imm> unary(Op op, const Imm& a) {
  switch (op) {
#define KGEN_X(Name, m, c, Dom)                                                        \
  case Op::Name:                                                                       \
    if constexpr (domain_accepts<T>(Domain::Dom)) return make_imm(sem_##Name(imm_value<T>(a))); \
    break;
    KGEN_UNARY_OPS(KGEN_X)
#undef KGEN_X
    default: break;
  }
  return std::nullopt;
}

template <class T>
std::optional<Imm> binary(Op op, const Imm& a, const Imm& b) {
  switch (op) {
#define KGEN_X(Name, m, c, Dom)                                                                      \
  case Op::Name:                                                                                     \
    if constexpr (domain_accepts<T>(Domain::Dom))                                                    \
      return make_imm(sem_##Name(imm_value<T>(a), imm_value<T>(b)));                                 \
    break;
    KGEN_BINARY_OPS(KGEN_X)
    KGEN_COMPARE_OPS(KGEN_X)
#undef KGEN_X
    default: break;
  }
  return std::nullopt;
}

// A line whose lanes all hold `a`, reduced as the interpreter does (a left fold).
template <class T>
std::optional<Imm> reduce(Op op, const Imm& a, int lanes) {
  std::array<T, kMaxLanes> v;
  v.fill(imm_value<T>(a));
  std::span<const T> s(v.data(), size_t(lanes));
  switch (op) {
#define KGEN_X(Name, m, c, Dom)                                                    \
  case Op::Name:                                                                   \
    if constexpr (domain_accepts<T>(Domain::Dom)) return make_imm(sem_##Name<T>(s)); \
    break;
    KGEN_REDUCE_OPS(KGEN_X)
#undef KGEN_X
    default: break;
  }
  return std::nullopt;
}

std::optional<Imm> convert(Op op, Type from, Type to, const Imm& a) {
  if (from.lanes != to.lanes) return std::nullopt;  // lane-changing bitcasts: not folded
  return visit_kind(from.kind, [&](auto src) -> std::optional<Imm> {
    using F = typename decltype(src)::type;
    F x = imm_value<F>(a);
    return visit_kind(to.kind, [&](auto dst) -> std::optional<Imm> {
      using T = typename decltype(dst)::type;
      if (op == Op::Cast) return make_imm(sem_cast<T>(x));
      if constexpr (sizeof(T) == sizeof(F) && !std::same_as<T, bool> && !std::same_as<F, bool>)
        return make_imm(sem_bitcast<T>(x));
      return std::nullopt;
    });
  });
}

class Folder {
 public:
  explicit Folder(Kernel& k) : k_(k), defs_(k) {}

  bool run() {
    walk_mut(k_.body, [&](Instr& in) {
      if (in.op == Op::Const || in.args.empty() || !in.has_result()) return;
      if (auto v = fold(in)) {
        pass::make_const(in, *v);
        changed_ = true;
      }
    });
    return changed_;
  }

 private:
  const Instr* c(size_t i, const Instr& in) const { return i < in.args.size() ? defs_.constant(in.args[i]) : nullptr; }
  bool all_const(const Instr& in) const {
    for (size_t i = 0; i < in.args.size(); ++i)
      if (!c(i, in)) return false;
    return true;
  }

  std::optional<Imm> fold(const Instr& in) const {
    if (!all_const(in)) return std::nullopt;
    const Instr& a = *c(0, in);
    Type ta = a.type;
    try {
      switch (op_class(in.op)) {
        case OpClass::Unary:
          return visit_kind(ta.kind, [&](auto t) { return unary<typename decltype(t)::type>(in.op, a.imm); });
        case OpClass::Binary:
        case OpClass::Compare:
          return visit_kind(ta.kind,
                            [&](auto t) { return binary<typename decltype(t)::type>(in.op, a.imm, c(1, in)->imm); });
        case OpClass::Fma:
          return visit_kind(ta.kind, [&](auto t) -> std::optional<Imm> {
            using T = typename decltype(t)::type;
            if constexpr (FloatLike<T>)
              return make_imm(sem_Fma(imm_value<T>(a.imm), imm_value<T>(c(1, in)->imm), imm_value<T>(c(2, in)->imm)));
            return std::nullopt;
          });
        case OpClass::Dot: {
          // Line constants hold one value for all lanes: so does the result.
          if (in.op == Op::Dot2I16)
            return make_imm(sem_Dot2I16(int32_t(a.imm.i), int32_t(c(1, in)->imm.i), int32_t(c(2, in)->imm.i)));
          if (in.op == Op::Dot2Bf16)
            return make_imm(sem_Dot2Bf16(uint32_t(a.imm.i), uint32_t(c(1, in)->imm.i), imm_value<float>(c(2, in)->imm)));
          auto dot = [&](auto b) {
            using B = decltype(b);
            int32_t acc = int32_t(c(2, in)->imm.i);
            return ta.kind == ScalarKind::I32 ? sem_Dot4(int32_t(a.imm.i), B(c(1, in)->imm.i), acc)
                                              : sem_Dot4(uint32_t(a.imm.i), B(c(1, in)->imm.i), acc);
          };
          int32_t r = c(1, in)->type.kind == ScalarKind::I32 ? dot(int32_t{}) : dot(uint32_t{});
          return make_imm(r);
        }
        case OpClass::Select: {
          bool cond = a.imm.i != 0;
          return c(cond ? 1 : 2, in)->imm;
        }
        case OpClass::Convert: return convert(in.op, ta, in.type, a.imm);
        case OpClass::Reduce:
          return visit_kind(ta.kind,
                            [&](auto t) { return reduce<typename decltype(t)::type>(in.op, a.imm, ta.lanes); });
        case OpClass::Vector: return vector(in);
        default: return std::nullopt;
      }
    } catch (const DivisionByZero&) {
      return std::nullopt;  // integer division by zero stays a run-time error
    }
  }

  // Constants of line type hold one value for all lanes; fold only what keeps that true.
  std::optional<Imm> vector(const Instr& in) const {
    const Instr& a = *c(0, in);
    switch (in.op) {
      case Op::Splat:
      case Op::Extract: return a.imm;
      case Op::Construct:
      case Op::Insert: {
        Type lane = in.type.scalar();
        for (size_t i = 1; i < in.args.size(); ++i)
          if (pass::imm_key(lane, c(i, in)->imm) != pass::imm_key(lane, a.imm)) return std::nullopt;
        return a.imm;
      }
      default: return std::nullopt;
    }
  }

  Kernel& k_;
  pass::Defs defs_;
  bool changed_ = false;
};

}  // namespace

bool fold_constants(Kernel& k) { return Folder(k).run(); }

}  // namespace kgen::ir
