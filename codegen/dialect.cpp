#include "codegen/dialect.h"

#include <cctype>
#include <stdexcept>

namespace kgen::codegen {

OpTable::OpTable(std::span<const OpRule> rules) {
  for (const OpRule& r : rules) index_[size_t(r.op)] = &r;
}

std::string Dialect::subgroup(ir::Op op, ir::Type, std::span<const std::string>) const {
  throw ir::Error({}, "codegen: dialect '" + std::string(name()) + "' has no subgroup operations ('" +
                          std::string(ir::op_name(op)) + "')");
}

std::string Dialect::permute_bytes(ir::Type, ir::Type, std::span<const std::string>, std::span<const int>) const {
  throw ir::Error({}, "codegen: dialect '" + std::string(name()) + "' has no byte permutes ('permute_bytes')");
}

std::string dot4_helper_name(ir::Type a, ir::Type b) {
  auto sign = [](ir::Type t) { return t.kind == ir::ScalarKind::I32 ? "s" : "u"; };
  return std::string("kg_dot4_") + sign(a) + sign(b);
}

std::string Dialect::dot4(ir::Type a, ir::Type b, std::span<const std::string> args, Dot4Form) const {
  if (a.is_vector()) return {};
  return dot4_helper_name(a, b) + "(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string Dialect::dot4_pair(ir::Type, ir::Type, std::span<const std::string>) const { return {}; }

std::string Dialect::dot2_i16(ir::Type a, std::span<const std::string> args) const {
  if (a.is_vector()) return {};
  return "kg_dot2_i16(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string Dialect::dot2_bf16(ir::Type a, std::span<const std::string> args) const {
  if (a.is_vector()) return {};
  return "kg_dot2_bf16(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

std::string format_op(std::string_view fmt, std::span<const std::string> args, const FormatVars& v) {
  std::string out;
  out.reserve(fmt.size() + 32);
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '{' && i + 2 < fmt.size() + 1 && fmt.find('}', i) != std::string_view::npos) {
      size_t close = fmt.find('}', i);
      std::string_view key = fmt.substr(i + 1, close - i - 1);
      if (key.size() == 1 && key[0] >= '0' && key[0] <= '9') {
        size_t a = size_t(key[0] - '0');
        if (a < args.size()) {
          // Operands are names or literals; parenthesise anything compound.
          const std::string& s = args[a];
          bool simple = true;
          for (char ch : s)
            if (!(isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '[' || ch == ']')) simple = false;
          if (simple) out += s;
          else out += "(" + s + ")";
          i = close;
          continue;
        }
      } else if (key == "T") { out += v.T; i = close; continue; }
      else if (key == "E") { out += v.E; i = close; continue; }
      else if (key == "R") { out += v.R; i = close; continue; }
      else if (key == "f") { out += v.f; i = close; continue; }
      else if (key == "B") { out += v.B; i = close; continue; }
    }
    out += c;
  }
  return out;
}

std::string Dialect::tile_mma_bf16(std::span<const std::string>, bool) const {
  // check_capabilities refuses the op first, naming the kernel and target.
  throw std::logic_error("tile_mma_bf16: this dialect has no matrix tiles");
}

}  // namespace kgen::codegen
