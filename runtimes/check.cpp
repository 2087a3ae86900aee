#include "runtimes/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "ir/half.h"
#include "ir/interpreter.h"

namespace kgen::rt {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Poison: all-ones bytes. For every float kind this is a NaN; for ints, -1 /
// max. An element still holding it after the run was never written.
constexpr uint8_t kPoison = 0xff;

// Output elements whose final value depends on the output's initial
// contents: never written (or read before written) by the kernel.
size_t count_unwritten(const ir::Kernel& k, const ir::Workload& w, const HostData& a, const HostData& b) {
  size_t n = 0;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    if (w.buffers[i].init || !w.buffers[i].check) continue;
    int sb = k.buffers[i].elem.scalar_bytes();
    for (size_t e = 0; e + sb <= a.buffers[i].size(); e += sb)
      n += std::memcmp(a.buffers[i].data() + e, b.buffers[i].data() + e, sb) != 0;
  }
  return n;
}

}  // namespace

void fill_random(const ir::Type& elem, const ir::BufferSpec& spec, std::vector<uint8_t>& out, std::mt19937_64& rng) {
  size_t n = spec.elems * elem.lanes;
  int sb = elem.scalar_bytes();
  out.assign(n * sb, 0);
  std::uniform_real_distribution<double> real(spec.lo, spec.hi);
  // Integer ranges are clamped to what the element type holds, so a range
  // meant to exclude zero (divisors) cannot wrap onto it.
  double lo = spec.lo, hi = spec.hi;
  if (elem.is_int()) {
    double tmin = elem.is_signed() ? -std::ldexp(1.0, elem.bits() - 1) : 0.0;
    double tmax = elem.is_signed() ? std::ldexp(1.0, elem.bits() - 1) - 1 : std::ldexp(1.0, elem.bits()) - 1;
    lo = std::clamp(lo, tmin, std::min(tmax, 9.0e18));
    hi = std::clamp(hi, lo, std::min(tmax, 9.0e18));
  }
  std::uniform_int_distribution<int64_t> integer(int64_t(std::ceil(lo)), int64_t(std::floor(hi)));
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = out.data() + i * sb;
    switch (elem.kind) {
      case ir::ScalarKind::F32: { float v = float(real(rng)); std::memcpy(p, &v, 4); break; }
      case ir::ScalarKind::F64: { double v = real(rng); std::memcpy(p, &v, 8); break; }
      case ir::ScalarKind::F16: { uint16_t v = ir::f32_to_f16(float(real(rng))); std::memcpy(p, &v, 2); break; }
      case ir::ScalarKind::BF16: { uint16_t v = ir::f32_to_bf16(float(real(rng))); std::memcpy(p, &v, 2); break; }
      case ir::ScalarKind::Bool: p[0] = uint8_t(rng() & 1); break;
      default: { int64_t v = integer(rng); std::memcpy(p, &v, sb); break; }  // little endian truncation
    }
  }
}

double scalar_value(const ir::Type& t, const uint8_t* p) {
  switch (t.kind) {
    case ir::ScalarKind::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case ir::ScalarKind::F64: { double v; std::memcpy(&v, p, 8); return v; }
    case ir::ScalarKind::F16: { uint16_t v; std::memcpy(&v, p, 2); return ir::f16_to_f32(v); }
    case ir::ScalarKind::BF16: { uint16_t v; std::memcpy(&v, p, 2); return ir::bf16_to_f32(v); }
    case ir::ScalarKind::Bool: return p[0];
    case ir::ScalarKind::I8: return int8_t(p[0]);
    case ir::ScalarKind::U8: return p[0];
    case ir::ScalarKind::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case ir::ScalarKind::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case ir::ScalarKind::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ir::ScalarKind::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case ir::ScalarKind::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
    case ir::ScalarKind::U64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    default: return 0;
  }
}


