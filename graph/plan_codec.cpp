#include "graph/plan_codec.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "ir/hash.h"

namespace kgen::graph {

namespace {

constexpr char kMagic[8] = {'K', 'G', 'E', 'N', 'P', 'L', 'A', 'N'};
constexpr uint64_t kVersion = 1;
constexpr size_t kHeader = 64;
constexpr size_t kAlign = 64;
constexpr uint64_t kChecksumSeed = 0x6b67656e706c616eull;  // "kgenplan"

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

class Writer {
 public:
  std::string out;
  void u8(uint8_t v) { out.push_back(char(v)); }
  void u32(uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
  void u64(uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
  void i64(int64_t v) { u64(uint64_t(v)); }
  void str(const std::string& s) {
    u64(s.size());
    out += s;
  }
  void type(ir::Type t) {
    u8(uint8_t(t.kind));
    u8(t.lanes);
    u8(uint8_t(t.space));
  }
};

// Reads what Writer wrote; every read is bounds-checked and every enum and
// count range-checked, so a damaged file throws instead of misleading.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t u8() { return *take(1); }
  uint32_t u32() {
    uint32_t v;
    std::memcpy(&v, take(4), 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v;
    std::memcpy(&v, take(8), 8);
    return v;
  }
  int64_t i64() { return int64_t(u64()); }
  // A count of items that take at least `min_bytes` each: bounded by what is left.
  size_t count(size_t min_bytes) {
    const uint64_t c = u64();
    if (c > (n_ - at_) / std::max<size_t>(min_bytes, 1)) throw PlanFormatError("a count overruns the file");
    return size_t(c);
  }
  std::string str() {
    const size_t k = count(1);
    return std::string(reinterpret_cast<const char*>(take(k)), k);
  }
  // An index in [lo, hi).
  int64_t index(int64_t lo, int64_t hi, const char* what) {
    const int64_t v = i64();
    if (v < lo || v >= hi) throw PlanFormatError(std::string(what) + " out of range");
    return v;
  }
  ir::Type type() {
    const uint8_t kind = u8(), lanes = u8(), space = u8();
    if (kind > uint8_t(ir::ScalarKind::Void) || lanes < 1 || lanes > 16 || space > uint8_t(ir::AddrSpace::Shared))
      throw PlanFormatError("bad type");
    return ir::Type(ir::ScalarKind(kind), lanes, ir::AddrSpace(space));
  }
  bool done() const { return at_ == n_; }

 private:
  const uint8_t* take(size_t k) {
    if (k > n_ - at_) throw PlanFormatError("truncated structure");
    const uint8_t* r = p_ + at_;
    at_ += k;
    return r;
  }
  const uint8_t* p_;
  size_t n_, at_ = 0;
};

void put_signature(Writer& w, const ir::Kernel& k) {
  w.str(k.name);
  w.u64(k.buffers.size());
  for (const ir::BufferParam& b : k.buffers) {
    w.str(b.name);
    w.type(b.elem);
    w.u8(uint8_t(b.access));
  }
  w.u64(k.scalars.size());
  for (const ir::ScalarParam& s : k.scalars) {
    w.str(s.name);
    w.type(s.type);
  }
  for (uint32_t v : k.workgroup_size) w.u32(v);
}

ir::Kernel get_signature(Reader& r) {
  ir::Kernel k;
  k.name = r.str();
  k.buffers.resize(r.count(12));
  for (ir::BufferParam& b : k.buffers) {
    b.name = r.str();
    b.elem = r.type();
    const uint8_t a = r.u8();
    if (a > uint8_t(ir::Access::ReadWrite)) throw PlanFormatError("bad access mode");
    b.access = ir::Access(a);
  }
  k.scalars.resize(r.count(11));
  for (ir::ScalarParam& s : k.scalars) {
    s.name = r.str();
    s.type = r.type();
  }
  for (uint32_t& v : k.workgroup_size) v = r.u32();
  return k;
}

void put_ints(Writer& w, const std::vector<int>& v) {
  w.u64(v.size());
  for (int x : v) w.i64(x);
}

std::vector<int> get_slots(Reader& r, size_t n_slots) {
  std::vector<int> v(r.count(8));
  for (int& x : v) x = int(r.index(0, int64_t(n_slots), "slot"));
  return v;
}

// Where a constant slot's data comes from: a graph value's constant, or bytes
// stored in the plan (constants lowering made).
enum ConstantRef : uint8_t { kNone = 0, kGraphValue = 1, kStored = 2 };

struct StoredTensor {
  const Tensor* tensor;
  size_t offset;  // in the data region
};

void put_slots(Writer& w, const Graph& g, const Program& p, std::vector<StoredTensor>& stored, size_t& data_bytes) {
  std::unordered_map<const Tensor*, int> graph_constant;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) graph_constant.emplace(&*g.values[v].constant, int(v));
  w.u64(p.slots.size());
  for (const Slot& s : p.slots) {
    w.u8(uint8_t(s.kind));
    w.u64(s.bytes);
    w.i64(s.value);
    w.i64(s.alias);
    w.u64(s.alias_offset);
    auto it = s.constant ? graph_constant.find(s.constant) : graph_constant.end();
    if (!s.constant) {
      w.u8(kNone);
    } else if (it != graph_constant.end()) {
      w.u8(kGraphValue);
      w.i64(it->second);
    } else {
      const Tensor& t = *s.constant;
      w.u8(kStored);
      w.u8(uint8_t(t.dtype));
      w.u64(t.shape.size());
      for (int64_t d : t.shape) w.i64(d);
      w.u64(data_bytes);
      stored.push_back({&t, data_bytes});
      data_bytes = align_up(data_bytes + t.bytes());
    }
  }
}

// A stored constant, wrapped in place in the file's memory.
std::unique_ptr<Tensor> get_stored_tensor(Reader& r, const uint8_t* data, size_t data_bytes,
                                          const std::shared_ptr<const void>& owner) {
  const uint8_t dtype = r.u8();
  if (dtype >= uint8_t(ir::ScalarKind::Void)) throw PlanFormatError("bad constant dtype");
  Shape shape(r.count(8));
  uint64_t numel = 1;
  for (int64_t& d : shape) {
    d = r.i64();
    if (d < 0 || (d > 0 && numel > (uint64_t(1) << 48) / uint64_t(d))) throw PlanFormatError("bad constant shape");
    numel *= uint64_t(d);
  }
  const uint64_t offset = r.u64();
  const uint64_t bytes = numel * dtype_bytes(ir::ScalarKind(dtype));
  if (offset % kAlign != 0 || offset > data_bytes || bytes > data_bytes - offset)
    throw PlanFormatError("a constant overruns the data");
  return std::make_unique<Tensor>(Tensor::wrap(ir::ScalarKind(dtype), std::move(shape), data + offset, owner));
}

// No slot's alias chain may loop (Program::root follows it).
void check_aliases(const Program& p) {
  for (size_t s = 0; s < p.slots.size(); ++s) {
    int at = int(s);
    for (size_t steps = 0; p.slots[size_t(at)].alias >= 0; ++steps) {
      if (steps > p.slots.size()) throw PlanFormatError("slot aliases form a cycle");
      at = p.slots[size_t(at)].alias;
    }
  }
}

void get_slots_section(Reader& r, const Graph& g, CachedPlan& plan, const uint8_t* data, size_t data_bytes,
                       const std::shared_ptr<const void>& owner) {
  const size_t n = r.count(34);
  plan.program.slots.resize(n);
  for (Slot& s : plan.program.slots) {
    const uint8_t kind = r.u8();
    if (kind > uint8_t(Slot::Kind::State)) throw PlanFormatError("bad slot kind");
    s.kind = Slot::Kind(kind);
    s.bytes = size_t(r.u64());
    s.value = int(r.index(-1, int64_t(g.values.size()), "slot value"));
    s.alias = int(r.index(-1, int64_t(n), "slot alias"));
    s.alias_offset = size_t(r.u64());
    switch (r.u8()) {
      case kNone: break;
      case kGraphValue: {
        const Value& v = g.values[size_t(r.index(0, int64_t(g.values.size()), "constant value"))];
        if (!v.constant) throw PlanFormatError("a slot names a value without a constant");
        s.constant = &*v.constant;
        break;
      }
      case kStored:
        plan.owned.push_back(get_stored_tensor(r, data, data_bytes, owner));
        s.constant = plan.owned.back().get();
        break;
      default: throw PlanFormatError("bad constant reference");
    }
  }
  check_aliases(plan.program);
}

void put_launches(Writer& w, const Program& p, const std::vector<uint64_t>& hashes) {
  std::map<std::pair<uint64_t, std::string>, size_t> kernel_index;
  std::vector<const Launch*> first_use;
  std::vector<size_t> launch_kernel;
  for (size_t i = 0; i < p.launches.size(); ++i) {
    auto [it, fresh] = kernel_index.emplace(std::make_pair(hashes[i], p.launches[i].step.kernel.name), first_use.size());
    if (fresh) first_use.push_back(&p.launches[i]);
    launch_kernel.push_back(it->second);
  }
  w.u64(first_use.size());
  for (size_t k = 0; k < first_use.size(); ++k) {
    w.u64(hashes[size_t(first_use[k] - p.launches.data())]);
    put_signature(w, first_use[k]->step.kernel);
  }
  w.u64(p.launches.size());
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const Launch& l = p.launches[i];
    w.u64(launch_kernel[i]);
    w.str(l.label);
    w.i64(l.reuse_in);
    w.i64(l.reuse_out);
    for (uint32_t v : l.step.dims.grid) w.u32(v);
    for (uint32_t v : l.step.dims.workgroup) w.u32(v);
    put_ints(w, l.step.buffers);
    w.u64(l.step.scalars.size());
    for (uint64_t s : l.step.scalars) w.u64(s);
  }
}

void get_launches(Reader& r, CachedPlan& plan) {
  std::vector<std::pair<uint64_t, ir::Kernel>> kernels(r.count(40));
  for (auto& [hash, k] : kernels) {
    hash = r.u64();
    k = get_signature(r);
  }
  const size_t n_slots = plan.program.slots.size();
  plan.program.launches.resize(r.count(72));
  for (Launch& l : plan.program.launches) {
    const auto& [hash, k] = kernels[size_t(r.index(0, int64_t(kernels.size()), "kernel"))];
    plan.kernel_hashes.push_back(hash);
    l.step.kernel = k;
    l.label = r.str();
    l.reuse_in = int(r.index(-1, int64_t(n_slots), "reuse_in"));
    l.reuse_out = int(r.index(-1, int64_t(n_slots), "reuse_out"));
    for (uint32_t& v : l.step.dims.grid) v = r.u32();
    for (uint32_t& v : l.step.dims.workgroup) v = r.u32();
    l.step.buffers = get_slots(r, n_slots);
    l.step.scalars.resize(r.count(8));
    for (uint64_t& s : l.step.scalars) s = r.u64();
    if (l.step.buffers.size() != k.buffers.size() || l.step.scalars.size() != k.scalars.size())
      throw PlanFormatError("a launch's arguments do not match its kernel");
  }
}

void put_u64_at(std::string& s, size_t at, uint64_t v) { std::memcpy(s.data() + at, &v, 8); }

}  // namespace

uint64_t hash_bytes(const void* data, size_t n, uint64_t seed) {
  constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full;
  auto round = [](uint64_t acc, uint64_t v) {
    acc += v * P2;
    acc = (acc << 31) | (acc >> 33);
    return acc * P1;
  };
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t lane[4] = {seed + P1 + P2, seed + P2, seed, seed - P1};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * size_t(l), 8);
      lane[l] = round(lane[l], v);
    }
  ir::Hasher h(seed);
  for (uint64_t l : lane) h.add(l);
  h.add(std::string_view(reinterpret_cast<const char*>(p + i), n - i));  // the tail, and its length
  h.add(n);
  return h.finish();
}

