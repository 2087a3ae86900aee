#include "ir/ir.h"

#include <mutex>
#include <set>

namespace kgen::ir {

std::string SourceLoc::str() const {
  if (!file) return "<unknown>";
  std::string s = std::string(file) + ":" + std::to_string(line);
  if (column) s += ":" + std::to_string(column);
  return s;
}

const char* intern_file(std::string_view name) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> names;
  std::lock_guard lock(mu);
  auto it = names.find(name);
  if (it == names.end()) it = names.emplace(name).first;
  return it->c_str();
}

Error::Error(SourceLoc l, const std::string& what)
    : std::runtime_error(l.known() ? l.str() + ": error: " + what : "error: " + what), loc(l), message(what) {}

std::string_view access_name(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::ReadWrite: return "read_write";
  }
  return "?";
}

ValueIndex::ValueIndex(const Kernel& k) : defs_(k.num_values, nullptr) {
  walk(k.body, [&](const Instr& in) {
    if (in.has_result()) {
      if (in.id >= defs_.size()) defs_.resize(in.id + 1, nullptr);
      defs_[in.id] = &in;
    }
  });
}

Type ValueIndex::type(ValueId v) const {
  const Instr* d = def(v);
  return d ? d->type : Type{};
}

bool uses_barrier(const Block& b) {
  bool found = false;
  walk(b, [&](const Instr& in) { found |= in.op == Op::Barrier; });
  return found;
}

bool uses_op_class(const Block& b, OpClass c) {
  bool found = false;
  walk(b, [&](const Instr& in) { found |= op_class(in.op) == c; });
  return found;
}

}  // namespace kgen::ir
