// kgen graph MODEL [--fused] [--dot FILE | --svg FILE]: the model as
// Graphviz, as imported (after shape inference and folding) or as the
// fused groups the device runs (one box per launch).
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "graph/onnx/import.h"
#include "graph/passes.h"
#include "graph/prepared_model.h"
#include "tools/commands.h"

namespace kgen::tools {

namespace {

std::string value_label(const graph::Value& v) {
  return v.name + "\\n" + std::string(ir::scalar_name(v.dtype)) + graph::shape_str(v.shape);
}

std::string graph_dot(const graph::Graph& g) {
  std::ostringstream o;
  o << "digraph model {\n  rankdir=TB; node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  for (int v : g.inputs) o << "  v" << v << " [shape=ellipse, label=\"" << value_label(g.values[size_t(v)]) << "\"];\n";
  for (int v : g.outputs) o << "  v" << v << " [shape=ellipse, label=\"" << value_label(g.values[size_t(v)]) << "\"];\n";
  std::map<int, int> producer;
  for (int i : g.live_nodes()) {
    const auto& n = g.nodes[size_t(i)];
    o << "  n" << i << " [label=\"" << n.op << "\\n" << n.name << "\"];\n";
    for (int v : n.outputs)
      if (v >= 0) producer[v] = i;
  }
  for (int i : g.live_nodes())
    for (int v : g.nodes[size_t(i)].inputs) {
      if (v < 0 || g.values[size_t(v)].constant) continue;
      const auto it = producer.find(v);
      const std::string from = it == producer.end() ? "v" + std::to_string(v) : "n" + std::to_string(it->second);
      o << "  " << from << " -> n" << i << " [label=\"" << graph::shape_str(g.values[size_t(v)].shape) << "\", fontsize=8];\n";
    }
  for (int v : g.outputs)
    if (producer.count(v)) o << "  n" << producer[v] << " -> v" << v << ";\n";
  o << "}\n";
  return o.str();
}

std::string fused_dot(const graph::PreparedModel& s) {
  const auto& p = s.program();
  std::ostringstream o;
  o << "digraph fused {\n  rankdir=TB; node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  std::map<int, int> writer;  // root slot -> launch
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const auto& l = p.launches[i];
    o << "  l" << i << " [label=\"" << l.label << "\\n" << l.step.kernel.name << "\"];\n";
    const size_t n_in = l.step.buffers.size();
    for (size_t b = 0; b < n_in; ++b) {
      const int r = p.root(l.step.buffers[b]);
      auto it = writer.find(r);
      if (it != writer.end() && it->second != int(i)) o << "  l" << it->second << " -> l" << i << ";\n";
    }
    for (int b : l.step.buffers) writer[p.root(b)] = int(i);  // conservative: any buffer may be written
  }
  o << "}\n";
  return o.str();
}

void write_or_render(const std::string& dot, const std::string& dot_path, const std::string& svg_path) {
  if (!svg_path.empty()) {
    const std::string tmp = svg_path + ".dot";
    std::ofstream(tmp) << dot;
    const std::string cmd = "dot -Tsvg '" + tmp + "' -o '" + svg_path + "'";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("graphviz `dot` failed (apt install graphviz)");
    std::remove(tmp.c_str());
  }
  if (!dot_path.empty()) std::ofstream(dot_path) << dot;
  if (dot_path.empty() && svg_path.empty()) std::printf("%s", dot.c_str());
}

}  // namespace

void add_graph_command(CLI::App& app) {
  struct Args {
    std::string model, dot, svg, device = "cpu";
    bool fused = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("graph", "Draw a model (Graphviz): as imported, or its fused kernels (--fused)");
  cmd->add_option("model", a->model, "the model file (.onnx)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--fused", a->fused, "the launches after fusion, as the device runs them");
  cmd->add_option("--dot", a->dot, "write Graphviz source to FILE (default: stdout)");
  cmd->add_option("--svg", a->svg, "render to FILE with Graphviz's dot");
  cmd->add_option("--device", a->device, "the device lowering targets (--fused)");
  cmd->callback([a] {
    graph::Graph g = graph::load_onnx(a->model);
    if (!a->fused) {
      graph::specialise(g, {});
      graph::infer(g);
      graph::fold_batchnorm(g);
      graph::remove_dead(g);
      write_or_render(graph_dot(g), a->dot, a->svg);
      return;
    }
    auto dev = rt::create_device(a->device);
    graph::PreparedModel s(*dev, std::move(g));
    write_or_render(fused_dot(s), a->dot, a->svg);
  });
}

}  // namespace kgen::tools
