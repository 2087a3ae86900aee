#include "graph/prepared_model.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "graph/handler.h"
#include "graph/passes.h"
#include "ir/hash.h"
#include "runtimes/compile_all.h"

namespace kgen::graph {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

namespace {
constexpr uint8_t kGuardByte = 0xa5;
bool guard_from_env() {
  const char* e = std::getenv("KGEN_GRAPH_GUARD");
  return e && *e && std::string(e) != "0";
}
}  // namespace

PreparedModel::PreparedModel(rt::Device& dev, Graph g, const PrepareOptions& opt)
    : dev_(dev), g_(std::move(g)), copt_(opt.compile), state_(opt.state) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.guard || guard_from_env()) guard_ = 1024;
  stats_.model_nodes = int(g_.nodes.size());
  inputs_ = g_.inputs;
  for (const auto& [name, t] : opt.input_values) {
    auto it = std::find_if(g_.inputs.begin(), g_.inputs.end(), [&](int v) { return g_.values[size_t(v)].name == name; });
    if (it == g_.inputs.end()) throw std::invalid_argument("input_values: the model has no input '" + name + "'");
    g_.values[size_t(*it)].constant = t;
    g_.inputs.erase(it);
  }
  auto phase = std::chrono::steady_clock::now();
  auto lap = [&phase](double& into) {
    into = ms_since(phase);
    phase = std::chrono::steady_clock::now();
  };
  specialise(g_, opt.input_shapes);
  infer(g_);
  for (const Node& n : g_.nodes) stats_.folded += n.dead;
  stats_.bn_folded = fold_batchnorm(g_);
  stats_.upcast = upcast_f16(g_);
  stats_.dead = remove_dead(g_);
  lap(stats_.passes_ms);
  std::optional<PlanCache> plans;
  if (!copt_.keep_ir) plans = PlanCache::open(dev_);
  const std::optional<PlanKey> key = plans ? plan_key(g_, dev_, copt_) : std::nullopt;
  if (!key) plans.reset();
  std::optional<CachedPlan> cached = plans ? plans->load(*key, g_) : std::nullopt;
  lap(stats_.plan_ms);
  stats_.plan_cached = cached && use_plan(std::move(*cached));
  if (stats_.plan_cached) {
    lap(stats_.kernels_ms);
  } else {
    double failed_ms = 0;  // a plan whose kernels were not all in the cache
    lap(failed_ms);
    stats_.plan_ms += failed_ms;
    lower_and_compile(plans, key);
    phase = std::chrono::steady_clock::now();
  }
  stats_.launches = int(prog_.launches.size());
  place_buffers();
  lap(stats_.place_ms);
  stats_.prepare_ms = ms_since(t0);
}

// The full prepare: lower the graph, compile (or load) every kernel, and
// leave the plan for the next process.
void PreparedModel::lower_and_compile(const std::optional<PlanCache>& plans, const std::optional<PlanKey>& key) {
  auto t = std::chrono::steady_clock::now();
  LowerStats ls;
  prog_ = lower_graph(g_, dev_, owned_, &ls);
  stats_.lower_ms = ms_since(t);
  stats_.nodes = ls.nodes;
  stats_.groups = ls.groups;
  t = std::chrono::steady_clock::now();
  std::vector<uint64_t> hashes;
  compile_kernels(hashes);
  stats_.kernels_ms = ms_since(t);
  if (!plans) return;
  t = std::chrono::steady_clock::now();
  plans->store(*key, g_, prog_, hashes, ls);
  stats_.plan_ms += ms_since(t);
}

// A cached plan, when the device still has every kernel it names.
bool PreparedModel::use_plan(CachedPlan plan) {
  std::unordered_map<uint64_t, std::shared_ptr<rt::CompiledKernel>> by_hash;
  std::vector<std::shared_ptr<rt::CompiledKernel>> kernels;
  double ms = 0;
  for (size_t i = 0; i < plan.program.launches.size(); ++i) {
    const uint64_t h = plan.kernel_hashes[i];
    auto it = by_hash.find(h);
    if (it == by_hash.end()) {
      auto k = dev_.load_cached(plan.program.launches[i].step.kernel, h, copt_);
      if (!k) return false;
      ms += k->compile_ms();
      it = by_hash.emplace(h, std::move(k)).first;
    }
    kernels.push_back(it->second);
  }
  prog_ = std::move(plan.program);
  owned_ = std::move(plan.owned);
  kernels_ = std::move(kernels);
  stats_.nodes = plan.lower_stats.nodes;
  stats_.groups = plan.lower_stats.groups;
  stats_.kernels = stats_.cache_hits = int(by_hash.size());
  stats_.compile_ms = ms;
  return true;
}

PreparedModel::~PreparedModel() = default;

