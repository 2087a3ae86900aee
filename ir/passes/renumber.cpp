// Dense renumbering in definition order: the numbering the parser produces,
// so a renumbered kernel prints exactly as its parsed text would.
#include "ir/passes.h"
#include "ir/passes/pass_util.h"

namespace kgen::ir {

void renumber(Kernel& k) {
  std::vector<ValueId> to(pass::value_capacity(k), kNoValue);
  ValueId next = 0;
  walk_mut(k.body, [&](Instr& in) {
    for (ValueId& a : in.args)
      if (a < to.size() && to[a] != kNoValue) a = to[a];
    if (in.has_result()) in.id = to[in.id] = next++;
  });
  k.num_values = next;
}

}  // namespace kgen::ir
