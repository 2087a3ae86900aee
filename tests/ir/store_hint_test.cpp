// The nontemporal store hint (ir.h StoreHint): printed and parsed back, part of
// the structural hash, checked by the verifier, kept apart from plain stores
// by CSE/DCE, and ignored by the interpreter (same result as a plain store).
#include <doctest/doctest.h>

#include <vector>

#include "ir/builder.h"
#include "ir/hash.h"
#include "ir/interpreter.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/verifier.h"

using namespace kgen::ir;

namespace {

// y[i] = x[i] * 2 for i < n, on f32x4 lines; the store carries `hint`. With
// `twice`, the same value is stored a second time, plainly.
Kernel scale_lines(StoreHint hint, bool twice = false) {
  Kernel k;
  k.name = "scale_lines";
  const Type l4(ScalarKind::F32, 4);
  k.buffers = {{"x", l4, Access::Read}, {"y", l4, Access::Write}};
  k.scalars = {{"n", types::U32}};
  k.workgroup_size = {64, 1, 1};
  Builder b(k);
  ValueId x = b.buffer(0), y = b.buffer(1), n = b.param(0);
  ValueId i = b.builtin(Op::GlobalId, 0);
  b.begin_if(b.op(Op::Lt, {i, n}));
  ValueId two = b.op(Op::Splat, {b.const_float(types::F32, 2.0)}, 0, l4);
  ValueId v = b.op(Op::Mul, {b.load(x, i), two});
  b.store(y, i, v, hint);
  if (twice) b.store(y, i, v);
  b.end_if();
  return k;
}

Instr& first_store(Kernel& k) {
  Instr* found = nullptr;
  walk_mut(k.body, [&](Instr& in) {
    if (!found && in.op == Op::Store) found = &in;
  });
  REQUIRE(found);
  return *found;
}

std::string verify_error(const Kernel& k) {
  try {
    verify(k);
  } catch (const Error& e) {
    return e.message;
  }
  return "";
}

std::vector<float> run(const Kernel& k, uint32_t n) {
  std::vector<float> x(size_t(n) * 4), y(size_t(n) * 4, -1.0f);
  for (size_t j = 0; j < x.size(); ++j) x[j] = float(j) * 0.25f - 3.0f;
  InterpBuffer bufs[] = {{x.data(), x.size() * 4}, {y.data(), y.size() * 4}};
  uint64_t scalars[] = {n};
  LaunchDims d;
  d.grid = {(n + 63) / 64, 1, 1};
  d.workgroup = {64, 1, 1};
  interpret(k, d, bufs, scalars);
  return y;
}

}  // namespace

TEST_CASE("a nontemporal store prints as a keyword and round-trips") {
  Kernel k = scale_lines(kStoreNonTemporal);
  verify(k);
  std::string text = print(k);
  CHECK(text.find("    store %1, %3, %8 nontemporal\n") != std::string::npos);
  Kernel p = parse_kernel(text, "nt.ir");
  CHECK(print(p) == text);
  CHECK(structurally_equal(k, p));
  CHECK(structural_hash(k) == structural_hash(p));
  CHECK(is_nontemporal_store(first_store(p)));
  // A plain store prints no hint.
  CHECK(print(scale_lines(kStorePlain)).find("nontemporal") == std::string::npos);
  // The hint is only a store's: other ops refuse the keyword.
  CHECK_THROWS_AS(parse_kernel("kernel k(y: ptr<global, f32> read_write) workgroup(1, 1, 1) {\n"
                               "  %0 = buffer 0 : ptr<global, f32>\n  %1 = const 0 : u32\n"
                               "  %2 = load %0, %1 nontemporal : f32\n}\n",
                               "bad.ir"),
                  Error);
}

TEST_CASE("the hint changes the structural hash (and so the compile cache key)") {
  Kernel plain = scale_lines(kStorePlain), nt = scale_lines(kStoreNonTemporal);
  CHECK_FALSE(structurally_equal(plain, nt));
  CHECK(structural_hash(plain) != structural_hash(nt));
}

TEST_CASE("the verifier accepts the two hints only, and nontemporal only on global buffers") {
  Kernel k = scale_lines(kStorePlain);
  first_store(k).attr = 7;
  CHECK(verify_error(k).find("unknown store hint 7") != std::string::npos);

  Kernel s;
  s.name = "shared_nt";
  s.workgroup_size = {1, 1, 1};
  Builder b(s);
  ValueId sh = b.shared(types::F32, 4);
  ValueId zero = b.const_int(types::U32, 0);
  b.store(sh, zero, b.const_float(types::F32, 1.0));
  first_store(s).attr = kStoreNonTemporal;
  CHECK(verify_error(s).find("nontemporal store needs a global buffer") != std::string::npos);
}

TEST_CASE("CSE and DCE treat a nontemporal store as a store") {
  // Two stores of one value to one place, one plain and one streaming: both stay.
  Kernel k = scale_lines(kStoreNonTemporal, true);
  cse(k);
  dce(k);
  verify(k);
  int plain = 0, nt = 0;
  walk(k.body, [&](const Instr& in) {
    if (in.op != Op::Store) return;
    (is_nontemporal_store(in) ? nt : plain)++;
  });
  CHECK(plain == 1);
  CHECK(nt == 1);
  // The default pipeline keeps the hint.
  Kernel o = scale_lines(kStoreNonTemporal);
  default_pipeline().run(o);
  CHECK(is_nontemporal_store(first_store(o)));
}

TEST_CASE("the interpreter runs a nontemporal store as a plain store") {
  for (uint32_t n : {1u, 63u, 200u}) {
    CAPTURE(n);
    std::vector<float> a = run(scale_lines(kStorePlain), n), b = run(scale_lines(kStoreNonTemporal), n);
    CHECK(a == b);
    CHECK(b[4 * (n - 1) + 3] == (float(4 * (n - 1) + 3) * 0.25f - 3.0f) * 2.0f);
  }
}
