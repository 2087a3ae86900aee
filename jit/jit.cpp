#include "jit/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "ir/debug.h"
#include "jit/float_builtins.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/Version.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#ifndef KGEN_CLANG_RESOURCE_DIR
#define KGEN_CLANG_RESOURCE_DIR "/usr/lib/llvm-19/lib/clang/19"
#endif

namespace kgen::jit {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// KGEN_DEBUG=4 prints CPU assembly: only then is the module also emitted as
// text (which doubles code generation, so lower levels time honestly).
bool debug_asm() { return ir::debug_level() >= 4; }

// Process-wide JIT state, created on first use. Compiles run concurrently
// (each has its own CompilerInstance, LLVMContext and, per thread, its own
// TargetMachine: emission rewrites a TargetMachine's options per function);
// `mu` serialises the shared LLJIT (linking, lookups, removal).
struct State {
  std::mutex mu;
  std::string triple, cpu, features;           // features: "+avx2,+fma,..."
  std::vector<std::string> cc1_target_args;    // -triple/-target-cpu/-target-feature...
  std::string host_defines;                    // macros the host's features define, for the toolchain id
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  uint64_t next_dylib = 0;

  State() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // Vector math from -fveclib=libmvec (_ZGVeN16v_expf...) must resolve in
    // this process even when nothing else references libmvec.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");

    triple = llvm::sys::getProcessTriple();
    cpu = std::string(llvm::sys::getHostCPUName());
    cc1_target_args = {"-triple", triple, "-target-cpu", cpu};
    std::vector<std::string> feats;
    for (const auto& f : llvm::sys::getHostCPUFeatures()) {
      // vcvtneps2bf16 (AVX512-BF16, AVX-NE-CONVERT) treats subnormal inputs
      // as zero whatever MXCSR says, so (__bf16)x would differ from the IR's
      // round-to-nearest-even on tiny values; without the feature clang
      // rounds with integer ops, exactly (and still vectorised). AVX10
      // implies AVX512-BF16 and would turn it back on (Intel hosts that
      // report avx10.1-256: Granite Rapids, and VMs masking it as another
      // model); every AVX-512 subset it stands for is listed on its own.
      const bool inexact_bf16 = f.first() == "avx512bf16" || f.first() == "avxneconvert" || f.first().starts_with("avx10");
      feats.push_back((f.second && !inexact_bf16 ? "+" : "-") + f.first().str());
    }
    std::sort(feats.begin(), feats.end());
    for (const std::string& f : feats) {
      cc1_target_args.push_back("-target-feature");
      cc1_target_args.push_back(f);
      features += (features.empty() ? "" : ",") + f;
    }
    // The bf16 pair dot product (vdpbf16ps) has no conversion to get wrong,
    // but its feature is off above: the prelude emits it as inline asm where
    // the host has it (KG_HOST_DPBF16), and the toolchain id says so.
    if (llvm::sys::getHostCPUFeatures().lookup("avx512bf16")) {
      cc1_target_args.insert(cc1_target_args.end(), {"-D", "KG_HOST_DPBF16=1"});
      host_defines = " +dpbf16-asm";
    }

    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw std::runtime_error("kgen jit: cannot detect host: " + llvm::toString(jtmb.takeError()));
    auto j = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!j) throw std::runtime_error("kgen jit: cannot create LLJIT: " + llvm::toString(j.takeError()));
    lljit = std::move(*j);
  }

  // This thread's TargetMachine for a codegen opt level (created on first use).
  llvm::TargetMachine& machine(int opt_level) const {
    thread_local std::unique_ptr<llvm::TargetMachine> tm[4];
    opt_level = std::clamp(opt_level, 0, 3);
    if (!tm[opt_level]) {
      std::string err;
      const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
      if (!t) throw std::runtime_error("kgen jit: " + err);
      llvm::TargetOptions to;
      static const llvm::CodeGenOptLevel lv[] = {llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
                                                 llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
      tm[opt_level].reset(t->createTargetMachine(triple, cpu, features, to, llvm::Reloc::PIC_, std::nullopt, lv[opt_level]));
    }
    return *tm[opt_level];
  }
};

// Never destroyed: modules held by static objects (device caches) may be
// released after other statics are gone, and must still find the JIT.
State& state() {
  static State* s = [] {
    const auto t0 = Clock::now();
    State* st = new State;
    if (ir::debug_level() >= 1) ir::debug_log(1, "compile", "JIT initialised in " + std::to_string(ms_since(t0)) + " ms");
    return st;
  }();
  return *s;
}

// The target's library info, with glibc's vector math (libmvec) for the vectorisers.
llvm::TargetLibraryInfoImpl library_info(const llvm::Module& m) {
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(m.getTargetTriple()));
  tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, llvm::Triple(m.getTargetTriple()));
  return tlii;
}

