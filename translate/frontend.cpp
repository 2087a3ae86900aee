// Parses a C++ file with clang in process and lowers its kernels.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "translate/lowerer.h"
#include "translate/translate.h"

namespace kgen::translate {

namespace {

// The builtins header is served from memory, so the translator does not
// depend on where the sources were installed.
const char kBuiltinsDir[] = "/kgen-builtins";
const char kBuiltinsHeader[] =
#include "kgen_kernel_h.inc"
    ;

// Keeps clang's first error (with its location) and counts the rest.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error || !first.message.empty()) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    first.message = text.str().str();
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const clang::SourceManager& sm = info.getSourceManager();
      clang::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(info.getLocation()));
      if (p.isValid()) first.loc = {ir::intern_file(p.getFilename()), p.getLine(), p.getColumn()};
    }
  }
  struct {
    ir::SourceLoc loc;
    std::string message;
  } first;
};

std::vector<std::string> clang_args(const Options& opt) {
  // f16 arithmetic rounds after every operation, as in the IR (clang would
  // otherwise compute _Float16 expressions in float).
  std::vector<std::string> args = {"-std=" + opt.std, "-nostdinc", "-w", "-fsyntax-only",
                                   "-Xclang", "-ffloat16-excess-precision=none", std::string("-I") + kBuiltinsDir};
  for (const std::string& d : opt.include_dirs) args.push_back("-I" + d);
  for (const std::string& d : opt.defines) args.push_back("-D" + d);
  return args;
}

// Kernel definitions in source order, descending into namespaces.
void find_kernels(const clang::DeclContext* dc, std::vector<const clang::FunctionDecl*>& out) {
  for (const clang::Decl* d : dc->decls()) {
    if (const auto* ns = clang::dyn_cast<clang::NamespaceDecl>(d)) {
      find_kernels(ns, out);
    } else if (const auto* ls = clang::dyn_cast<clang::LinkageSpecDecl>(d)) {
      find_kernels(ls, out);
    } else if (const auto* ft = clang::dyn_cast<clang::FunctionTemplateDecl>(d)) {
      if (!has_annotation(ft->getTemplatedDecl(), "kgen::kernel")) continue;
      // Each instantiation the file asks for (`template void k<16>(...);`) is a variant.
      for (const clang::FunctionDecl* spec : ft->specializations())
        if (spec->getBody()) out.push_back(spec);
    } else if (const auto* fn = clang::dyn_cast<clang::FunctionDecl>(d)) {
      if (fn->doesThisDeclarationHaveABody() && has_annotation(fn, "kgen::kernel")) out.push_back(fn);
    }
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

const char* builtins_header() { return kBuiltinsHeader; }

std::vector<ir::Kernel> translate_source(const std::string& code, const std::string& filename, const Options& opt) {
  ErrorCollector errors;
  clang::tooling::FileContentMappings files = {{std::string(kBuiltinsDir) + "/kgen_kernel.h", kBuiltinsHeader}};
  std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(
      code, clang_args(opt), filename, "kgen-translate", std::make_shared<clang::PCHContainerOperations>(),
      clang::tooling::getClangStripDependencyFileAdjuster(), files, &errors);
  if (!errors.first.message.empty()) throw ir::Error(errors.first.loc, errors.first.message);
  if (!ast) throw std::runtime_error("clang could not parse '" + filename + "'");
  clang::ASTContext& ctx = ast->getASTContext();
  std::vector<const clang::FunctionDecl*> fns;
  find_kernels(ctx.getTranslationUnitDecl(), fns);
  std::vector<ir::Kernel> kernels;
  for (const clang::FunctionDecl* fn : fns) kernels.push_back(Lowerer(ctx).lower_kernel(fn));
  return kernels;
}

std::vector<ir::Kernel> translate_file(const std::string& path, const Options& opt) {
  return translate_source(read_file(path), path, opt);
}

ir::Kernel translate_kernel(const std::string& path, const std::string& name, const Options& opt) {
  std::vector<ir::Kernel> ks = translate_file(path, opt);
  if (ks.empty()) throw std::runtime_error(path + ": no kernel found (mark kernels with KGEN_KERNEL)");
  if (name.empty() && ks.size() == 1) return std::move(ks[0]);
  std::string known;
  for (ir::Kernel& k : ks) {
    if (k.name == name) return std::move(k);
    known += " " + k.name;
  }
  throw std::runtime_error(path + ": " + (name.empty() ? "several kernels, choose one with --kernel:" : "no kernel '" + name + "'; kernels:") + known);
}

}  // namespace kgen::translate
