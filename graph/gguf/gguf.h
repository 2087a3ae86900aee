// GGUF, GGML's single-file model format (versions 2 and 3): a reader over a
// read-only memory map that trusts nothing in the file, and a writer.
//
// Layout, little endian:
//   "GGUF", u32 version, u64 n_tensors, u64 n_kv
//   n_kv      x (string key, u32 value type, value)
//   n_tensors x (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset)
//   padding to `general.alignment` (a u32, default 32), then the data section:
//   each tensor's bytes at its offset from the section's start (a multiple of
//   the alignment).
// A string is a u64 byte count and the bytes (no terminator). An array is a
// u32 element type, a u64 count and the elements; an element that is itself
// an array carries its own element type and count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

namespace kgen::graph::gguf {

// A file that is not a well-formed GGUF file (or not the model a loader
// expects): the file, the byte offset where it goes wrong, and what is wrong.
class GgufError : public std::runtime_error {
 public:
  static constexpr uint64_t kNoOffset = ~uint64_t(0);
  // `offset` kNoOffset: the problem has no single place (a missing key).
  GgufError(const std::string& file, uint64_t offset, const std::string& what);
  const std::string& file() const { return file_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string file_;
  uint64_t offset_;
};

// `s` in single quotes, bytes outside printable ASCII as \xNN, cut after 80
// bytes (for messages).
std::string quoted(const std::string& s);

// Metadata value types; the ids are GGUF's.
enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
constexpr uint32_t kValueTypeCount = 13;
// Arrays nest at most this deep (the reader's recursion stays bounded).
constexpr int kMaxArrayDepth = 8;
const char* value_type_name(ValueType t);  // "u8", "f32", "string", "array", ...

struct Value;
// A homogeneous array: every item is of type `type`.
struct Array {
  ValueType type = ValueType::U8;
  std::vector<Value> items;
};

// One metadata value; the variant's index is its GGUF type id.
struct Value {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;
  Storage v;

  ValueType type() const { return ValueType(v.index()); }
  template <class T> const T* get_if() const { return std::get_if<T>(&v); }
  // Any integer type whose value fits an int64 (not bool).
  std::optional<int64_t> as_int() const;
  // f32 or f64.
  std::optional<double> as_float() const;

  // A value of exactly type T (uint32_t(5) is a u32; a const char* is a string).
  template <class T> static Value of(T x) { return Value{Storage(std::in_place_type<T>, std::move(x))}; }
  static Value of(const char* s) { return of(std::string(s)); }
  // An array of T (std::string, a scalar type, or Array for nested arrays).
  template <class T> static Value array_of(const std::vector<T>& xs);
};

namespace detail {
template <class T, class V> struct IndexIn;
template <class T, class... Ts> struct IndexIn<T, std::variant<Ts...>> {
  static constexpr size_t find() {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    for (size_t i = 0; i < sizeof...(Ts); ++i)
      if (same[i]) return i;
    return sizeof...(Ts);
  }
  static constexpr size_t value = find();
};
}  // namespace detail

// The GGUF type id of the C++ type T (uint32_t -> U32, std::string -> String, ...).
template <class T> constexpr ValueType value_type_of() {
  constexpr size_t i = detail::IndexIn<T, Value::Storage>::value;
  static_assert(i < kValueTypeCount, "not a GGUF metadata type");
  return ValueType(i);
}

template <class T> Value Value::array_of(const std::vector<T>& xs) {
  Array a;
  a.type = value_type_of<T>();
  a.items.reserve(xs.size());
  for (const T& x : xs) a.items.push_back(of(x));
  return Value{Storage(std::move(a))};
}

// One metadata entry; `offset`: where it starts in the file (its key's length).
struct KeyValue {
  std::string key;
  Value value;
  uint64_t offset = 0;
};

// A GGML tensor type: its name and its block (elements and bytes per block).
struct GgmlTypeInfo {
  uint32_t id;
  const char* name;     // GGML's spelling: "f32", "q4_0", "q4_K", "iq2_xxs"
  int64_t block_elems;  // 1 for plain types
  int64_t block_bytes;
};
// Every tensor type GGML defines today (removed ids excluded).
const std::vector<GgmlTypeInfo>& ggml_types();
// nullptr for an id GGML does not define (or no longer does).
const GgmlTypeInfo* ggml_type_info(uint32_t id);

// One tensor as the file describes it, its bytes checked to lie in the file.
struct TensorInfo {
  std::string name;
  uint32_t type = 0;            // a GGML type id (ggml_type_info is never null)
  std::vector<int64_t> ne;      // n_dims entries, ne[0] fastest
  uint64_t offset = 0;          // from the data section's start
  uint64_t file_offset = 0;     // from the file's start
  uint64_t bytes = 0;
  const uint8_t* data = nullptr;
  uint64_t info_offset = 0;     // where its tensor info starts in the file

