// Passes: before/after expectations written as IR text.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "ir/hash.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/semantics.h"
#include "ir/verifier.h"
#include "tests/ir/sample_kernels.h"

using namespace kgen::ir;
using namespace kgen::ir::testing;

namespace {

const char* kHead = "kernel k(y: ptr<global, i32> read_write, f: ptr<global, f32> read_write, n: i32, a: f32) workgroup(dynamic) {\n";

Kernel parse_body(const std::string& body) { return parse_kernel(kHead + body + "}\n", "p.ir"); }

// Runs the named passes once each, then renumbers; returns the body's text.
std::string after(const std::string& body, std::initializer_list<const char*> passes) {
  Kernel k = parse_body(body);
  verify(k);
  for (const char* p : passes) run_pass(k, p);
  renumber(k);
  verify(k);
  std::string text = print(k);
  return text.substr(text.find('\n') + 1, text.rfind('}') - text.find('\n') - 1);
}

// The canonical text of a body (what `after` returns for an expected result).
std::string canon(const std::string& body) { return after(body, {}); }

// The constant a single-const kernel body folds `expr` to.
Imm folded_imm(const std::string& body) {
  Kernel k = parse_body(body);
  run_pass(k, "fold");
  const Instr& last = k.body.instrs.back();
  REQUIRE(last.op == Op::Const);
  return last.imm;
}

}  // namespace

TEST_CASE("fold: integer and float arithmetic, compares, casts") {
  CHECK(after("  %a = const 2 : i32\n  %b = const 3 : i32\n  %c = add %a, %b : i32\n", {"fold"}) ==
        canon("  %a = const 2 : i32\n  %b = const 3 : i32\n  %c = const 5 : i32\n"));
  // Wrapping, unsigned, shifts modulo the width, compares.
  CHECK(folded_imm("  %a = const 2147483647 : i32\n  %b = const 1 : i32\n  %c = add %a, %b : i32\n").i == INT32_MIN);
  CHECK(folded_imm("  %a = const 0 : u8\n  %b = const 1 : u8\n  %c = sub %a, %b : u8\n").i == 255);
  CHECK(folded_imm("  %a = const 1 : u32\n  %b = const 33 : u32\n  %c = shl %a, %b : u32\n").i == 2);
  CHECK(folded_imm("  %a = const -7 : i32\n  %b = const 2 : i32\n  %c = div %a, %b : i32\n").i == -3);
  CHECK(folded_imm("  %a = const 1.5 : f32\n  %b = const 2.5 : f32\n  %c = lt %a, %b : bool\n").i == 1);
  CHECK(folded_imm("  %a = const nan : f32\n  %c = ne %a, %a : bool\n").i == 1);
  // Float results are rounded to the type, exactly as the interpreter computes them.
  CHECK(folded_imm("  %a = const 1.0 : f32\n  %b = const 3.0 : f32\n  %c = div %a, %b : f32\n").f == double(1.0f / 3.0f));
  CHECK(folded_imm("  %a = const 1.0 : f16\n  %b = const 3.0 : f16\n  %c = div %a, %b : f16\n").f ==
        double(float(sem_Div(Half(1.0f), Half(3.0f)))));
  CHECK(folded_imm("  %a = const 0.1 : f32\n  %c = sqrt %a : f32\n").f == double(std::sqrt(0.1f)));
  CHECK(folded_imm("  %a = const 2.0 : f64\n  %b = const 3.0 : f64\n  %c = const 1.0 : f64\n  %d = fma %a, %b, %c : f64\n").f == 7.0);
  // Casts: NaN -> 0, saturation, narrowing rounds once.
  CHECK(folded_imm("  %a = const nan : f32\n  %c = cast %a : i32\n").i == 0);
  CHECK(folded_imm("  %a = const 1e10 : f32\n  %c = cast %a : i32\n").i == INT32_MAX);
  CHECK(folded_imm("  %a = const -1 : i32\n  %c = cast %a : u64\n").i == -1);
  CHECK(folded_imm("  %a = const 0.1 : f64\n  %c = cast %a : f32\n").f == double(0.1f));
  CHECK(folded_imm("  %a = const 1.0 : f32\n  %c = bitcast %a : u32\n").i == 0x3f800000);
  CHECK(std::signbit(folded_imm("  %a = const 0.0 : f32\n  %c = neg %a : f32\n").f));
}

