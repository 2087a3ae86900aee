#include "graph/handler.h"

#include <map>
#include <mutex>

#include "graph/nodes/nodes.h"

namespace kgen::graph {

const Value& InferCtx::in(int i) const {
  if (!has_in(i)) invalid("input " + std::to_string(i) + " is required");
  return g.values[size_t(node.inputs[size_t(i)])];
}

const Tensor* InferCtx::constant(int i) const {
  if (!has_in(i)) return nullptr;
  const Value& v = in(i);
  return v.constant ? &*v.constant : nullptr;
}

const Tensor& InferCtx::need_constant(int i, const char* what) const {
  const Tensor* t = constant(i);
  if (!t) unsupported(std::string(what) + " (input " + std::to_string(i) + ") computed at run time: kgen needs it constant");
  return *t;
}

void InferCtx::set_out(int i, ScalarKind dtype, Shape shape) {
  if (i >= int(node.outputs.size()) || node.outputs[size_t(i)] < 0) return;  // omitted optional output
  // Sizes are checked here once for every op: negative or overflowing shapes
  // (a malformed model) are refused before anything multiplies them.
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t(1) << 40))
      invalid("output " + std::to_string(i) + " would have shape " + shape_str(shape));
  Value& v = g.values[size_t(node.outputs[size_t(i)])];
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.shaped = true;
}

void InferCtx::unsupported(const std::string& what) const { throw UnsupportedError(node.where() + ": " + what); }
void InferCtx::invalid(const std::string& what) const { throw std::invalid_argument(node.where() + ": " + what); }

void InferCtx::require_inputs(int lo, int hi) const {
  const int n = n_in();
  if (n < lo || n > hi)
    invalid("takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
            " inputs, has " + std::to_string(n));
}

namespace {
std::map<std::pair<std::string, std::string>, OpHandler>& registry() {
  static std::map<std::pair<std::string, std::string>, OpHandler> r;
  return r;
}
}  // namespace

void register_handler(OpHandler h) {
  auto key = std::make_pair(h.domain, h.op);
  if (registry().count(key)) throw std::logic_error("handler for " + h.op + " registered twice");
  registry().emplace(key, std::move(h));
}

const OpHandler* find_handler(const std::string& domain, const std::string& op) {
  auto it = registry().find({domain, op});
  return it == registry().end() ? nullptr : &it->second;
}

void register_all_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
#define KGEN_X(group) register_##group##_nodes();
    KGEN_NODE_GROUPS(KGEN_X)
#undef KGEN_X
  });
}

std::vector<const OpHandler*> all_handlers() {
  register_all_handlers();
  std::vector<const OpHandler*> r;
  for (auto& [k, h] : registry()) r.push_back(&h);
  return r;
}

}  // namespace kgen::graph
