// `kgen ops`, `kgen op NAME --shape ...` and `kgen tune NAME --shape ...`:
// list the op library, run one op (checked against its C++ reference, timed),
// and tune an op's variants for a shape on a device.
#include <cstdio>
#include <iostream>

#include "ops/core/executor.h"
#include "ops/core/op.h"
#include "ops/core/tune.h"
#include "tools/commands.h"
#include "tools/json_writer.h"

namespace kgen::tools {

namespace {

struct OpArgs {
  std::string name, shape, attrs, dtype = "f32", device = "cpu", variant;
  int threads = 0;
};

void add_op_options(CLI::App* cmd, OpArgs& a) {
  cmd->add_option("name", a.name, "Op name (see kgen ops)")->required();
  cmd->add_option("--shape", a.shape, "The op's sizes, e.g. 1024x1024x1024 (see kgen ops for their order)")->required();
  cmd->add_option("--attrs", a.attrs, "Op attributes, e.g. trans_b=1,batch=4");
  cmd->add_option("--dtype", a.dtype, "Element type of the main inputs");
  cmd->add_option("--device", a.device, "Device")->check(CLI::IsMember({"cpu", "cuda", "vulkan", "webgpu"}));
  cmd->add_option("--threads", a.threads, "CPU worker threads (0 = all cores)");
}

ops::Problem make_problem(const OpArgs& a) {
  ops::register_all_ops();
  ops::Problem p;
  p.op = a.name;
  p.dims = ops::parse_dims(a.shape);
  auto k = ir::parse_scalar_kind(a.dtype);
  if (!k) throw std::invalid_argument("unknown dtype '" + a.dtype + "'");
  p.dtype = *k;
  if (!a.attrs.empty()) p.attrs = ops::parse_attrs(a.attrs);
  ops::op_for(p);  // validates, with a message naming the op
  return p;
}

std::unique_ptr<rt::Device> make_device(const OpArgs& a) {
  rt::DeviceOptions o;
  o.threads = unsigned(a.threads);
  return rt::create_device(a.device, o);
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ops", "List the op library: each op's sizes, attributes and description; with NAME, also its variant keys");
  static std::string name;
  cmd->add_option("name", name, "One op: also list its declared variant keys (key, full name, legal values, meaning)");
  cmd->callback([] {
    ops::register_all_ops();
    if (!name.empty() && !ops::find_op(name)) ops::op_for(ops::Problem{name, {}, {}, {}});  // throws, listing the known ops
    for (const auto& d : ops::registered_ops()) {
      if (!name.empty() && d.name != name) continue;
      std::printf("%-16s %s\n", d.name.c_str(), d.description.c_str());
      std::printf("%-16s family: %s   shape: %s%s%s\n", "", d.family.c_str(), d.dims_help.c_str(),
                  d.attrs_help.empty() ? "" : "   attrs: ", d.attrs_help.c_str());
      if (!name.empty()) std::printf("variant keys (--variant \"key=value ...\", key or full name):\n%s",
                                     ops::describe_variant_keys(d).c_str());
    }
  });
}

void add_op_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("op", "Run one op of the library on a device: check it against its C++ reference and time it");
  static OpArgs a;
  static bool json = false, no_check = false, profile = false;
  add_op_options(cmd, a);
  cmd->add_option("--variant", a.variant, "Variant parameters, e.g. \"impl=0 mr=8\" (default: tuned, else heuristic)");
  cmd->add_flag("--no-check", no_check, "Skip the reference check");
  cmd->add_flag("--json", json, "Print one JSON object");
  cmd->add_flag("--profile", profile, "Also time each kernel of the op's plan on its own");
  cmd->callback([] {
    ops::Problem p = make_problem(a);
    const ops::OpDef& d = ops::op_for(p);
    auto dev = make_device(a);
    std::string source = "given";
    ops::Variant v = a.variant.empty() ? ops::choose_variant(*dev, p, &source)
                                       : ops::resolve_variant(d, ops::Variant::parse(a.variant));
    if (!json) std::fprintf(stderr, "[kgen] %s on %s, variant %s (%s): compiling...\n", p.str().c_str(), dev->name().c_str(), v.str().c_str(), source.c_str());
    // Prepare first: its compile time and cache hits are this process's
    // (the check below then finds the kernels in the memory cache).
    ops::PreparedPlan pp = ops::prepare(*dev, p, v);
    ops::OpCheck c;
    c.ok = true;
    if (!no_check) c = ops::check_op(*dev, p, v, 1);
    double ms = ops::time_op(*dev, pp, 1, 5, 0.3);
    double flops = d.flops ? d.flops(p) : 0, bytes = d.bytes ? d.bytes(p) : 0;
    if (json) {
      JsonObject o;
      o.add("problem", p.str()).add("device", dev->name()).add("variant", v.str()).add("variant_source", source)
          .add("kernels", double(pp.plan.steps.size())).add("cache_hits", double(pp.cache_hits)).add("compile_ms", pp.compile_ms).add("run_ms", ms)
          .add("gflop_per_s", flops / ms / 1e6).add("gb_per_s", bytes / ms / 1e6)
          .add("max_rel_err", no_check ? NAN : c.cmp.max_rel_err).add("ok", c.ok);
      if (!c.ok) o.add("error", c.message);
      std::cout << o.str() << "\n";
    } else {
      std::printf("problem      %s\n", p.str().c_str());
      std::printf("device       %s\n", dev->description().c_str());
      std::printf("variant      %s (%s)\n", v.str().c_str(), source.c_str());
      std::printf("kernels      %zu (compile %.1f ms, %d cache hits)\n", pp.plan.steps.size(), pp.compile_ms, pp.cache_hits);
      std::printf("run          %.4f ms (median)\n", ms);
      if (flops > 0) std::printf("compute      %.2f GFLOP/s\n", flops / ms / 1e6);
      if (bytes > 0) std::printf("bandwidth    %.2f GB/s\n", bytes / ms / 1e6);
      if (!no_check) std::printf("max rel err  %.3g (tolerance %.3g)\n", c.cmp.max_rel_err, c.tolerance);
      std::printf("result       %s\n", c.ok ? "OK" : ("FAIL: " + c.message).c_str());
    }
    if (profile) {
      const std::vector<double> step_ms = ops::time_steps(*dev, pp);
      double sum = 0;
      for (double m : step_ms) sum += m;
      std::printf("%-5s %10s %6s  %-14s %s\n", "step", "ms", "share", "grid", "kernel");
      for (size_t s = 0; s < step_ms.size(); ++s) {
        const auto& g = pp.plan.steps[s].dims.grid;
        const std::string grid = std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
        std::printf("%-5zu %10.4f %5.1f%%  %-14s %s\n", s, step_ms[s], 100 * step_ms[s] / sum, grid.c_str(),
                    pp.plan.steps[s].kernel.name.c_str());
      }
      std::printf("%-5s %10.4f\n", "sum", sum);
    }
    if (!c.ok) set_exit_code(1);
  });
}

void add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Time every variant of an op for a shape on a device and keep the fastest in the tuning database");
  static OpArgs a;
  static bool no_store = false, no_check = false;
  static double min_s = 0.1;
  add_op_options(cmd, a);
  cmd->add_flag("--no-store", no_store, "Do not write the result to the database");
  cmd->add_flag("--no-check", no_check, "Skip each candidate's reference check");
  cmd->add_option("--min-time", min_s, "Seconds of timing per candidate");
  cmd->callback([] {
    ops::Problem p = make_problem(a);
    auto dev = make_device(a);
    ops::TuneOptions o;
    o.store = !no_store;
    o.check = !no_check;
    o.min_s = min_s;
    o.progress = [](size_t i, size_t n, const ops::TuneEntry& e) {
      if (e.ok) std::fprintf(stderr, "[%zu/%zu] %-40s %10.4f ms\n", i + 1, n, e.variant.str().c_str(), e.ms);
      else std::fprintf(stderr, "[%zu/%zu] %-40s failed: %s\n", i + 1, n, e.variant.str().c_str(), e.message.c_str());
    };
    std::fprintf(stderr, "[kgen] tuning %s on %s\n", p.str().c_str(), dev->name().c_str());
    ops::TuneResult r = ops::tune(*dev, p, o);
    std::printf("best         %s  %.4f ms\n", r.best.str().c_str(), r.best_ms);
    if (r.heuristic_ms > 0) std::printf("heuristic    %.4f ms (best is %.2fx faster)\n", r.heuristic_ms, r.heuristic_ms / r.best_ms);
    std::printf("key          %s\n", r.key.c_str());
    std::printf("database     %s\n", no_store ? "(not stored)" : ops::TuneDb::global().path().c_str());
  });
}

}  // namespace kgen::tools