TEST_CASE("fold: lines of equal lanes, reductions as left folds") {
  CHECK(after("  %a = const 0.5 : f32\n  %s = splat %a : f32x4\n  %b = const 1.0 : f32x4\n  %c = add %s, %b : f32x4\n"
              "  %e = extract %c lane 2 : f32\n",
              {"fold"}) ==
        canon("  %a = const 0.5 : f32\n  %s = const 0.5 : f32x4\n  %b = const 1.0 : f32x4\n  %c = const 1.5 : f32x4\n"
              "  %e = const 1.5 : f32\n"));
  float lane = 0.1f, acc = lane;
  for (int i = 1; i < 8; ++i) acc += lane;  // ((v0 + v1) + v2) ...
  CHECK(folded_imm("  %a = const 0.1 : f32x8\n  %r = reduce_add %a : f32\n").f == double(acc));
  CHECK(folded_imm("  %a = const 3 : u32\n  %b = const 3 : u32\n  %c = construct %a, %b : u32x2\n").i == 3);
  // Unequal lanes cannot be one constant: left alone.
  std::string mixed = "  %a = const 3 : u32\n  %b = const 4 : u32\n  %c = construct %a, %b : u32x2\n";
  CHECK(after(mixed, {"fold"}) == canon(mixed));
}

TEST_CASE("fold: integer division by zero stays for run time; side effects stay") {
  std::string div0 = "  %a = const 1 : i32\n  %b = const 0 : i32\n  %c = div %a, %b : i32\n  %d = rem %a, %b : i32\n";
  CHECK(after(div0, {"fold"}) == canon(div0));
  CHECK(after(div0, {"dce"}) == canon(div0));  // may trap: not dead either
  std::string fdiv0 = "  %a = const 1.0 : f32\n  %b = const 0.0 : f32\n  %c = div %a, %b : f32\n";
  CHECK(folded_imm(fdiv0).f == INFINITY);
}

TEST_CASE("simplify: identities that hold bit-exactly") {
  const char* load = "  %y = buffer 0 : ptr<global, i32>\n  %f = buffer 1 : ptr<global, f32>\n  %i = global_id 0 : u32\n"
                     "  %x = load %y, %i : i32\n  %g = load %f, %i : f32\n";
  auto body = [&](const std::string& s) { return std::string(load) + s; };
  // x * 1 -> x
  CHECK(after(body("  %one = const 1 : i32\n  %m = mul %x, %one : i32\n  store %y, %i, %m\n"), {"simplify"}) ==
        canon(body("  %one = const 1 : i32\n  store %y, %i, %x\n")));
  // Constant on the left moves right, then x + 0 -> x.
  CHECK(after(body("  %z = const 0 : i32\n  %s = add %z, %x : i32\n  store %y, %i, %s\n"), {"simplify"}) ==
        canon(body("  %z = const 0 : i32\n  store %y, %i, %x\n")));
  // Integer x*0 and x-x become 0.
  CHECK(after(body("  %z = const 0 : i32\n  %m = mul %x, %z : i32\n  %d = sub %x, %x : i32\n  %s = add %m, %d : i32\n"
                   "  store %y, %i, %s\n"),
              {"simplify", "fold", "simplify"}) ==
        canon(body("  %z = const 0 : i32\n  %m = const 0 : i32\n  %d = const 0 : i32\n  store %y, %i, %m\n")));
  // Floats: x*0, x-x, x+0.0 are not identities (NaN, inf, -0.0); x + -0.0 and x*1.0 are.
  std::string fl = body("  %z = const 0.0 : f32\n  %m = mul %g, %z : f32\n  %d = sub %g, %g : f32\n"
                        "  %p = add %g, %z : f32\n  store %f, %i, %m\n  store %f, %i, %d\n  store %f, %i, %p\n");
  CHECK(after(fl, {"simplify"}) == canon(fl));
  CHECK(after(body("  %nz = const -0.0 : f32\n  %p = add %g, %nz : f32\n  %o = const 1.0 : f32\n  %q = mul %p, %o : f32\n"
                   "  store %f, %i, %q\n"),
              {"simplify"}) == canon(body("  %nz = const -0.0 : f32\n  %o = const 1.0 : f32\n  store %f, %i, %g\n")));
  // Double negation, same-type cast, shift by a multiple of the width, select on a constant, lt flips.
  CHECK(after(body("  %a = neg %x : i32\n  %b = neg %a : i32\n  %c = cast %b : i32\n  %k = const 32 : i32\n"
                   "  %d = shl %c, %k : i32\n  %t = const true : bool\n  %e = select %t, %d, %x : i32\n"
                   "  %l = lt %k, %e : bool\n  %v = cast %l : i32\n  store %y, %i, %v\n"),
              {"simplify", "dce"}) ==
        after(body("  %k = const 32 : i32\n  %l = gt %x, %k : bool\n  %v = cast %l : i32\n  store %y, %i, %v\n"), {"dce"}));
}