std::string encode_plan(const std::string& key_text, const Graph& g, const Program& p,
                        const std::vector<uint64_t>& kernel_hashes, const LowerStats& stats) {
  Writer w;
  w.str(key_text);
  std::vector<StoredTensor> stored;
  size_t data_bytes = 0;
  put_slots(w, g, p, stored, data_bytes);
  put_launches(w, p, kernel_hashes);
  put_ints(w, p.input_slots);
  put_ints(w, p.output_slots);
  w.i64(p.groups);
  w.i64(stats.nodes);
  w.i64(stats.groups);
  const size_t structure = w.out.size();
  std::string file(kHeader, '\0');
  std::memcpy(file.data(), kMagic, 8);
  file += w.out;
  file.resize(align_up(file.size()), '\0');
  const size_t data_at = file.size();
  file.resize(data_at + data_bytes, '\0');
  for (const StoredTensor& t : stored)
    if (t.tensor->bytes()) std::memcpy(file.data() + data_at + t.offset, t.tensor->data(), t.tensor->bytes());
  put_u64_at(file, 8, kVersion);
  put_u64_at(file, 16, file.size() - kHeader);
  put_u64_at(file, 24, hash_bytes(file.data() + kHeader, file.size() - kHeader, kChecksumSeed));
  put_u64_at(file, 32, structure);
  return file;
}

