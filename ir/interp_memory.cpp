// Memory and cross-item operations: bounds-checked loads and stores, atomics
// (trivially atomic: items only interleave at rendezvous points) and the
// subgroup ops, which the scheduler runs once per subgroup when all its
// active items have arrived.
#include <algorithm>

#include "ir/interp_internal.h"
#include "ir/semantics.h"

namespace kgen::ir::interp {

namespace {

namespace fn {
KGEN_ATOMIC_OPS(KGEN_INTERP_SEM_FUNCTOR)
KGEN_SUBGROUP_REDUCE_OPS(KGEN_INTERP_SEM_FUNCTOR)
}  // namespace fn

// Reads the index operand; returns false (and the printable value) when it
// is negative. Index types are any scalar integer.
bool read_index(const Code& c, const Item& it, uint64_t& idx, std::string& shown) {
  const std::byte* p = it.frame + c.a[1];
  int64_t s = 0;
  switch (c.index_kind) {
    case ScalarKind::I8: s = ld<int8_t>(p); break;
    case ScalarKind::I16: s = ld<int16_t>(p); break;
    case ScalarKind::I32: s = ld<int32_t>(p); break;
    case ScalarKind::I64: s = ld<int64_t>(p); break;
    case ScalarKind::U8: idx = ld<uint8_t>(p); return true;
    case ScalarKind::U16: idx = ld<uint16_t>(p); return true;
    case ScalarKind::U32: idx = ld<uint32_t>(p); return true;
    default: idx = ld<uint64_t>(p); return true;
  }
  if (s < 0) {
    shown = std::to_string(s);
    return false;
  }
  idx = uint64_t(s);
  return true;
}

// Address of element idx of c's memory object, or an out-of-bounds error.
std::byte* element(const Code& c, const Item& it, Machine& m, const char* what) {
  const Mem& mem = m.mems[c.mem];
  uint64_t idx = 0;
  std::string shown;
  if (!read_index(c, it, idx, shown) || idx >= mem.elems) {
    if (shown.empty()) shown = std::to_string(idx);
    fail(m, c, it, std::string(what) + " out of bounds: " + mem.name + " index " + shown + " (size " +
                       std::to_string(mem.elems) + ")");
  }
  return mem.base + idx * mem.elem_bytes;
}

int32_t exec_load(const Code& c, Item& it, Machine& m) {
  std::memcpy(it.frame + c.dst, element(c, it, m, "load"), c.bytes);
  return int32_t(c.next);
}
// bool memory may hold any byte; a bool value is 0/1.
int32_t exec_load_bool(const Code& c, Item& it, Machine& m) {
  const std::byte* p = element(c, it, m, "load");
  for (uint32_t i = 0; i < c.lanes; ++i) st<bool>(it.frame + c.dst, i, p[i] != std::byte{0});
  return int32_t(c.next);
}
int32_t exec_nop(const Code& c, Item&, Machine&) { return int32_t(c.next); }

int32_t exec_store(const Code& c, Item& it, Machine& m) {
  std::memcpy(element(c, it, m, "store"), it.frame + c.a[2], c.bytes);
  return int32_t(c.next);
}

template <class T, class F>
int32_t exec_atomic(const Code& c, Item& it, Machine& m) {
  std::byte* p = element(c, it, m, "atomic");
  T old = ld<T>(p);
  T v = ld<T>(it.frame + c.a[2]);
  if constexpr (std::is_same_v<F, fn::AtomicCas>) st<T>(p, 0, F::apply(old, v, ld<T>(it.frame + c.a[3])));
  else st<T>(p, 0, F::apply(old, v));
  st<T>(it.frame + c.dst, 0, old);
  return int32_t(c.next);
}

}  // namespace

// The tile op's rows are contiguous runs of elements: each is checked whole,
// naming the operand, the row and the run that falls outside the buffer.
int32_t exec_tile_mma_bf16(const Code& c, Item& it, Machine& m) {
  auto u64_at = [&](size_t i) { return ld<uint64_t>(it.frame + c.many[i]); };
  auto u32_at = [&](size_t i) { return uint64_t(ld<uint32_t>(it.frame + c.many[i])); };
  const uint64_t ci = u64_at(1), ai = u64_at(3), bi = u64_at(5);
  const uint64_t rows = u32_at(6), cols = u32_at(7), kp = u32_at(8), ldc = u32_at(9), lda = u32_at(10), ldb = u32_at(11);
  if (rows < 1 || rows > 32 || cols < 1 || cols > 32)
    fail(m, c, it, "tile_mma_bf16 block must be 1..32 × 1..32, got " + std::to_string(rows) + " × " + std::to_string(cols));
  const Mem &cm = m.mems[c.tile_mem[0]], &am = m.mems[c.tile_mem[1]], &bm = m.mems[c.tile_mem[2]];
  auto run_in = [&](const Mem& mem, const char* what, uint64_t row, uint64_t first, uint64_t count) {
    if (count && (first >= mem.elems || mem.elems - first < count))
      fail(m, c, it, std::string("tile_mma_bf16 ") + what + " row " + std::to_string(row) + " out of bounds: " + mem.name +
                         " elements " + std::to_string(first) + ".." + std::to_string(first + count - 1) + " (size " +
                         std::to_string(mem.elems) + ")");
  };
  for (uint64_t i = 0; i < rows; ++i) {
    run_in(cm, "C", i, ci + i * ldc, cols);
    run_in(am, "A", i, ai + i * lda, 2 * kp);
  }
  for (uint64_t p = 0; p < kp; ++p) run_in(bm, "B", p, bi + p * ldb, cols);
  for (uint64_t i = 0; i < rows; ++i) {
    const std::byte* arow = am.base + (ai + i * lda) * 2;
    for (uint64_t j = 0; j < cols; ++j) {
      std::byte* cp = cm.base + (ci + i * ldc + j) * 4;
      float acc = c.attr ? ld<float>(cp) : 0.0f;
      for (uint64_t p = 0; p < kp; ++p) {
        const uint32_t apair = ld<uint32_t>(arow + p * 4);
        acc = sem_Dot2Bf16(apair, ld<uint32_t>(bm.base + (bi + p * ldb + j) * 4), acc);
      }
      st<float>(cp, 0, acc);
    }
  }
  return int32_t(c.next);
}

namespace {

// Subgroup ops. Shuffle/broadcast: the value operand of the item at `lane`.
void sub_shuffle(const Code& c, std::span<Item* const> lanes, Machine& m) {
  const bool broadcast = c.src->op == Op::SubgroupBroadcast;
  const Item* first = nullptr;
  uint32_t first_lane = 0;
  for (Item* it : lanes) {
    if (!it) continue;
    uint32_t l = ld<uint32_t>(it->frame + c.a[1]);
    if (broadcast) {
      if (!first) {
        first = it;
        first_lane = l;
      } else if (l != first_lane) {
        fail(m, c, *it, "subgroup_broadcast lane must be the same on all active items: " + std::to_string(l) +
                            " here, " + std::to_string(first_lane) + " on linear item " + std::to_string(first->lin));
      }
    }
    if (l >= lanes.size() || !lanes[l])
      fail(m, c, *it, std::string(op_name(c.src->op)) + " from lane " + std::to_string(l) +
                          (l >= m.opt.subgroup_size ? " outside the subgroup (size " + std::to_string(m.opt.subgroup_size) + ")"
                                                    : " which is not active (finished or past the workgroup's end)"));
  }
  // Sources and destinations are different slots, so in-place order is fine.
  for (Item* it : lanes) {
    if (!it) continue;
    const Item* from = lanes[ld<uint32_t>(it->frame + c.a[1])];
    std::memcpy(it->frame + c.dst, from->frame + c.a[0], c.bytes);
  }
}

// Reductions: per lane of the value, a left fold over the active items in
// lane order (sem_Subgroup*), the result given to every active item.
template <class T, class F>
void sub_reduce(const Code& c, std::span<Item* const> lanes, Machine&) {
  std::vector<T> vals;
  vals.reserve(lanes.size());
  for (uint32_t l = 0; l < c.lanes; ++l) {
    vals.clear();
    for (Item* it : lanes)
      if (it) vals.push_back(ld<T>(it->frame + c.a[0], l));
    T r = F::apply(std::span<const T>(vals));
    for (Item* it : lanes)
      if (it) st<T>(it->frame + c.dst, l, r);
  }
}

}  // namespace

void select_memory(Code& c, const Instr& in, const ValueIndex& vi) {
  Type elem = vi.type(in.args[0]).element();
  c.lanes = elem.lanes;
  c.esize = uint8_t(elem.scalar_bytes());
  c.bytes = uint32_t(elem.bytes());
  c.index_kind = vi.type(in.args[1]).kind;
  if (in.op == Op::Load) {
    c.fn = elem.kind == ScalarKind::Bool ? exec_load_bool : exec_load;
    return;
  }
  if (in.op == Op::Store) {
    c.fn = exec_store;
    return;
  }
  if (in.op == Op::Prefetch) {  // no meaning (and never out of bounds)
    c.fn = exec_nop;
    return;
  }
  switch (in.op) {
#define KGEN_X(Name, m, C, Dom)                                                         \
  case Op::Name:                                                                        \
    c.fn = visit_kind(elem.kind, [&]<class T>(std::type_identity<T>) -> ExecFn {        \
      if constexpr (domain_accepts<T>(Domain::Dom) && (IntLike<T> || std::floating_point<T>)) \
        return &exec_atomic<T, fn::Name>;                                               \
      else return nullptr;                                                              \
    });                                                                                 \
    break;
    KGEN_ATOMIC_OPS(KGEN_X)
#undef KGEN_X
    default: break;
  }
  if (!c.fn) throw Error(in.loc, "interpreter: cannot execute " + std::string(op_name(in.op)) + " on " + elem.str());
}

void select_subgroup(Code& c, const Instr& in, const ValueIndex& vi) {
  Type t = vi.type(in.args[0]);
  c.lanes = t.lanes;
  c.esize = uint8_t(t.scalar_bytes());
  c.bytes = uint32_t(t.bytes());
  switch (in.op) {
    case Op::SubgroupShuffle:
    case Op::SubgroupBroadcast: c.subgroup = sub_shuffle; break;
#define KGEN_X(Name, m, C, Dom)                                                          \
  case Op::Name:                                                                         \
    c.subgroup = visit_kind(t.kind, [&]<class T>(std::type_identity<T>) -> SubgroupFn {  \
      if constexpr (domain_accepts<T>(Domain::Dom)) return &sub_reduce<T, fn::Name>;     \
      else return nullptr;                                                               \
    });                                                                                  \
    break;
    KGEN_SUBGROUP_REDUCE_OPS(KGEN_X)
#undef KGEN_X
    default: break;
  }
  if (!c.subgroup) throw Error(in.loc, "interpreter: cannot execute " + std::string(op_name(in.op)) + " on " + t.str());
}

}  // namespace kgen::ir::interp
