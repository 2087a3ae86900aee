// Defining a kernel: kernel(name, body) runs `body` once with a KernelBuilder
// while this thread records into a fresh ir::Kernel, then verifies and
// returns it. The body is ordinary C++: its parameters (dtype, tile size,
// vector width...) select what gets recorded, so one function yields many
// kernel variants.
//
//   ir::Kernel k = kernel("saxpy", [](KernelBuilder& kb) {
//     auto x = kb.input("x", f32);
//     auto y = kb.inout("y", f32);
//     auto a = kb.scalar("a", f32);
//     auto n = kb.scalar("n", u32);
//     auto i = global_id(0);
//     if_(i < n, [&] { y[i] = a * x[i] + y[i]; });
//   });
#pragma once
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>

#include "dsl/memory.h"

namespace kgen::dsl {

class KernelBuilder {
 public:
  explicit KernelBuilder(KernelContext& ctx) : ctx_(ctx) {}

  // A buffer parameter of elements `elem` (scalar or line). Parameters are
  // declared at the top level of the body; their order is the launch order.
  Array buffer(std::string name, ir::Type elem, ir::Access access,
               std::source_location loc = std::source_location::current());
  Array input(std::string name, ir::Type elem, std::source_location loc = std::source_location::current()) {
    return buffer(std::move(name), elem, ir::Access::Read, loc);
  }
  Array output(std::string name, ir::Type elem, std::source_location loc = std::source_location::current()) {
    return buffer(std::move(name), elem, ir::Access::Write, loc);
  }
  Array inout(std::string name, ir::Type elem, std::source_location loc = std::source_location::current()) {
    return buffer(std::move(name), elem, ir::Access::ReadWrite, loc);
  }
  // A scalar parameter (uniform for the whole launch).
  Value scalar(std::string name, ir::Type type, std::source_location loc = std::source_location::current());

  // Fixes the workgroup size (needed by kernels whose shared memory or
  // reductions assume it); without it the launcher chooses.
  void workgroup(uint32_t x, uint32_t y = 1, uint32_t z = 1,
                 std::source_location loc = std::source_location::current());

  const ir::Kernel& kernel() const { return ctx_.kernel; }

 private:
  void check_param(const std::string& name, ir::SourceLoc loc);
  KernelContext& ctx_;
};

// Records, verifies (ir::verify, when available) and returns the kernel.
// Errors are ir::Error pointing at the offending DSL line.
ir::Kernel kernel(std::string name, const std::function<void(KernelBuilder&)>& body,
                  std::source_location loc = std::source_location::current());

}  // namespace kgen::dsl
