// A GGUF model's weight matrices to one GGML type (graph/gguf/quantize.h).
#include "graph/gguf/quantize.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "ops/quant/formats.h"
#include "runtimes/thread_pool.h"

namespace kgen::graph::gguf {

namespace {

namespace q = ops::quant;

constexpr uint32_t kF32 = 0, kF16 = 1, kBF16 = 30;
constexpr uint32_t kQuantizationVersion = 2;  // GGML_QNT_VERSION

bool is_float_type(uint32_t t) { return t == kF32 || t == kF16 || t == kBF16; }

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// ggml_n_dims: trailing ones do not count ({64, 1} is a vector).
size_t n_dims(const std::vector<int64_t>& ne) {
  size_t n = ne.size();
  while (n > 1 && ne[n - 1] == 1) --n;
  return n;
}

// llama.cpp's tensor_allows_quantization, for the tensors a llama model has.
bool allows_quantization(const TensorInfo& t, std::string* note) {
  auto no = [&](const char* why) {
    if (note) *note = why;
    return false;
  };
  if (n_dims(t.ne) < 2) return no("1-D");
  if (!ends_with(t.name, "weight")) return no("not a weight");
  if (t.name.find("_norm.weight") != std::string::npos) return no("a norm");
  if (t.name.find("ffn_gate_inp.weight") != std::string::npos) return no("the expert router");
  return true;
}

// llama.cpp's tensor_type_fallback for a K-quant whose block does not divide the rows.
std::optional<uint32_t> k_quant_fallback(uint32_t type) {
  switch (q::QFormat(type)) {
    case q::QFormat::Q2_K:
    case q::QFormat::Q3_K: return uint32_t(q::QFormat::Q4_0);
    case q::QFormat::Q4_K: return uint32_t(q::QFormat::Q5_0);
    case q::QFormat::Q5_K: return uint32_t(q::QFormat::Q5_1);
    case q::QFormat::Q6_K: return uint32_t(q::QFormat::Q8_0);
    default: return std::nullopt;
  }
}

int64_t block_elems(uint32_t type) { return ggml_type_info(type)->block_elems; }

// Row r of a f32 / f16 / bf16 tensor as floats.
void read_row(const TensorInfo& t, int64_t r, float* out) {
  const int64_t k = t.ne[0];
  const uint8_t* p = t.data + uint64_t(r) * uint64_t(k) * (t.type == kF32 ? 4 : 2);
  if (t.type == kF32) {
    std::memcpy(out, p, size_t(k) * 4);
    return;
  }
  for (int64_t i = 0; i < k; ++i) {
    const uint16_t h = uint16_t(p[2 * i] | (p[2 * i + 1] << 8));
    out[i] = t.type == kF16 ? q::half_to_float(h) : std::bit_cast<float>(uint32_t(h) << 16);
  }
}

// Row of k floats to `type` (f32, f16 or a block format) at dst.
void write_row(uint32_t type, const float* x, int64_t k, uint8_t* dst) {
  if (type == kF32) {
    std::memcpy(dst, x, size_t(k) * 4);
  } else if (type == kF16) {
    for (int64_t i = 0; i < k; ++i) {
      const uint16_t h = q::float_to_half(x[i]);
      dst[2 * i] = uint8_t(h);
      dst[2 * i + 1] = uint8_t(h >> 8);
    }
  } else {
    q::quantize_ref(q::QFormat(type), x, dst, k);
  }
}

// Converts every row of `t` to `to` (rows in parallel; each row's bytes are
// the same whatever the split). Throws naming the first non-finite weight.
std::vector<uint8_t> convert_tensor(rt::ThreadPool& pool, const GgufFile& in, const TensorInfo& t, uint32_t to,
                                    uint64_t out_bytes) {
  struct Job {
    const TensorInfo* t;
    uint32_t to;
    uint64_t row_out;
    uint8_t* out;
    std::atomic<int64_t> bad;  // the first element that is not finite, or -1
  };
  std::vector<uint8_t> out(out_bytes);
  const int64_t k = t.ne[0], rows = t.numel() / std::max<int64_t>(k, 1);
  Job job{&t, to, rows ? out_bytes / uint64_t(rows) : 0, out.data(), {-1}};
  pool.run(uint64_t(rows), [](void* ctx, uint64_t begin, uint64_t end) {
    auto& j = *static_cast<Job*>(ctx);
    const int64_t k = j.t->ne[0];
    std::vector<float> row(static_cast<size_t>(k));
    for (uint64_t r = begin; r < end; ++r) {
      read_row(*j.t, int64_t(r), row.data());
      for (int64_t i = 0; i < k; ++i) {
        if (std::isfinite(row[i])) continue;
        int64_t at = int64_t(r) * k + i, seen = j.bad.load();
        while ((seen < 0 || at < seen) && !j.bad.compare_exchange_weak(seen, at)) {}
        return;
      }
      write_row(j.to, row.data(), k, j.out + r * j.row_out);
    }
  }, &job);
  if (const int64_t at = job.bad.load(); at >= 0)
    in.fail_tensor(t, "element " + std::to_string(at) + " (row " + std::to_string(at / k) + ") is not finite");
  return out;
}

}  // namespace

const std::vector<QuantTarget>& quant_targets() {
  static const std::vector<QuantTarget> targets = {
      {"f32", 0, 0},   {"f16", 1, 1},    {"q4_0", 2, 2},   {"q4_1", 3, 3},   {"q5_0", 6, 8},   {"q5_1", 7, 9},
      {"q8_0", 8, 7},  {"q2_k", 10, 10}, {"q3_k", 11, 11}, {"q4_k", 12, 14}, {"q5_k", 13, 16}, {"q6_k", 14, 18},
  };
  return targets;
}

std::optional<QuantTarget> parse_quant_target(std::string_view name) {
  for (const QuantTarget& t : quant_targets()) {
    const std::string_view n = t.name;
    const auto same = [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); };
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), same)) return t;
  }
  return std::nullopt;
}

