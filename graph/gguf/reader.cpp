// The GGUF reader. Every count, length, dimension and offset comes from the
// file and is checked against the bytes that remain before anything is
// allocated or read, with arithmetic that cannot overflow.

#include <cstring>
#include <limits>

#include "graph/gguf/gguf.h"
#include "graph/mapped_file.h"

namespace kgen::graph::gguf {

namespace {

constexpr uint32_t kMaxDims = 4;

// Fewest bytes one array element of type `t` occupies in the file.
uint64_t min_encoded_bytes(ValueType t) {
  switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: return 8;   // the length
    case ValueType::Array: return 12;   // element type and count
  }
  return 1;
}

}  // namespace

// Reads the file front to back into a GgufFile; `context` names the item
// being read, for errors.
class Reader {
 public:
  explicit Reader(GgufFile& f) : f_(f) {}

  void read() {
    read_header();
    read_metadata();
    read_alignment();
    read_tensor_infos();
    place_tensor_data();
  }

 private:
  [[noreturn]] void fail(uint64_t at, const std::string& what) const {
    const std::string item = context_.describe();
    throw GgufError(f_.path_, at, item.empty() ? what : item + ": " + what);
  }
  uint64_t remaining() const { return f_.size_ - pos_; }

  template <class T> T read(const char* what) {
    if (sizeof(T) > remaining())
      fail(pos_, std::string("the file ends inside ") + what + " (" + std::to_string(remaining()) + " of " +
                     std::to_string(sizeof(T)) + " bytes left)");
    T x;
    std::memcpy(&x, f_.data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return x;
  }

  // A string's length, checked against the bytes that remain.
  uint64_t read_string_length(const char* what) {
    const uint64_t at = pos_;
    const auto n = read<uint64_t>(what);
    if (n > remaining())
      fail(at, std::string(what) + " claims " + std::to_string(n) + " bytes; only " + std::to_string(remaining()) +
                   " remain in the file");
    return n;
  }

  std::string read_string(const char* what) {
    const uint64_t n = read_string_length(what);
    std::string s(reinterpret_cast<const char*>(f_.data_ + pos_), size_t(n));
    pos_ += n;
    return s;
  }

  ValueType read_value_type(const char* what) {
    const uint64_t at = pos_;
    const auto t = read<uint32_t>(what);
    if (t >= kValueTypeCount) fail(at, std::string("unknown ") + what + " " + std::to_string(t));
    return ValueType(t);
  }

  void read_header() {
    if (f_.size_ < 4 || std::memcmp(f_.data_, "GGUF", 4) != 0) {
      std::string magic(reinterpret_cast<const char*>(f_.data_), size_t(std::min<uint64_t>(4, f_.size_)));
      fail(0, "not a GGUF file (it starts with " + quoted(magic) + ", not 'GGUF')");
    }
    pos_ = 4;
    const auto version = read<uint32_t>("the version");
    if (version == 1) fail(4, "GGUF version 1 is not supported (versions 2 and 3 are); convert the model again");
    if (version != 2 && version != 3) {
      const uint32_t swapped = __builtin_bswap32(version);
      if (swapped >= 1 && swapped <= 3)
        fail(4, "a big-endian GGUF file (version " + std::to_string(swapped) +
                    " byte-swapped); only little-endian files are supported");
      fail(4, "unsupported GGUF version " + std::to_string(version) + " (2 and 3 are supported)");
    }
    f_.version_ = version;
    n_tensors_ = read<uint64_t>("the tensor count");
    n_kv_ = read<uint64_t>("the metadata count");
    // A key-value pair takes at least 13 bytes, a tensor info 24.
    if (n_kv_ > remaining() / 13)
      fail(16, "the metadata count " + std::to_string(n_kv_) + " cannot fit in the " + std::to_string(remaining()) +
                   " bytes that follow the header");
    if (n_tensors_ > remaining() / 24)
      fail(8, "the tensor count " + std::to_string(n_tensors_) + " cannot fit in the " + std::to_string(remaining()) +
                  " bytes that follow the header");
  }

  // Reads a value of type `t` into `out` (in place: vocabularies hold
  // hundreds of thousands of them).
  void read_value(ValueType t, int depth, Value& out) {
    switch (t) {
      case ValueType::U8: out.v.emplace<uint8_t>(read<uint8_t>("a u8")); return;
      case ValueType::I8: out.v.emplace<int8_t>(read<int8_t>("an i8")); return;
      case ValueType::U16: out.v.emplace<uint16_t>(read<uint16_t>("a u16")); return;
      case ValueType::I16: out.v.emplace<int16_t>(read<int16_t>("an i16")); return;
      case ValueType::U32: out.v.emplace<uint32_t>(read<uint32_t>("a u32")); return;
      case ValueType::I32: out.v.emplace<int32_t>(read<int32_t>("an i32")); return;
      case ValueType::F32: out.v.emplace<float>(read<float>("an f32")); return;
      case ValueType::U64: out.v.emplace<uint64_t>(read<uint64_t>("a u64")); return;
      case ValueType::I64: out.v.emplace<int64_t>(read<int64_t>("an i64")); return;
      case ValueType::F64: out.v.emplace<double>(read<double>("an f64")); return;
      case ValueType::Bool: {
        const uint64_t at = pos_;
        const auto b = read<uint8_t>("a bool");
        if (b > 1) fail(at, "a bool is " + std::to_string(b) + ", not 0 or 1");
        out.v.emplace<bool>(b == 1);
        return;
      }
      case ValueType::String: {
        const uint64_t n = read_string_length("a string");
        out.v.emplace<std::string>(reinterpret_cast<const char*>(f_.data_ + pos_), size_t(n));
        pos_ += n;
        return;
      }
      case ValueType::Array: read_array(depth + 1, out.v.emplace<Array>()); return;
    }
    fail(pos_, "unknown value type");
  }

  void read_array(int depth, Array& a) {
    const uint64_t at = pos_;
    if (depth > kMaxArrayDepth) fail(at, "arrays nested more than " + std::to_string(kMaxArrayDepth) + " deep");
    a.type = read_value_type("array element type");
    const auto n = read<uint64_t>("an array length");
    const uint64_t min_bytes = min_encoded_bytes(a.type);
    if (n > remaining() / min_bytes)
      fail(at, "an array of " + std::to_string(n) + " " + value_type_name(a.type) + " cannot fit in the " +
                   std::to_string(remaining()) + " bytes left");
    a.items.resize(size_t(n));
    for (Value& item : a.items) read_value(a.type, depth, item);
  }

  void read_metadata() {
    f_.kvs_.reserve(size_t(n_kv_));
    for (uint64_t i = 0; i < n_kv_; ++i) {
      KeyValue kv;
      kv.offset = pos_;
      context_ = {"metadata entry", i, nullptr};
      kv.key = read_string("a key");
      context_ = {"key", i, &kv.key};
      if (f_.key_index_.count(kv.key)) fail(kv.offset, "duplicate key");
      const ValueType t = read_value_type("value type");
      read_value(t, 0, kv.value);
      context_ = {};
      f_.key_index_.emplace(kv.key, f_.kvs_.size());
      f_.kvs_.push_back(std::move(kv));
    }
    context_ = {};
  }

  void read_alignment() {
    const KeyValue* kv = f_.find("general.alignment");
    if (!kv) return;
    const uint32_t* a = kv->value.get_if<uint32_t>();
    if (!a) f_.fail_type(*kv, ValueType::U32);
    if (*a == 0 || (*a & (*a - 1)) != 0)
      f_.fail_key(kv->key, "the alignment " + std::to_string(*a) + " is not a power of two");
    f_.alignment_ = *a;
  }

  void read_tensor_infos() {
    f_.tensors_.reserve(size_t(n_tensors_));
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      TensorInfo t;
      t.info_offset = pos_;
      context_ = {"tensor info", i, nullptr};
      t.name = read_string("a tensor name");
      context_ = {"tensor", i, &t.name};
      if (f_.tensor_index_.count(t.name)) fail(t.info_offset, "duplicate tensor name");
      read_dims(t);
      const uint64_t type_at = pos_;
      t.type = read<uint32_t>("the tensor type");
      if (!ggml_type_info(t.type)) fail(type_at, "unknown GGML tensor type id " + std::to_string(t.type));
      std::string why;
      const auto bytes = tensor_bytes(t.type, t.ne, &why);
      if (!bytes) fail(type_at, why);
      t.bytes = *bytes;
      const uint64_t offset_at = pos_;
      t.offset = read<uint64_t>("the tensor offset");
      if (t.offset % f_.alignment_ != 0)
        fail(offset_at, "the data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                            std::to_string(f_.alignment_));
      context_ = {};
      f_.tensor_index_.emplace(t.name, f_.tensors_.size());
      f_.tensors_.push_back(std::move(t));
    }
    context_ = {};
  }

  void read_dims(TensorInfo& t) {
    const uint64_t at = pos_;
    const auto n_dims = read<uint32_t>("n_dims");
    if (n_dims > kMaxDims) fail(at, "n_dims = " + std::to_string(n_dims) + " (at most 4)");
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne_at = pos_;
      const auto ne = read<uint64_t>("a dimension");
      if (ne > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(ne_at, "ne[" + std::to_string(d) + "] = " + std::to_string(ne) + " does not fit an int64");
      t.ne.push_back(int64_t(ne));
    }
  }

  void place_tensor_data() {
    const uint64_t a = f_.alignment_;
    const uint64_t pad = (a - pos_ % a) % a;
    if (pad > remaining() && !f_.tensors_.empty())
      fail(pos_, "the file ends before the data section (alignment " + std::to_string(a) + ")");
    f_.data_offset_ = pos_ + pad;  // cannot overflow: pos_ <= size_ and pad < 2^32
    const uint64_t data_bytes = f_.data_offset_ <= f_.size_ ? f_.size_ - f_.data_offset_ : 0;
    for (TensorInfo& t : f_.tensors_) {
      if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
        throw GgufError(f_.path_, t.info_offset,
                        "tensor " + quoted(t.name) + ": its data [" + std::to_string(t.offset) + ", +" +
                            std::to_string(t.bytes) + ") runs past the end of the data section (" +
                            std::to_string(data_bytes) + " bytes from byte " + std::to_string(f_.data_offset_) +
                            ")");
      t.file_offset = f_.data_offset_ + t.offset;
      t.data = f_.data_ + t.file_offset;
    }
  }

  GgufFile& f_;
  uint64_t pos_ = 0;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
  // The item being read, for errors (built into words only when one is thrown).
  struct Context {
    const char* kind = nullptr;       // "key", "tensor", "metadata entry"
    uint64_t index = 0;
    const std::string* name = nullptr;  // once read
    std::string describe() const {
      if (!kind) return "";
      return std::string(kind) + " " + (name ? quoted(*name) : std::to_string(index));
    }
  } context_;
};

GgufFile GgufFile::parse(const uint8_t* data, uint64_t size, const std::string& name,
                         std::shared_ptr<const void> owner) {
  GgufFile f;
  f.path_ = name;
  f.owner_ = std::move(owner);
  f.data_ = data;
  f.size_ = size;
  Reader(f).read();
  return f;
}

GgufFile GgufFile::open(const std::string& path) {
  MappedFile m;
  try {
    m = map_file(path);
  } catch (const MapError& e) {
    throw GgufError(path, GgufError::kNoOffset, e.what());
  }
  if (m.size == 0) throw GgufError(path, 0, "the file is empty, not GGUF");
  return parse(m.data, m.size, path, std::move(m.owner));
}

}  // namespace kgen::graph::gguf
