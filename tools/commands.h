// Subcommands of the kgen CLI. Each add_* registers one command whose
// callback runs when it is selected; errors are thrown and reported by main.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "ir/ir.h"

namespace kgen::tools {

void add_list_command(CLI::App& app);
void add_ir_command(CLI::App& app);
void add_emit_command(CLI::App& app);
void add_run_kernel_command(CLI::App& app);
void add_devices_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_ops_command(CLI::App& app);   // kgen ops: the op library
void add_op_command(CLI::App& app);    // kgen op NAME --shape ...
void add_tune_command(CLI::App& app);  // kgen tune NAME --shape ...
void add_run_command(CLI::App& app);   // kgen run MODEL.onnx
void add_graph_command(CLI::App& app); // kgen graph MODEL --dot|--svg
void add_conformance_command(CLI::App& app);  // kgen conformance DIR
void add_info_command(CLI::App& app);
void add_quantize_command(CLI::App& app);  // kgen quantize IN.gguf OUT.gguf --type q4_k
void add_translate_command(CLI::App& app);  // kgen translate FILE.cpp: plain C++ kernels

// Process exit code chosen by the command that ran (0 unless it failed).
int exit_code();
void set_exit_code(int code);

// Resolves NAME to a kernel: a registered kernel name, or a path to an IR
// text file (*.kir); throws with the list of known names otherwise.
ir::Kernel load_kernel(const std::string& name_or_path);

}  // namespace kgen::tools