  int64_t numel() const;
};

// A parsed GGUF file. Metadata and tensor infos are copies; tensor data stays
// in the mapping, which `owner()` keeps alive (copies share it).
class GgufFile {
 public:
  // Maps `path` read-only and parses it.
  static GgufFile open(const std::string& path);
  // Parses `size` bytes at `data` (kept alive by `owner`, if given); `name`
  // names the bytes in errors.
  static GgufFile parse(const uint8_t* data, uint64_t size, const std::string& name,
                        std::shared_ptr<const void> owner = nullptr);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // the data section's start
  uint64_t file_size() const { return size_; }
  const uint8_t* data() const { return data_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  const std::vector<KeyValue>& metadata() const { return kvs_; }  // in file order
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const KeyValue* find(const std::string& key) const;
  const TensorInfo* find_tensor(const std::string& name) const;

  // The value of `key` as exactly type T; throws GgufError naming the key when
  // it is absent or of another type.
  template <class T> const T& get(const std::string& key) const;
  // The same, nullopt when the key is absent (of another type still throws).
  template <class T> std::optional<T> opt(const std::string& key) const;

  uint32_t get_u32(const std::string& k) const { return get<uint32_t>(k); }
  int32_t get_i32(const std::string& k) const { return get<int32_t>(k); }
  uint64_t get_u64(const std::string& k) const { return get<uint64_t>(k); }
  int64_t get_i64(const std::string& k) const { return get<int64_t>(k); }
  float get_f32(const std::string& k) const { return get<float>(k); }
  double get_f64(const std::string& k) const { return get<double>(k); }
  bool get_bool(const std::string& k) const { return get<bool>(k); }
  const std::string& get_string(const std::string& k) const { return get<std::string>(k); }
  const Array& get_array(const std::string& k) const { return get<Array>(k); }
  std::optional<uint32_t> opt_u32(const std::string& k) const { return opt<uint32_t>(k); }
  std::optional<float> opt_f32(const std::string& k) const { return opt<float>(k); }
  std::optional<bool> opt_bool(const std::string& k) const { return opt<bool>(k); }
  std::optional<std::string> opt_string(const std::string& k) const { return opt<std::string>(k); }

  // Any integer type (writers disagree on u32, i32 or u64); throws when the
  // value is not an integer or does not fit an int64.
  int64_t get_int(const std::string& key) const;
  std::optional<int64_t> opt_int(const std::string& key) const;
  // f32 or f64.
  double get_float(const std::string& key) const;
  std::optional<double> opt_float(const std::string& key) const;

  // An error about `key` (at its offset when present).
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const;
  // An error about tensor `t` (at its tensor info).
  [[noreturn]] void fail_tensor(const TensorInfo& t, const std::string& what) const;

 private:
  friend class Reader;
  [[noreturn]] void fail_type(const KeyValue& kv, ValueType wanted) const;

  std::string path_;
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kvs_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> key_index_, tensor_index_;
};

template <class T> const T& GgufFile::get(const std::string& key) const {
  const KeyValue* kv = find(key);
  if (!kv) fail_key(key, "absent");
  const T* x = kv->value.get_if<T>();
  if (!x) fail_type(*kv, value_type_of<T>());
  return *x;
}

template <class T> std::optional<T> GgufFile::opt(const std::string& key) const {
  if (!find(key)) return std::nullopt;
  return get<T>(key);
}

// Writes GGUF v3 files: metadata in the order first set, tensors in the order
// added, each at the next multiple of the alignment (`general.alignment` when
// set, a u32 power of two; else 32). Refuses what a reader would refuse.
class GgufWriter {
 public:
  // Sets `key` (a later set replaces the value and keeps the first place).
  void set(const std::string& key, Value value);
  // Adds a tensor of GGML type `type` and dims `ne`; `bytes` must be exactly
  // its size. The bytes are copied.
  void add_tensor(const std::string& name, uint32_t type, std::vector<int64_t> ne, const void* data,
                  size_t bytes);

  std::vector<uint8_t> bytes() const;  // the whole file
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    uint32_t type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };
  uint64_t alignment() const;

  std::vector<KeyValue> kvs_;
  std::vector<Tensor> tensors_;
};

// Bytes of a tensor of GGML type `type` and dims `ne`; nullopt when the type
// is unknown, a dim is negative, ne[0] is not a whole number of blocks or the
// size overflows. `why` (optional) receives the reason.
std::optional<uint64_t> tensor_bytes(uint32_t type, const std::vector<int64_t>& ne, std::string* why = nullptr);

}  // namespace kgen::graph::gguf