HostData make_inputs(const ir::Kernel& k, const ir::Workload& w, uint64_t seed) {
  if (w.buffers.size() != k.buffers.size())
    throw std::runtime_error("workload of '" + k.name + "' describes " + std::to_string(w.buffers.size()) +
                             " buffers, the kernel has " + std::to_string(k.buffers.size()));
  HostData d;
  std::mt19937_64 rng(seed);
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const ir::Type& elem = k.buffers[b].elem;
    std::vector<uint8_t> bytes;
    if (w.buffers[b].init) fill_random(elem, w.buffers[b], bytes, rng);
    else bytes.assign(w.buffers[b].elems * elem.bytes(), kPoison);
    d.buffers.push_back(std::move(bytes));
  }
  return d;
}

CompareResult compare_outputs(const ir::Kernel& k, const ir::Workload& w, const HostData& got, const HostData& want) {
  CompareResult r;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    if (!w.buffers[b].check) continue;
    const ir::Type elem = k.buffers[b].elem.scalar();
    const int sb = elem.scalar_bytes();
    const auto& g = got.buffers[b];
    const auto& e = want.buffers[b];
    size_t n = std::min(g.size(), e.size()) / sb;
    // Relative error with a floor scaled to the buffer's magnitude, so that
    // elements near zero in a buffer of large values are judged fairly.
    double max_abs = 0;
    for (size_t i = 0; i < n; ++i) {
      double v = scalar_value(elem, e.data() + i * sb);
      if (std::isfinite(v)) max_abs = std::max(max_abs, std::fabs(v));
    }
    double floor = std::max(1e-30, w.floor * max_abs);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* pe = e.data() + i * sb;
      const uint8_t* pg = g.data() + i * sb;
      if (std::memcmp(pe, pg, sb) == 0) continue;
      double ve = scalar_value(elem, pe), vg = scalar_value(elem, pg);
      double err;
      if (std::isnan(ve) || std::isnan(vg)) err = (std::isnan(ve) && std::isnan(vg)) ? 0 : INFINITY;
      else if (std::isinf(ve) || std::isinf(vg)) err = ve == vg ? 0 : INFINITY;
      else if (elem.is_float()) err = std::fabs(vg - ve) / std::max(std::fabs(ve), floor);
      else err = INFINITY;  // integers must match exactly
      if (err > w.tolerance) ++r.mismatches;
      if (err > r.max_rel_err || (r.worst.empty() && err > w.tolerance)) {
        r.max_rel_err = std::max(r.max_rel_err, err);
        std::ostringstream os;
        os << "buffer '" << k.buffers[b].name << "' element " << i << ": got " << vg << ", expected " << ve;
        r.worst = os.str();
      }
    }
  }
  return r;
}

std::unique_ptr<Buffer> guarded_buffer(Device& dev, const std::vector<uint8_t>& data, size_t bytes, uint8_t fill) {
  std::vector<uint8_t> all(std::max(bytes, data.size()) + kGuardBytes, fill);
  std::copy(data.begin(), data.end(), all.begin());
  auto b = dev.alloc(all.size());
  b->upload(all.data(), all.size());
  return b;
}

std::string guard_overrun(const Buffer& b, size_t bytes, uint8_t fill, const std::string& what) {
  std::vector<uint8_t> g(kGuardBytes);
  b.download(g.data(), g.size(), bytes);
  const auto n = std::count_if(g.begin(), g.end(), [&](uint8_t x) { return x != fill; });
  return n ? std::to_string(n) + " bytes written past the end of " + what : std::string();
}

