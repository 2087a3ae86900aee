// interpret(): argument checks and the SIMT scheduler. The per-instruction
// work is in the flat program built by interp_compile.cpp; this file decides
// which work-item runs when, and enforces the rendezvous rules of barriers
// and subgroup ops (see interpreter.h).
#include "ir/interpreter.h"

#include <algorithm>

#include "ir/interp_internal.h"
#include "ir/semantics.h"

namespace kgen::ir {

namespace interp {

namespace {

std::string triple(const std::array<uint32_t, 3>& v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
}

std::string prefix(const Kernel& k) { return "kernel '" + k.name + "': "; }

// Runs `it` until it finishes or reaches a rendezvous.
void run(Item& it, Machine& m) {
  const Code* code = m.code.data();
  uint32_t pc = it.pc;
  const uint64_t limit = m.opt.max_steps;
  try {
    for (;;) {
      if (limit && ++m.steps > limit)
        fail(m, code[pc], it, "step limit of " + std::to_string(limit) + " instructions exceeded (infinite loop?)");
      const Code& c = code[pc];
      int32_t next = c.fn(c, it, m);
      if (next >= 0) {
        pc = uint32_t(next);
      } else {
        it.pc = pc;
        it.state = next == kExit ? Item::State::Done : Item::State::Waiting;
        return;
      }
    }
  } catch (const DivisionByZero&) {
    fail(m, code[pc], it, "integer division by zero");
  }
}

// Poison: quiet NaNs with a 0xCD.. payload for floats, 0xCD bytes otherwise,
// so reading shared memory before writing it shows up in results.
void poison(Machine& m) {
  std::fill(m.shared.begin(), m.shared.end(), std::byte{0xCD});
  for (const Mem& mem : m.mems) {
    if (!mem.shared || !mem.elem.is_float()) continue;
    uint64_t pattern = 0;
    switch (mem.elem.kind) {
      case ScalarKind::F16: pattern = 0x7ECD; break;
      case ScalarKind::BF16: pattern = 0x7FCD; break;
      case ScalarKind::F32: pattern = 0x7FCDCDCD; break;
      default: pattern = 0x7FFCDCDCDCDCDCDCull; break;
    }
    size_t es = size_t(mem.elem.scalar_bytes()), n = mem.elems * mem.elem.lanes;
    for (size_t i = 0; i < n; ++i) std::memcpy(mem.base + i * es, &pattern, es);
  }
}

std::string where(const Machine& m, const Code& c) {
  return c.src && c.src->loc.known() ? " at " + c.src->loc.str() : "";
}

class Group {
 public:
  explicit Group(Machine& m) : m_(m) {
    const auto& wg = m.dims.workgroup;
    items_.resize(m.dims.group_threads());
    if (m.has_rendezvous) frames_.resize(items_.size() * m.frame_bytes);
    for (uint32_t i = 0; i < items_.size(); ++i) {
      Item& it = items_[i];
      it.lin = i;
      it.local = {i % wg[0], (i / wg[0]) % wg[1], i / (wg[0] * wg[1])};
      if (m.has_rendezvous) {
        it.frame = frames_.data() + size_t(i) * m.frame_bytes;
        std::memcpy(it.frame, m.frame_template.data(), m.frame_bytes);
      }
    }
    if (!m.has_rendezvous) {
      // Items run to completion one after another: one frame serves all, and
      // its constants stay in place (SSA slots are only written by their def).
      frames_ = m.frame_template;
      for (Item& it : items_) it.frame = frames_.data();
    }
  }

  void run_group() {
    poison(m_);
    for (Item& it : items_) {
      it.pc = 0;
      it.state = Item::State::Ready;
    }
    if (!m_.has_rendezvous) {
      for (Item& it : items_) run(it, m_);
      return;
    }
    for (;;) {
      bool any_live = false;
      for (Item& it : items_) {
        if (it.state == Item::State::Ready) run(it, m_);
        any_live |= it.state != Item::State::Done;
      }
      if (!any_live) return;
      if (!release_subgroups()) release_barrier();
    }
  }

 private:
  const Code& at(const Item& it) const { return m_.code[it.pc]; }

