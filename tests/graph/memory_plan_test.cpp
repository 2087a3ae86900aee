// The arena plan: slots whose lives overlap never share bytes, and an
// elementwise launch's output takes its input's memory only where that input
// dies at the launch (Launch::reuse_in).
#include <doctest/doctest.h>

#include "graph/memory_plan.h"

using namespace kgen::graph;

namespace {

using Kind = Slot::Kind;

int slot(Program& p, Kind k, size_t bytes) {
  Slot s;
  s.kind = k;
  s.bytes = bytes;
  return p.add_slot(s);
}

void launch(Program& p, std::vector<int> buffers, int reuse_in = -1, int reuse_out = -1) {
  Launch l;
  l.step.buffers = std::move(buffers);
  l.reuse_in = reuse_in;
  l.reuse_out = reuse_out;
  p.launches.push_back(l);
}

bool overlap(const MemoryPlan& mp, const Program& p, int a, int b) {
  const size_t a0 = mp.offset[size_t(a)], a1 = a0 + p.slots[size_t(a)].bytes;
  const size_t b0 = mp.offset[size_t(b)], b1 = b0 + p.slots[size_t(b)].bytes;
  return a0 < b1 && b0 < a1;
}

}  // namespace

TEST_CASE("memory plan: a chain of elementwise outputs written in place over inputs that die there") {
  Program p;
  const int in = slot(p, Kind::Input, 4096), a = slot(p, Kind::Activation, 4096), b = slot(p, Kind::Activation, 4096),
            c = slot(p, Kind::Activation, 4096), keep = slot(p, Kind::Activation, 4096), out = slot(p, Kind::Output, 4096);
  launch(p, {in, a});           // t0: a = f(in)
  launch(p, {in, keep});        // t1: keep = g(in), read again at t4
  launch(p, {a, b}, a, b);      // t2: b = h(a), a dies here: in place
  launch(p, {b, c}, b, c);      // t3: c = k(b), b dies here: in place (over a too)
  launch(p, {c, keep, out});    // t4
  const MemoryPlan mp = plan_memory(p, 64);
  CHECK(mp.in_place == 2);
  CHECK(mp.offset[size_t(b)] == mp.offset[size_t(a)]);
  CHECK(mp.offset[size_t(c)] == mp.offset[size_t(a)]);
  CHECK(mp.in_arena[size_t(b)]);
  CHECK(mp.in_arena[size_t(c)]);
  // The run a..c lives t0..t4, as do keep, in and out: none may share bytes.
  for (int x : {in, keep, out}) {
    CAPTURE(x);
    CHECK_FALSE(overlap(mp, p, a, x));
  }
  CHECK_FALSE(overlap(mp, p, in, keep));
  CHECK(mp.arena_bytes == 4 * 4096);
}

TEST_CASE("memory plan: no output in place over an input read later, of another size, or of the caller's") {
  Program p;
  const int in = slot(p, Kind::Input, 4096), a = slot(p, Kind::Activation, 4096), b = slot(p, Kind::Activation, 4096),
            c = slot(p, Kind::Activation, 2048), d = slot(p, Kind::Activation, 4096), out = slot(p, Kind::Output, 4096);
  launch(p, {in, a});
  launch(p, {a, b}, a, b);      // a is read again at t3
  launch(p, {b, c}, b, c);      // c is smaller than b
  launch(p, {a, c, d});
  launch(p, {in, out}, in, out);  // the caller's input and output keep their own bytes
  launch(p, {d, b, out});
  const MemoryPlan mp = plan_memory(p, 64);
  CHECK(mp.in_place == 0);
  CHECK_FALSE(overlap(mp, p, a, b));
  CHECK_FALSE(overlap(mp, p, b, c));
  CHECK_FALSE(overlap(mp, p, in, out));
}
