// Host-side buffers for running kernels in the interpreter from tests:
// typed element access, random init per BufferSpec, poison for outputs.
#pragma once
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "ir/half.h"
#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/workload.h"

namespace kgen::dsl::test {

struct HostBuf {
  ir::Type elem;  // element type of the buffer (a line counts as lanes scalars)
  std::vector<uint8_t> bytes;

  HostBuf(ir::Type e, size_t elems) : elem(e), bytes(elems * e.bytes()) {}
  size_t scalars() const { return bytes.size() / elem.scalar_bytes(); }

  double get(size_t i) const {
    const uint8_t* p = bytes.data() + i * elem.scalar_bytes();
    switch (elem.kind) {
      case ir::ScalarKind::F32: { float f; std::memcpy(&f, p, 4); return f; }
      case ir::ScalarKind::F16: { uint16_t h; std::memcpy(&h, p, 2); return ir::f16_to_f32(h); }
      case ir::ScalarKind::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
      case ir::ScalarKind::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
      default: throw std::runtime_error("HostBuf: unsupported type " + elem.str());
    }
  }
  void set(size_t i, double v) {
    uint8_t* p = bytes.data() + i * elem.scalar_bytes();
    switch (elem.kind) {
      case ir::ScalarKind::F32: { float f = float(v); std::memcpy(p, &f, 4); return; }
      case ir::ScalarKind::F16: { uint16_t h = ir::f32_to_f16(float(v)); std::memcpy(p, &h, 2); return; }
      case ir::ScalarKind::I32: { int32_t x = int32_t(v); std::memcpy(p, &x, 4); return; }
      case ir::ScalarKind::U32: { uint32_t x = uint32_t(v); std::memcpy(p, &x, 4); return; }
      default: throw std::runtime_error("HostBuf: unsupported type " + elem.str());
    }
  }
};

// Buffers for `k` as `w` describes them (random inputs, poisoned outputs).
inline std::vector<HostBuf> make_buffers(const ir::Kernel& k, const ir::Workload& w, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::vector<HostBuf> bufs;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const ir::BufferSpec& s = w.buffers.at(b);
    HostBuf h(k.buffers[b].elem, s.elems);
    if (!s.init) {
      std::memset(h.bytes.data(), 0xCD, h.bytes.size());
    } else if (h.elem.is_int()) {
      std::uniform_int_distribution<int64_t> d(int64_t(s.lo), int64_t(s.hi));
      for (size_t i = 0; i < h.scalars(); ++i) h.set(i, double(d(rng)));
    } else {
      std::uniform_real_distribution<double> d(s.lo, s.hi);
      for (size_t i = 0; i < h.scalars(); ++i) h.set(i, d(rng));
    }
    bufs.push_back(std::move(h));
  }
  return bufs;
}

inline void run(const ir::Kernel& k, const ir::LaunchDims& dims, std::vector<HostBuf>& bufs,
                const std::vector<uint64_t>& scalars) {
  std::vector<ir::InterpBuffer> ib;
  for (HostBuf& b : bufs) ib.push_back({b.bytes.data(), b.bytes.size()});
  ir::interpret(k, dims, ib, scalars);
}

}  // namespace kgen::dsl::test
