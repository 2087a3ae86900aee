// kgen: the command-line front end. Each subcommand lives in its own file
// (cmd_*.cpp) and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string_view>

#ifdef KGEN_HAVE_BENCH
#include "bench/vendor_env.h"
#endif

#include "tools/commands.h"

int main(int argc, char** argv) {
  // Benchmarks compare against OpenBLAS: give it its AVX-512 kernels (bench/vendor_env.h).
#ifdef KGEN_HAVE_BENCH
  if (argc > 1 && std::string_view(argv[1]) == "bench") kgen::bench::ensure_fair_vendor_env(argv);
#endif
  CLI::App app{"kgen: C++ source-to-source kernel generator and JIT toolkit"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
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
