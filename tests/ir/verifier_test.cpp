// The verifier and the uniformity analysis behind its divergence checks.
#include <doctest/doctest.h>

#include "ir/parser.h"
#include "ir/uniformity.h"
#include "ir/verifier.h"
#include "tests/ir/sample_kernels.h"

using namespace kgen::ir;
using namespace kgen::ir::testing;

namespace {

std::string verify_error(const Kernel& k) {
  try {
    verify(k);
  } catch (const Error& e) {
    return e.what();
  }
  return "(verified)";
}

// A kernel from its body, with a shared array, a buffer and a u32 parameter n.
Kernel body(const std::string& text) {
  return parse_kernel("kernel k(y: ptr<global, u32> read_write, n: u32) workgroup(64, 1, 1) {\n"
                      "  %y = buffer 0 : ptr<global, u32>\n"
                      "  %n = param 0 : u32\n"
                      "  %sh = shared 64 : ptr<shared, u32>\n"
                      "  %gid = global_id 0 : u32\n"
                      "  %zero = const 0 : u32\n"
                      "  %one = const 1 : u32\n" +
                          text + "}\n",
                      "v.ir");
}

}  // namespace

TEST_CASE("well-formed kernels verify") {
  verify(saxpy());
  // Barriers under uniform control: group-uniform if, loop with uniform bounds.
  verify(body("  %c = lt %zero, %n : bool\n"
              "  if %c {\n"
              "    barrier\n"
              "  }\n"
              "  %i = for %zero, %n, %one : u32 {\n"
              "    store %sh, %i, %gid\n"
              "    barrier\n"
              "  }\n"));
}

TEST_CASE("barrier under an if on global_id") {
  Kernel k = body("  %c = lt %gid, %n : bool\n"
                  "  if %c {\n"
                  "    barrier\n"
                  "  }\n");
  CHECK(verify_error(k) ==
        "v.ir:10:5: error: barrier in divergent control flow: the enclosing if at v.ir:9:3 depends on a per-work-item "
        "value (%6, derived from global_id at v.ir:5:3); every work-item of the group must reach the same barriers");
}

TEST_CASE("barrier in a loop with a varying bound") {
  Kernel k = body("  %i = for %zero, %gid, %one : u32 {\n"
                  "    barrier\n"
                  "  }\n");
  CHECK(verify_error(k) ==
        "v.ir:9:5: error: barrier in divergent control flow: the enclosing for at v.ir:8:3 has a per-work-item bound (%3, "
        "derived from global_id at v.ir:5:3); every work-item of the group must reach the same barriers");
}

TEST_CASE("barrier after a varying break, and a variable written under varying control") {
  Kernel k = body("  loop {\n"
                  "    %c = lt %gid, %n : bool\n"
                  "    if %c {\n"
                  "      break\n"
                  "    }\n"
                  "    barrier\n"
                  "  }\n");
  CHECK(verify_error(k).starts_with("v.ir:13:5: error: barrier in divergent control flow: the enclosing loop at v.ir:8:3 "
                                    "is left early by some work-items (break at v.ir:11:7 under a per-work-item condition)"));

  Kernel v = body("  %v = var %zero : u32\n"
                  "  %c = lt %gid, %n : bool\n"
                  "  if %c {\n"
                  "    var_store %v, %one\n"
                  "  }\n"
                  "  %x = var_load %v : u32\n"
                  "  %d = eq %x, %zero : bool\n"
                  "  if %d {\n"
                  "    barrier\n"
                  "  }\n");
  CHECK(verify_error(v) ==
        "v.ir:16:5: error: barrier in divergent control flow: the enclosing if at v.ir:15:3 depends on a per-work-item "
        "value (%9, derived from global_id at v.ir:5:3); every work-item of the group must reach the same barriers");
}

TEST_CASE("subgroup ops in divergent control, returns with barriers, workgroup size") {
  Kernel s = body("  %c = lt %gid, %n : bool\n"
                  "  if %c {\n"
                  "    %r = subgroup_add %gid : u32\n"
                  "  }\n");
  CHECK(verify_error(s).starts_with("v.ir:10:5: error: subgroup_add in divergent control flow: the enclosing if at v.ir:9:3"));

  Kernel r = body("  %c = lt %gid, %n : bool\n"
                  "  if %c {\n"
                  "    return\n"
                  "  }\n"
                  "  barrier\n");
  CHECK(verify_error(r) ==
        "v.ir:10:5: error: return in a kernel that uses barriers: work-items that return early never arrive at the "
        "barrier at v.ir:12:3");

  Kernel w = saxpy();
  w.workgroup_size = {64, 0, 1};
  CHECK(verify_error(w) == "error: kernel 'saxpy': workgroup size (64, 0, 1) must be all positive or all zero (dynamic)");
  w.workgroup_size = {64, 32, 1};
  CHECK(verify_error(w) == "error: kernel 'saxpy': workgroup size (64, 32, 1) has more than 1024 work-items");
  w.workgroup_size = {0, 0, 0};
  verify(w);
}