// Every distinct kernel (by structural hash) compiles once, all of them at
// once where the device allows (rt::compile_all).
void PreparedModel::compile_kernels(std::vector<uint64_t>& hashes) {
  std::unordered_map<uint64_t, size_t> distinct;  // hash -> index into `unique`
  std::vector<const ir::Kernel*> unique;
  std::vector<size_t> which;
  for (const Launch& l : prog_.launches) {
    const uint64_t h = ir::structural_hash(l.step.kernel);
    hashes.push_back(h);
    auto [it, added] = distinct.emplace(h, unique.size());
    if (added) unique.push_back(&l.step.kernel);
    which.push_back(it->second);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<rt::CompiledKernel>> compiled = rt::compile_all(dev_, unique, copt_);
  stats_.compile_ms += ms_since(t0);  // wall time: compiles overlap
  for (const auto& k : compiled) (k->cache_hit() ? stats_.cache_hits : stats_.kernels_compiled)++;
  for (size_t w : which) kernels_.push_back(compiled[w]);
  stats_.kernels = int(unique.size());
}

void PreparedModel::place_buffers() {
  const size_t align = std::max<size_t>(256, dev_.view_alignment());
  plan_ = plan_memory(prog_, align, guard_);
  stats_.arena_bytes = plan_.arena_bytes;
  stats_.unshared_bytes = plan_.unshared_bytes;
  stats_.in_place = plan_.in_place;
  arena_ = dev_.alloc(std::max<size_t>(plan_.arena_bytes, align));
  // Touch every page now, not during the first run (first-touch faults cost
  // microseconds per page).
  if (void* p = arena_->host_ptr()) std::memset(p, guard_ ? kGuardByte : 0, arena_->bytes());
  buffers_.resize(prog_.slots.size());
  for (size_t s = 0; s < prog_.slots.size(); ++s) {
    const Slot& slot = prog_.slots[s];
    if (plan_.in_arena[s]) {
      buffers_[s] = dev_.view(*arena_, plan_.offset[s], std::max<size_t>(slot.bytes, 1));
      if (slot.constant) buffers_[s]->upload(slot.constant->data(), slot.constant->bytes());
    } else if (slot.kind == Slot::Kind::State && slot.alias < 0) {
      buffers_[s] = state_view(slot);
    } else if (slot.kind == Slot::Kind::Constant && slot.alias < 0) {
      const Tensor& t = *slot.constant;
      // Used in place where the device can and the data is aligned for line loads.
      if (dev_.wraps_without_copy() && t.bytes() && reinterpret_cast<uintptr_t>(t.data()) % 64 == 0) {
        buffers_[s] = dev_.wrap(const_cast<uint8_t*>(t.data()), t.bytes());
      } else {
        buffers_[s] = dev_.alloc(std::max<size_t>(t.bytes(), 4));
        if (t.bytes()) buffers_[s]->upload(t.data(), t.bytes());
      }
      stats_.constant_bytes += t.bytes();
    }
  }
  for (size_t s = 0; s < prog_.slots.size(); ++s) {
    const Slot& slot = prog_.slots[s];
    if (buffers_[s] || slot.alias < 0) continue;
    const int r = prog_.root(int(s));
    if (!buffers_[size_t(r)]) continue;
    buffers_[s] = dev_.view(*buffers_[size_t(r)], prog_.root_offset(int(s)), std::max<size_t>(slot.bytes, 1));
  }
  for (size_t i = 0; i < prog_.launches.size(); ++i) {
    const ops::Step& st = prog_.launches[i].step;
    rt::LaunchArgs a;
    a.dims = st.dims;
    a.scalars = st.scalars;
    for (int b : st.buffers) {
      if (!buffers_[size_t(b)]) throw std::logic_error("graph: launch " + prog_.launches[i].label + " reads an unplaced slot");
      a.buffers.push_back(buffers_[size_t(b)].get());
    }
    args_.push_back(std::move(a));
  }
}

std::unique_ptr<rt::Buffer> PreparedModel::state_view(const Slot& slot) {
  const std::string& name = g_.values[size_t(slot.value)].name;
  std::shared_ptr<rt::Buffer>& b = state_[name];
  if (!b) {
    b = dev_.alloc(std::max<size_t>(slot.bytes, 4));
    std::vector<uint8_t> zeros(b->bytes(), 0);
    b->upload(zeros.data(), zeros.size());
  }
  if (b->bytes() < slot.bytes)
    throw std::invalid_argument("state '" + name + "': the shared buffer has " + std::to_string(b->bytes()) +
                                " bytes, the model needs " + std::to_string(slot.bytes));
  return dev_.view(*b, 0, slot.bytes);
}

std::shared_ptr<rt::Buffer> PreparedModel::state_buffer(const std::string& name) const {
  auto it = state_.find(name);
  if (it == state_.end()) throw std::invalid_argument("the prepared model has no state '" + name + "'");
  return it->second;
}

void PreparedModel::set_inputs(const std::vector<Tensor>& inputs) {
  if (inputs.size() != inputs_.size())
    throw std::invalid_argument("the model takes " + std::to_string(inputs_.size()) + " inputs, " +
                                std::to_string(inputs.size()) + " given");
  size_t k = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = input(i);
    const Tensor& t = inputs[i];
    if (v.constant && std::find(g_.inputs.begin(), g_.inputs.end(), inputs_[i]) == g_.inputs.end()) {
      const Tensor& fixed = *v.constant;
      if (t.dtype != fixed.dtype || t.shape != fixed.shape || std::memcmp(t.data(), fixed.data(), t.bytes()) != 0)
        throw std::invalid_argument("input '" + v.name + "' was fixed when the model was prepared; prepare again for other values");
      continue;
    }
    if (t.dtype != v.dtype || t.shape != v.shape)
      throw std::invalid_argument("input '" + v.name + "': given " + std::string(ir::scalar_name(t.dtype)) +
                                  shape_str(t.shape) + ", the model was prepared for " +
                                  std::string(ir::scalar_name(v.dtype)) + shape_str(v.shape));
    rt::Buffer* b = buffers_[size_t(prog_.input_slots[k++])].get();
    if (b && t.bytes()) b->upload(t.data(), t.bytes());
  }
}

