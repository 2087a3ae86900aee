#include "dsl/kernel.h"

#include <memory>

#if __has_include("ir/verifier.h")
#include "ir/verifier.h"
#define KGEN_DSL_HAS_VERIFIER 1
#endif

namespace kgen::dsl {

void KernelBuilder::check_param(const std::string& name, ir::SourceLoc loc) {
  builder_at(loc, "parameter");  // also settles a pending if_, so depth is current
  if (current_context() != &ctx_) throw ir::Error(loc, "KernelBuilder used outside of its kernel's body");
  if (ctx_.builder.depth() != 1)
    throw ir::Error(loc, "parameter '" + name + "' must be declared at the top level of the kernel, not inside control flow");
  for (const auto& b : ctx_.kernel.buffers)
    if (b.name == name) throw ir::Error(loc, "duplicate parameter name '" + name + "'");
  for (const auto& s : ctx_.kernel.scalars)
    if (s.name == name) throw ir::Error(loc, "duplicate parameter name '" + name + "'");
}

Array KernelBuilder::buffer(std::string name, ir::Type elem, ir::Access access, std::source_location loc) {
  ir::SourceLoc l = to_loc(loc);
  check_param(name, l);
  if (elem.is_pointer() || elem.is_void() || !ir::valid_lanes(elem.lanes))
    throw ir::Error(l, "buffer '" + name + "': element type must be a scalar or line value type, got " + elem.str());
  ctx_.kernel.buffers.push_back({std::move(name), elem, access});
  return Array(detail::make(l, ir::Op::Buffer, {}, int64_t(ctx_.kernel.buffers.size() - 1)));
}

Value KernelBuilder::scalar(std::string name, ir::Type type, std::source_location loc) {
  ir::SourceLoc l = to_loc(loc);
  check_param(name, l);
  if (type.is_pointer() || type.is_void() || !ir::valid_lanes(type.lanes))
    throw ir::Error(l, "scalar '" + name + "': type must be a value type, got " + type.str());
  ctx_.kernel.scalars.push_back({std::move(name), type});
  return detail::make(l, ir::Op::Param, {}, int64_t(ctx_.kernel.scalars.size() - 1));
}

void KernelBuilder::workgroup(uint32_t x, uint32_t y, uint32_t z, std::source_location loc) {
  ir::SourceLoc l = to_loc(loc);
  if (x == 0 || y == 0 || z == 0 || uint64_t(x) * y * z > 1024)
    throw ir::Error(l, "workgroup size must be positive with at most 1024 work-items, got " + std::to_string(x) +
                           "x" + std::to_string(y) + "x" + std::to_string(z));
  ctx_.kernel.workgroup_size = {x, y, z};
}

ir::Kernel kernel(std::string name, const std::function<void(KernelBuilder&)>& body, std::source_location loc) {
  auto ctx = std::make_unique<KernelContext>(std::move(name));
  {
    ContextScope scope(*ctx);
    KernelBuilder kb(*ctx);
    body(kb);
    ir::SourceLoc l = to_loc(loc);
    ctx->builder.loc = l;
    ctx->settle();
    if (ctx->builder.depth() != 1) throw ir::Error(l, "kernel body ended inside an open block");
  }
  ir::Kernel k = std::move(ctx->kernel);
#ifdef KGEN_DSL_HAS_VERIFIER
  ir::verify(k);
#endif
  return k;
}

}  // namespace kgen::dsl
