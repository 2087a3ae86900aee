// kgen info MODEL.gguf [--json] [--head N]: a GGUF file's header, every
// metadata key with its type and value (arrays: element type, length and the
// first N elements), the tensor table and the totals.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/gguf/gguf.h"
#include "tools/commands.h"
#include "tools/json_writer.h"

namespace kgen::tools {

namespace {

namespace gguf = graph::gguf;

constexpr size_t kMaxShownString = 96;  // bytes of a string shown in the text output

// Length of the well-formed UTF-8 sequence at s[i] (no overlongs, surrogates
// or code points past U+10FFFF), 0 when there is none.
size_t utf8_sequence(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned c = at(0);
  if (c < 0x80) return 1;
  const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((at(k) >> 6) != 2) return 0;
  const unsigned c1 = at(1);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
    return 0;
  return n;
}

// `s` as valid UTF-8: each byte that does not start a well-formed sequence becomes U+FFFD.
std::string valid_utf8(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0) {
      o += "\xef\xbf\xbd";
      ++i;
    } else {
      o.append(s, i, n);
      i += n;
    }
  }
  return o;
}

// A string for the terminal: control bytes escaped, long ones cut; quoted
// unless it is a name (a key or a tensor name).
std::string display_string(const std::string& s, bool quote = true) {
  std::string o = quote ? "\"" : "";
  const std::string shown = valid_utf8(s.size() > kMaxShownString ? s.substr(0, kMaxShownString) : s);
  for (unsigned char c : shown) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    } else {
      o += char(c);
    }
  }
  if (quote) o += "\"";
  if (s.size() > kMaxShownString) o += "... (" + std::to_string(s.size()) + " bytes)";
  return o;
}

// The shortest decimal that reads back as the same float (or double).
template <class F> std::string float_str(F x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  for (int digits = 6;; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(x));
    if (digits >= 17 || F(std::strtod(buf, nullptr)) == x) return buf;
  }
}

// One value as text (json: as a JSON value); arrays show `head` elements,
// and their length when `top` (not an array's element).
std::string value_str(const gguf::Value& v, size_t head, bool json, bool top = true) {
  if (const auto* s = v.get_if<std::string>()) return json ? "\"" + json_escape(valid_utf8(*s)) + "\"" : display_string(*s);
  if (const auto* b = v.get_if<bool>()) return *b ? "true" : "false";
  if (const auto* f = v.get_if<float>()) return json && !std::isfinite(*f) ? "null" : float_str(*f);
  if (const auto* d = v.get_if<double>()) return json && !std::isfinite(*d) ? "null" : float_str(*d);
  if (const auto* u = v.get_if<uint64_t>()) return std::to_string(*u);
  if (const auto* a = v.get_if<gguf::Array>()) {
    const size_t n = std::min(head, a->items.size());
    std::string items;
    for (size_t i = 0; i < n; ++i) items += (i ? ", " : "") + value_str(a->items[i], head, json, false);
    if (json)
      return "{\"elem_type\": \"" + std::string(gguf::value_type_name(a->type)) +
             "\", \"length\": " + std::to_string(a->items.size()) + ", \"head\": [" + items + "]}";
    const std::string shown = "[" + items + (n < a->items.size() ? (n ? ", ...]" : "...]") : "]");
    if (!top) return shown;
    return shown + " (" + std::to_string(a->items.size()) + (a->items.size() == 1 ? " item)" : " items)");
  }
  return std::to_string(*v.as_int());
}

// "u32", "string", "array[string]", "array[array[i16]]" (nested: the first item's type).
std::string type_str(const gguf::Value& v) {
  const auto* a = v.get_if<gguf::Array>();
  if (!a) return gguf::value_type_name(v.type());
  if (a->type == gguf::ValueType::Array && !a->items.empty()) return "array[" + type_str(a->items[0]) + "]";
  return std::string("array[") + gguf::value_type_name(a->type) + "]";
}