void PreparedModel::replay() {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (guard_) arm_guards(i);
    dev_.launch(*kernels_[i], args_[i]);
    if (guard_) {
      dev_.synchronize();
      check_guards(i);
    }
  }
  dev_.synchronize();
}

std::string PreparedModel::slot_name(size_t s) const {
  const Slot& sl = prog_.slots[s];
  return sl.value >= 0 ? g_.values[size_t(sl.value)].name : "temporary " + std::to_string(s);
}

// The guard bands after the launch's own buffers (the slots it may write):
// other slots' bands may hold live data of slots placed over them.
std::vector<size_t> PreparedModel::guarded_slots(size_t launch) const {
  std::vector<size_t> r;
  for (int b : prog_.launches[launch].step.buffers) {
    const size_t root = size_t(prog_.root(b));
    if (plan_.in_arena[root] && std::find(r.begin(), r.end(), root) == r.end()) r.push_back(root);
  }
  return r;
}

void PreparedModel::arm_guards(size_t launch) {
  std::vector<uint8_t> band(guard_, kGuardByte);
  for (size_t s : guarded_slots(launch)) arena_->upload(band.data(), guard_, plan_.offset[s] + prog_.slots[s].bytes);
}

void PreparedModel::check_guards(size_t launch) const {
  std::vector<uint8_t> band(guard_);
  for (size_t s : guarded_slots(launch)) {
    arena_->download(band.data(), guard_, plan_.offset[s] + prog_.slots[s].bytes);
    for (size_t b = 0; b < guard_; ++b)
      if (band[b] != kGuardByte)
        throw std::logic_error("graph: launch " + std::to_string(launch) + " (" + prog_.launches[launch].label + ", kernel " +
                               prog_.launches[launch].step.kernel.name + ") wrote " + std::to_string(b) +
                               " bytes past slot " + std::to_string(s) + " ('" + slot_name(s) + "', " +
                               std::to_string(prog_.slots[s].bytes) + " bytes at arena offset " + std::to_string(plan_.offset[s]) + ")");
  }
}

std::vector<Tensor> PreparedModel::outputs() const {
  std::vector<Tensor> r;
  for (size_t i = 0; i < g_.outputs.size(); ++i) {
    const Value& v = output(i);
    Tensor t(v.dtype, v.shape);
    const rt::Buffer* b = buffers_[size_t(prog_.output_slots[i])].get();
    if (v.constant && !b) t = *v.constant;
    else if (t.bytes()) b->download(t.mutable_data(), t.bytes());
    r.push_back(std::move(t));
  }
  return r;
}

std::vector<Tensor> PreparedModel::run(const std::vector<Tensor>& inputs) {
  set_inputs(inputs);
  replay();
  return outputs();
}

std::unique_ptr<PreparedModel> prepare_for_inputs(rt::Device& dev, const Graph& g, const std::vector<Tensor>& inputs,
                                            PrepareOptions opt, std::vector<std::string>* fixed) {
  for (size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i)
    opt.input_shapes[g.values[size_t(g.inputs[i])].name] = inputs[i].shape;
  try {
    return std::make_unique<PreparedModel>(dev, g, opt);
  } catch (const UnsupportedError& e) {
    if (std::string(e.what()).find("computed at run time") == std::string::npos) throw;
  }
  for (size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    // Shape-like inputs: integers (a Reshape's shape, Slice's starts) and small
    // float vectors (Resize's scales).
    const bool int_like = t.dtype == ScalarKind::I64 || t.dtype == ScalarKind::I32;
    const bool float_like = t.dtype == ScalarKind::F32 || t.dtype == ScalarKind::F64;
    if ((int_like && t.numel() <= 64) || (float_like && t.numel() <= 8 && t.shape.size() <= 1)) {
      opt.input_values[g.values[size_t(g.inputs[i])].name] = t;
      if (fixed) fixed->push_back(g.values[size_t(g.inputs[i])].name);
    }
  }
  return std::make_unique<PreparedModel>(dev, g, opt);
}

std::vector<double> PreparedModel::time_launches(int reps) {
  std::vector<std::vector<double>> t(args_.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < args_.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      dev_.launch(*kernels_[i], args_[i]);
      dev_.synchronize();
      t[i].push_back(ms_since(t0));
    }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v.empty() ? 0 : v[v.size() / 2]);
  }
  return med;
}

}  // namespace kgen::graph