TEST_CASE("simplify: an if on a constant condition becomes the block it takes") {
  CHECK(after("  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  %t = const false : bool\n"
              "  if %t {\n    %a = const 1 : i32\n    store %y, %i, %a\n  } else {\n    %b = const 2 : i32\n"
              "    store %y, %i, %b\n  }\n",
              {"simplify"}) ==
        canon("  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  %t = const false : bool\n"
              "  %b = const 2 : i32\n  store %y, %i, %b\n"));
}

TEST_CASE("cse: identical pure ops merge, respecting block scope") {
  CHECK(after("  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
              "  %a = add %n, %n : i32\n  %b = add %n, %n : i32\n  %c = mul %a, %b : i32\n  store %y, %i, %c\n",
              {"cse"}) ==
        canon("  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
              "  %a = add %n, %n : i32\n  %c = mul %a, %a : i32\n  store %y, %i, %c\n"));
  // Outer values are reused inside; values of sibling blocks are not shared.
  std::string scoped = "  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
                       "  %a = add %n, %n : i32\n  %c = lt %n, %a : bool\n"
                       "  if %c {\n    %b = add %n, %n : i32\n    %m = mul %b, %n : i32\n    store %y, %i, %m\n"
                       "  } else {\n    %m2 = mul %a, %n : i32\n    store %y, %i, %m2\n  }\n"
                       "  %m3 = mul %a, %n : i32\n  store %y, %i, %m3\n";
  CHECK(after(scoped, {"cse"}) ==
        canon("  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
              "  %a = add %n, %n : i32\n  %c = lt %n, %a : bool\n"
              "  if %c {\n    %m = mul %a, %n : i32\n    store %y, %i, %m\n"
              "  } else {\n    %m2 = mul %a, %n : i32\n    store %y, %i, %m2\n  }\n"
              "  %m3 = mul %a, %n : i32\n  store %y, %i, %m3\n"));
  // Loads and atomics are never merged.
  std::string loads = "  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  %a = load %y, %i : i32\n"
                      "  store %y, %i, %a\n  %b = load %y, %i : i32\n  store %y, %i, %b\n";
  CHECK(after(loads, {"cse"}) == canon(loads));
}

