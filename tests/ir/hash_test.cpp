// Structural hash and equality: blind to numbering, names and locations,
// sensitive to every field that changes meaning.
#include <doctest/doctest.h>

#include <functional>

#include "ir/hash.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "tests/ir/sample_kernels.h"

using namespace kgen::ir;
using namespace kgen::ir::testing;

namespace {

// Adds `offset` to every value id (a different but valid numbering).
Kernel shifted(Kernel k, ValueId offset) {
  walk_mut(k.body, [&](Instr& in) {
    if (in.has_result()) in.id += offset;
    for (ValueId& a : in.args) a += offset;
  });
  k.num_values += offset;
  return k;
}

void expect_different(const Kernel& a, const Kernel& b, const char* what) {
  CAPTURE(what);
  CHECK_FALSE(structurally_equal(a, b));
  CHECK(structural_hash(a) != structural_hash(b));
}

}  // namespace

TEST_CASE("hash and equality ignore numbering, names and locations") {
  Kernel a = kitchen_sink();
  Kernel b = shifted(a, 1000);
  CHECK(structurally_equal(a, b));
  CHECK(structural_hash(a) == structural_hash(b));

  Kernel c = a;
  c.name = "other";
  c.buffers[0].name = "renamed";
  c.scalars[1].name = "alpha";
  walk_mut(c.body, [](Instr& in) { in.loc = at(999); });
  CHECK(structurally_equal(a, c));
  CHECK(structural_hash(a) == structural_hash(c));

  // Reversed numbering order within the same structure.
  Kernel r = a;
  walk_mut(r.body, [&](Instr& in) {
    if (in.has_result()) in.id = r.num_values - 1 - in.id;
    for (ValueId& v : in.args) v = r.num_values - 1 - v;
  });
  CHECK(structural_hash(a) == structural_hash(r));
  renumber(r);
  CHECK(print(r) == print(a));
}

TEST_CASE("every semantic field changes the hash") {
  const Kernel base = saxpy();
  auto edit = [&](const char* what, const std::function<void(Kernel&)>& f) {
    Kernel k = base;
    f(k);
    expect_different(base, k, what);
  };
  auto instr = [](Kernel& k, Op op) -> Instr& {
    Instr* found = nullptr;
    walk_mut(k.body, [&](Instr& in) {
      if (!found && in.op == op) found = &in;
    });
    REQUIRE(found);
    return *found;
  };
  edit("access", [](Kernel& k) { k.buffers[0].access = Access::ReadWrite; });
  edit("buffer type", [](Kernel& k) { k.buffers[0].elem = types::F64; });
  edit("scalar type", [](Kernel& k) { k.scalars[1].type = types::I32; });
  edit("extra scalar", [](Kernel& k) { k.scalars.push_back({"z", types::I32}); });
  edit("workgroup", [](Kernel& k) { k.workgroup_size = {128, 2, 1}; });
  edit("op", [&](Kernel& k) { instr(k, Op::Lt).op = Op::Le; });
  edit("attr", [&](Kernel& k) { instr(k, Op::GlobalId).attr = 1; });
  edit("operand order", [&](Kernel& k) { std::swap(instr(k, Op::Lt).args[0], instr(k, Op::Lt).args[1]); });
  edit("operand", [&](Kernel& k) { instr(k, Op::Fma).args[2] = instr(k, Op::Fma).args[1]; });
  edit("type", [&](Kernel& k) { instr(k, Op::Buffer).type = Type(ScalarKind::F32, 2, AddrSpace::Global); });
  edit("block placement", [&](Kernel& k) {
    Instr& i = instr(k, Op::If);
    std::swap(i.blocks[0], i.blocks[1]);
  });

  // Constants: the meaningful bits, including the sign of zero and NaN payloads.
  auto with_const = [](double v) {
    Kernel k;
    Builder b(k);
    b.constant(types::F32, Imm{0, v});  // not const_float: its int64 conversion is undefined for NaN
    return k;
  };
  expect_different(with_const(0.0), with_const(-0.0), "signed zero");
  expect_different(with_const(std::nan("")), with_const(std::bit_cast<double>(0x7ff8000000000001ull)), "nan payload");
  CHECK(structurally_equal(with_const(1.5), with_const(1.5)));
  // The unused integer field of a float constant does not matter.
  Kernel x = with_const(2.0), y = with_const(2.0);
  y.body.instrs[0].imm.i = 12345;
  CHECK(structurally_equal(x, y));
}

TEST_CASE("Hasher mixes well enough to separate small inputs") {
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    Hasher h;
    h.add(i);
    seen.insert(h.finish());
    Hasher g;
    g.add(i);
    g.add(0);
    seen.insert(g.finish());
  }
  CHECK(seen.size() == 2000);
  Hasher s1, s2;
  s1.add(std::string_view("abc"));
  s2.add(std::string_view("abd"));
  CHECK(s1.finish() != s2.finish());
}
