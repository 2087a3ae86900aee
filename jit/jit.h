// In-process C++ JIT: clang (as a library) compiles a source string to an
// optimised LLVM module, the host TargetMachine turns it into an ELF object,
// and one process-wide ORC LLJIT links each object into its own JITDylib.
// No compiler subprocess, no temporary files. The object file is the
// artifact (a disk cache can store it and call load_object later).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::jit {

struct JitOptions {
  int opt_level = 3;                    // -O0..-O3
  bool keep_ir = false;                 // keep the optimised LLVM IR text (also with KGEN_DEBUG=1)
  bool keep_asm = false;                // keep the assembly text (also with KGEN_DEBUG=1)
  std::vector<std::string> extra_args;  // extra cc1 arguments (e.g. "-Rpass=loop-vectorize")
  int prefer_vector_bits = 512;         // widest vectors the loop and SLP vectorisers use
  // Optimise with kgen's short pass list (inlining, scalar clean-up, the loop
  // vectoriser) instead of clang's -O pipeline: about half the
  // optimisation time, for sources whose only loop is the work-item loop
  // (codegen::lean_passes_suffice decides). Ignored at opt_level 0 and with
  // extra_args.
  bool lean_passes = false;
  // With lean_passes: after vectorising, every vector store whose alignment
  // LLVM proves to cover its size (up to 64 bytes) becomes nontemporal
  // (x86: vmovntps), so a streamed output skips the read for ownership.
  // Unaligned and scalar stores stay plain. The source must end with a
  // store fence (codegen's kg_stream_fence): streaming stores are weakly
  // ordered.
  bool stream_aligned_stores = false;
};

struct CompileStats {
  double frontend_ms = 0;  // parse + clang/LLVM optimisation pipeline
  double codegen_ms = 0;   // machine code to an object file
  double link_ms = 0;      // JIT link + symbol lookup
  double total_ms() const { return frontend_ms + codegen_ms + link_ms; }
};

// A compile error: the diagnostics and the numbered source are in what().
class CompileError : public std::runtime_error {
 public:
  CompileError(std::string diagnostics, std::string source);
  std::string diagnostics;  // clang's text diagnostics
  std::string source;       // the source that failed
};

// A relocatable object for the host, plus what the frontend said.
struct ObjectCode {
  std::string bytes;        // ELF object
  std::string remarks;      // warnings / -Rpass remarks (empty when quiet)
  std::string ir, assembly; // filled when asked (JitOptions::keep_ir / keep_asm / KGEN_DEBUG)
  CompileStats stats;
};

// Code linked into the process. Symbols stay valid while the module lives;
// destroying it unloads the code.
class Module {
 public:
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // Address of a symbol defined by this module; throws if missing.
  void* lookup(std::string_view symbol) const;
  template <class F> F lookup_fn(std::string_view symbol) const { return reinterpret_cast<F>(lookup(symbol)); }
  const CompileStats& stats() const { return stats_; }
  const std::string& ir() const { return ir_; }
  const std::string& assembly() const { return asm_; }

 private:
  friend std::shared_ptr<Module> load_object(std::string, const CompileStats&);
  friend std::shared_ptr<Module> compile_cpp(std::string_view, const JitOptions&);
  Module() = default;
  void* dylib_ = nullptr;  // llvm::orc::JITDylib*
  CompileStats stats_;
  std::string ir_, asm_;
};

// Source -> object (thread-safe; throws CompileError).
ObjectCode compile_to_object(std::string_view source, const JitOptions& opt = {});
// Object -> linked module (thread-safe). `stats` is carried into Module::stats().
std::shared_ptr<Module> load_object(std::string object, const CompileStats& stats = {});
// Both steps.
std::shared_ptr<Module> compile_cpp(std::string_view source, const JitOptions& opt = {});

// False when kgen was built without LLVM (CMake KGEN_WITH_CPU_JIT=OFF, e.g. for
// a GPU machine without LLVM 19): then every entry point above throws, and
// the cpu device is not available.
bool cpp_jit_available();

// Identifies the code this JIT produces: clang version, triple, host CPU and
// features (part of any persistent cache key).
std::string jit_toolchain_id();
// Source with 1-based line numbers, for error messages.
std::string number_lines(std::string_view source);

}  // namespace kgen::jit
