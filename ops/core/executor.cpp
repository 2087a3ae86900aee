#include "ops/core/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>

#include "ir/interpreter.h"
#include "ops/core/tune.h"
#include "runtimes/check.h"

namespace kgen::ops {

namespace {

using Clock = std::chrono::steady_clock;

void check_plan(const Problem& p, const Plan& plan, size_t nio) {
  size_t slots = nio + plan.temp_bytes.size();
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& st = plan.steps[s];
    auto where = [&] { return "op '" + p.op + "' plan step " + std::to_string(s) + " (kernel '" + st.kernel.name + "')"; };
    if (st.buffers.size() != st.kernel.buffers.size())
      throw std::logic_error(where() + ": binds " + std::to_string(st.buffers.size()) + " buffers, kernel has " +
                             std::to_string(st.kernel.buffers.size()));
    if (st.scalars.size() != st.kernel.scalars.size())
      throw std::logic_error(where() + ": passes " + std::to_string(st.scalars.size()) + " scalars, kernel has " +
                             std::to_string(st.kernel.scalars.size()));
    for (int b : st.buffers)
      if (b < 0 || size_t(b) >= slots) throw std::logic_error(where() + ": buffer slot " + std::to_string(b) + " out of range");
  }
}

}  // namespace

PreparedPlan prepare(rt::Device& dev, const Problem& p, const Variant& v, const rt::CompileOptions& opt) {
  const OpDef& d = op_for(p);
  PreparedPlan pp;
  pp.problem = p;
  pp.variant = v;
  pp.plan = d.plan(p, v, dev.caps());
  pp.io = d.inputs(p);
  for (auto& t : d.outputs(p)) pp.io.push_back(std::move(t));
  check_plan(p, pp.plan, pp.io.size());
  for (const Step& st : pp.plan.steps) {
    auto ck = dev.compile(st.kernel, opt);
    pp.compile_ms += ck->compile_ms();
    pp.cache_hits += ck->cache_hit();
    pp.kernels.push_back(std::move(ck));
  }
  for (size_t b : pp.plan.temp_bytes) pp.temps.push_back(dev.alloc(std::max<size_t>(b, 4)));
  return pp;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void launch_step(rt::Device& dev, PreparedPlan& pp, const std::vector<rt::Buffer*>& io, size_t s) {
  const Step& st = pp.plan.steps[s];
  rt::LaunchArgs a;
  a.dims = st.dims;
  a.scalars = st.scalars;
  for (int b : st.buffers) a.buffers.push_back(size_t(b) < io.size() ? io[b] : pp.temps[b - io.size()].get());
  dev.launch(*pp.kernels[s], a);
}

}  // namespace

void execute(rt::Device& dev, PreparedPlan& pp, const std::vector<rt::Buffer*>& io) {
  if (io.size() != pp.io.size())
    throw std::invalid_argument("op '" + pp.problem.op + "': expected " + std::to_string(pp.io.size()) +
                                " buffers (inputs then outputs), got " + std::to_string(io.size()));
  for (size_t i = 0; i < io.size(); ++i) {
    const TensorSpec& t = pp.io[i];
    if (!io[i] || io[i]->bytes() < t.bytes)
      throw std::invalid_argument("op '" + pp.problem.op + "': buffer for '" + t.name + "' holds " +
                                  std::to_string(io[i] ? io[i]->bytes() : 0) + " bytes, needs " + std::to_string(t.bytes));
  }
  for (size_t s = 0; s < pp.plan.steps.size(); ++s) launch_step(dev, pp, io, s);
}

Variant choose_variant(rt::Device& dev, const Problem& p, std::string* source) {
  const OpDef& d = op_for(p);
  auto cands = d.candidates(p, dev.caps());
  if (auto v = TuneDb::global().lookup(tune_key(p, device_key(dev), cands))) {
    if (std::find(cands.begin(), cands.end(), *v) != cands.end()) {
      if (source) *source = "tuned";
      return *v;
    }
  }
  if (source) *source = "heuristic";
  return d.heuristic(p, dev.caps());
}

