// Buffer views (Device::view) and wrapped caller memory (Device::wrap) on
// every available device: a kernel reads through one view of a parent and
// writes through another, bytes outside both stay as poisoned, views compose,
// bad ranges throw, and wrap aliases on the CPU but copies on GPUs.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtimes/cuda_device.h"
#include "runtimes/runtime.h"

using namespace kgen;

namespace {

constexpr uint8_t kPoison = 0xCD;
constexpr uint32_t kN = 37;  // elements per view: odd, not a multiple of any workgroup
constexpr size_t kViewBytes = kN * 4;

// out[i] = 3 * in[i] + 1 for i < n (exact for the inputs below, fused or not).
ir::Kernel affine() {
  using namespace ir;
  Kernel k;
  k.name = "view_affine";
  k.buffers = {{"in", types::F32, Access::Read}, {"out", types::F32, Access::Write}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, b.param(0)}));
  ValueId x = b.load(b.buffer(0), i);
  ValueId y = b.op(Op::Add, {b.op(Op::Mul, {x, b.const_float(types::F32, 3)}), b.const_float(types::F32, 1)});
  b.store(b.buffer(1), i, y);
  b.end_if();
  return k;
}

std::vector<float> inputs(float shift) {
  std::vector<float> v(kN);
  for (uint32_t i = 0; i < kN; ++i) v[i] = float(i) * 0.5f - 10.0f + shift;
  return v;
}

float expected(float x) { return 3 * x + 1; }

rt::Device& device(const std::string& name) {
  static std::map<std::string, std::unique_ptr<rt::Device>> devs;
  std::unique_ptr<rt::Device>& d = devs[name];
  if (!d) d = rt::create_device(name);
  return *d;
}

void run_affine(rt::Device& dev, rt::Buffer& in, rt::Buffer& out) {
  static const ir::Kernel k = affine();
  auto ck = dev.compile(k);
  rt::LaunchArgs a;
  a.dims.workgroup = {16, 1, 1};
  a.dims.grid = {(kN + 15) / 16, 1, 1};
  a.buffers = {&in, &out};
  a.scalars = {ir::scalar_slot(kN)};
  dev.launch(*ck, a);
  dev.synchronize();
}

std::vector<float> floats_at(const std::vector<uint8_t>& bytes, size_t offset) {
  std::vector<float> v(kN);
  std::memcpy(v.data(), bytes.data() + offset, kViewBytes);
  return v;
}

// Every byte of `bytes` outside [lo, hi) ranges is still the poison.
void check_poison_outside(const std::vector<uint8_t>& bytes, const std::vector<std::pair<size_t, size_t>>& inside) {
  size_t bad = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    bool in = false;
    for (auto [lo, hi] : inside) in = in || (i >= lo && i < hi);
    if (!in && bytes[i] != kPoison && bad++ < 3) FAIL_CHECK("byte " << i << " outside the views changed to " << int(bytes[i]));
  }
  CHECK(bad == 0);
}

// The message of the std::invalid_argument `f` throws ("" when it throws none).
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("views: a kernel reads one view of a parent and writes another, nothing else changes") {
  for (const std::string& name : rt::available_devices()) {
    CAPTURE(name);
    rt::Device& dev = device(name);
    const size_t align = dev.view_alignment();
    REQUIRE(align >= 1);
    const size_t view_span = (kViewBytes + align - 1) / align * align;
    const size_t in_off = align, out_off = in_off + view_span + align;
    auto parent = dev.alloc(out_off + view_span + align);
    parent->upload(std::vector<uint8_t>(parent->bytes(), kPoison).data(), parent->bytes());
    auto in = dev.view(*parent, in_off, kViewBytes);
    // The output is a view of a view: its offset in the parent is the sum.
    auto tail = dev.view(*parent, in_off + view_span, parent->bytes() - in_off - view_span);
    auto out = dev.view(*tail, out_off - in_off - view_span, kViewBytes);
    CHECK(in->bytes() == kViewBytes);
    CHECK(out->bytes() == kViewBytes);
    const std::vector<float> x = inputs(0);
    in->upload(x.data(), kViewBytes);
    run_affine(dev, *in, *out);

    std::vector<uint8_t> all(parent->bytes());
    parent->download(all.data(), all.size());
    check_poison_outside(all, {{in_off, in_off + kViewBytes}, {out_off, out_off + kViewBytes}});
    CHECK(floats_at(all, in_off) == x);
    std::vector<float> want(kN), got(kN);
    for (uint32_t i = 0; i < kN; ++i) want[i] = expected(x[i]);
    CHECK(floats_at(all, out_off) == want);
    out->download(got.data(), kViewBytes);
    CHECK(got == want);
    if (parent->host_ptr()) CHECK(out->host_ptr() == static_cast<char*>(parent->host_ptr()) + out_off);
  }
}

