// The GGUF v3 writer.
#include <cstring>
#include <fstream>

#include "graph/gguf/gguf.h"

namespace kgen::graph::gguf {

namespace {

class ByteSink {
 public:
  template <class T> void put(T x) {
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &x, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void put_bytes(const std::vector<uint8_t>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void pad_to(uint64_t alignment) { out_.resize(size_t((out_.size() + alignment - 1) / alignment * alignment), 0); }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Arrays must be homogeneous and nest no deeper than readers accept; `where`
// names the key for the error.
void check_array(const Array& a, const std::string& where, int depth = 1) {
  if (depth > kMaxArrayDepth) throw std::invalid_argument(where + ": arrays nested too deep");
  if (uint32_t(a.type) >= kValueTypeCount) throw std::invalid_argument(where + ": unknown array element type");
  for (const Value& v : a.items) {
    if (v.type() != a.type)
      throw std::invalid_argument(where + ": an array of " + value_type_name(a.type) + " holds a " +
                                  value_type_name(v.type()));
    if (const Array* inner = v.get_if<Array>()) check_array(*inner, where, depth + 1);
  }
}

void put_value(ByteSink& out, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out.put_string(x);
        } else if constexpr (std::is_same_v<T, Array>) {
          out.put<uint32_t>(uint32_t(x.type));
          out.put<uint64_t>(x.items.size());
          for (const Value& item : x.items) put_value(out, item);
        } else if constexpr (std::is_same_v<T, bool>) {
          out.put<uint8_t>(x ? 1 : 0);
        } else {
          out.put<T>(x);
        }
      },
      v.v);
}

}  // namespace

void GgufWriter::set(const std::string& key, Value value) {
  if (const Array* a = value.get_if<Array>()) check_array(*a, "gguf writer: key " + quoted(key));
  for (KeyValue& kv : kvs_)
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  kvs_.push_back(KeyValue{key, std::move(value), 0});
}

void GgufWriter::add_tensor(const std::string& name, uint32_t type, std::vector<int64_t> ne, const void* data,
                            size_t bytes) {
  const std::string where = "gguf writer: tensor " + quoted(name);
  if (ne.size() > 4) throw std::invalid_argument(where + ": more than 4 dims");
  for (const Tensor& t : tensors_)
    if (t.name == name) throw std::invalid_argument(where + ": added twice");
  std::string why;
  const auto expected = tensor_bytes(type, ne, &why);
  if (!expected) throw std::invalid_argument(where + ": " + why);
  if (*expected != bytes)
    throw std::invalid_argument(where + ": " + std::to_string(bytes) + " bytes given, its type and dims need " +
                                std::to_string(*expected));
  const auto* p = static_cast<const uint8_t*>(data);
  tensors_.push_back(Tensor{name, type, std::move(ne), std::vector<uint8_t>(p, p + bytes)});
}

uint64_t GgufWriter::alignment() const {
  for (const KeyValue& kv : kvs_) {
    if (kv.key != "general.alignment") continue;
    const uint32_t* a = kv.value.get_if<uint32_t>();
    if (!a || *a == 0 || (*a & (*a - 1)) != 0)
      throw std::invalid_argument("gguf writer: general.alignment must be a u32 power of two");
    return *a;
  }
  return 32;
}

std::vector<uint8_t> GgufWriter::bytes() const {
  const uint64_t align = alignment();
  ByteSink out;
  out.put<uint32_t>(0x46554747);  // "GGUF"
  out.put<uint32_t>(3);
  out.put<uint64_t>(tensors_.size());
  out.put<uint64_t>(kvs_.size());
  for (const KeyValue& kv : kvs_) {
    out.put_string(kv.key);
    out.put<uint32_t>(uint32_t(kv.value.type()));
    put_value(out, kv.value);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    out.put_string(t.name);
    out.put<uint32_t>(uint32_t(t.ne.size()));
    for (int64_t d : t.ne) out.put<uint64_t>(uint64_t(d));
    out.put<uint32_t>(t.type);
    out.put<uint64_t>(offset);
    offset = (offset + t.data.size() + align - 1) / align * align;
  }
  out.pad_to(align);
  for (const Tensor& t : tensors_) {
    out.put_bytes(t.data);
    out.pad_to(align);
  }
  return std::move(out.bytes());
}

void GgufWriter::write(const std::string& path) const {
  const std::vector<uint8_t> b = bytes();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  f.close();
  if (!f) throw std::runtime_error("gguf writer: cannot write " + path);
}

}  // namespace kgen::graph::gguf
