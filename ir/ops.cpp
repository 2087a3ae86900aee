#include "ir/ops.h"

namespace kgen::ir {

namespace {
constexpr OpInfo kOps[] = {
#define KGEN_X(name, mnem, cls, dom) {mnem, OpClass::cls, Domain::dom},
    KGEN_IR_OPS(KGEN_X)
#undef KGEN_X
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(Op::NumOps));
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }

std::optional<Op> parse_op(std::string_view m) {
  for (int i = 0; i < static_cast<int>(Op::NumOps); ++i)
    if (kOps[i].mnemonic == m) return static_cast<Op>(i);
  return std::nullopt;
}

bool has_side_effects(Op op) {
  switch (op_class(op)) {
    case OpClass::Atomic:
    case OpClass::Sync:
    case OpClass::Tile:
    case OpClass::Control: return true;
    default: break;
  }
  // Prefetch changes nothing, but is kept where it was put (its point is when).
  return op == Op::Store || op == Op::Prefetch || op == Op::VarStore || op == Op::SharedAlloc || op == Op::Var;
}

bool reads_state(Op op) {
  switch (op_class(op)) {
    case OpClass::Memory:
    case OpClass::Atomic:
    case OpClass::Tile:
    case OpClass::Subgroup:
    case OpClass::SubgroupReduce: return true;
    default: break;
  }
  return op == Op::VarLoad || op == Op::Var || op == Op::SharedAlloc;
}

int num_blocks(Op op) {
  switch (op) {
    case Op::For:
    case Op::Loop: return 1;
    case Op::If: return 2;
    default: return 0;
  }
}

}  // namespace kgen::ir
