// Streaming (nontemporal) stores, `y[i].stream(v)`: recorded as a hinted
// Store, emitted by the C++ dialect as __builtin_nontemporal_store for whole
// 16/32/64-byte lines (plain stores otherwise) with an sfence at the end of the
// call, and on every device the same results as the interpreter (which runs
// them as plain stores). GPU dialects drop the hint.
#include <doctest/doctest.h>

#include "codegen/cpp.h"
#include "dsl/dsl.h"
#include "runtimes/check.h"
#include "runtimes/runtime.h"

using namespace kgen;
using namespace kgen::dsl;

namespace {

// y[i] = x[i] * 3 - 1 over n elements of `elem` (a scalar or a line), streamed;
// `wg` work-items per group (1: one item walks a chunk of `per_item`).
ir::Kernel stream_kernel(ir::Type elem, uint32_t wg) {
  std::string name = "stream_" + elem.str() + "_wg" + std::to_string(wg);
  return kernel(name, [&](KernelBuilder& kb) {
    auto x = kb.input("x", elem);
    auto y = kb.output("y", elem);
    auto n = kb.scalar("n", u32);
    kb.workgroup(wg);
    Value three = elem.is_vector() ? splat(constant(elem.scalar(), 3), elem.lanes) : constant(elem, 3);
    Value one = elem.is_vector() ? splat(constant(elem.scalar(), 1), elem.lanes) : constant(elem, 1);
    if (wg == 1) {
      // One work-item per group walks 8 consecutive elements (the row-op shape).
      Value base = group_id(0) * 8u;
      for_range(base, min(base + 8u, n), [&](Value i) { y[i].stream(x[i] * three - one); });
    } else {
      auto i = global_id(0);
      if_(i < n, [&] { y[i].stream(x[i] * three - one); });
    }
  });
}

ir::Workload stream_workload(uint32_t wg, size_t n) {
  ir::Workload w;
  const size_t per_group = wg == 1 ? 8 : wg;
  w.dims.grid = {uint32_t((n + per_group - 1) / per_group), 1, 1};
  w.dims.workgroup = {wg, 1, 1};
  w.buffers = {{n, -2.0, 2.0, true, false}, {n, 0, 0, false, true}};
  w.scalars = {ir::scalar_slot(uint32_t(n))};
  w.tolerance = 1e-2;  // f16/bf16 lines round their results; f32 is exact
  return w;
}

const ir::Type kElems[] = {dsl::f32, line(dsl::f32, 4), line(dsl::f32, 8), line(dsl::f32, 16), line(dsl::f16, 16),
                           line(dsl::bf16, 16), line(dsl::f64, 8), line(dsl::i32, 16)};

void check_device(rt::Device& dev, const std::function<std::string(const ir::Kernel&)>& unsupported = {}) {
  int ran = 0;
  for (ir::Type e : kElems)
    for (uint32_t wg : {1u, 64u}) {
      ir::Kernel k = stream_kernel(e, wg);
      if (unsupported) {
        std::string why = unsupported(k);
        if (!why.empty()) {
          MESSAGE("skip " << k.name << " on " << dev.name() << ": " << why);
          continue;
        }
      }
      for (size_t n : {size_t(1), size_t(37), size_t(1000)}) {
        CAPTURE(k.name);
        CAPTURE(n);
        rt::CheckOptions co;
        co.time = false;
        co.seed = 17 + n;
        rt::CheckResult r = rt::run_and_check(dev, k, stream_workload(wg, n), co);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(r.cmp.never_written == 0);
        ++ran;
      }
    }
  MESSAGE(dev.name() << ": " << ran << " streaming-store runs checked");
}

}  // namespace

TEST_CASE("y[i].stream(v) records a nontemporal store; shared arrays refuse it") {
  ir::Kernel k = stream_kernel(line(dsl::f32, 16), 1);
  int nt = 0;
  ir::walk(k.body, [&](const ir::Instr& in) { nt += ir::is_nontemporal_store(in); });
  CHECK(nt == 1);
  CHECK_THROWS_AS(kernel("shared_stream",
                         [](KernelBuilder& kb) {
                           kb.workgroup(4);
                           auto s = shared_array(f32, 4);
                           s[local_id(0)].stream(1.0f);
                         }),
                  ir::Error);
}

TEST_CASE("the C++ dialect streams whole lines, stores scalars plainly, and fences") {
  std::string lines = codegen::emit_cpp(stream_kernel(line(dsl::f32, 16), 1));
  CHECK(lines.find("__builtin_nontemporal_store(") != std::string::npos);
  CHECK(lines.find("kg_stream_fence();") != std::string::npos);
  std::string scalars = codegen::emit_cpp(stream_kernel(dsl::f32, 64));
  scalars = scalars.substr(scalars.find("extern \"C\" void "));  // the kernel, after the prelude's kg_streamu
  CHECK(scalars.find("__builtin_nontemporal_store(") == std::string::npos);
  std::string plain = codegen::emit_cpp(kernel("plain", [](KernelBuilder& kb) {
    auto y = kb.output("y", line(dsl::f32, 16));
    kb.workgroup(1);
    y[group_id(0)] = splat(constant(f32, 1.0f), 16);
  }));
  CHECK(plain.find("kg_stream_fence();") == std::string::npos);
}

#if defined(__x86_64__)
TEST_CASE("the CPU emits aligned streaming vector stores for lines") {
  auto dev = rt::create_device("cpu");
  rt::CompileOptions o;
  o.keep_ir = true;
  auto ck = dev->compile(stream_kernel(line(dsl::f32, 16), 1), o);
  std::string as = ck->debug_asm();
  if (as.empty()) {
    MESSAGE("no assembly kept; skipping the instruction check");
    return;
  }
  CHECK(as.find("vmovntps") != std::string::npos);
  CHECK(as.find("sfence") != std::string::npos);
}
#endif

TEST_CASE("streaming stores match the interpreter on the CPU (1 and 2 threads)") {
  for (unsigned threads : {1u, 2u}) {
    rt::DeviceOptions opt;
    opt.threads = threads;
    auto dev = rt::create_device("cpu", opt);
    check_device(*dev);
  }
}

TEST_CASE("streaming stores match the interpreter on the GPU devices that are available") {
  for (const std::string& name : rt::available_devices()) {
    if (name == "cpu") continue;
    std::unique_ptr<rt::Device> dev;
    try {
      dev = rt::create_device(name);
    } catch (const std::exception& e) {
      MESSAGE("skip " << name << ": " << e.what());
      continue;
    }
    // What a device cannot express (f16/bf16/f64 lines on WGSL...) is refused
    // by its compile; skip those kernels with the reason.
    auto unsupported = [&](const ir::Kernel& k) -> std::string {
      try {
        dev->compile(k);
      } catch (const std::exception& e) {
        return e.what();
      }
      return "";
    };
    check_device(*dev, unsupported);
  }
}