CheckResult run_and_check(Device& dev, const ir::Kernel& k, const ir::Workload& w, const CheckOptions& opt) {
  CheckResult res;
  res.kernel = k.name;
  res.device = dev.name();
  HostData inputs = make_inputs(k, w, opt.seed);

  // The reference runs first: a kernel with undefined behaviour on these
  // inputs (division by zero, out-of-bounds access) gets the interpreter's
  // precise error instead of crashing the device.
  HostData want;
  // The reference groups work-items into subgroups of the device's size.
  ir::InterpOptions iopt;
  if (dev.caps().subgroup_size) iopt.subgroup_size = dev.caps().subgroup_size;
  if (opt.check) {
    want = inputs;
    std::vector<ir::InterpBuffer> ib;
    for (auto& h : want.buffers) ib.push_back({h.data(), h.size()});
    auto t0 = Clock::now();
    ir::interpret(k, w.dims, ib, w.scalars, iopt);
    res.interp_ms = ms_since(t0);
  }

  auto compiled = dev.compile(k);
  res.compile_ms = compiled->compile_ms();
  res.cache_hit = compiled->cache_hit();

  std::vector<std::unique_ptr<Buffer>> bufs;
  LaunchArgs args;
  args.dims = w.dims;
  args.scalars = w.scalars;
  // Guarded: a device kernel that stores past a buffer's end (where the
  // interpreter, which checks every access, did not) is reported.
  constexpr uint8_t kGuard = 0xa5;
  for (auto& host : inputs.buffers) {
    bufs.push_back(guarded_buffer(dev, host, host.size(), kGuard));
    args.buffers.push_back(bufs.back().get());
  }
  dev.launch(*compiled, args);
  dev.synchronize();
  HostData got;
  std::string overrun;
  for (size_t b = 0; b < bufs.size(); ++b) {
    got.buffers.emplace_back(inputs.buffers[b].size());
    bufs[b]->download(got.buffers[b].data(), got.buffers[b].size());
    if (overrun.empty()) overrun = guard_overrun(*bufs[b], inputs.buffers[b].size(), kGuard, "buffer '" + k.buffers[b].name + "'");
  }

  if (opt.check) {
    res.cmp = compare_outputs(k, w, got, want);
    // Poison detection: run the reference again with outputs zeroed instead
    // of all-ones; elements that change were never written. Skipped when the
    // interpreter is slow (large problems), where the check is less useful.
    bool has_outputs = false;
    for (const auto& b : w.buffers) has_outputs |= !b.init && b.check;
    if (has_outputs && res.interp_ms < 2000) {
      HostData zeroed = inputs;
      for (size_t b = 0; b < zeroed.buffers.size(); ++b)
        if (!w.buffers[b].init) std::fill(zeroed.buffers[b].begin(), zeroed.buffers[b].end(), 0);
      std::vector<ir::InterpBuffer> zb;
      for (auto& h : zeroed.buffers) zb.push_back({h.data(), h.size()});
      ir::interpret(k, w.dims, zb, w.scalars, iopt);
      res.cmp.never_written = count_unwritten(k, w, want, zeroed);
    }
    if (res.cmp.mismatches) {
      res.ok = false;
      res.message = std::to_string(res.cmp.mismatches) + " elements differ from the interpreter (max rel err " +
                    std::to_string(res.cmp.max_rel_err) + ", tolerance " + std::to_string(w.tolerance) + "); worst: " + res.cmp.worst;
    } else if (res.cmp.never_written) {
      res.ok = false;
      res.message = std::to_string(res.cmp.never_written) + " output elements were never written by the kernel";
    }
  }

  if (!overrun.empty()) {  // the cause of any mismatch above, so it takes the message
    res.ok = false;
    res.message = overrun;
  }

  if (opt.time) {
    // Re-upload pristine inputs so in-place kernels time the same work.
    std::vector<double> times;
    auto start = Clock::now();
    while ((int)times.size() < opt.min_repeats ||
           (std::chrono::duration<double>(Clock::now() - start).count() < opt.min_time_s && times.size() < 1000)) {
      auto t0 = Clock::now();
      dev.launch(*compiled, args);
      dev.synchronize();
      times.push_back(ms_since(t0));
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    res.run_ms = times[times.size() / 2];
    if (res.run_ms > 0) {
      res.gb_per_s = w.bytes / (res.run_ms * 1e-3) / 1e9;
      res.gflop_per_s = w.flops / (res.run_ms * 1e-3) / 1e9;
    }
  }
  return res;
}

}  // namespace kgen::rt