HostTensors make_host_tensors(const Problem& p, uint64_t seed, uint8_t poison_byte) {
  const OpDef& d = op_for(p);
  HostTensors t;
  auto ins = d.inputs(p);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < ins.size(); ++i) {
    std::vector<uint8_t> bytes;
    if (d.make_input) {
      bytes.assign(ins[i].bytes, 0);
      d.make_input(p, int(i), bytes, seed * 1000003 + i);
      if (bytes.size() != ins[i].bytes)
        throw std::logic_error("op '" + p.op + "': make_input resized input '" + ins[i].name + "'");
    } else {
      ir::BufferSpec spec;
      spec.elems = ins[i].bytes / elem_bytes(ins[i].elem);
      spec.lo = ins[i].lo;
      spec.hi = ins[i].hi;
      rt::fill_random(ins[i].elem, spec, bytes, rng);
    }
    t.in.push_back(std::move(bytes));
  }
  for (const auto& o : d.outputs(p)) t.out.emplace_back(o.bytes, poison_byte);
  return t;
}

void run_reference(const Problem& p, HostTensors& t) {
  const OpDef& d = op_for(p);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& b : t.in) in.push_back(b.data());
  for (auto& b : t.out) out.push_back(b.data());
  d.reference(p, in, out);
}

Comparison compare_outputs(const Problem& p, const HostTensors& got, const HostTensors& want, double tolerance,
                           double floor) {
  const OpDef& d = op_for(p);
  Comparison c;
  auto outs = d.outputs(p);
  for (size_t o = 0; o < outs.size(); ++o) {
    ir::Type t = outs[o].elem.scalar();
    size_t sb = size_t(t.bytes()), n = outs[o].bytes / sb;
    double ss = 0;
    for (size_t i = 0; i < n; ++i) {
      double w = rt::scalar_value(t, want.out[o].data() + i * sb);
      if (std::isfinite(w)) ss += w * w;
    }
    double rms = n ? std::sqrt(ss / double(n)) : 0.0;
    for (size_t i = 0; i < n; ++i) {
      double g = rt::scalar_value(t, got.out[o].data() + i * sb);
      double w = rt::scalar_value(t, want.out[o].data() + i * sb);
      double err;
      if (std::isnan(w) && std::isnan(g)) err = 0;
      else if (std::isinf(w) && g == w) err = 0;
      else if (!std::isfinite(g) || !std::isfinite(w)) err = INFINITY;
      else {
        double scale = std::max({std::abs(w), rms, floor});
        err = scale > 0 ? std::abs(g - w) / scale : std::abs(g - w);
      }
      if (err > tolerance) ++c.mismatches;
      if (err > c.max_rel_err || (c.worst.empty() && err > tolerance)) {
        c.max_rel_err = std::max(c.max_rel_err, err);
        std::ostringstream s;
        s << "output '" << outs[o].name << "' element " << i << ": got " << g << ", expected " << w;
        c.worst = s.str();
      }
    }
  }
  return c;
}

