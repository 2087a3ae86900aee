// The GGML types a llama checkpoint may hold, and Checkpoint's lookups.
#include "graph/llama/checkpoint.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "ops/quant/formats.h"

namespace kgen::graph::llama {

namespace {

namespace quant = kgen::ops::quant;

bool is_plain(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// The quantized format of `t`; throws for a type this layer does not know.
const quant::FormatInfo& quant_info(GgmlType t) {
  const auto f = quant::format_from_id(int64_t(t));
  if (!f) throw std::invalid_argument("GGML type " + std::to_string(uint32_t(t)) + " is not supported");
  return quant::info(*f);
}

}  // namespace

const char* ggml_type_name(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return "f32";
    case GgmlType::F16: return "f16";
    case GgmlType::BF16: return "bf16";
    default: break;
  }
  if (const auto f = quant::format_from_id(int64_t(t))) return quant::info(*f).name;
  // Names of other ids live as long as the process, so the pointer stays valid.
  static std::mutex mu;
  static std::map<uint32_t, std::string> others;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = others.try_emplace(uint32_t(t));
  if (fresh) it->second = "type " + std::to_string(uint32_t(t));
  return it->second.c_str();
}

int ggml_block_elems(GgmlType t) { return is_plain(t) ? 1 : quant_info(t).block_elems; }

int ggml_block_bytes(GgmlType t) {
  if (t == GgmlType::F32) return 4;
  if (is_plain(t)) return 2;
  return quant_info(t).block_bytes;
}

bool ggml_type_known(uint32_t id) {
  const auto t = GgmlType(id);
  return is_plain(t) || quant::format_from_id(int64_t(id)).has_value();
}

int64_t WeightRef::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

const WeightRef* Checkpoint::find(const std::string& name) const {
  const auto it = weights.find(name);
  return it == weights.end() ? nullptr : &it->second;
}

const WeightRef& Checkpoint::weight(const std::string& name) const {
  if (const WeightRef* w = find(name)) return *w;
  throw std::runtime_error(path + ": no weight '" + name + "' in this checkpoint");
}

}  // namespace kgen::graph::llama
