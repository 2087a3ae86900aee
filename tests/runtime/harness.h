// Runs a kernel on a device and on the reference interpreter with the same
// inputs (outputs poisoned with 0xFF bytes = NaN for floats) and compares
// every buffer element-wise.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ir/half.h"
#include "ir/interpreter.h"
#include "runtimes/runtime.h"

namespace kgen::test {

inline double elem_value(ir::ScalarKind k, const uint8_t* p, bool* is_float) {
  *is_float = true;
  switch (k) {
    case ir::ScalarKind::F32: { float f; std::memcpy(&f, p, 4); return f; }
    case ir::ScalarKind::F64: { double f; std::memcpy(&f, p, 8); return f; }
    case ir::ScalarKind::F16: { uint16_t h; std::memcpy(&h, p, 2); return ir::f16_to_f32(h); }
    case ir::ScalarKind::BF16: { uint16_t h; std::memcpy(&h, p, 2); return ir::bf16_to_f32(h); }
    default: *is_float = false; return 0;
  }
}

// init[i]: initial bytes of buffer i (Write buffers: only the size matters).
inline void run_and_compare(rt::Device& dev, const ir::Kernel& k, const ir::LaunchDims& dims,
                            std::vector<std::vector<uint8_t>> init, const std::vector<uint64_t>& scalars,
                            double tol = 1e-6) {
  for (size_t i = 0; i < k.buffers.size(); ++i)
    if (k.buffers[i].access == ir::Access::Write) std::fill(init[i].begin(), init[i].end(), 0xFF);
  // Reference.
  std::vector<std::vector<uint8_t>> ref = init;
  std::vector<ir::InterpBuffer> ib;
  for (auto& b : ref) ib.push_back({b.data(), b.size()});
  ir::interpret(k, dims, ib, scalars);
  // Device.
  auto ck = dev.compile(k);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::LaunchArgs args;
  args.dims = dims;
  args.scalars = scalars;
  for (auto& b : init) {
    bufs.push_back(dev.alloc(b.size()));
    bufs.back()->upload(b.data(), b.size());
    args.buffers.push_back(bufs.back().get());
  }
  dev.launch(*ck, args);
  dev.synchronize();
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::vector<uint8_t> got(init[i].size());
    bufs[i]->download(got.data(), got.size());
    ir::Type et = k.buffers[i].elem.scalar();
    size_t es = size_t(et.bytes());
    size_t bad = 0;
    for (size_t off = 0; off + es <= got.size(); off += es) {
      bool fl;
      double a = elem_value(et.kind, &got[off], &fl), r = elem_value(et.kind, &ref[i][off], &fl);
      bool ok;
      if (fl) ok = a == r || (std::isnan(a) && std::isnan(r)) || std::fabs(a - r) <= tol * std::max(1.0, std::fabs(r));
      else ok = std::memcmp(&got[off], &ref[i][off], es) == 0;
      if (!ok && bad++ < 5)
        FAIL_CHECK(k.name << ": buffer '" << k.buffers[i].name << "' element " << off / es << ": got " << a
                          << " expected " << r << " (bytes differ)");
    }
    CHECK_MESSAGE(bad == 0, k.name << ": " << bad << " mismatches in buffer '" << k.buffers[i].name << "'\n" << ck->source());
  }
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace kgen::test
