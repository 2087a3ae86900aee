// GgufFile's lookups and typed accessors.
#include "graph/gguf/gguf.h"

namespace kgen::graph::gguf {

const KeyValue* GgufFile::find(const std::string& key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &kvs_[it->second];
}

const TensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::fail_key(const std::string& key, const std::string& what) const {
  const KeyValue* kv = find(key);
  throw GgufError(path_, kv ? kv->offset : GgufError::kNoOffset, "key " + quoted(key) + ": " + what);
}

void GgufFile::fail_tensor(const TensorInfo& t, const std::string& what) const {
  throw GgufError(path_, t.info_offset, "tensor " + quoted(t.name) + ": " + what);
}

void GgufFile::fail_type(const KeyValue& kv, ValueType wanted) const {
  std::string is = value_type_name(kv.value.type());
  if (const Array* a = kv.value.get_if<Array>()) is += std::string(" of ") + value_type_name(a->type);
  fail_key(kv.key, "is " + is + ", expected " + value_type_name(wanted));
}

int64_t GgufFile::get_int(const std::string& key) const {
  const KeyValue* kv = find(key);
  if (!kv) fail_key(key, "absent");
  const auto x = kv->value.as_int();
  if (!x) {
    if (kv->value.type() == ValueType::U64) fail_key(key, "the u64 value does not fit an int64");
    fail_key(key, std::string("is ") + value_type_name(kv->value.type()) + ", expected an integer");
  }
  return *x;
}

std::optional<int64_t> GgufFile::opt_int(const std::string& key) const {
  if (!find(key)) return std::nullopt;
  return get_int(key);
}

double GgufFile::get_float(const std::string& key) const {
  const KeyValue* kv = find(key);
  if (!kv) fail_key(key, "absent");
  const auto x = kv->value.as_float();
  if (!x) fail_key(key, std::string("is ") + value_type_name(kv->value.type()) + ", expected f32 or f64");
  return *x;
}

std::optional<double> GgufFile::opt_float(const std::string& key) const {
  if (!find(key)) return std::nullopt;
  return get_float(key);
}

}  // namespace kgen::graph::gguf
