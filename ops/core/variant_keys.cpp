// Declared variant keys (ops/core/op.h: VariantKey): what a variant may hold,
// checked wherever a variant comes from outside the op (`--variant`, the tune
// DB), and by the op tests for everything an op's own choices produce.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "ops/core/op.h"

namespace kgen::ops {

bool VariantKey::legal(int64_t v) const {
  if (values.empty()) return v >= lo && v <= hi;
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::string VariantKey::legal_str() const {
  if (values.empty()) return std::to_string(lo) + ".." + std::to_string(hi);
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : "|") + std::to_string(v);
  return s;
}

VariantKey key_set(std::string key, std::string name, std::vector<int64_t> values, std::string meaning) {
  return VariantKey{std::move(key), std::move(name), std::move(values), 0, 0, std::move(meaning)};
}

VariantKey key_range(std::string key, std::string name, int64_t lo, int64_t hi, std::string meaning) {
  return VariantKey{std::move(key), std::move(name), {}, lo, hi, std::move(meaning)};
}

namespace {

std::string legal_keys(const OpDef& op) {
  if (op.variant_keys.empty()) return "op '" + op.name + "' has no variant keys";
  std::string s = "legal keys of '" + op.name + "': ";
  for (size_t i = 0; i < op.variant_keys.size(); ++i) {
    const VariantKey& k = op.variant_keys[i];
    s += (i ? ", " : "") + k.key + " (" + k.name + ") = " + k.legal_str();
  }
  return s;
}

}  // namespace

Variant resolve_variant(const OpDef& op, const Variant& v) {
  Variant out;
  for (const auto& [given, value] : v.params) {
    auto it = std::find_if(op.variant_keys.begin(), op.variant_keys.end(),
                           [&](const VariantKey& k) { return k.key == given || k.name == given; });
    if (it == op.variant_keys.end())
      throw std::invalid_argument("op '" + op.name + "': unknown variant key '" + given + "' (" + legal_keys(op) + ")");
    if (!it->legal(value))
      throw std::invalid_argument("op '" + op.name + "': variant key " + it->key + " (" + it->name + ") = " +
                                  std::to_string(value) + " is not legal (" + it->legal_str() + ": " + it->meaning + ")");
    if (out.params.count(it->key))
      throw std::invalid_argument("op '" + op.name + "': variant key " + it->key + " (" + it->name + ") given twice");
    out.params[it->key] = value;
  }
  return out;
}

std::string describe_variant_keys(const OpDef& op) {
  if (op.variant_keys.empty()) return "  (no variant keys: one form)\n";
  std::string s;
  char line[512];
  for (const VariantKey& k : op.variant_keys) {
    std::snprintf(line, sizeof line, "  %-5s %-22s %-18s %s\n", k.key.c_str(), k.name.c_str(), k.legal_str().c_str(),
                  k.meaning.c_str());
    s += line;
  }
  return s;
}

}  // namespace kgen::ops
