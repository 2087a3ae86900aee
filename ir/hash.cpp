#include "ir/hash.h"

#include <bit>
#include <cstring>
#include <vector>

namespace kgen::ir {

void Hasher::add(std::string_view s) {
  add(s.size());
  for (size_t i = 0; i < s.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
    add(w);
  }
}

uint64_t Hasher::finish() const {
  uint64_t h = h_ + n_ * 8;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

namespace {

// Tags keep differently shaped sections from producing equal word streams.
enum : uint64_t { kTagKernel = 0x6b67656e, kTagBlock = 0xb10c, kTagUndefined = 0xdead0000ull << 32 };

uint64_t type_word(Type t) { return uint64_t(t.kind) | uint64_t(t.lanes) << 8 | uint64_t(t.space) << 16; }

// Turns a kernel into a sequence of words that is equal for two kernels
// exactly when they are structurally equal. Hash and equality both consume it,
// so they can never disagree.
template <class Sink>
class Canonicalizer {
 public:
  explicit Canonicalizer(Sink& sink) : out_(sink) {}

  void kernel(const Kernel& k) {
    out_(kTagKernel);
    out_(k.buffers.size());
    for (const BufferParam& b : k.buffers) {
      out_(type_word(b.elem));
      out_(uint64_t(b.access));
    }
    out_(k.scalars.size());
    for (const ScalarParam& s : k.scalars) out_(type_word(s.type));
    for (uint32_t w : k.workgroup_size) out_(w);
    block(k.body);
  }

 private:
  void block(const Block& b) {
    out_(kTagBlock);
    out_(b.instrs.size());
    for (const Instr& in : b.instrs) instr(in);
  }

  void instr(const Instr& in) {
    out_(uint64_t(in.op) | type_word(in.type) << 16 | uint64_t(in.has_result()) << 40 |
         uint64_t(in.args.size()) << 48);
    out_(uint64_t(in.attr));
    if (in.op == Op::Const) out_(in.type.is_float() ? std::bit_cast<uint64_t>(in.imm.f) : uint64_t(in.imm.i));
    for (ValueId a : in.args) out_(canonical(a));
    if (in.has_result()) define(in.id);
    out_(in.blocks.size());
    for (const Block& b : in.blocks) block(b);
  }

  void define(ValueId v) {
    if (v >= canon_.size()) canon_.resize(size_t(v) + 1, kUnset);
    canon_[v] = next_++;
  }
  uint64_t canonical(ValueId v) const {
    // An operand not (yet) defined is malformed IR; keep it distinguishable.
    if (v >= canon_.size() || canon_[v] == kUnset) return kTagUndefined | v;
    return canon_[v];
  }

  static constexpr uint32_t kUnset = 0xffffffffu;
  Sink& out_;
  std::vector<uint32_t> canon_;
  uint32_t next_ = 0;
};

template <class Sink>
void canonicalize(const Kernel& k, Sink& sink) {
  Canonicalizer<Sink>(sink).kernel(k);
}

}  // namespace

uint64_t structural_hash(const Kernel& k) {
  Hasher h;
  auto sink = [&](uint64_t w) { h.add(w); };
  canonicalize(k, sink);
  return h.finish();
}

bool structurally_equal(const Kernel& a, const Kernel& b) {
  std::vector<uint64_t> wa, wb;
  auto sa = [&](uint64_t w) { wa.push_back(w); };
  auto sb = [&](uint64_t w) { wb.push_back(w); };
  canonicalize(a, sa);
  canonicalize(b, sb);
  return wa == wb;
}

}  // namespace kgen::ir
