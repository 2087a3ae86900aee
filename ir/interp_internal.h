// Private to the interpreter (interpreter.cpp, interp_*.cpp).
//
// interpret() first lowers the structured kernel to a flat program: one Code
// per executed instruction, with structured control flow turned into jumps
// and each operand resolved to a byte offset in the work-item's frame. A
// work-item is then just (pc, frame), which is what makes it resumable at
// barriers and subgroup ops, and each Code carries a function pointer chosen
// once per (op, type) from the X-macro lists, so execution is one indirect
// call per instruction with no switch over ops.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"

// One functor per op forwarding to sem_<Name> (ir/semantics.h), so that an op
// can be a template argument of the interpreter's lane loops. Expanded over
// the op lists: KGEN_UNARY_OPS(KGEN_INTERP_SEM_FUNCTOR).
#define KGEN_INTERP_SEM_FUNCTOR(Name, ...) \
  struct Name {                            \
    template <class... A>                  \
    static auto apply(A... a) {            \
      return sem_##Name(a...);             \
    }                                      \
  };

namespace kgen::ir::interp {

struct Code;
struct Item;
struct Machine;

// Returns the next pc, or one of:
inline constexpr int32_t kYield = -1;  // reached a rendezvous; the scheduler takes over
inline constexpr int32_t kExit = -2;   // work-item finished
using ExecFn = int32_t (*)(const Code&, Item&, Machine&);
// Executes a subgroup op for one subgroup: lanes[i] is the item at lane i, or
// nullptr when that lane is finished or past the end of the workgroup.
using SubgroupFn = void (*)(const Code&, std::span<Item* const> lanes, Machine&);

enum class Rendezvous : uint8_t { None, Barrier, Subgroup };

inline constexpr uint32_t kNoSlot = 0xffffffffu;

struct Code {
  ExecFn fn = nullptr;
  SubgroupFn subgroup = nullptr;  // Rendezvous::Subgroup only
  Rendezvous rendezvous = Rendezvous::None;
  uint8_t esize = 0;       // bytes of one lane of the value operated on
  uint16_t lanes = 1;      // lanes of the value operated on
  uint32_t bytes = 0;      // esize * lanes
  uint32_t next = 0;       // pc + 1
  uint32_t target = 0;     // jump target (If else / For body / loop exit)
  uint32_t dst = kNoSlot;  // frame offset of the result
  std::array<uint32_t, 4> a{kNoSlot, kNoSlot, kNoSlot, kNoSlot};  // operand frame offsets
  std::vector<uint32_t> many;  // Construct, tile ops: all operand offsets
  std::array<uint32_t, 3> tile_mem{};  // tile ops: C, A and B memory objects
  uint32_t mem = 0;            // memory object (Load/Store/Atomic)
  ScalarKind index_kind = ScalarKind::U32;  // Load/Store/Atomic index type
  bool cond_splat = false;     // Select: one bool for all lanes
  int64_t attr = 0;
  const Instr* src = nullptr;
};

// A buffer parameter or a shared array.
struct Mem {
  std::byte* base = nullptr;
  uint64_t elems = 0;
  uint32_t elem_bytes = 0;
  Type elem;
  bool shared = false;
  size_t shared_offset = 0;  // into Machine::shared
  std::string name;          // "buffer 'x'" / "shared array %3"
};

struct Item {
  std::byte* frame = nullptr;
  uint32_t pc = 0;
  uint32_t lin = 0;  // linear local id
  std::array<uint32_t, 3> local{0, 0, 0};
  enum class State : uint8_t { Ready, Waiting, Done } state = State::Ready;
};

struct Machine {
  const Kernel* kernel = nullptr;
  InterpOptions opt;
  LaunchDims dims;
  std::vector<Code> code;
  uint32_t frame_bytes = 0;
  std::vector<std::byte> frame_template;  // constants and parameters preset
  std::vector<Mem> mems;
  std::vector<std::byte> shared;  // this workgroup's shared memory
  std::array<uint32_t, 3> group{0, 0, 0};
  uint64_t steps = 0;
  bool has_rendezvous = false;
};

// Lowers k into m.code / m.mems / m.frame_template (interp_compile.cpp).
// Buffers and scalars are already validated.
void compile(Machine& m, const Kernel& k, std::span<const InterpBuffer> buffers,
             std::span<const uint64_t> scalars);

// The per-(op, type) execution functions (interp_ops.cpp, interp_memory.cpp).
// `in` is the instruction, `vi` resolves operand types. Fill c.fn (and
// c.subgroup) or throw Error for an op/type the interpreter cannot run.
void select_compute(Code& c, const Instr& in, const ValueIndex& vi);
void select_memory(Code& c, const Instr& in, const ValueIndex& vi);
void select_subgroup(Code& c, const Instr& in, const ValueIndex& vi);
// tile_mma_bf16 (ir/ops.h); c.many and c.tile_mem set by the compiler.
int32_t exec_tile_mma_bf16(const Code& c, Item& it, Machine& m);

// Throws Error at c's instruction: "kernel 'k': <msg> (work-item ... )".
[[noreturn]] void fail(const Machine& m, const Code& c, const Item& it, const std::string& msg);

// Frame access (memcpy: no aliasing or alignment assumptions).
template <class T>
inline T ld(const std::byte* p, uint32_t lane = 0) {
  T v;
  std::memcpy(&v, p + size_t(lane) * sizeof(T), sizeof(T));
  return v;
}
template <class T>
inline void st(std::byte* p, uint32_t lane, T v) {
  std::memcpy(p + size_t(lane) * sizeof(T), &v, sizeof(T));
}

}  // namespace kgen::ir::interp
