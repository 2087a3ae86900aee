#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "dsl/registry.h"
#include "ir/parser.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tools/commands.h"

namespace kgen::tools {

namespace {
int g_exit_code = 0;
}
int exit_code() { return g_exit_code; }
void set_exit_code(int code) { g_exit_code = code; }

ir::Kernel load_kernel(const std::string& name) {
  samples::register_all();
  ops::register_all();  // the op library's row kernels (softmax, norms)
  if (const dsl::KernelEntry* e = dsl::find_kernel(name)) return e->build();
  if (std::filesystem::is_regular_file(name)) {
    std::ifstream f(name);
    std::stringstream ss;
    ss << f.rdbuf();
    return ir::parse_kernel(ss.str(), name);
  }
  std::string known;
  for (const auto& e : dsl::registered_kernels()) known += " " + e.name;
  throw std::runtime_error("unknown kernel '" + name + "' (not a registered kernel nor an IR file); registered:" + known);
}

}  // namespace kgen::tools
