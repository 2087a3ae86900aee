#include "dsl/context.h"

#include <atomic>

namespace kgen::dsl {

namespace {
thread_local KernelContext* t_current = nullptr;
std::atomic<uint64_t> g_next_serial{1};
}  // namespace

KernelContext::KernelContext(std::string name) : serial(g_next_serial.fetch_add(1)) {
  kernel.name = std::move(name);
}

void KernelContext::settle() {
  if (pending_if.chain == 0) return;
  int n = pending_if.open_ifs;
  pending_if = {};
  for (int i = 0; i < n; ++i) builder.end_if();
}

KernelContext* current_context() { return t_current; }

ContextScope::ContextScope(KernelContext& ctx) : prev_(t_current) { t_current = &ctx; }
ContextScope::~ContextScope() { t_current = prev_; }

ir::SourceLoc to_loc(const std::source_location& loc) {
  // Interning takes a lock; kernels are recorded from few files, so remember
  // the last one per thread.
  thread_local const char* last_raw = nullptr;
  thread_local const char* last_interned = nullptr;
  if (loc.file_name() != last_raw) {
    last_raw = loc.file_name();
    last_interned = ir::intern_file(last_raw);
  }
  return ir::SourceLoc{last_interned, loc.line(), loc.column()};
}

KernelContext& context_at(ir::SourceLoc loc, const char* what) {
  if (!t_current) throw ir::Error(loc, std::string(what) + " used outside of a kernel (only inside the body passed to kernel())");
  return *t_current;
}

ir::Builder& builder_at(ir::SourceLoc loc, const char* what) {
  KernelContext& c = context_at(loc, what);
  c.builder.loc = loc;
  c.settle();
  return c.builder;
}

ir::ValueId record(ir::SourceLoc loc, ir::Op op, std::vector<ir::ValueId> args, int64_t attr, ir::Type type) {
  return builder_at(loc, ir::op_name(op).data()).op(op, std::move(args), attr, type);
}

}  // namespace kgen::dsl