  // Runs every subgroup op whose subgroup's active items have all arrived.
  // Returns whether any did.
  bool release_subgroups() {
    const uint32_t sg = m_.opt.subgroup_size;
    bool progressed = false;
    std::vector<Item*> lanes(sg);
    for (size_t base = 0; base < items_.size(); base += sg) {
      const Item* waiting_sub = nullptr;
      const Item* waiting_bar = nullptr;
      for (uint32_t l = 0; l < sg; ++l) {
        Item* it = base + l < items_.size() ? &items_[base + l] : nullptr;
        if (it && it->state == Item::State::Done) it = nullptr;
        lanes[l] = it;
        if (!it) continue;
        if (at(*it).rendezvous == Rendezvous::Subgroup) {
          if (waiting_sub && waiting_sub->pc != it->pc)
            fail(m_, at(*it), *it, "subgroup divergence: " + std::string(op_name(at(*it).src->op)) +
                                       " reached while linear item " + std::to_string(waiting_sub->lin) +
                                       " of the same subgroup waits at " + std::string(op_name(at(*waiting_sub).src->op)) +
                                       where(m_, at(*waiting_sub)));
          waiting_sub = it;
        } else {
          waiting_bar = it;
        }
      }
      if (!waiting_sub) continue;
      if (waiting_bar)
        fail(m_, at(*waiting_sub), *waiting_sub,
             "subgroup divergence: " + std::string(op_name(at(*waiting_sub).src->op)) + " waits for linear item " +
                 std::to_string(waiting_bar->lin) + " of the same subgroup, which waits at a barrier" +
                 where(m_, at(*waiting_bar)));
      const Code& c = at(*waiting_sub);
      c.subgroup(c, lanes, m_);
      for (Item* it : lanes)
        if (it) {
          it->pc += 1;
          it->state = Item::State::Ready;
        }
      progressed = true;
    }
    return progressed;
  }

  // Every live item waits at a barrier; they must all be at the same one,
  // and none may have finished.
  void release_barrier() {
    const Item* first = nullptr;
    const Item* done = nullptr;
    for (const Item& it : items_) {
      if (it.state == Item::State::Done) {
        done = done ? done : &it;
        continue;
      }
      if (!first) first = &it;
      else if (it.pc != first->pc)
        fail(m_, at(it), it, "barrier divergence: linear item " + std::to_string(it.lin) +
                                 " waits at this barrier while linear item " + std::to_string(first->lin) +
                                 " waits at another one" + where(m_, at(*first)));
    }
    if (done)
      fail(m_, at(*first), *first, "barrier divergence: work-items wait at this barrier, but linear item " +
                                       std::to_string(done->lin) + " " + triple(done->local) +
                                       " finished without reaching it");
    for (Item& it : items_) {
      it.pc += 1;
      it.state = Item::State::Ready;
    }
  }

  Machine& m_;
  std::vector<Item> items_;
  std::vector<std::byte> frames_;
};

}  // namespace

[[noreturn]] void fail(const Machine& m, const Code& c, const Item& it, const std::string& msg) {
  throw Error(c.src ? c.src->loc : SourceLoc{},
              prefix(*m.kernel) + msg + " [work-item " + triple(it.local) + " of group " + triple(m.group) + "]");
}

}  // namespace interp

void interpret(const Kernel& k, const LaunchDims& dims, std::span<const InterpBuffer> buffers,
               std::span<const uint64_t> scalars, const InterpOptions& opt) {
  using namespace interp;
  auto bad = [&](const std::string& msg) { throw Error(SourceLoc{}, prefix(k) + msg); };
  if (buffers.size() != k.buffers.size())
    bad("expects " + std::to_string(k.buffers.size()) + " buffers, got " + std::to_string(buffers.size()));
  if (scalars.size() != k.scalars.size())
    bad("expects " + std::to_string(k.scalars.size()) + " scalar arguments, got " + std::to_string(scalars.size()));
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!buffers[i].data && buffers[i].bytes)
      bad("buffer '" + k.buffers[i].name + "' has " + std::to_string(buffers[i].bytes) + " bytes but no data");
  for (size_t i = 0; i < scalars.size(); ++i) {
    int bytes = k.scalars[i].type.bytes();
    if (bytes > 8) bad("scalar '" + k.scalars[i].name + "' of type " + k.scalars[i].type.str() + " does not fit a slot");
    if (bytes < 8 && (scalars[i] >> (8 * bytes)) != 0)
      bad("scalar '" + k.scalars[i].name + "' (" + k.scalars[i].type.str() + ") slot has bits set above its " +
          std::to_string(bytes) + " bytes (wrong argument size?)");
  }
  for (int a = 0; a < 3; ++a)
    if (dims.workgroup[a] == 0) bad("workgroup size must be positive on every axis");
  if (k.fixed_workgroup() && dims.workgroup != k.workgroup_size)
    bad("launched with workgroup " + triple(dims.workgroup) + " but the kernel is fixed to " + triple(k.workgroup_size));
  if (opt.subgroup_size == 0) bad("subgroup size must be positive");

  Machine m;
  m.kernel = &k;
  m.opt = opt;
  m.dims = dims;
  compile(m, k, buffers, scalars);

  Group group(m);
  for (uint32_t z = 0; z < dims.grid[2]; ++z)
    for (uint32_t y = 0; y < dims.grid[1]; ++y)
      for (uint32_t x = 0; x < dims.grid[0]; ++x) {
        m.group = {x, y, z};
        group.run_group();
      }
}

}  // namespace kgen::ir
