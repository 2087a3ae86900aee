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

// Elementwise launches that may write their output over a same-size input
// (Launch::reuse_in): where that input dies at the launch and the output is
// born there, the output follows the input's placement (leader[out] = the
// first slot of the run) and the leader lives on to the output's last use.
std::vector<int> in_place_leaders(const Program& p, std::vector<Life>& life) {
  std::vector<int> leader(p.slots.size());
  for (size_t s = 0; s < leader.size(); ++s) leader[s] = int(s);
  auto plain = [&](int s) {
    const Slot& sl = p.slots[size_t(s)];
    return sl.alias < 0 && (sl.kind == Slot::Kind::Activation || sl.kind == Slot::Kind::Temp);
  };
  for (size_t t = 0; t < p.launches.size(); ++t) {
    const Launch& l = p.launches[t];
    if (l.reuse_in < 0 || !plain(l.reuse_in) || !plain(l.reuse_out) || l.reuse_in == l.reuse_out) continue;
    const int in = leader[size_t(l.reuse_in)], out = l.reuse_out;
    if (p.slots[size_t(in)].bytes != p.slots[size_t(out)].bytes || leader[size_t(out)] != out) continue;
    Life& li = life[size_t(in)];
    const Life& lo = life[size_t(out)];
    if (li.last != int(t) || lo.first != int(t)) continue;  // the input is read later, or the output was written before
    li.last = lo.last;
    leader[size_t(out)] = in;
  }
  return leader;
}

}  // namespace

MemoryPlan plan_memory(const Program& p, size_t alignment, size_t guard) {
  MemoryPlan mp;
  const size_t n = p.slots.size();
  mp.offset.assign(n, 0);
  mp.in_arena.assign(n, false);
  std::vector<Life> life = lifetimes(p);
  const std::vector<int> leader = in_place_leaders(p, life);
  std::vector<int> roots;
  for (size_t s = 0; s < n; ++s)
    if (p.slots[s].alias < 0 && p.slots[s].kind != Slot::Kind::Constant && p.slots[s].kind != Slot::Kind::State &&
        life[s].used && p.slots[s].bytes && leader[s] == int(s))
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
  for (size_t s = 0; s < n; ++s)
    if (leader[s] != int(s)) {  // written in place over its leader
      mp.offset[s] = mp.offset[size_t(leader[s])];
      mp.in_arena[s] = true;
      mp.unshared_bytes += align_up(p.slots[s].bytes + guard, alignment);
      ++mp.in_place;
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
