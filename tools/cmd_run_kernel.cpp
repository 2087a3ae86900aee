#include <cstdio>
#include <iostream>

#include "dsl/registry.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"
#include "ops/rowwise/rowwise.h"
#include "samples/kernels/kernels.h"
#include "tools/commands.h"
#include "tools/file_kernel.h"
#include "tools/json_writer.h"

namespace kgen::tools {

namespace {
// The registered kernel `name` with its workload for opt.n, or the kernel
// of the C++ file `name` (tools/file_kernel.h).
FileKernel kernel_to_run(const std::string& name, const FileKernelOptions& opt, bool verbose) {
  if (is_cpp_source(name)) {
    FileKernel fk = load_file_kernel(name, opt);
    if (verbose)
      std::fprintf(stderr, "[kgen] %s: kernel %s with %s\n", name.c_str(), fk.kernel.name.c_str(), fk.workload_from.c_str());
    return fk;
  }
  if (!opt.kernel.empty() || !opt.defines.empty() || !opt.include_dirs.empty() || !opt.scalars.empty())
    throw std::runtime_error("--kernel, -D, -I and --scalar apply to a C++ file; '" + name + "' is not one (.cpp, .cc, .cxx)");
  const dsl::KernelEntry* e = dsl::find_kernel(name);
  if (!e) throw std::runtime_error("unknown kernel '" + name + "' (see kgen list)");
  FileKernel fk;
  fk.n = opt.n > 0 ? opt.n : e->default_n;
  fk.kernel = e->build();
  fk.workload = e->workload(fk.n);
  return fk;
}
}  // namespace

void add_run_kernel_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run-kernel",
                                 "JIT-compile a registered kernel or a plain C++ kernel (FILE.cpp --kernel NAME), run it "
                                 "on random inputs, check it against the interpreter and report timings");
  static std::string name, device = "cpu";
  static FileKernelOptions file_opt;
  static int64_t n = 0;
  static int threads = 0;
  static bool json = false, no_check = false;
  static uint64_t seed = 0x5eed;
  cmd->add_option("name", name, "Registered kernel name, or a C++ file of KGEN_KERNEL functions")->required();
  cmd->add_option("--kernel", file_opt.kernel, "C++ file: the kernel to run (default: the file's only kernel)");
  cmd->add_option("-D", file_opt.defines, "C++ file: macro definition, NAME or NAME=VALUE");
  cmd->add_option("-I", file_opt.include_dirs, "C++ file: include directory");
  cmd->add_option("--scalar", file_opt.scalars,
                  "C++ file: a scalar argument NAME=VALUE of the default workload (defaults: n, N, count = --n; "
                  "floats 1.5; integers and bools 1)");
  cmd->add_option("--n", n, "Problem size (default: the kernel's own)")
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() || v[0] == '-' || std::stoll(v) <= 0 ? "must be a positive size, got " + v : ""; },
          "SIZE>0"));
  cmd->add_option("--threads", threads, "CPU worker threads (0 = all cores)");
  cmd->add_option("--device", device, "Device to run on")->check(CLI::IsMember({"cpu", "cuda", "vulkan", "webgpu"}));
  cmd->add_option("--seed", seed, "Random seed for the inputs");
  cmd->add_flag("--no-check", no_check, "Skip the interpreter check (for very large sizes)");
  cmd->add_flag("--json", json, "Print one JSON object");
  cmd->callback([] {
    samples::register_all();
    ops::register_all();  // the op library's row kernels (softmax, norms)
    file_opt.n = n;
    FileKernel fk = kernel_to_run(name, file_opt, !json);
    ir::Kernel& k = fk.kernel;
    const ir::Workload& w = fk.workload;
    int64_t size = fk.n;
    rt::DeviceOptions dopt;
    dopt.threads = threads;
    auto dev = rt::create_device(device, dopt);
    rt::CheckOptions co;
    co.seed = seed;
    co.check = !no_check;
    if (!json) std::fprintf(stderr, "[kgen] compiling %s for %s...\n", k.name.c_str(), dev->name().c_str());
    rt::CheckResult r = rt::run_and_check(*dev, k, w, co);
    if (json) {
      JsonObject o;
      o.add("kernel", r.kernel).add("device", r.device).add("n", size).add("compile_ms", r.compile_ms)
          .add("cache_hit", r.cache_hit).add("run_ms", r.run_ms).add("gb_per_s", r.gb_per_s)
          .add("gflop_per_s", r.gflop_per_s).add("max_rel_err", co.check ? r.cmp.max_rel_err : NAN)
          .add("ok", r.ok);
      if (!r.ok) o.add("error", r.message);
      std::cout << o.str() << "\n";
    } else {
      std::printf("kernel       %s (n = %lld)\n", r.kernel.c_str(), (long long)size);
      std::printf("device       %s\n", dev->description().c_str());
      if (!k.scalars.empty()) std::printf("scalars      %s\n", describe_scalars(k, w).c_str());
      std::printf("compile      %.2f ms%s\n", r.compile_ms, r.cache_hit ? " (cache hit)" : "");
      std::printf("run          %.4f ms (median)\n", r.run_ms);
      if (w.bytes > 0) std::printf("bandwidth    %.2f GB/s\n", r.gb_per_s);
      if (w.flops > 0) std::printf("compute      %.2f GFLOP/s\n", r.gflop_per_s);
      if (co.check) std::printf("max rel err  %.3g (tolerance %.3g, interpreter %.1f ms)\n", r.cmp.max_rel_err, w.tolerance, r.interp_ms);
      std::printf("result       %s\n", r.ok ? "OK" : ("FAIL: " + r.message).c_str());
    }
    if (!r.ok) {
      if (json) std::fprintf(stderr, "kgen: error: %s\n", r.message.c_str());
      set_exit_code(1);
    }
  });
}

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the runtimes and devices found, with their capabilities");
  cmd->callback([] {
    for (const auto& name : rt::available_devices()) {
      auto dev = rt::create_device(name);
      const auto& c = dev->caps();
      std::printf("%-8s %s\n", name.c_str(), dev->description().c_str());
      std::printf("         f16=%d bf16=%d f64=%d subgroups=%d (size %u) max_shared=%u B max_workgroup=%u\n", c.f16, c.bf16,
                  c.f64, c.subgroups, c.subgroup_size, c.max_shared_bytes, c.max_workgroup_threads);
    }
  });
}

}  // namespace kgen::tools
