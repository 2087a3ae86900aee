#include "jit/nvrtc.h"

#include <chrono>
#include <stdexcept>

#ifdef KGEN_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace kgen::jit {

#ifdef KGEN_HAVE_NVRTC

namespace {

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw std::runtime_error(std::string("nvrtc: ") + what + ": " + nvrtcGetErrorString(r));
}

// Destroys the program on every path out of nvrtc_compile.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);
  }
};

}  // namespace

bool nvrtc_available() { return true; }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

NvrtcResult nvrtc_compile(std::string_view source, const NvrtcOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string src(source);
  Program prog;
  check(nvrtcCreateProgram(&prog.p, src.c_str(), "kgen_kernel.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
  // --fmad=false: no FMA contraction, so a*b+c rounds twice like the
  // interpreter. The toolkit include dir provides cuda_fp16.h / cuda_bf16.h.
  std::vector<std::string> args = {"--gpu-architecture=" + opt.arch, "--fmad=false", "--std=c++17",
                                   "-I" KGEN_CUDA_INCLUDE_DIR};
  args.insert(args.end(), opt.extra_args.begin(), opt.extra_args.end());
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog.p, int(argv.size()), argv.data());
  NvrtcResult res;
  size_t log_size = 0;
  check(nvrtcGetProgramLogSize(prog.p, &log_size), "nvrtcGetProgramLogSize");
  if (log_size > 1) {
    res.log.resize(log_size);
    check(nvrtcGetProgramLog(prog.p, res.log.data()), "nvrtcGetProgramLog");
    res.log.resize(log_size - 1);  // drop the terminating NUL
  }
  if (rc == NVRTC_ERROR_COMPILATION) throw CompileError(res.log, src);
  check(rc, "nvrtcCompileProgram");
  size_t n = 0;
  check(nvrtcGetPTXSize(prog.p, &n), "nvrtcGetPTXSize");
  res.ptx.resize(n);
  check(nvrtcGetPTX(prog.p, res.ptx.data()), "nvrtcGetPTX");
  if (!res.ptx.empty() && res.ptx.back() == '\0') res.ptx.pop_back();
  if (opt.arch.rfind("sm_", 0) == 0) {
    check(nvrtcGetCUBINSize(prog.p, &n), "nvrtcGetCUBINSize");
    res.cubin.resize(n);
    check(nvrtcGetCUBIN(prog.p, res.cubin.data()), "nvrtcGetCUBIN");
  }
  res.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

#else  // !KGEN_HAVE_NVRTC

bool nvrtc_available() { return false; }
std::string nvrtc_version() { throw std::runtime_error("kgen was built without NVRTC (CUDA toolkit not found)"); }
NvrtcResult nvrtc_compile(std::string_view, const NvrtcOptions&) { nvrtc_version(); return {}; }

#endif

}  // namespace kgen::jit