// The lean pass list (JitOptions::lean_passes): what clang's -O2 does that
// matters to a source whose one loop is the work-item loop. Inline the
// prelude's helpers, promote and clean up scalars, hoist the loop's
// invariants, vectorise it, tidy up. -O2's other ~80 passes (unrolling, GVN,
// jump threading, IndVars, SLP, the simplification repeated inside the
// inliner...) take half its time and do not speed such a loop up.
// SimplifyCFG turns the ternaries into selects before InstCombine sees them,
// so a clamp `x > c ? c : x` stays one min (instcombine first folds a negated
// x into the compare and leaves a compare and a blend: silu ~3% slower).
// InstCombine runs as in the default pipelines: a pipeline string's plain
// `instcombine` aborts the process where one iteration leaves work for another.
constexpr const char* kLeanPipeline =
    "always-inline,cgscc(inline),"
    "function(sroa,early-cse,simplifycfg,instcombine<no-verify-fixpoint>,loop-mssa(licm),loop-rotate,"
    "loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)";

// JitOptions::stream_aligned_stores, after the lean list and InferAlignment:
// LLVM's vectoriser refuses a nontemporal scalar store on x86 (its vector
// would need an alignment that the scalar's does not show), so the stores
// are marked once their vector form and alignment are known.
void stream_aligned_vector_stores(llvm::Module& m) {
  llvm::LLVMContext& ctx = m.getContext();
  const llvm::DataLayout& dl = m.getDataLayout();
  llvm::MDNode* nontemporal = llvm::MDNode::get(
      ctx, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))});
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb) {
        auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (!st || !st->getValueOperand()->getType()->isVectorTy()) continue;
        const uint64_t bytes = dl.getTypeStoreSize(st->getValueOperand()->getType());
        if (bytes >= 16 && llvm::isPowerOf2_64(bytes) && st->getAlign().value() >= std::min<uint64_t>(bytes, 64))
          st->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
      }
}

void run_lean_passes(llvm::Module& m, llvm::TargetMachine& tm, bool stream) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  const llvm::TargetLibraryInfoImpl tlii = library_info(m);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });  // before the defaults: first wins
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  const std::string list = std::string(kLeanPipeline) + (stream ? ",function(infer-alignment)" : "");
  if (auto err = pb.parsePassPipeline(mpm, list))
    throw std::runtime_error("kgen jit: lean pass list: " + llvm::toString(std::move(err)));
  mpm.run(m, mam);
  if (stream) stream_aligned_vector_stores(m);
}

std::string emit(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  llvm::TargetLibraryInfoImpl tlii = library_info(m);
  pm.add(new llvm::TargetLibraryInfoWrapperPass(tlii));
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind))
    throw std::runtime_error("kgen jit: target cannot emit this file type");
  pm.run(m);
  return std::string(buf.data(), buf.size());
}

}  // namespace

bool cpp_jit_available() { return true; }

ObjectCode compile_to_object(std::string_view source, const JitOptions& opt) {
  const State& st = state();
  ObjectCode out;
  auto t0 = Clock::now();

  // cc1 arguments (not driver arguments: no subprocess, no driver).
  static const char* kFile = "kgen_kernel.cpp";
  std::vector<std::string> args = {"-emit-llvm-only", "-x", "c++", "-std=c++20",
                                   "-O" + std::to_string(std::clamp(opt.opt_level, 0, 3)),
                                   "-fwrapv", "-ffp-contract=off", "-fopenmp-simd", "-fveclib=libmvec", "-fno-rtti",
                                   "-mrelocation-model", "pic", "-pic-level", "2",
                                   "-resource-dir", KGEN_CLANG_RESOURCE_DIR, "-nostdsysteminc", "-w",
                                   "-fgnuc-version=4.2.1", "-mprefer-vector-width=" + std::to_string(opt.prefer_vector_bits),
                                   "-vectorize-loops", "-vectorize-slp"};
  if (opt.opt_level == 0) args.resize(args.size() - 2);
  // Extra arguments (remarks, say) steer clang's own pipeline: then it runs.
  const bool lean = opt.lean_passes && opt.opt_level > 0 && opt.extra_args.empty();
  if (lean) args.push_back("-disable-llvm-passes");  // IR as -O2 emits it, optimised below
  args.insert(args.end(), st.cc1_target_args.begin(), st.cc1_target_args.end());
  args.insert(args.end(), opt.extra_args.begin(), opt.extra_args.end());
  if (!opt.extra_args.empty()) {  // remarks requested: let warnings/remarks through
    auto w = std::find(args.begin(), args.end(), "-w");
    if (w != args.end()) args.erase(w);
  }
  args.push_back(kFile);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  std::string diag_text;
  llvm::raw_string_ostream diag_os(diag_text);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> dopts = new clang::DiagnosticOptions();
  auto* printer = new clang::TextDiagnosticPrinter(diag_os, dopts.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs> ids(new clang::DiagnosticIDs());
  clang::DiagnosticsEngine diags(ids, dopts, printer, /*ShouldOwnClient=*/true);

  auto inv = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*inv, argv, diags))
    throw CompileError(diag_os.str().empty() ? "invalid compiler arguments\n" : diag_os.str(), std::string(source));
  inv->getFrontendOpts().DisableFree = false;  // otherwise every compile leaks its AST
  inv->getPreprocessorOpts().addRemappedFile(kFile, llvm::MemoryBuffer::getMemBufferCopy(source, kFile).release());

  clang::CompilerInstance ci;
  ci.setInvocation(std::move(inv));
  ci.createDiagnostics(new clang::TextDiagnosticPrinter(diag_os, &ci.getDiagnosticOpts()), true);

  llvm::LLVMContext ctx;
  clang::EmitLLVMOnlyAction action(&ctx);
  bool ok = ci.ExecuteAction(action);
  std::unique_ptr<llvm::Module> mod = ok ? action.takeModule() : nullptr;
  diag_os.flush();
  if (!ok || !mod || ci.getDiagnostics().hasErrorOccurred()) throw CompileError(diag_text, std::string(source));
  out.remarks = diag_text;
  llvm::TargetMachine& tm = st.machine(opt.opt_level);
  mod->setDataLayout(tm.createDataLayout());
  if (lean) run_lean_passes(*mod, tm, opt.stream_aligned_stores);
  out.stats.frontend_ms = ms_since(t0);

  auto t1 = Clock::now();
  if (opt.keep_ir || debug_asm()) {
    llvm::raw_string_ostream os(out.ir);
    mod->print(os, nullptr);
  }
  if (opt.keep_asm || debug_asm()) out.assembly = emit(*mod, tm, llvm::CodeGenFileType::AssemblyFile);
  out.bytes = emit(*mod, tm, llvm::CodeGenFileType::ObjectFile);
  out.stats.codegen_ms = ms_since(t1);
  return out;
}

