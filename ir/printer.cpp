#include "ir/printer.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kgen::ir {

AttrSyntax attr_syntax(Op op) {
  switch (op_class(op)) {
    case OpClass::Leaf: return op == Op::Const ? AttrSyntax::Generic : AttrSyntax::Leading;
    // The subgroup builtins have no axis.
    case OpClass::Builtin:
      return (op == Op::SubgroupSize || op == Op::SubgroupLane) ? AttrSyntax::Generic : AttrSyntax::Leading;
    case OpClass::Vector: return (op == Op::Extract || op == Op::Insert) ? AttrSyntax::Lane : AttrSyntax::Generic;
    case OpClass::Memory: return op == Op::Store || op == Op::Prefetch ? AttrSyntax::Hint : AttrSyntax::Generic;
    default: return op == Op::For ? AttrSyntax::Unroll : AttrSyntax::Generic;
  }
}

std::string format_float(double v) {
  if (std::isnan(v)) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    if (bits == 0x7ff8000000000000ull) return "nan";
    char buf[40];
    std::snprintf(buf, sizeof buf, "nan(0x%016llx)", static_cast<unsigned long long>(bits));
    return buf;
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // Shortest representation that reads back to the same double (exact round trip).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  // Keep floats recognisable as floats: "1" -> "1.0".
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format_imm(Type t, const Imm& v) {
  Type s = t.scalar();
  if (s.is_float()) return format_float(v.f);
  if (s.is_bool()) return v.i ? "true" : "false";
  if (s.kind == ScalarKind::U64) return std::to_string(static_cast<uint64_t>(v.i));
  return std::to_string(v.i);
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  return true;
}

std::string quote_name(std::string_view s) {
  if (is_identifier(s)) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

namespace {

std::string value(ValueId v) { return "%" + std::to_string(v); }

// The line of `in` up to (not including) an opening brace.
std::string head(const Instr& in) {
  std::string s;
  if (in.has_result()) s += value(in.id) + " = ";
  s += op_name(in.op);
  AttrSyntax syn = attr_syntax(in.op);
  if (syn == AttrSyntax::Leading) s += " " + std::to_string(in.attr);
  if (in.op == Op::Const) s += " " + format_imm(in.type, in.imm);
  for (size_t i = 0; i < in.args.size(); ++i) s += (i ? ", " : " ") + value(in.args[i]);
  switch (syn) {
    case AttrSyntax::Lane: s += " lane " + std::to_string(in.attr); break;
    case AttrSyntax::Unroll:
      if (in.attr) s += " unroll " + std::to_string(in.attr);
      break;
    case AttrSyntax::Generic:
      if (in.attr) s += " attr " + std::to_string(in.attr);
      break;
    case AttrSyntax::Hint:
      if (in.op == Op::Store && in.attr == kStoreNonTemporal) s += " nontemporal";
      else if (in.op == Op::Prefetch && in.attr == kPrefetchL2) s += " l2";
      else if (in.op == Op::Prefetch && in.attr == kPrefetchWrite) s += " w";
      else if (in.attr) s += " attr " + std::to_string(in.attr);  // malformed; the verifier says so
      break;
    case AttrSyntax::Leading: break;
  }
  // Results carry their type; so do typed statements (none today) for completeness.
  if (!in.type.is_void()) s += " : " + in.type.str();
  return s;
}

class Printer {
 public:
  explicit Printer(const PrintOptions& o) : opts_(o) {}

  void instr(const Instr& in, int depth) {
    std::string h = head(in);
    if (in.op == Op::If && in.blocks.size() == 2) {
      line(depth, h + " {", in);
      block(in.blocks[0], depth + 1);
      // An empty else is the common case and is implied when absent.
      if (!in.blocks[1].instrs.empty()) {
        line(depth, "} else {", nullptr);
        block(in.blocks[1], depth + 1);
      }
      line(depth, "}", nullptr);
    } else if (!in.blocks.empty()) {
      line(depth, h + " {", in);
      for (const Block& b : in.blocks) block(b, depth + 1);
      line(depth, "}", nullptr);
    } else {
      line(depth, h, in);
    }
  }

  void block(const Block& b, int depth) {
    for (const Instr& in : b.instrs) instr(in, depth);
  }

  void line(int depth, const std::string& text, const Instr* in) {
    out_.append(size_t(depth * opts_.indent), ' ');
    out_ += text;
    if (opts_.locations && in && in->loc.known()) out_ += "  // " + in->loc.str();
    out_ += '\n';
  }
  void line(int depth, const std::string& text, const Instr& in) { line(depth, text, &in); }

  std::string take() { return std::move(out_); }

 private:
  const PrintOptions& opts_;
  std::string out_;
};

}  // namespace

std::string print_line(const Instr& in) { return head(in); }

std::string print(const Instr& in, const PrintOptions& opts) {
  Printer p(opts);
  p.instr(in, 0);
  return p.take();
}

std::string print(const Kernel& k, const PrintOptions& opts) {
  std::string sig = "kernel " + quote_name(k.name) + "(";
  bool first = true;
  for (const BufferParam& b : k.buffers) {
    sig += (first ? "" : ", ") + quote_name(b.name) + ": " + b.elem.pointer_to(AddrSpace::Global).str() + " " +
           std::string(access_name(b.access));
    first = false;
  }
  for (const ScalarParam& s : k.scalars) {
    sig += (first ? "" : ", ") + quote_name(s.name) + ": " + s.type.str();
    first = false;
  }
  sig += ") workgroup(";
  if (k.workgroup_size == std::array<uint32_t, 3>{0, 0, 0})
    sig += "dynamic";
  else
    sig += std::to_string(k.workgroup_size[0]) + ", " + std::to_string(k.workgroup_size[1]) + ", " +
           std::to_string(k.workgroup_size[2]);
  sig += ") {\n";
  Printer p(opts);
  p.block(k.body, 1);
  return sig + p.take() + "}\n";
}

}  // namespace kgen::ir
