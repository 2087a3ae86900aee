#include <cstdlib>
#include <stdexcept>

#include "ir/debug.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace kgen::ir {

namespace {

struct Registered {
  std::string_view name;
  bool (*fn)(Kernel&);
};

bool renumber_pass(Kernel& k) {
  renumber(k);
  return false;  // the same kernel up to numbering
}

constexpr Registered kPasses[] = {
    {"fold", fold_constants}, {"simplify", simplify}, {"cse", cse}, {"dce", dce}, {"renumber", renumber_pass},
};

const Registered& lookup(std::string_view name) {
  for (const Registered& p : kPasses)
    if (p.name == name) return p;
  std::string known;
  for (const Registered& p : kPasses) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw std::invalid_argument("unknown pass '" + std::string(name) + "' (known: " + known + ")");
}

std::set<std::string, std::less<>> dump_after_from_env() {
  std::set<std::string, std::less<>> out;
  if (debug_level() >= 3) out.insert("all");
  if (const char* s = std::getenv("KGEN_DUMP_AFTER")) {
    std::string_view v(s);
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string_view name = v.substr(0, comma);
      if (!name.empty()) out.emplace(name);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return out;
}

}  // namespace

PassManager::PassManager() : dump_after(dump_after_from_env()) {
#ifndef NDEBUG
  verify_each = true;
#else
  verify_each = debug_level() >= 1;
#endif
  dump = [](std::string_view pass, const Kernel& k) {
    debug_log(0, "ir", "after " + std::string(pass) + ":\n" + print(k, {.locations = true}));
  };
}

PassManager& PassManager::add(std::string name, PassFn fn) {
  passes_.push_back({std::move(name), std::move(fn)});
  return *this;
}

PassManager& PassManager::add(std::string_view registered_name) {
  const Registered& p = lookup(registered_name);
  return add(std::string(p.name), p.fn);
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> out;
  for (const Entry& e : passes_) out.push_back(e.name);
  return out;
}

bool PassManager::run(Kernel& k) const {
  bool changed = false;
  for (int round = 0; round < std::max(1, max_iterations); ++round) {
    bool round_changed = false;
    for (const Entry& p : passes_) {
      bool c = p.fn(k);
      round_changed |= c;
      if (verify_each) {
        try {
          verify(k);
        } catch (const Error& e) {
          throw Error(e.loc, "after pass '" + p.name + "': " + e.message);
        }
      }
      if (dump && (dump_after.count("all") || dump_after.count(p.name))) dump(p.name, k);
    }
    changed |= round_changed;
    if (!round_changed) break;
  }
  if (changed) renumber(k);
  return changed;
}

PassManager default_pipeline() {
  PassManager pm;
  for (std::string_view name : {"fold", "simplify", "cse", "dce"}) pm.add(name);
  pm.max_iterations = 8;
  return pm;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const Registered& p : kPasses) out.emplace_back(p.name);
  return out;
}

bool run_pass(Kernel& k, std::string_view name) { return lookup(name).fn(k); }

}  // namespace kgen::ir
