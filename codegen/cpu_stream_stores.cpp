#include "codegen/cpp.h"

namespace kgen::codegen {

uint32_t item_stream_store_bytes(const ir::Kernel& k) {
  if (!lean_passes_suffice(k)) return 0;
  const auto& wg = k.workgroup_size;
  if (k.fixed_workgroup() && (wg[0] % kStreamItemGroup != 0 || wg[1] != 1 || wg[2] != 1)) return 0;
  const ir::ValueIndex index(k);
  std::vector<bool> stored(k.buffers.size(), false), loaded(k.buffers.size(), false);
  bool ok = true;
  ir::walk(k.body, [&](const ir::Instr& in) {
    // Which group or item ran an x id must be unobservable (the emitter's
    // whole-range form), and every store lands at the item's own x id.
    ok = ok && in.op != ir::Op::LocalId && in.op != ir::Op::GroupId && !(in.op == ir::Op::GlobalId && in.attr != 0);
    if (in.op != ir::Op::Store && in.op != ir::Op::Load) return;
    const ir::Instr* buf = index.def(in.args[0]);
    ok = ok && buf && buf->op == ir::Op::Buffer;
    if (!ok) return;
    if (in.op == ir::Op::Load) loaded[size_t(buf->attr)] = true;
    else stored[size_t(buf->attr)] = true, ok = is_global_x_id(index, in.args[1]);
  });
  uint32_t bytes = 0;
  for (size_t i = 0; i < stored.size(); ++i) {
    // A line the item has just read is in cache: storing it plainly costs no
    // read for ownership, and streaming it would only evict it (saxpy's
    // y = a·x + y at 2^26: 0.8 of its plain stores' speed).
    if (stored[i] && loaded[i]) return 0;
    if (stored[i]) bytes += uint32_t(k.buffers[i].elem.bytes());
  }
  return ok ? bytes : 0;
}

}  // namespace kgen::codegen