namespace {

double tolerance_of(const OpDef& d, const Problem& p) { return d.tolerance ? d.tolerance(p) : 1e-4; }

// The checking protocol shared by every backend: the reference on fresh
// inputs, then `run` twice on copies of those inputs with outputs poisoned by
// two different bytes (NaN / large-magnitude patterns for floats): an output
// byte that differs between the two runs was never written.
OpCheck check_twice(const Problem& p, uint64_t seed, const std::string& label,
                    const std::function<void(HostTensors&, uint8_t poison)>& run) {
  const OpDef& d = op_for(p);
  HostTensors want = make_host_tensors(p, seed);
  run_reference(p, want);
  const double tol = tolerance_of(d, p);
  HostTensors runs[2];
  const uint8_t poisons[2] = {0xff, 0x7f};
  for (int r = 0; r < 2; ++r) {
    runs[r].in = want.in;
    for (const auto& o : want.out) runs[r].out.emplace_back(o.size(), poisons[r]);
    run(runs[r], poisons[r]);
  }
  OpCheck c;
  c.tolerance = tol;
  c.cmp = compare_outputs(p, runs[0], want, tol, d.error_scale ? d.error_scale(p, want.in) : 0.0);
  size_t unwritten = 0;
  for (size_t o = 0; o < runs[0].out.size(); ++o)
    for (size_t i = 0; i < runs[0].out[o].size(); ++i) unwritten += runs[0].out[o][i] != runs[1].out[o][i];
  if (unwritten) {
    c.message = "[" + label + "] " + p.str() + ": " + std::to_string(unwritten) +
                " output bytes depend on the outputs' initial contents (never written)";
  } else if (c.cmp.mismatches) {
    std::ostringstream m;
    m << "[" << label << "] " << p.str() << ": " << c.cmp.mismatches << " elements differ from the reference (max rel err "
      << c.cmp.max_rel_err << ", tolerance " << tol << "); worst: " << c.cmp.worst;
    c.message = m.str();
  } else {
    c.ok = true;
  }
  return c;
}

}  // namespace

std::vector<rt::Buffer*> DeviceTensors::io() const {
  std::vector<rt::Buffer*> v;
  for (auto& b : bufs) v.push_back(b.get());
  return v;
}

DeviceTensors upload(rt::Device& dev, const HostTensors& t) {
  DeviceTensors d;
  for (const auto* group : {&t.in, &t.out})
    for (const auto& h : *group) {
      d.bufs.push_back(dev.alloc(std::max<size_t>(h.size(), 4)));
      if (!h.empty()) d.bufs.back()->upload(h.data(), h.size());
    }
  return d;
}

void download(const DeviceTensors& d, HostTensors& t, size_t n_in) {
  for (size_t o = 0; o < t.out.size(); ++o)
    if (!t.out[o].empty()) d.bufs[n_in + o]->download(t.out[o].data(), t.out[o].size());
}

OpCheck check_op(rt::Device& dev, const Problem& p, const Variant& v, uint64_t seed) {
  PreparedPlan pp = prepare(dev, p, v);
  const OpDef& d = op_for(p);
  std::string overrun;
  OpCheck c = check_twice(p, seed, dev.name() + ", " + v.str(), [&](HostTensors& t, uint8_t poison) {
    // The plan's temporaries poisoned like the outputs: a step that leaves
    // part of one unwritten (an empty K split's partial C) shows up. Every
    // buffer is guarded (rt::guarded_buffer) by the same poison byte.
    struct Guarded {
      const rt::Buffer* buf;
      size_t bytes;  // before the guard
      std::string what;
    };
    std::vector<Guarded> guarded;
    DeviceTensors dt;
    const auto in_specs = d.inputs(p), out_specs = d.outputs(p);
    for (size_t i = 0; i < t.in.size() + t.out.size(); ++i) {
      const bool in = i < t.in.size();
      const std::vector<uint8_t>& h = in ? t.in[i] : t.out[i - t.in.size()];
      const size_t bytes = std::max<size_t>(h.size(), 4);
      dt.bufs.push_back(rt::guarded_buffer(dev, h, bytes, poison));
      guarded.push_back({dt.bufs.back().get(), bytes,
                         in ? "input '" + in_specs[i].name + "'" : "output '" + out_specs[i - t.in.size()].name + "'"});
    }
    for (size_t i = 0; i < pp.temps.size(); ++i) {
      const size_t bytes = std::max<size_t>(pp.plan.temp_bytes[i], 4);
      pp.temps[i] = rt::guarded_buffer(dev, {}, bytes, poison);
      guarded.push_back({pp.temps[i].get(), bytes, "temporary " + std::to_string(i)});
    }
    execute(dev, pp, dt.io());
    dev.synchronize();
    download(dt, t, t.in.size());
    for (const Guarded& g : guarded)
      if (overrun.empty()) overrun = rt::guard_overrun(*g.buf, g.bytes, poison, g.what);
  });
  if (!overrun.empty()) {
    c.ok = false;
    c.message = "[" + dev.name() + ", " + v.str() + "] " + p.str() + ": " + overrun;
  }
  c.compile_ms = pp.compile_ms;
  return c;
}

