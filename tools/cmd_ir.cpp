#include <algorithm>
#include <cstdio>
#include <iostream>

#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tools/commands.h"

namespace kgen::tools {

void add_ir_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ir", "Print a kernel's IR (registered name or .kir file), optionally after passes");
  static std::string name, after;
  static bool list_passes = false, locations = false;
  cmd->add_option("name", name, "Registered kernel name or path to an IR text file");
  cmd->add_option("--after", after, "Run the default pipeline up to and including this pass ('all' = whole pipeline)");
  cmd->add_flag("--passes", list_passes, "List the available passes");
  cmd->add_flag("--locations", locations, "Print source locations as comments");
  cmd->callback([] {
    if (list_passes) {
      for (const auto& p : ir::pass_names()) std::printf("%s\n", p.c_str());
      return;
    }
    if (name.empty()) throw std::runtime_error("ir: missing kernel name (see kgen ir --help)");
    ir::Kernel k = load_kernel(name);
    ir::verify(k);
    if (after == "all") {
      ir::default_pipeline().run(k);
    } else if (!after.empty()) {
      // One round of the default pipeline up to and including `after`; a
      // pass outside the pipeline (e.g. renumber) runs on its own.
      ir::PassManager pm = ir::default_pipeline();
      auto names = pm.names();
      if (std::find(names.begin(), names.end(), after) == names.end()) {
        ir::run_pass(k, after);  // throws for an unknown pass, listing none: see --passes
      } else {
        for (const auto& p : names) {
          ir::run_pass(k, p);
          if (p == after) break;
        }
      }
    }
    ir::PrintOptions po;
    po.locations = locations;
    std::cout << ir::print(k, po);
  });
}

}  // namespace kgen::tools
