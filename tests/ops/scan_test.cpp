// The scan and selective_scan ops: every variant against the C++ reference
// (n = 1, 2, 31, 1000, 4097, multi-row, multi-level Blelloch, inclusive and
// exclusive, f32 and i32) on the CPU with 1 and 2 threads, in the
// interpreter, and on the GPU targets available here.
#include <doctest/doctest.h>

#include <random>

#include "tests/ops/op_test_util.h"
#include "ops/core/executor.h"
#include "ops/core/op.h"

using namespace kgen;
using namespace kgen::test;

namespace {

ops::Problem scan(std::vector<int64_t> dims, ir::ScalarKind dt, bool exclusive) {
  ops::Problem p;
  p.op = "scan";
  p.dims = std::move(dims);
  p.dtype = dt;
  p.attrs["exclusive"] = exclusive;
  return p;
}

ops::Problem sscan(std::vector<int64_t> dims, bool softplus, bool d_skip) {
  ops::Problem p;
  p.op = "selective_scan";
  p.dims = std::move(dims);
  p.attrs["delta_softplus"] = softplus;
  p.attrs["d_skip"] = d_skip;
  return p;
}

}  // namespace

TEST_CASE("scan: every CPU candidate, n = 1 .. 4097, both modes, f32 and i32, 1 and 2 threads") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("scan");
  REQUIRE(d);
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::I32})
      for (bool ex : {false, true})
        for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {2}, {31}, {1000}, {4097}, {3, 257}, {20000}, {3, 20001}})
          for (const auto& v : d->candidates(scan(dims, dt, ex), dev->caps())) check(*dev, scan(dims, dt, ex), v);
  }
}

TEST_CASE("scan: Blelloch at every block size, multi-level") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("scan");
  REQUIRE(d);
  auto dev = cpu(2);
  for (int wg : {1, 2, 64, 256})
    for (bool ex : {false, true}) {
      check(*dev, scan({2, 70001}, ir::ScalarKind::I32, ex), ops::Variant{}.set("impl", 0).set("wg", wg));
      check(*dev, scan({513}, ir::ScalarKind::F32, ex), ops::Variant{}.set("impl", 0).set("wg", wg));
    }
  // Chunked with many chunks over a long row.
  check(*dev, scan({1, 100003}, ir::ScalarKind::F32, true), ops::Variant{}.set("impl", 1).set("chunks", 8));
  // Look-back over many small chunks (two threads waiting on each other
  // chunk by chunk), rows of partial chunks.
  for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::I32})
    for (bool ex : {false, true})
      for (int64_t cl : {16, 48}) {
        check(*dev, scan({3, 1001}, dt, ex), ops::Variant{}.set("impl", 2).set("cl", cl));
        // Streamed lines with the next chunk prefetched (rows of whole lines).
        check(*dev, scan({3, 1008}, dt, ex), ops::Variant{}.set("impl", 2).set("cl", cl).set("nt", 1).set("pa", 1));
      }
  CHECK_THROWS_AS(d->plan(scan({3, 1001}, ir::ScalarKind::F32, false), ops::Variant{}.set("impl", 2).set("cl", 16).set("nt", 1),
                          dev->caps()),
                  std::invalid_argument);
  CHECK_THROWS_AS(ops::op_for(scan({4}, ir::ScalarKind::F16, false)), std::invalid_argument);
}

TEST_CASE("selective_scan: every CPU candidate on small shapes, 1 and 2 threads") {
  ops::register_all_ops();
  const ops::OpDef* d = ops::find_op("selective_scan");
  REQUIRE(d);
  for (unsigned threads : {1u, 2u}) {
    auto dev = cpu(threads);
    std::vector<ops::Problem> ps = d->test_problems;
    ps.push_back(sscan({3, 9, 32, 7}, true, true));
    for (const auto& p : ps)
      for (const auto& v : d->candidates(p, dev->caps())) check(*dev, p, v);
  }
  CHECK_THROWS_AS(ops::op_for(sscan({1, 2, 3}, false, true)), std::invalid_argument);
}

TEST_CASE("scan and selective_scan: kernels in the interpreter") {
  ops::register_all_ops();
  auto caps = codegen::cpu_caps();
  std::vector<std::pair<ops::Problem, ops::Variant>> cases = {
      {scan({600}, ir::ScalarKind::F32, false), ops::Variant{}.set("impl", 0).set("wg", 64)},  // 3 levels at block 128
      {scan({2, 45}, ir::ScalarKind::I32, true), ops::Variant{}.set("impl", 0).set("wg", 8)},
      {scan({9000}, ir::ScalarKind::I32, true), ops::Variant{}.set("impl", 1).set("chunks", 2)},
      {scan({2, 101}, ir::ScalarKind::F32, false), ops::Variant{}.set("impl", 2).set("cl", 32)},  // look-back
      {scan({2, 101}, ir::ScalarKind::I32, true), ops::Variant{}.set("impl", 2).set("cl", 0)},
      {scan({2, 112}, ir::ScalarKind::F32, true), ops::Variant{}.set("impl", 2).set("cl", 32).set("nt", 1).set("pa", 1)},
      {scan({96}, ir::ScalarKind::I32, false), ops::Variant{}.set("impl", 2).set("cl", 0).set("nt", 1)},
      {sscan({2, 5, 16, 4}, true, true), ops::Variant{}.set("impl", 1)},
      {sscan({2, 5, 19, 4}, true, true), ops::Variant{}.set("impl", 1)},  // lines off whole lines
      {sscan({2, 5, 3, 4}, false, true), ops::Variant{}.set("impl", 0).set("wg", 2)},
  };
  for (const auto& [p, v] : cases) {
    CAPTURE(p.str());
    CAPTURE(v.str());
    ops::OpCheck c = ops::check_op_interpreted(p, v, caps, fresh_seed());
    INFO(c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("scan and selective_scan: GPU targets") {
  ops::register_all_ops();
  for (const std::string& name : gpu_device_names()) {
    if (!have_device(name)) {
      MESSAGE("no " << name << " device: scans on " << name << " skipped");
      continue;
    }
    auto dev = rt::create_device(name);
    const ops::OpDef* d = ops::find_op("scan");
    for (auto dt : {ir::ScalarKind::F32, ir::ScalarKind::I32})
      for (bool ex : {false, true})
        for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {31}, {4097}, {3, 70001}})
          for (const auto& v : d->candidates(scan(dims, dt, ex), dev->caps())) check(*dev, scan(dims, dt, ex), v);
    const ops::OpDef* s = ops::find_op("selective_scan");
    for (const auto& p : s->test_problems)
      for (const auto& v : s->candidates(p, dev->caps())) check(*dev, p, v);
  }
}