std::shared_ptr<Module> load_object(std::string object, const CompileStats& stats) {
  State& st = state();
  std::lock_guard lock(st.mu);
  auto t0 = Clock::now();
  auto& es = st.lljit->getExecutionSession();
  auto jd = es.createJITDylib("kgen_module_" + std::to_string(st.next_dylib++));
  if (!jd) throw std::runtime_error("kgen jit: " + llvm::toString(jd.takeError()));
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(st.lljit->getDataLayout().getGlobalPrefix());
  if (!gen) throw std::runtime_error("kgen jit: " + llvm::toString(gen.takeError()));
  jd->addGenerator(std::move(*gen));
  llvm::orc::SymbolMap builtins;
  for (const auto& [name, addr] : float_builtins())
    builtins[st.lljit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr), llvm::JITSymbolFlags::Exported};
  if (auto err = jd->define(llvm::orc::absoluteSymbols(std::move(builtins))))
    throw std::runtime_error("kgen jit: cannot define float builtins: " + llvm::toString(std::move(err)));
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(object, "kgen_object");
  if (auto err = st.lljit->addObjectFile(*jd, std::move(buf)))
    throw std::runtime_error("kgen jit: cannot add object: " + llvm::toString(std::move(err)));
  std::shared_ptr<Module> m(new Module());
  m->dylib_ = &*jd;
  m->stats_ = stats;
  m->stats_.link_ms = ms_since(t0);  // symbol lookups (which link) add to this in lookup()
  return m;
}

std::shared_ptr<Module> compile_cpp(std::string_view source, const JitOptions& opt) {
  ObjectCode obj = compile_to_object(source, opt);
  auto m = load_object(std::move(obj.bytes), obj.stats);
  m->ir_ = std::move(obj.ir);
  m->asm_ = std::move(obj.assembly);
  return m;
}

void* Module::lookup(std::string_view symbol) const {
  State& st = state();
  std::lock_guard lock(st.mu);
  auto t0 = Clock::now();
  auto* jd = static_cast<llvm::orc::JITDylib*>(dylib_);
  auto addr = st.lljit->lookup(*jd, llvm::StringRef(symbol.data(), symbol.size()));
  if (!addr) throw std::runtime_error("kgen jit: symbol '" + std::string(symbol) + "' not found: " + llvm::toString(addr.takeError()));
  const_cast<Module*>(this)->stats_.link_ms += ms_since(t0);
  return addr->toPtr<void*>();
}

Module::~Module() {
  if (!dylib_) return;
  State& st = state();
  std::lock_guard lock(st.mu);
  auto* jd = static_cast<llvm::orc::JITDylib*>(dylib_);
  if (auto err = st.lljit->getExecutionSession().removeJITDylib(*jd)) llvm::consumeError(std::move(err));
}

std::string jit_toolchain_id() {
  State& st = state();
  return "clang " CLANG_VERSION_STRING " " + st.triple + " " + st.cpu + " " + st.features + st.host_defines;
}

}  // namespace kgen::jit
