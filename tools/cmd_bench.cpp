// `kgen bench`: runs the kgen_bench executable built beside kgen, so the
// vendor baselines it links (OpenBLAS, oneDNN, OpenMP) are loaded only by
// benchmark processes, never by `kgen run` and the rest.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace kgen::tools {

namespace {
std::filesystem::path bench_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path bench = self.parent_path() / "kgen_bench";
  if (ec || !std::filesystem::exists(bench))
    throw std::runtime_error("kgen bench: the benchmark executable kgen_bench is not beside " +
                             (ec ? std::string("this kgen") : self.string()) + " (build the kgen_bench_main target)");
  return bench;
}
}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench",
                                 "Run the Google Benchmark suites (kgen_bench; extra arguments go to Google Benchmark, "
                                 "e.g. --benchmark_min_time=0.5)");
  static std::string filter;
  static bool json = false, list = false;
  cmd->add_option("filter", filter, "Regular expression selecting benchmarks");
  cmd->add_flag("--json", json, "Google Benchmark JSON on stdout (comparing benchmarks carry a 'ratio' counter)");
  cmd->add_flag("--list", list, "List the benchmarks");
  cmd->allow_extras();
  cmd->callback([cmd] {
    const std::string exe = bench_executable().string();
    std::vector<std::string> args = {exe};
    if (!filter.empty()) args.push_back("--benchmark_filter=" + filter);
    if (json) args.push_back("--benchmark_format=json");
    if (list) args.push_back("--benchmark_list_tests=true");
    for (const auto& e : cmd->remaining()) args.push_back(e);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    throw std::runtime_error("kgen bench: cannot run " + exe + ": " + std::strerror(errno));
  });
}

}  // namespace kgen::tools