TEST_CASE("break outside a loop, constructed by hand") {
  Kernel k = saxpy();
  Instr brk;
  brk.op = Op::Break;
  brk.loc = at(77);
  k.body.instrs.push_back(brk);
  CHECK(verify_error(k) == "t.cpp:77:1: error: break outside of a loop");
}

TEST_CASE("use of a value outside its block") {
  Kernel k = saxpy();
  Builder b(k);
  b.loc = at(50);
  // The fma inside the if (%8) used after the if.
  Instr in;
  in.op = Op::Store;
  in.args = {1, 4, 8};
  in.loc = at(50);
  k.body.instrs.push_back(in);
  CHECK(verify_error(k) ==
        "t.cpp:50:1: error: store: operand %8 is defined at t.cpp:2:1 in a block that does not enclose this use");

  Kernel early = saxpy();
  std::swap(early.body.instrs[4], early.body.instrs[5]);  // lt %4, %3 before global_id %4
  CHECK(verify_error(early) == "t.cpp:1:1: error: lt: operand %4 is used before its definition at t.cpp:1:1");
}

TEST_CASE("store to a read-only buffer, wrong recorded types, duplicate ids") {
  Kernel k = saxpy();
  k.buffers[1].access = Access::Read;  // y becomes read-only under the existing store
  CHECK(verify_error(k) == "t.cpp:2:1: error: store: write to read-only buffer 'y' (declare it Write or ReadWrite)");

  Kernel t = saxpy();
  t.body.instrs[5].type = types::I32;  // lt recorded as i32
  CHECK(verify_error(t) == "t.cpp:1:1: error: lt: recorded type i32 but the type rules give bool");

  Kernel d = saxpy();
  d.body.instrs[3].id = 2;
  CHECK(verify_error(d) == "t.cpp:1:1: error: value %2 is defined twice (first at t.cpp:1:1)");

  Kernel o = saxpy();
  o.num_values = 5;
  CHECK(verify_error(o).find("is out of range (the kernel has 5 values)") != std::string::npos);
}

TEST_CASE("variables are only read and written through var_load / var_store") {
  Kernel k = body("  %v = var %zero : u32\n"
                  "  %x = add %v, %one : u32\n");
  CHECK(verify_error(k) == "v.ir:9:3: error: add: variable %6 used as a value (read it with var_load)");
}

TEST_CASE("uniformity: sources, propagation, variables, loops") {
  Kernel k = body("  %g = group_id 0 : u32\n"                    // 6 uniform
                  "  %a = add %g, %n : u32\n"                    // 7 uniform
                  "  %b = add %a, %gid : u32\n"                  // 8 varying
                  "  %l = load %y, %a : u32\n"                   // 9 uniform load
                  "  %m = load %y, %gid : u32\n"                 // 10 varying load
                  "  %v = var %zero : u32\n"                     // 11 uniform so far
                  "  %w = var %zero : u32\n"                     // 12 becomes varying
                  "  %i = for %zero, %n, %one : u32 {\n"         // 13 uniform iv
                  "    var_store %v, %i\n"
                  "    %x = var_load %w : u32\n"                 // 14 varying (store below, next iteration)
                  "    var_store %w, %gid\n"
                  "  }\n"
                  "  %j = for %zero, %gid, %one : u32 {\n"       // 15 varying iv
                  "    %c = add %n, %n : u32\n"                  // 16 divergent context
                  "  }\n"
                  "  %at = atomic_add %y, %zero, %one : u32\n"); // 17 varying
  verify(k);
  Uniformity u = analyze_uniformity(k);
  for (ValueId v : {0u, 1u, 2u, 4u, 5u, 6u, 7u, 9u, 11u, 13u}) CHECK_MESSAGE(u.is_uniform(v), v);
  for (ValueId v : {3u, 8u, 10u, 12u, 14u, 15u, 16u, 17u}) CHECK_MESSAGE(!u.is_uniform(v), v);
  const Instr& second_for = k.body.instrs[14];
  REQUIRE(second_for.op == Op::For);
  CHECK(u.is_divergent(&second_for.blocks[0].instrs[0]));
  CHECK_FALSE(u.is_divergent(&second_for));
  CHECK_FALSE(u.is_divergent(&k.body.instrs[13].blocks[0].instrs[0]));
}

TEST_CASE("lint reports suspicious constructs") {
  Kernel k = body("  %u = add %n, %n : u32\n"
                  "  %v = var %zero : u32\n"
                  "  loop {\n"
                  "    break\n"
                  "    barrier\n"
                  "  }\n");
  auto w = lint(k);
  auto has = [&](const std::string& s) {
    for (const std::string& m : w)
      if (m.find(s) != std::string::npos) return true;
    return false;
  };
  CHECK(has("v.ir:8:3: warning: unused result: %6 = add %1, %1 : u32"));
  CHECK(has("v.ir:9:3: warning: variable is never read"));
  CHECK(has("v.ir:12:5: warning: unreachable instruction: barrier"));
}