std::string ne_str(const std::vector<int64_t>& ne, const char* sep) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? sep : "") + std::to_string(ne[i]);
  return s;
}

struct Totals {
  int64_t params = 0;
  uint64_t bytes = 0;
};

Totals totals(const gguf::GgufFile& f) {
  Totals t;
  for (const auto& ti : f.tensors()) {
    t.params += ti.numel();
    t.bytes += ti.bytes;
  }
  return t;
}

void print_text(const gguf::GgufFile& f, size_t head) {
  std::printf("%s: GGUF v%u, %" PRIu64 " bytes, alignment %" PRIu64 ", data section at byte %" PRIu64 "\n",
              f.path().c_str(), f.version(), f.file_size(), f.alignment(), f.data_offset());
  std::printf("metadata: %zu keys\n", f.metadata().size());
  for (const auto& kv : f.metadata()) {
    std::printf("  %-40s %-14s %s\n", display_string(kv.key, false).c_str(), type_str(kv.value).c_str(),
                value_str(kv.value, head, false).c_str());
  }
  std::printf("tensors: %zu\n", f.tensors().size());
  std::printf("  %-32s %-8s %-22s %12s %12s\n", "name", "type", "ne", "bytes", "offset");
  for (const auto& t : f.tensors())
    std::printf("  %-32s %-8s %-22s %12" PRIu64 " %12" PRIu64 "\n", display_string(t.name, false).c_str(),
                gguf::ggml_type_info(t.type)->name, ne_str(t.ne, " x ").c_str(), t.bytes, t.offset);
  const Totals tot = totals(f);
  std::printf("total: %" PRId64 " parameters, %" PRIu64 " bytes of tensor data\n", tot.params, tot.bytes);
}

void print_json(const gguf::GgufFile& f, size_t head) {
  std::string kvs, tensors;
  for (const auto& kv : f.metadata()) {
    JsonObject o;
    o.add("key", valid_utf8(kv.key)).add("type", gguf::value_type_name(kv.value.type()));
    o.raw("value", value_str(kv.value, head, true));
    kvs += (kvs.empty() ? "" : ", ") + o.str();
  }
  for (const auto& t : f.tensors()) {
    JsonObject o;
    o.add("name", valid_utf8(t.name)).add("type", gguf::ggml_type_info(t.type)->name);
    o.add("type_id", int64_t(t.type)).raw("ne", "[" + ne_str(t.ne, ", ") + "]");
    o.raw("bytes", std::to_string(t.bytes)).raw("offset", std::to_string(t.offset));
    o.raw("file_offset", std::to_string(t.file_offset));
    tensors += (tensors.empty() ? "" : ", ") + o.str();
  }
  const Totals tot = totals(f);
  JsonObject o;
  o.add("file", f.path()).add("version", int64_t(f.version())).raw("file_bytes", std::to_string(f.file_size()));
  o.raw("alignment", std::to_string(f.alignment())).raw("data_offset", std::to_string(f.data_offset()));
  o.add("n_kv", int64_t(f.metadata().size())).add("n_tensors", int64_t(f.tensors().size()));
  o.raw("metadata", "[" + kvs + "]").raw("tensors", "[" + tensors + "]");
  o.add("parameters", tot.params).raw("tensor_bytes", std::to_string(tot.bytes));
  std::printf("%s\n", o.str().c_str());
}

}  // namespace

void add_info_command(CLI::App& app) {
  struct Args {
    std::string model;
    bool json = false;
    size_t head = 8;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("info", "Describe a GGUF model: header, metadata and tensor table");
  cmd->add_option("model", a->model, "the model file (.gguf)")->required();
  cmd->add_flag("--json", a->json, "one JSON object instead of text");
  cmd->add_option("--head", a->head, "array elements shown per metadata array (default 8)");
  cmd->callback([a] {
    const auto f = gguf::GgufFile::open(a->model);
    if (a->json)
      print_json(f, a->head);
    else
      print_text(f, a->head);
  });
}

}  // namespace kgen::tools
