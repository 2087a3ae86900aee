// kgen run MODEL.onnx: prepare a model on a device, run it on given inputs
// or test data, check against reference outputs, time it, profile it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "graph/model_io.h"
#include "graph/onnx/import.h"
#include "graph/prepared_model.h"
#include "graph/onnx/tensor_proto.h"
#include "tools/commands.h"
#include "tools/image_input.h"
#include "tools/image_output.h"
#include "tools/json_writer.h"
#include "tools/run_llama.h"
#include "tools/run_report.h"

namespace kgen::tools {

namespace {

struct RunArgs {
  std::string model, device = "cpu", test_data, out_dir, trace, labels;
  ImageOptions image;
  std::vector<std::string> inputs, extra_outputs;
  int threads = 0, iters = 10;
  bool json = false, profile = false;
  double rtol = 1e-3, atol = 1e-4;
  LlamaArgs llama;  // .gguf and llama2.c models
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// --input NAME=FILE (or FILE for the first input) in the graph's input order.
std::vector<graph::Tensor> named_inputs(const graph::Graph& g, const std::vector<std::string>& specs) {
  std::vector<graph::Tensor> r(g.inputs.size());
  std::vector<bool> given(g.inputs.size(), false);
  size_t next = 0;
  for (const std::string& s : specs) {
    auto eq = s.find('=');
    size_t idx = next;
    std::string path = s;
    if (eq != std::string::npos) {
      const std::string name = s.substr(0, eq);
      path = s.substr(eq + 1);
      idx = g.inputs.size();
      for (size_t i = 0; i < g.inputs.size(); ++i)
        if (g.values[size_t(g.inputs[i])].name == name) idx = i;
      if (idx == g.inputs.size()) throw std::invalid_argument("--input: the model has no input named '" + name + "'");
    }
    if (idx >= g.inputs.size()) throw std::invalid_argument("--input: more inputs than the model takes");
    r[idx] = graph::fit_to_input(g, idx, graph::load_tensor_file(path));
    given[idx] = true;
    next = idx + 1;
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (!given[i]) throw std::invalid_argument("input '" + g.values[size_t(g.inputs[i])].name + "' not given (--input NAME=FILE)");
  return r;
}

int run_model(const RunArgs& a) {
  const auto t_load = std::chrono::steady_clock::now();
  graph::Graph g = graph::load_onnx(a.model);
  const double load_ms = ms_since(t_load);
  for (const std::string& name : a.extra_outputs) {
    const int v = g.find_value(name);
    if (v < 0) throw std::invalid_argument("--outputs: the model has no value named '" + name + "'");
    g.outputs.push_back(v);
  }
  graph::TestData td;
  std::vector<graph::Tensor> inputs;
  if (!a.test_data.empty()) {
    td = graph::load_test_data(a.test_data);
    if (td.inputs.size() != g.inputs.size())
      throw std::invalid_argument(a.test_data + ": " + std::to_string(td.inputs.size()) + " inputs, the model takes " +
                                  std::to_string(g.inputs.size()));
    for (size_t i = 0; i < td.inputs.size(); ++i) inputs.push_back(graph::fit_to_input(g, i, td.inputs[i]));
  } else if (!a.inputs.empty()) {
    inputs = named_inputs(g, a.inputs);
  }
  std::optional<ImageInput> image;
  if (!a.image.path.empty()) {
    if (!inputs.empty()) throw std::invalid_argument("--image replaces --input and --test-data: give one of them");
    image = image_for_graph(g, a.image);
    inputs.push_back(image->tensor);
  }
  const std::vector<std::string> labels = a.labels.empty() ? std::vector<std::string>{} : load_labels(a.labels);
  rt::DeviceOptions dopt;
  dopt.threads = unsigned(a.threads);
  auto dev = rt::create_device(a.device, dopt);
  std::vector<std::string> fixed;
  auto prepared = graph::prepare_for_inputs(*dev, g, inputs, {}, &fixed);
  graph::PreparedModel& s = *prepared;
  for (const auto& name : fixed) std::fprintf(stderr, "note: input '%s' fixed to the given values (the model's shapes depend on it)\n", name.c_str());
  if (inputs.empty())  // no inputs given: zeros of the prepared shapes (timing)
    for (size_t i = 0; i < s.n_inputs(); ++i) inputs.emplace_back(s.input(i).dtype, s.input(i).shape);
  const auto t_first = std::chrono::steady_clock::now();
  std::vector<graph::Tensor> outs = s.run(inputs);
  const double first_ms = ms_since(t_first);
  std::vector<double> times;
  for (int i = 0; i < a.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    s.replay();
    times.push_back(ms_since(t0));
  }
  std::sort(times.begin(), times.end());
  RunReport rep{a.model, dev->name(), load_ms, first_ms, times.empty() ? first_ms : times[times.size() / 2]};
  bool ok = true;
  for (size_t i = 0; i < td.outputs.size() && i < outs.size(); ++i) {
    auto c = graph::compare_tensors(outs[i], td.outputs[i], a.rtol, a.atol);
    rep.checks.push_back({s.output(i).name, c});
    ok = ok && c.ok();
  }
  if (td.outputs.size() && td.outputs.size() != outs.size()) ok = false;
  if (!a.out_dir.empty()) write_outputs(s, outs, a.out_dir);
  if (!a.out_dir.empty() && image) write_tensor_pb(image->tensor, s.input(0).name, a.out_dir + "/input_0.pb");
  const ImageReport image_report{image ? &*image : nullptr, &a.image, labels, a.out_dir, !a.json};
  const bool report_image = (image || !labels.empty()) && !outs.empty();
  if (report_image && a.json) rep.top1 = report_first_output(s.output(0).name, outs[0], image_report);
  if (a.profile || !a.trace.empty()) rep.launch_ms = s.time_launches(std::max(3, a.iters));
  if (!a.trace.empty()) write_trace(s, rep.launch_ms, a.trace);
  if (a.json) std::printf("%s\n", report_json(s, rep, ok, !td.outputs.empty()).c_str());
  else print_report(s, rep, outs, a.profile);
  if (report_image && !a.json) report_first_output(s.output(0).name, outs[0], image_report);
  return td.outputs.empty() || ok ? 0 : 1;
}

// Recipes that reproduce the references in shared/models/SOURCES.md.
constexpr const char* kImageRecipes =
    "Image inputs (--image): the shorter side is resized to --resize (default 256/224 of the input's size when it is\n"
    "at least 224, else the image is stretched to it), the centre is cropped, values are v/--scale, then (v-mean)/std.\n"
    "A 1-channel input gets the luma (Y of YCbCr); for an image-like output, --out DIR writes DIR/output.png.\n"
    "  MNIST (mnist-8, mnist-12):      --image digit.png            (gray 28x28, raw 0..255: the defaults)\n"
    "  MobileNet, ResNet (torchvision): --image cat.jpg --scale 255 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225\n"
    "  SqueezeNet fp16 (Windows ML):    --image cat.jpg --bgr       (0..255, no mean or std)\n"
    "  super-resolution-10:             --image cat.jpg --scale 255 --resize 224 --out DIR   (Y in 0..1)\n"
    "  with --labels shared/models/onnx/labels/imagenet-1000-labels.txt: the top 5 by name";

void add_image_options(CLI::App* cmd, RunArgs& a) {
  cmd->add_option("--image", a.image.path, "a JPEG or PNG file for the model's input (see below)");
  cmd->add_option("--size", a.image.size, "N or HxW: the input's size where the model leaves it symbolic");
  cmd->add_option("--resize", a.image.resize, "shorter side before the centre crop; 0: stretch to the input's size");
  cmd->add_option("--mean", a.image.mean, "subtracted per channel after --scale (1 or 3 values)")->delimiter(',');
  cmd->add_option("--std", a.image.std, "divides per channel after --mean (1 or 3 values)")->delimiter(',');
  cmd->add_option("--scale", a.image.scale, "pixel values 0..255 are divided by this first (255: 0..1)");
  cmd->add_flag("--bgr", a.image.bgr, "channels in BGR order (Caffe and Windows ML models)");
  cmd->add_flag("--gray", a.image.gray, "luma in every channel (1-channel inputs get it anyway)");
  cmd->add_option("--layout", a.image.layout, "nchw or nhwc (default: guessed from the input's dims, else nchw)");
  cmd->add_option("--labels", a.labels, "class names, one per line: print the top 5 of a classifier output by name");
  cmd->footer(kImageRecipes);
}

void add_llama_options(CLI::App* cmd, LlamaArgs& l) {
  auto* g = cmd->add_option_group("Text generation (.gguf, llama2.c .bin)");
  g->add_option("--prompt,-p", l.prompt, "the text to continue (\"\": from BOS alone)");
  g->add_option("-n,--n-predict", l.n_predict, "tokens to generate (stops at EOS)")->check(CLI::NonNegativeNumber);
  g->add_option("--temp", l.sampling.temperature, "temperature (0: greedy argmax, no penalties)");
  g->add_option("--top-k", l.sampling.top_k, "keep the k most likely tokens (0: off)");
  g->add_option("--top-p", l.sampling.top_p, "nucleus: keep the smallest set with this much probability (1: off)");
  g->add_option("--min-p", l.sampling.min_p, "drop tokens below min-p x the top probability (0: off)");
  g->add_option("--repeat-penalty", l.sampling.repeat_penalty, "shrink the logits of the last --repeat-last-n tokens (1: off)");
  g->add_option("--repeat-last-n", l.sampling.repeat_last_n, "tokens the repetition penalty looks at");
  g->add_option("--seed", l.sampling.seed, "random seed of the sampler");
  g->add_option("--ctx", l.context, "context length (KV cache rows; 0: the model's, at most 4096)");
  g->add_option("--tokenizer", l.tokenizer, "llama2.c tokenizer file for a .bin checkpoint");
  g->add_flag("-i,--interactive", l.interactive, "read prompts from stdin, one per line");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a model: .onnx (check against test data, time, profile) or a llama .gguf / llama2.c .bin (generate text)");
  cmd->add_option("model", a->model, "the model file (.onnx, .gguf, llama2.c .bin)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--device", a->device, "cpu, vulkan, webgpu or cuda (kgen devices)");
  cmd->add_option("--threads", a->threads, "CPU worker threads (0 = all cores)");
  cmd->add_option("--test-data", a->test_data, "a folder of input_N.pb / output_N.pb: run on the inputs, compare with the outputs");
  cmd->add_option("--input", a->inputs, "NAME=FILE (.pb or .npy); repeat per input");
  cmd->add_option("--out", a->out_dir, "write each output to DIR/output_N.pb (with --image also DIR/input_0.pb and an image output as DIR/output.png)");
  cmd->add_option("--iters", a->iters, "timed runs after the first (median reported)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", a->rtol, "relative tolerance of the comparison");
  cmd->add_option("--atol", a->atol, "absolute tolerance of the comparison");
  cmd->add_option("--outputs", a->extra_outputs, "also return these intermediate values (debugging)")->delimiter(',');
  cmd->add_flag("--json", a->json, "one JSON object on stdout");
  cmd->add_flag("--profile", a->profile, "time per node and per kernel, sorted");
  cmd->add_option("--trace", a->trace, "write a Chrome trace of one run (open in Perfetto)");
  add_image_options(cmd, *a);
  add_llama_options(cmd, a->llama);
  cmd->callback([a] {
    if (!is_llama_file(a->model)) return set_exit_code(run_model(*a));
    LlamaArgs l = a->llama;
    l.model = a->model, l.device = a->device, l.threads = a->threads, l.json = a->json, l.profile = a->profile;
    set_exit_code(run_llama(l));
  });
}

}  // namespace kgen::tools
