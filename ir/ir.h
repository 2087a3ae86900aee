// The kgen scalar IR: a kernel is a signature plus a structured body of
// nested blocks of SSA instructions. Values are numbered per kernel (%0, %1..)
// and are visible in the block that defines them and the blocks nested in it.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "ir/type.h"

namespace kgen::ir {

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = 0xffffffffu;

// Where an instruction came from: the user's DSL call site or the IR text line.
struct SourceLoc {
  const char* file = nullptr;  // interned, never freed (see intern_file)
  uint32_t line = 0;
  uint32_t column = 0;
  bool known() const { return file != nullptr; }
  std::string str() const;  // "file:line:col" or "<unknown>"
};
const char* intern_file(std::string_view name);

// An error about a kernel, carrying the location it points at.
class Error : public std::runtime_error {
 public:
  Error(SourceLoc loc, const std::string& what);
  SourceLoc loc;
  std::string message;  // without the location prefix
};

// Immediate payload of a Const: ints (and bool) in i, floats in f. u64 values
// are stored as their bit pattern in i.
struct Imm {
  int64_t i = 0;
  double f = 0.0;
  bool operator==(const Imm&) const = default;
};

struct Instr;
struct Block {
  std::vector<Instr> instrs;
};

struct Instr {
  Op op = Op::Const;
  Type type;                   // result type; void for statements
  ValueId id = kNoValue;       // result value, kNoValue for statements
  std::vector<ValueId> args;   // operands
  Imm imm;                     // Const payload
  int64_t attr = 0;            // Param/Buffer index, builtin axis, lane, unroll, shared count
  std::vector<Block> blocks;   // For/Loop: body; If: then, else
  SourceLoc loc;

  bool has_result() const { return id != kNoValue; }
};

// Store hints, the Instr::attr of a Store. A hint never changes what a store
// means (the interpreter ignores it); it tells a target how to write.
//   kStoreNonTemporal ("store %p, %i, %v nontemporal"): the value will not be
//   read again soon, so a CPU may stream it around the caches (no read for
//   ownership of the line). Only for global buffers; GPU dialects drop it.
enum StoreHint : int64_t { kStorePlain = 0, kStoreNonTemporal = 1 };
inline bool is_nontemporal_store(const Instr& in) { return in.op == Op::Store && in.attr == kStoreNonTemporal; }
// Prefetch ("prefetch %p, %i"): a hint that element i of buffer p will be
// read soon. It means nothing (the interpreter skips it) and never faults,
// so the index may run past the end; a CPU turns it into a cache prefetch.
// Its attr says how near: kPrefetchL1 (into every level), kPrefetchL2
// ("prefetch %p, %i l2": the second level and beyond, for data wanted a
// long way ahead, which would only crowd the first level), kPrefetchWrite
// ("prefetch %p, %i w": element i is written soon, so the line is fetched
// for ownership: x86 prefetchw. A plain store to a line not in cache stalls
// on that read; rows of a page or more start where the hardware prefetcher
// has not gone).
enum PrefetchHint : int64_t { kPrefetchL1 = 0, kPrefetchL2 = 1, kPrefetchWrite = 2 };

enum class Access : uint8_t { Read, Write, ReadWrite };
std::string_view access_name(Access a);

struct BufferParam {
  std::string name;
  Type elem;  // element type, may be a vector line
  Access access = Access::ReadWrite;
};

struct ScalarParam {
  std::string name;
  Type type;
};

struct Kernel {
  std::string name;
  std::vector<BufferParam> buffers;
  std::vector<ScalarParam> scalars;
  // Fixed workgroup size; {0,0,0} means "chosen at launch".
  std::array<uint32_t, 3> workgroup_size{0, 0, 0};
  Block body;
  uint32_t num_values = 0;  // value ids are < num_values

  bool fixed_workgroup() const { return workgroup_size[0] != 0; }
  uint32_t workgroup_threads() const {
    return workgroup_size[0] * workgroup_size[1] * workgroup_size[2];
  }
};

// Index from value id to defining instruction (valid until the kernel changes).
class ValueIndex {
 public:
  explicit ValueIndex(const Kernel& k);
  const Instr* def(ValueId v) const { return v < defs_.size() ? defs_[v] : nullptr; }
  Type type(ValueId v) const;

 private:
  std::vector<const Instr*> defs_;
};

// Calls f(instr) for every instruction, outer before inner, in program order.
template <class F>
void walk(const Block& b, F&& f) {
  for (const Instr& in : b.instrs) {
    f(in);
    for (const Block& nb : in.blocks) walk(nb, f);
  }
}
template <class F>
void walk_mut(Block& b, F&& f) {
  for (Instr& in : b.instrs) {
    f(in);
    for (Block& nb : in.blocks) walk_mut(nb, f);
  }
}

bool uses_barrier(const Block& b);
bool uses_op_class(const Block& b, OpClass c);

}  // namespace kgen::ir
