// kgen: the command-line front end. Each subcommand lives in its own file
// (cmd_*.cpp) and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kgen: C++ source-to-source kernel generator and JIT toolkit"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.footer(
      "Scripts (run from the repository root):\n"
      "  bash scripts/run-main.sh          install, build, run MNIST, stories260K, the samples and a few ops on the CPU, checked\n"
      "  bash scripts/run-tests.sh         install, build everything, run the whole test suite (ctest)\n"
      "  bash scripts/install-deps.sh      install the Debian 12 packages and the wgpu wheel (no-op when present)\n"
      "  python3 scripts/fuzz-ops.py       random odd, tiny and malformed problems for every op, every variant checked\n"
      "  bash scripts/sanitize.sh          the test suite under AddressSanitizer and UndefinedBehaviorSanitizer\n"
      "  bash scripts/check-gpu-build.sh   the GPU machines' build without LLVM still builds and links no LLVM\n"
      "  bash scripts/device-check.sh      CUDA conformance, the ops' GPU tests and timings on an NVIDIA machine\n"
      "  bash scripts/check-install.sh     install kgen, build and run examples/saxpy-consumer against it\n"
      "  python3 scripts/make-test-llama.py  random-weight llama GGUF files and their golden tokens (NumPy forward pass)\n"
      "  python3 bench/compare_frameworks.py   the same shapes through kgen, PyTorch and onnxruntime\n"
      "  python3 bench/compare_models.py   whole ONNX models: kgen against onnxruntime\n"
      "  python3 bench/compare_llama.py    llama GGUF models: kgen against llama.cpp (built from its PyPI sdist)\n"
      "Docs: README.md, docs/architecture.md, docs/ops.md, docs/performance.md");
  kgen::tools::add_list_command(app);
  kgen::tools::add_ir_command(app);
  kgen::tools::add_emit_command(app);
  kgen::tools::add_run_kernel_command(app);
  kgen::tools::add_devices_command(app);
#ifdef KGEN_HAVE_BENCH
  kgen::tools::add_bench_command(app);
#endif
  kgen::tools::add_cache_command(app);
  kgen::tools::add_ops_command(app);
  kgen::tools::add_op_command(app);
  kgen::tools::add_tune_command(app);
  kgen::tools::add_run_command(app);
  kgen::tools::add_graph_command(app);
  kgen::tools::add_conformance_command(app);
  kgen::tools::add_info_command(app);
  kgen::tools::add_quantize_command(app);
  kgen::tools::add_translate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgen: error: %s\n", e.what());
    return 1;
  }
  return kgen::tools::exit_code();
}
