// kgen quantize IN.gguf OUT.gguf --type TYPE: a GGUF model's weight matrices
// to one GGML type with GGML's reference quantizers (graph/gguf/quantize.h),
// and a table of what became of each tensor.
#include <cstdio>
#include <string>

#include "graph/gguf/quantize.h"
#include "tools/commands.h"

namespace kgen::tools {

namespace {

namespace gguf = graph::gguf;

std::string dims(const std::vector<int64_t>& ne) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? " x " : "") + std::to_string(ne[i]);
  return s;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

void print_report(const gguf::QuantizeReport& r, const gguf::QuantTarget& target) {
  std::printf("%-32s %-14s %-5s    %-5s %12s %12s  %s\n", "tensor", "ne", "from", "to", "bytes in", "bytes out",
              "note");
  for (const gguf::QuantizedTensor& t : r.tensors)
    std::printf("%-32s %-14s %-5s -> %-5s %12llu %12llu  %s\n", t.name.c_str(), dims(t.ne).c_str(),
                gguf::ggml_type_info(t.from)->name, gguf::ggml_type_info(t.to)->name,
                static_cast<unsigned long long>(t.bytes_in), static_cast<unsigned long long>(t.bytes_out),
                t.note.c_str());
  const double ratio = r.bytes_out ? double(r.bytes_in) / double(r.bytes_out) : 0.0;
  std::printf("%zu tensors, %d converted to %s or its fallback; %s -> %s (%.2fx smaller); general.file_type = %u\n",
              r.tensors.size(), r.converted, target.name, mib(r.bytes_in).c_str(), mib(r.bytes_out).c_str(), ratio,
              target.file_type);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  struct Args {
    std::string in, out, type;
  };
  auto a = std::make_shared<Args>();
  std::string types;
  for (const gguf::QuantTarget& t : gguf::quant_targets()) types += (types.empty() ? "" : "|") + std::string(t.name);
  auto* cmd = app.add_subcommand("quantize", "Convert a GGUF model's weight matrices to one GGML type");
  cmd->add_option("input", a->in, "the model (.gguf, f32/f16/bf16 weights)")->required();
  cmd->add_option("output", a->out, "the file to write (.gguf)")->required();
  cmd->add_option("--type", a->type, types)->required();
  cmd->callback([a, types] {
    const auto target = gguf::parse_quant_target(a->type);
    if (!target) throw std::invalid_argument("--type '" + a->type + "': expected one of " + types);
    print_report(gguf::quantize_gguf_file(a->in, a->out, *target), *target);
  });
}

}  // namespace kgen::tools
