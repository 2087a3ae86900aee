#include <string>
#include <vector>

#include "bench/suites.h"
#include "tools/commands.h"

namespace kgen::tools {

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench",
                                 "Run the Google Benchmark suites in process (extra arguments go to Google Benchmark, "
                                 "e.g. --benchmark_min_time=0.5)");
  static std::string filter;
  static bool json = false, list = false;
  static std::vector<std::string> extra;
  cmd->add_option("filter", filter, "Regular expression selecting benchmarks");
  cmd->add_flag("--json", json, "Google Benchmark JSON on stdout (comparing benchmarks carry a 'ratio' counter)");
  cmd->add_flag("--list", list, "List the benchmarks");
  cmd->allow_extras();
  cmd->callback([cmd] {
    std::vector<std::string> args = {"kgen-bench"};
    if (!filter.empty()) args.push_back("--benchmark_filter=" + filter);
    if (json) args.push_back("--benchmark_format=json");
    if (list) args.push_back("--benchmark_list_tests=true");
    for (const auto& e : cmd->remaining()) args.push_back(e);
    set_exit_code(bench::run_benchmarks(args));
  });
}

}  // namespace kgen::tools