CachedPlan decode_plan(const uint8_t* file, size_t n, const std::shared_ptr<const void>& owner,
                       const std::string& key_text, const Graph& g) {
  if (n < kHeader) throw PlanFormatError("truncated header");
  if (std::memcmp(file, kMagic, 8) != 0) throw PlanFormatError("bad magic");
  uint64_t head[4];
  std::memcpy(head, file + 8, sizeof head);
  const auto [version, payload, checksum, structure] = head;
  if (version != kVersion) throw PlanFormatError("format version " + std::to_string(version));
  if (payload != n - kHeader) throw PlanFormatError("payload size differs from the header's (truncated?)");
  if (hash_bytes(file + kHeader, n - kHeader, kChecksumSeed) != checksum) throw PlanFormatError("checksum mismatch");
  if (structure > payload) throw PlanFormatError("structure overruns the file");
  const size_t data_at = align_up(kHeader + size_t(structure));
  if (data_at > n) throw PlanFormatError("data overruns the file");
  Reader r(file + kHeader, size_t(structure));
  if (r.str() != key_text) throw PlanFormatError("stored under another key");
  CachedPlan plan;
  get_slots_section(r, g, plan, file + data_at, n - data_at, owner);
  get_launches(r, plan);
  const size_t n_slots = plan.program.slots.size();
  plan.program.input_slots = get_slots(r, n_slots);
  plan.program.output_slots = get_slots(r, n_slots);
  if (plan.program.input_slots.size() != g.inputs.size() || plan.program.output_slots.size() != g.outputs.size())
    throw PlanFormatError("input or output count differs from the graph's");
  plan.program.groups = int(r.i64());
  plan.lower_stats.nodes = int(r.i64());
  plan.lower_stats.groups = int(r.i64());
  if (!r.done()) throw PlanFormatError("trailing bytes in the structure");
  return plan;
}

}  // namespace kgen::graph
