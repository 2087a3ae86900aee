// Lowering of a structured kernel to the interpreter's flat program
// (see interp_internal.h): frame layout, constants and parameters preset in
// the frame template, control flow as jumps, one Code per instruction.
#include <limits>
#include <unordered_map>

#include "ir/interp_internal.h"
#include "ir/semantics.h"

namespace kgen::ir::interp {

namespace {

// ---- control flow ---------------------------------------------------------
int32_t exec_jump(const Code& c, Item&, Machine&) { return int32_t(c.target); }
int32_t exec_jump_if_false(const Code& c, Item& it, Machine&) {
  return ld<bool>(it.frame + c.a[0]) ? int32_t(c.next) : int32_t(c.target);
}
int32_t exec_exit(const Code&, Item&, Machine&) { return kExit; }
int32_t exec_yield(const Code&, Item&, Machine&) { return kYield; }

// For: `init` sets iv = start and skips the loop when !(start < end); `next`
// (the end of the body, where continue lands) advances iv and jumps back to
// the body start, or falls through to the exit when iv + step overflows or
// reaches end. a = {start, end, step}; the iv lives in dst.
template <class T>
int32_t exec_for_init(const Code& c, Item& it, Machine& m) {
  T start = ld<T>(it.frame + c.a[0]), end = ld<T>(it.frame + c.a[1]), step = ld<T>(it.frame + c.a[2]);
  if (!(step > T(0)))
    fail(m, c, it, "for loop step must be positive, got " + std::to_string(step));
  st<T>(it.frame + c.dst, 0, start);
  return start < end ? int32_t(c.next) : int32_t(c.target);
}
template <class T>
int32_t exec_for_next(const Code& c, Item& it, Machine&) {
  T iv = ld<T>(it.frame + c.dst), end = ld<T>(it.frame + c.a[1]), step = ld<T>(it.frame + c.a[2]);
  T n;
  if (__builtin_add_overflow(iv, step, &n) || !(n < end)) return int32_t(c.next);
  st<T>(it.frame + c.dst, 0, n);
  return int32_t(c.target);
}

class Compiler {
 public:
  Compiler(Machine& m, const Kernel& k, std::span<const InterpBuffer> bufs, std::span<const uint64_t> scalars)
      : m_(m), k_(k), vi_(k), bufs_(bufs), scalars_(scalars) {}

  void run() {
    layout();
    block(k_.body);
    Code end;
    end.fn = exec_exit;
    emit(std::move(end));
  }

 private:
  struct LoopCtx {
    std::vector<uint32_t> breaks, continues;  // jump codes to patch
  };

  uint32_t here() const { return uint32_t(m_.code.size()); }
  uint32_t emit(Code c) {
    c.next = here() + 1;
    m_.code.push_back(std::move(c));
    return here() - 1;
  }
  uint32_t slot(ValueId v) const { return offsets_.at(v); }

  // Every non-pointer value gets an 8-byte aligned slot; Var values are slots
  // like any other. Pointers have no slot: memory ops resolve them statically.
  void layout() {
    offsets_.assign(k_.num_values, kNoSlot);
    uint32_t off = 0;
    walk(k_.body, [&](const Instr& in) {
      if (!in.has_result() || in.type.is_pointer()) return;
      offsets_[in.id] = off;
      off += (uint32_t(in.type.bytes()) + 7u) & ~7u;
    });
    m_.frame_bytes = std::max<uint32_t>(off, 8);
    m_.frame_template.assign(m_.frame_bytes, std::byte{0});
  }

  void preset_const(const Instr& in) {
    std::byte* p = m_.frame_template.data() + slot(in.id);
    visit_kind(in.type.kind, [&]<class T>(std::type_identity<T>) {
      T v;
      if constexpr (FloatLike<T>) v = sem_cast<T>(in.imm.f);
      else if constexpr (std::same_as<T, bool>) v = in.imm.i != 0;
      else v = T(in.imm.i);  // u64 is its bit pattern
      for (int l = 0; l < in.type.lanes; ++l) st<T>(p, l, v);
    });
  }

  void preset_param(const Instr& in) {
    const ScalarParam& sp = k_.scalars[in.attr];
    std::byte* p = m_.frame_template.data() + slot(in.id);
    uint64_t s = scalars_[in.attr];
    std::memcpy(p, &s, size_t(sp.type.bytes()));
    if (sp.type.kind == ScalarKind::Bool)
      for (int l = 0; l < sp.type.lanes; ++l) p[l] = std::byte(p[l] != std::byte{0});
  }

  uint32_t memory_object(const Instr& in) {
    auto [it, fresh] = mem_of_.try_emplace(&in, uint32_t(m_.mems.size()));
    if (!fresh) return it->second;
    Mem mem;
    if (in.op == Op::Buffer) {
      const BufferParam& bp = k_.buffers[in.attr];
      mem.elem = bp.elem;
      mem.elem_bytes = uint32_t(bp.elem.bytes());
      mem.base = static_cast<std::byte*>(bufs_[in.attr].data);
      mem.elems = bufs_[in.attr].bytes / mem.elem_bytes;
      mem.name = "buffer '" + bp.name + "'";
    } else {
      mem.elem = in.type.element();
      mem.elem_bytes = uint32_t(mem.elem.bytes());
      mem.elems = uint64_t(in.attr);
      mem.shared = true;
      size_t align = 16;
      mem.shared_offset = (m_.shared.size() + align - 1) / align * align;
      m_.shared.resize(mem.shared_offset + mem.elems * mem.elem_bytes);
      mem.name = "shared array %" + std::to_string(in.id) + " (" + mem.elem.str() + "[" + std::to_string(in.attr) + "])";
    }
    m_.mems.push_back(std::move(mem));
    return it->second;
  }

