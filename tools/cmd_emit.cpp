#include <iostream>

#include "codegen/cpp.h"
#include "codegen/cuda.h"
#include "codegen/glsl_dialect.h"
#include "codegen/wgsl_dialect.h"
#include "jit/spirv.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "tools/commands.h"

namespace kgen::tools {

void add_emit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("emit", "Print the generated source of a kernel for a target");
  static std::string name, target = "cpp";
  static bool raw = false;
  cmd->add_option("name", name, "Registered kernel name or path to an IR text file")->required();
  cmd->add_option("--target", target, "Target dialect")->check(CLI::IsMember({"cpp", "glsl", "spirv", "cuda", "wgsl"}));
  cmd->add_flag("--no-opt", raw, "Emit without running the IR pipeline first");
  cmd->callback([] {
    ir::Kernel k = load_kernel(name);
    ir::verify(k);
    if (!raw) ir::default_pipeline().run(k);
    if (target == "glsl") std::cout << codegen::emit_glsl(k);
    else if (target == "spirv") std::cout << jit::disassemble_spirv(jit::compile_glsl(codegen::emit_glsl(k), k.name));
    else if (target == "wgsl") std::cout << codegen::emit_wgsl(k);
    else if (target == "cuda") std::cout << codegen::emit_cuda(k);
    else std::cout << codegen::emit_cpp(k);
  });
}

}  // namespace kgen::tools
