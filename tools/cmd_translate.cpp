#include <chrono>
#include <cstdio>
#include <iostream>

#include "codegen/cpp.h"
#include "codegen/cuda.h"
#include "codegen/glsl_dialect.h"
#include "codegen/wgsl_dialect.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "jit/spirv.h"
#include "tools/commands.h"
#include "translate/emit_dsl.h"
#include "translate/translate.h"

namespace kgen::tools {

namespace {
std::string emit_for(const ir::Kernel& k, const std::string& target) {
  if (target == "ir") return ir::print(k);
  if (target == "dsl") return translate::emit_dsl(k);
  if (target == "glsl") return codegen::emit_glsl(k);
  if (target == "spirv") return jit::disassemble_spirv(jit::compile_glsl(codegen::emit_glsl(k), k.name));
  if (target == "wgsl") return codegen::emit_wgsl(k);
  if (target == "cuda") return codegen::emit_cuda(k);
  return codegen::emit_cpp(k);
}
}  // namespace

void add_translate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("translate", "Translate plain C++ kernels (KGEN_KERNEL functions) for a target");
  static std::string file, kernel, target = "cpp";
  static translate::Options opt;
  static bool raw = false, timing = false;
  cmd->add_option("file", file, "C++ source that includes kgen_kernel.h")->required()->check(CLI::ExistingFile);
  cmd->add_option("--kernel", kernel, "The kernel to print (default: every kernel of the file)");
  cmd->add_option("--target", target, "Target dialect, ir, or dsl (equivalent kgen DSL C++)")
      ->check(CLI::IsMember({"cpp", "cuda", "glsl", "spirv", "wgsl", "ir", "dsl"}));
  cmd->add_option("-I", opt.include_dirs, "Include directory");
  cmd->add_option("-D", opt.defines, "Macro definition, NAME or NAME=VALUE");
  cmd->add_option("--std", opt.std, "C++ standard (c++20)");
  cmd->add_flag("--no-opt", raw, "Print without running the IR pipeline first");
  cmd->add_flag("--time", timing, "Print the time clang and the lowering took to stderr");
  cmd->callback([] {
    auto start = std::chrono::steady_clock::now();
    std::vector<ir::Kernel> kernels;
    if (kernel.empty()) kernels = translate::translate_file(file, opt);
    else kernels.push_back(translate::translate_kernel(file, kernel, opt));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (timing) std::fprintf(stderr, "translated %zu kernel(s) in %.1f ms\n", kernels.size(), ms);
    for (ir::Kernel& k : kernels) {
      ir::verify(k);
      if (!raw) ir::default_pipeline().run(k);
      std::cout << emit_for(k, target);
    }
  });
}

}  // namespace kgen::tools