TEST_CASE("dce: unused chains, write-only variables, empty ifs, unreachable code") {
  CHECK(after("  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  %a = load %y, %i : i32\n"
              "  %b = mul %a, %a : i32\n  %c = add %b, %a : i32\n  %one = const 1 : i32\n  store %y, %i, %one\n",
              {"dce"}) ==
        canon("  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  %one = const 1 : i32\n"
              "  store %y, %i, %one\n"));
  CHECK(after("  %n = param 0 : i32\n  %v = var %n : i32\n  %c = lt %n, %n : bool\n  if %c {\n"
              "    %d = add %n, %n : i32\n    var_store %v, %d\n  }\n  %w = var %n : i32\n  %r = var_load %w : i32\n",
              {"dce"}) == "");
  CHECK(after("  %y = buffer 0 : ptr<global, i32>\n  %i = global_id 0 : u32\n  loop {\n    break\n"
              "    %one = const 1 : i32\n    store %y, %i, %one\n  }\n",
              {"dce"}) == canon("  loop {\n    break\n  }\n"));
}

TEST_CASE("the default pipeline reaches a fixed point and keeps the kernel valid") {
  Kernel k = parse_body(
      "  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
      "  %two = const 2 : i32\n  %three = const 3 : i32\n  %five = add %two, %three : i32\n"
      "  %z = sub %five, %five : i32\n  %s = add %n, %z : i32\n  %s2 = add %n, %z : i32\n"
      "  %m = mul %s, %s2 : i32\n  %dead = mul %m, %five : i32\n  store %y, %i, %m\n");
  PassManager pm = default_pipeline();
  CHECK(pm.names() == std::vector<std::string>{"fold", "simplify", "cse", "dce"});
  CHECK(pm.run(k));
  CHECK(print(k) == print(parse_body("  %y = buffer 0 : ptr<global, i32>\n  %n = param 0 : i32\n  %i = global_id 0 : u32\n"
                                     "  %m = mul %n, %n : i32\n  store %y, %i, %m\n")));
  CHECK_FALSE(pm.run(k));  // fixed point

  // The kitchen sink survives the pipeline and still verifies (minus its early return).
  Kernel s = kitchen_sink();
  s.body.instrs.pop_back();
  verify(s);
  default_pipeline().run(s);
  verify(s);
  Kernel again = parse_kernel(print(s));
  CHECK(structurally_equal(again, s));
}

TEST_CASE("pass manager: dumps, verification after each pass, registry") {
  PassManager pm;
  std::vector<std::string> dumped;
  pm.dump = [&](std::string_view pass, const Kernel&) { dumped.emplace_back(pass); };
  pm.dump_after = {"cse"};
  pm.add("fold").add("cse").add("dce");
  Kernel k = saxpy();
  pm.run(k);
  CHECK(dumped == std::vector<std::string>{"cse"});
  pm.dump_after = {"all"};
  dumped.clear();
  pm.run(k);
  CHECK(dumped == std::vector<std::string>{"fold", "cse", "dce"});

  PassManager broken;
  broken.verify_each = true;
  broken.add("break-it", [](Kernel& k) {
    Instr brk;
    brk.op = Op::Break;
    brk.loc = at(5);
    k.body.instrs.push_back(brk);
    return true;
  });
  CHECK_THROWS_WITH_AS(broken.run(k), "t.cpp:5:1: error: after pass 'break-it': break outside of a loop", Error);

  CHECK(pass_names() == std::vector<std::string>{"fold", "simplify", "cse", "dce", "renumber"});
  CHECK_THROWS_AS(run_pass(k, "nope"), std::invalid_argument);
  CHECK_THROWS_AS(PassManager().add("nope"), std::invalid_argument);
}

TEST_CASE("renumber closes gaps in definition order") {
  Kernel k = saxpy();
  walk_mut(k.body, [](Instr& in) {
    if (in.has_result()) in.id = in.id * 3 + 7;
    for (ValueId& a : in.args) a = a * 3 + 7;
  });
  k.num_values = 100;
  renumber(k);
  CHECK(k.num_values == saxpy().num_values);
  CHECK(print(k) == print(saxpy()));
}