  Code base(const Instr& in) {
    Code c;
    c.src = &in;
    c.attr = in.attr;
    if (in.has_result() && !in.type.is_pointer()) c.dst = slot(in.id);
    for (size_t i = 0; i < in.args.size() && i < 4; ++i) {
      const Instr* d = vi_.def(in.args[i]);
      if (d && !d->type.is_pointer()) c.a[i] = slot(in.args[i]);
    }
    return c;
  }

  ExecFn for_fn(ScalarKind k, bool init) {
    return visit_kind(k, [&]<class T>(std::type_identity<T>) -> ExecFn {
      if constexpr (IntLike<T>) return init ? &exec_for_init<T> : &exec_for_next<T>;
      else return nullptr;
    });
  }

  void block(const Block& b, LoopCtx* loop = nullptr) {
    for (const Instr& in : b.instrs) instr(in, loop);
  }

  void instr(const Instr& in, LoopCtx* loop) {
    switch (in.op) {
      case Op::Const: preset_const(in); return;
      case Op::Param: preset_param(in); return;
      case Op::Buffer:
      case Op::SharedAlloc: memory_object(in); return;
      case Op::If: {
        uint32_t branch = emit(with_fn(base(in), exec_jump_if_false));
        block(in.blocks[0], loop);
        if (in.blocks[1].instrs.empty()) {
          m_.code[branch].target = here();
        } else {
          uint32_t skip = emit(with_fn(base(in), exec_jump));
          m_.code[branch].target = here();
          block(in.blocks[1], loop);
          m_.code[skip].target = here();
        }
        return;
      }
      case Op::For: {
        Type t = in.type;
        uint32_t init = emit(with_fn(base(in), for_fn(t.kind, true)));
        LoopCtx ctx;
        block(in.blocks[0], &ctx);
        uint32_t next = emit(with_fn(base(in), for_fn(t.kind, false)));
        m_.code[next].target = init + 1;
        m_.code[init].target = here();
        for (uint32_t j : ctx.breaks) m_.code[j].target = here();
        for (uint32_t j : ctx.continues) m_.code[j].target = next;
        return;
      }
      case Op::Loop: {
        uint32_t head = here();
        LoopCtx ctx;
        block(in.blocks[0], &ctx);
        Code back = base(in);
        back.fn = exec_jump;
        back.target = head;
        emit(std::move(back));
        for (uint32_t j : ctx.breaks) m_.code[j].target = here();
        for (uint32_t j : ctx.continues) m_.code[j].target = head;
        return;
      }
      case Op::Break:
      case Op::Continue: {
        if (!loop) throw Error(in.loc, std::string(op_name(in.op)) + " outside of a loop");
        uint32_t j = emit(with_fn(base(in), exec_jump));
        (in.op == Op::Break ? loop->breaks : loop->continues).push_back(j);
        return;
      }
      case Op::Return: emit(with_fn(base(in), exec_exit)); return;
      case Op::Barrier: {
        Code c = with_fn(base(in), exec_yield);
        c.rendezvous = Rendezvous::Barrier;
        m_.has_rendezvous = true;
        emit(std::move(c));
        return;
      }
      default: break;
    }
    Code c = base(in);
    switch (op_class(in.op)) {
      case OpClass::Memory:
      case OpClass::Atomic:
        c.mem = memory_object(*vi_.def(in.args[0]));
        select_memory(c, in, vi_);
        break;
      case OpClass::Tile:
        for (ValueId v : in.args) c.many.push_back(slot(v));
        for (size_t i = 0; i < 3; ++i) c.tile_mem[i] = memory_object(*vi_.def(in.args[2 * i]));
        c.attr = in.attr;
        c.fn = exec_tile_mma_bf16;
        break;
      case OpClass::Subgroup:
      case OpClass::SubgroupReduce:
        c.fn = exec_yield;
        c.rendezvous = Rendezvous::Subgroup;
        m_.has_rendezvous = true;
        select_subgroup(c, in, vi_);
        break;
      case OpClass::Local:
        // var: slot <- init; var_load: result <- var slot; var_store: var slot <- value.
        if (in.op == Op::VarStore) {
          c.dst = slot(in.args[0]);
          c.a[0] = slot(in.args[1]);
        }
        select_compute(c, in, vi_);
        break;
      case OpClass::Vector:
        if (in.op == Op::Construct)
          for (ValueId v : in.args) c.many.push_back(slot(v));
        select_compute(c, in, vi_);
        break;
      default: select_compute(c, in, vi_); break;
    }
    emit(std::move(c));
  }

  static Code with_fn(Code c, ExecFn f) {
    if (!f) throw Error(c.src->loc, "interpreter: cannot execute " + std::string(op_name(c.src->op)));
    c.fn = f;
    return c;
  }

  Machine& m_;
  const Kernel& k_;
  ValueIndex vi_;
  std::span<const InterpBuffer> bufs_;
  std::span<const uint64_t> scalars_;
  std::vector<uint32_t> offsets_;
  std::unordered_map<const Instr*, uint32_t> mem_of_;
};

}  // namespace

void compile(Machine& m, const Kernel& k, std::span<const InterpBuffer> buffers,
             std::span<const uint64_t> scalars) {
  Compiler(m, k, buffers, scalars).run();
  // Shared arrays' addresses are fixed now that the shared block has its size.
  for (Mem& mem : m.mems)
    if (mem.shared) mem.base = m.shared.data() + mem.shared_offset;
}

}  // namespace kgen::ir::interp