uint32_t quantized_type(const TensorInfo& t, const QuantTarget& target, std::string* note) {
  if (!allows_quantization(t, note)) return t.type;
  const int64_t k = t.ne[0];
  if (k % block_elems(target.type) == 0) return target.type;
  std::string misfit = "ne[0] = " + std::to_string(k) + " is not a multiple of " +
                       std::to_string(block_elems(target.type));
  const auto fallback = k_quant_fallback(target.type);
  if (fallback && k % block_elems(*fallback) == 0) {
    if (note) *note = misfit + ": " + ggml_type_info(*fallback)->name + " instead";
    return *fallback;
  }
  if (fallback) misfit += " or " + std::to_string(block_elems(*fallback));
  if (note) *note = misfit + ": kept";
  return t.type;
}

QuantizeReport quantize_gguf(const GgufFile& in, const QuantTarget& target, GgufWriter& out) {
  // Every tensor's fate first, so that a quantized source fails before any work.
  QuantizeReport report;
  for (const TensorInfo& t : in.tensors()) {
    QuantizedTensor r{t.name, t.ne, t.type, t.type, t.bytes, t.bytes, ""};
    r.to = quantized_type(t, target, &r.note);
    if (r.to != r.from) {
      if (!is_float_type(t.type))
        in.fail_tensor(t, std::string("is ") + ggml_type_info(t.type)->name +
                              "; kgen quantize converts f32, f16 or bf16 tensors (not quantized ones again)");
      r.bytes_out = *tensor_bytes(r.to, t.ne);
      ++report.converted;
    }
    report.bytes_in += r.bytes_in;
    report.bytes_out += r.bytes_out;
    report.tensors.push_back(std::move(r));
  }
  for (const KeyValue& kv : in.metadata()) out.set(kv.key, kv.value);
  out.set("general.quantization_version", Value::of(kQuantizationVersion));
  out.set("general.file_type", Value::of(target.file_type));
  rt::ThreadPool pool(0);
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const TensorInfo& t = in.tensors()[i];
    const QuantizedTensor& r = report.tensors[i];
    if (r.to == r.from) {
      out.add_tensor(t.name, t.type, t.ne, t.data, t.bytes);
    } else {
      const std::vector<uint8_t> bytes = convert_tensor(pool, in, t, r.to, r.bytes_out);
      out.add_tensor(t.name, r.to, t.ne, bytes.data(), bytes.size());
    }
  }
  return report;
}

QuantizeReport quantize_gguf_file(const std::string& in_path, const std::string& out_path, const QuantTarget& target) {
  std::error_code ec;
  if (std::filesystem::equivalent(in_path, out_path, ec))
    throw std::invalid_argument("kgen quantize: the output " + out_path + " is the input file");
  const GgufFile in = GgufFile::open(in_path);
  GgufWriter out;
  QuantizeReport report = quantize_gguf(in, target, out);
  out.write(out_path);
  return report;
}

}  // namespace kgen::graph::gguf