OpCheck check_op_interpreted(const Problem& p, const Variant& v, const TargetCaps& caps, uint64_t seed) {
  const OpDef& d = op_for(p);
  Plan plan = d.plan(p, v, caps);
  const size_t nin = d.inputs(p).size(), nio = nin + d.outputs(p).size();
  check_plan(p, plan, nio);
  return check_twice(p, seed, "interpreter, " + v.str(), [&](HostTensors& t, uint8_t poison) {
    std::vector<std::vector<uint8_t>> temps;
    for (size_t b : plan.temp_bytes) temps.emplace_back(std::max<size_t>(b, 4), poison);
    auto slot = [&](int s) -> std::vector<uint8_t>& {
      size_t i = size_t(s);
      return i < nin ? t.in[i] : i < nio ? t.out[i - nin] : temps[i - nio];
    };
    for (const Step& st : plan.steps) {
      std::vector<ir::InterpBuffer> bufs;
      for (int b : st.buffers) bufs.push_back({slot(b).data(), slot(b).size()});
      ir::interpret(st.kernel, st.dims, bufs, st.scalars);
    }
  });
}

std::vector<DeviceTensors> rotating_inputs(rt::Device& dev, const Problem& p, int rotate) {
  // Four distinct random sets, uploaded in turn: the copies are for the
  // caches, and making each one's random data took seconds at 100 copies.
  std::vector<HostTensors> host;
  std::vector<DeviceTensors> sets;
  for (int r = 0; r < std::max(rotate, 1); ++r) {
    if (r < 4) host.push_back(make_host_tensors(p, 100 + r));
    sets.push_back(upload(dev, host[size_t(r) % host.size()]));
  }
  return sets;
}

double time_op(rt::Device& dev, PreparedPlan& pp, int rotate, int min_reps, double min_s) {
  std::vector<DeviceTensors> sets = rotating_inputs(dev, pp.problem, rotate);
  return time_op(dev, pp, sets, min_reps, min_s);
}

double time_op(rt::Device& dev, PreparedPlan& pp, std::vector<DeviceTensors>& sets, int min_reps, double min_s) {
  if (sets.empty()) throw std::invalid_argument("time_op: no input sets");
  const size_t rotate = sets.size();
  auto once = [&](int r) {
    auto t0 = Clock::now();
    execute(dev, pp, sets[size_t(r) % rotate].io());
    dev.synchronize();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  once(0);  // warm-up: page faults, thread pool start, caches of the JIT'd code
  std::vector<double> ms;
  double total = 0;
  for (int i = 0; (i < min_reps || total < min_s * 1e3) && i < 10000; ++i) {
    ms.push_back(once(i + 1));
    total += ms.back();
  }
  return median(std::move(ms));
}

std::vector<double> time_steps(rt::Device& dev, PreparedPlan& pp, int reps) {
  DeviceTensors t = upload(dev, make_host_tensors(pp.problem, 100));
  const auto io = t.io();
  execute(dev, pp, io);  // warm-up, and checks the buffers
  dev.synchronize();
  std::vector<std::vector<double>> ms(pp.plan.steps.size());
  for (int r = 0; r < std::max(reps, 1); ++r)
    for (size_t s = 0; s < pp.plan.steps.size(); ++s) {
      auto t0 = Clock::now();
      launch_step(dev, pp, io, s);
      dev.synchronize();
      ms[s].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  std::vector<double> med;
  for (auto& m : ms) med.push_back(median(std::move(m)));
  return med;
}

}  // namespace kgen::ops
