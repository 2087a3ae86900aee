#include <cstdio>

#include "dsl/registry.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tools/commands.h"

namespace kgen::tools {

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List registered kernels");
  cmd->callback([] {
    samples::register_all();
    ops::register_all();  // the op library's row kernels (softmax, norms)
    for (const auto& e : dsl::registered_kernels()) std::printf("%-28s %s\n", e.name.c_str(), e.description.c_str());
  });
}

}  // namespace kgen::tools
