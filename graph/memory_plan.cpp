#include "graph/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace kgen::graph {

namespace {

struct Life {
  bool used = false;  // touched by a launch, or an input/output (times run -1 .. launches)
  int first = 0, last = 0;
};

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Launch range over which each root slot holds data. Inputs and outputs live
// throughout: the caller writes and reads them around the run.
std::vector<Life> lifetimes(const Program& p) {
  const int end = int(p.launches.size());
  std::vector<Life> life(p.slots.size());
  auto touch = [&](int slot, int t) {
    // Not "first < 0" for unset: inputs and outputs are touched at -1 (before
    // the first launch), which then read as unset and collapsed their life to
    // [end, end], so they shared bytes with activations live during the run.
    Life& l = life[size_t(p.root(slot))];
    if (!l.used || t < l.first) l.first = t;
    if (!l.used || t > l.last) l.last = t;
    l.used = true;
  };
  for (int t = 0; t < end; ++t)
    for (int b : p.launches[size_t(t)].step.buffers) touch(b, t);
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const Slot::Kind k = p.slots[s].kind;
    if (k == Slot::Kind::Input || k == Slot::Kind::Output) {
      touch(int(s), -1);
      touch(int(s), end);
    }
  }
  return life;
}

}  // namespace

MemoryPlan plan_memory(const Program& p, size_t alignment, size_t guard) {
  MemoryPlan mp;
  const size_t n = p.slots.size();
  mp.offset.assign(n, 0);
  mp.in_arena.assign(n, false);
  std::vector<Life> life = lifetimes(p);
  std::vector<int> roots;
  for (size_t s = 0; s < n; ++s)
    if (p.slots[s].alias < 0 && p.slots[s].kind != Slot::Kind::Constant && p.slots[s].kind != Slot::Kind::State &&
        life[s].used && p.slots[s].bytes)
      roots.push_back(int(s));
  // Outputs that are constants keep a place too (written once at prepare).
  std::stable_sort(roots.begin(), roots.end(), [&](int a, int b) { return p.slots[size_t(a)].bytes > p.slots[size_t(b)].bytes; });
  struct Placed {
    size_t off, end;
    Life life;
  };
  std::vector<Placed> placed;
  for (int s : roots) {
    const size_t bytes = align_up(p.slots[size_t(s)].bytes + guard, alignment);
    mp.unshared_bytes += bytes;
    const Life l = life[size_t(s)];
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& q : placed)
      if (!(q.life.last < l.first || l.last < q.life.first)) busy.push_back({q.off, q.end});
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (auto [b, e] : busy) {
      if (off + bytes <= b) break;
      off = std::max(off, e);
    }
    placed.push_back({off, off + bytes, l});
    mp.offset[size_t(s)] = off;
    mp.in_arena[size_t(s)] = true;
    mp.arena_bytes = std::max(mp.arena_bytes, off + bytes);
  }
  for (size_t s = 0; s < n; ++s) {
    const int r = p.root(int(s));
    if (int(s) != r && mp.in_arena[size_t(r)]) {
      mp.in_arena[s] = true;
      mp.offset[s] = mp.offset[size_t(r)] + p.root_offset(int(s));
    }
  }
  return mp;
}

}  // namespace kgen::graph
