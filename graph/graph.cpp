#include "graph/graph.h"

#include <algorithm>
#include <stdexcept>

namespace kgen::graph {

namespace {
const Attribute* find(const Node& n, const std::string& a, Attribute::Kind k) {
  auto it = n.attrs.find(a);
  if (it == n.attrs.end()) return nullptr;
  if (it->second.kind != k) throw std::invalid_argument(n.where() + ": attribute '" + a + "' has the wrong type");
  return &it->second;
}
}  // namespace

int64_t Node::attr_int(const std::string& a, int64_t dflt) const {
  const Attribute* at = find(*this, a, Attribute::Kind::Int);
  return at ? at->i : dflt;
}
double Node::attr_float(const std::string& a, double dflt) const {
  const Attribute* at = find(*this, a, Attribute::Kind::Float);
  return at ? at->f : dflt;
}
std::string Node::attr_str(const std::string& a, const std::string& dflt) const {
  const Attribute* at = find(*this, a, Attribute::Kind::String);
  return at ? at->s : dflt;
}
std::vector<int64_t> Node::attr_ints(const std::string& a, std::vector<int64_t> dflt) const {
  const Attribute* at = find(*this, a, Attribute::Kind::Ints);
  return at ? at->ints : dflt;
}
std::vector<double> Node::attr_floats(const std::string& a, std::vector<double> dflt) const {
  const Attribute* at = find(*this, a, Attribute::Kind::Floats);
  return at ? at->floats : dflt;
}

std::string Node::where() const {
  std::string d = domain.empty() ? "" : domain + "::";
  return "node '" + name + "' (" + d + op + ", opset " + std::to_string(opset) + ")";
}

int Node::n_inputs() const {
  int n = int(inputs.size());
  while (n > 0 && inputs[size_t(n - 1)] < 0) --n;
  return n;
}

int Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return int(values.size()) - 1;
}

int Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return int(i);
  return -1;
}

std::vector<int> Graph::live_nodes() const {
  std::vector<int> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].dead) r.push_back(int(i));
  return r;
}

int Graph::uses(int v) const {
  int n = int(std::count(outputs.begin(), outputs.end(), v));
  for (const Node& node : nodes)
    if (!node.dead) n += int(std::count(node.inputs.begin(), node.inputs.end(), v));
  return n;
}

}  // namespace kgen::graph
