// `kgen translate --target dsl` prints DSL C++ that compiles and records the
// very IR the translation made (structurally equal, before any pass).
#include <doctest/doctest.h>

#include "ir/hash.h"
#include "ir/printer.h"
#include "samples_dsl.h"  // generated from samples/cpp by translate_gen_dsl
#include "translate_test_util.h"

using namespace kgen;

TEST_CASE("every sample's DSL form records the translated IR") {
  std::vector<generated::Entry> entries = generated::all();
  CHECK(entries.size() >= 10);
  for (const generated::Entry& e : entries) {
    CAPTURE(e.kernel);
    ir::Kernel translated = translate::translate_kernel(e.file, e.kernel);
    ir::Kernel recorded = e.build();
    INFO(ir::print(translated) << "\nDSL:\n" << ir::print(recorded));
    CHECK(ir::structurally_equal(translated, recorded));
    CHECK(recorded.name == translated.name);
  }
}
