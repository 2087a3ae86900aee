// GGUF's value types, GGML's tensor types and their sizes, and the error type.
#include <limits>

#include "graph/gguf/gguf.h"

namespace kgen::graph::gguf {

namespace {

std::string where(const std::string& file, uint64_t offset) {
  if (offset == GgufError::kNoOffset) return file + ": ";
  return file + ": at byte " + std::to_string(offset) + ": ";
}

// a * b, nullopt on overflow of int64.
std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace

GgufError::GgufError(const std::string& file, uint64_t offset, const std::string& what)
    : std::runtime_error(where(file, offset) + what), file_(file), offset_(offset) {}

std::string quoted(const std::string& s) {
  constexpr size_t kMaxShown = 80;  // a corrupt length can make a "name" megabytes long
  static const char* hex = "0123456789abcdef";
  std::string o = "'";
  for (unsigned char c : s.substr(0, kMaxShown)) {
    if (c >= 0x20 && c < 0x7f) {
      o += char(c);
    } else {
      o += "\\x";
      o += hex[c >> 4];
      o += hex[c & 15];
    }
  }
  o += "'";
  if (s.size() > kMaxShown) o += "... (" + std::to_string(s.size()) + " bytes)";
  return o;
}

const char* value_type_name(ValueType t) {
  static const char* const names[kValueTypeCount] = {"u8",  "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                     "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = uint32_t(t);
  return i < kValueTypeCount ? names[i] : "unknown";
}

std::optional<int64_t> Value::as_int() const {
  return std::visit(
      [](const auto& x) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
          return int64_t(x);
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return int64_t(x);
        } else {
          return std::nullopt;
        }
      },
      v);
}

std::optional<double> Value::as_float() const {
  if (const float* f = get_if<float>()) return double(*f);
  if (const double* d = get_if<double>()) return *d;
  return std::nullopt;
}

// GGML's type_traits (ggml.c / ggml-common.h): block sizes in elements and bytes.
const std::vector<GgmlTypeInfo>& ggml_types() {
  static const std::vector<GgmlTypeInfo> types = {
      {0, "f32", 1, 4},          {1, "f16", 1, 2},          {2, "q4_0", 32, 18},       {3, "q4_1", 32, 20},
      {6, "q5_0", 32, 22},       {7, "q5_1", 32, 24},       {8, "q8_0", 32, 34},       {9, "q8_1", 32, 36},
      {10, "q2_K", 256, 84},     {11, "q3_K", 256, 110},    {12, "q4_K", 256, 144},    {13, "q5_K", 256, 176},
      {14, "q6_K", 256, 210},    {15, "q8_K", 256, 292},    {16, "iq2_xxs", 256, 66},  {17, "iq2_xs", 256, 74},
      {18, "iq3_xxs", 256, 98},  {19, "iq1_s", 256, 50},    {20, "iq4_nl", 32, 18},    {21, "iq3_s", 256, 110},
      {22, "iq2_s", 256, 82},    {23, "iq4_xs", 256, 136},  {24, "i8", 1, 1},          {25, "i16", 1, 2},
      {26, "i32", 1, 4},         {27, "i64", 1, 8},         {28, "f64", 1, 8},         {29, "iq1_m", 256, 56},
      {30, "bf16", 1, 2},        {34, "tq1_0", 256, 54},    {35, "tq2_0", 256, 66},    {39, "mxfp4", 32, 17},
      {40, "nvfp4", 64, 36},     {41, "q1_0", 128, 18},
  };
  return types;
}

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
  for (const auto& t : ggml_types())
    if (t.id == id) return &t;
  return nullptr;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // the reader checked that this does not overflow
  return n;
}

std::optional<uint64_t> tensor_bytes(uint32_t type, const std::vector<int64_t>& ne, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<uint64_t> {
    if (why) *why = w;
    return std::nullopt;
  };
  const GgmlTypeInfo* t = ggml_type_info(type);
  if (!t) return fail("unknown GGML type id " + std::to_string(type));
  std::optional<int64_t> numel = 1;
  for (size_t i = 0; i < ne.size(); ++i) {
    if (ne[i] < 0) return fail("ne[" + std::to_string(i) + "] = " + std::to_string(ne[i]) + " is negative");
    numel = checked_mul(*numel, ne[i]);
    if (!numel) return fail("the element count overflows int64");
  }
  const int64_t ne0 = ne.empty() ? 1 : ne[0];
  if (ne0 % t->block_elems != 0)
    return fail("ne[0] = " + std::to_string(ne0) + " is not a multiple of the " + t->name + " block (" +
                std::to_string(t->block_elems) + " elements)");
  const auto bytes = checked_mul(*numel / t->block_elems, t->block_bytes);
  if (!bytes) return fail("the byte size overflows int64");
  return uint64_t(*bytes);
}

}  // namespace kgen::graph::gguf
