#include "ir/type.h"

namespace kgen::ir {

namespace {
struct KindInfo {
  std::string_view name;
  int bytes;
  bool is_int, is_signed, is_float;
};
constexpr KindInfo kKinds[] = {
#define KGEN_X(e, name, bytes, i, s, f) {name, bytes, i, s, f},
    KGEN_SCALAR_KINDS(KGEN_X)
#undef KGEN_X
        {"void", 0, false, false, false},
};
const KindInfo& info(ScalarKind k) { return kKinds[static_cast<int>(k)]; }
}  // namespace

bool Type::is_int() const { return !is_pointer() && info(kind).is_int; }
bool Type::is_signed() const { return info(kind).is_signed; }
bool Type::is_float() const { return !is_pointer() && info(kind).is_float; }
int Type::scalar_bytes() const { return info(kind).bytes; }

std::string_view scalar_name(ScalarKind k) { return info(k).name; }

std::optional<ScalarKind> parse_scalar_kind(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(ScalarKind::Void); ++i)
    if (kKinds[i].name == s) return static_cast<ScalarKind>(i);
  return std::nullopt;
}

std::string Type::str() const {
  std::string s(scalar_name(kind));
  if (lanes > 1) s += "x" + std::to_string(lanes);
  if (space == AddrSpace::Global) return "ptr<global, " + s + ">";
  if (space == AddrSpace::Shared) return "ptr<shared, " + s + ">";
  return s;
}

static std::optional<Type> parse_value_type(std::string_view s) {
  size_t x = s.find('x');
  std::string_view base = s.substr(0, x);
  auto k = parse_scalar_kind(base);
  if (!k) return std::nullopt;
  int lanes = 1;
  if (x != std::string_view::npos) {
    lanes = 0;
    std::string_view digits = s.substr(x + 1);
    if (digits.empty() || digits.size() > 2) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      lanes = lanes * 10 + (c - '0');
    }
    if (!valid_lanes(lanes) || lanes == 1 || *k == ScalarKind::Void) return std::nullopt;
  }
  return Type(*k, uint8_t(lanes));
}

std::optional<Type> parse_type(std::string_view s) {
  auto trim = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return v;
  };
  s = trim(s);
  if (s.starts_with("ptr<") && s.ends_with(">")) {
    std::string_view inner = s.substr(4, s.size() - 5);
    size_t comma = inner.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    std::string_view space = trim(inner.substr(0, comma));
    auto elem = parse_value_type(trim(inner.substr(comma + 1)));
    if (!elem || elem->is_void()) return std::nullopt;
    if (space == "global") return elem->pointer_to(AddrSpace::Global);
    if (space == "shared") return elem->pointer_to(AddrSpace::Shared);
    return std::nullopt;
  }
  return parse_value_type(s);
}

}  // namespace kgen::ir