TEST_CASE("views: ranges past the parent and misaligned offsets throw, naming the device and the sizes") {
  for (const std::string& name : rt::available_devices()) {
    CAPTURE(name);
    rt::Device& dev = device(name);
    const size_t align = dev.view_alignment();
    auto parent = dev.alloc(4 * align);
    const std::string past = invalid_argument_of([&] { dev.view(*parent, 2 * align, 2 * align + 4); });
    CHECK(past.find(name) != std::string::npos);
    CHECK(past.find(std::to_string(2 * align + 4) + " bytes at offset " + std::to_string(2 * align)) != std::string::npos);
    CHECK(past.find(std::to_string(4 * align) + "-byte buffer") != std::string::npos);
    CHECK(!invalid_argument_of([&] { dev.view(*parent, 5 * align, 0); }).empty());
    CHECK(!invalid_argument_of([&] { dev.view(*parent, 0, 4 * align + 1); }).empty());
    CHECK(invalid_argument_of([&] { dev.view(*parent, 4 * align, 0); }).empty());  // empty, at the end: fine
    // A view's range is checked against the view, not the buffer under it.
    auto half = dev.view(*parent, 0, 2 * align);
    CHECK(!invalid_argument_of([&] { dev.view(*half, align, align + 4); }).empty());
    if (align > 1) {
      const std::string odd = invalid_argument_of([&] { dev.view(*parent, align / 2, 4); });
      CHECK(odd.find("alignment, " + std::to_string(align) + " bytes") != std::string::npos);
    }
    // A launch checks a view by its own size: 6 bytes are not whole f32s.
    auto six = dev.view(*parent, 0, 6);
    const std::string launch = invalid_argument_of([&] { run_affine(dev, *six, *half); });
    CHECK(launch.find("has 6 bytes") != std::string::npos);
  }
}

TEST_CASE("wrap: zero copy on the CPU, a snapshot elsewhere") {
  for (const std::string& name : rt::available_devices()) {
    CAPTURE(name);
    rt::Device& dev = device(name);
    alignas(64) float host_in[kN], host_out[kN];
    const std::vector<float> x = inputs(0), later = inputs(100);
    std::memcpy(host_in, x.data(), kViewBytes);
    std::memset(host_out, kPoison, kViewBytes);
    auto in = dev.wrap(host_in, kViewBytes), out = dev.wrap(host_out, kViewBytes);
    std::memcpy(host_in, later.data(), kViewBytes);  // after the wrap: seen only through an alias
    run_affine(dev, *in, *out);
    const std::vector<float>& used = dev.wraps_without_copy() ? later : x;
    std::vector<float> want(kN), got(kN), host_after(host_out, host_out + kN);
    for (uint32_t i = 0; i < kN; ++i) want[i] = expected(used[i]);
    out->download(got.data(), kViewBytes);
    CHECK(got == want);
    CHECK(dev.wraps_without_copy() == (name == "cpu"));
    if (dev.wraps_without_copy()) {
      CHECK(host_after == want);  // the kernel wrote the caller's array
      CHECK(out->host_ptr() == static_cast<void*>(host_out));
    } else {
      std::vector<uint8_t> raw(kViewBytes);
      std::memcpy(raw.data(), host_out, kViewBytes);
      CHECK(raw == std::vector<uint8_t>(kViewBytes, kPoison));  // untouched: the buffer is a copy
    }
    CHECK(!invalid_argument_of([&] { dev.wrap(nullptr, 4); }).empty());
  }
}

TEST_CASE("wrap: on the CPU, memory misaligned for the kernel's elements is refused at launch") {
  rt::Device& dev = device("cpu");
  alignas(64) float host[kN + 1] = {};
  auto in = dev.wrap(reinterpret_cast<char*>(host) + 2, kViewBytes), out = dev.alloc(kViewBytes);
  const std::string why = invalid_argument_of([&] { run_affine(dev, *in, *out); });
  CHECK(why.find("buffer 'in' (f32)") != std::string::npos);
  CHECK(why.find("4-byte aligned") != std::string::npos);
}

TEST_CASE("cuda views and wrap: run above on a CUDA device, skipped without one") {
  std::string why;
  if (!rt::cuda_device_available(&why)) {
    MESSAGE("no CUDA device: " << why << "; the view and wrap cases ran on the other devices");
    return;
  }
  CHECK(device("cuda").view_alignment() == 256);
  CHECK(!device("cuda").wraps_without_copy());
}
