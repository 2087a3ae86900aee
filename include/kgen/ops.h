// The op library: an ops::Problem names an op ("softmax", "matmul", ... ;
// `kgen ops` lists them with the order of their sizes) and its sizes, dtype
// and attributes; the library plans it as DSL kernels for the device, with
// the variant its tuning database or heuristic picks.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/core/executor.h"
#include "ops/core/op.h"

namespace kgen {

// Host tensors for `p` (inputs then outputs, in the op's order, as bytes):
// inputs random from `seed` (the op's own generator for packed or index
// inputs), outputs sized. Throws std::invalid_argument naming the op and
// the problem when it is unknown or malformed.
inline ops::HostTensors op_tensors(const ops::Problem& p, uint64_t seed) {
  ops::register_all_ops();
  return ops::make_host_tensors(p, seed);
}

// Runs `p` on `dev`: reads t.in, overwrites t.out (as op_tensors sized them).
inline void run_op(rt::Device& dev, const ops::Problem& p, ops::HostTensors& t) {
  ops::register_all_ops();
  ops::PreparedPlan plan = ops::prepare(dev, p, ops::choose_variant(dev, p));
  ops::DeviceTensors bufs = ops::upload(dev, t);
  ops::execute(dev, plan, bufs.io());
  dev.synchronize();
  ops::download(bufs, t, t.in.size());
}

// Host bytes (a tensor of op_tensors) as elements of T.
template <class T>
std::vector<T> values(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace kgen
