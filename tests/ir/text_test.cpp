// Printer and parser: exact round trips and parse errors with locations.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "ir/hash.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/ir/sample_kernels.h"

using namespace kgen::ir;
using namespace kgen::ir::testing;

namespace {

// print(parse(print(k))) == print(k), and the parsed kernel is k up to numbering.
Kernel round_trip(const Kernel& k) {
  std::string text = print(k);
  Kernel p = parse_kernel(text, "rt.ir");
  CHECK(print(p) == text);
  CHECK(structurally_equal(k, p));
  CHECK(structural_hash(k) == structural_hash(p));
  return p;
}

std::string parse_error(std::string_view text) {
  try {
    parse_module(text, "bad.ir");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("saxpy prints readably") {
  std::string text = print(saxpy());
  CHECK(text ==
        "kernel saxpy(x: ptr<global, f32> read, y: ptr<global, f32> read_write, a: f32, n: u32) workgroup(256, 1, 1) {\n"
        "  %0 = buffer 0 : ptr<global, f32>\n"
        "  %1 = buffer 1 : ptr<global, f32>\n"
        "  %2 = param 0 : f32\n"
        "  %3 = param 1 : u32\n"
        "  %4 = global_id 0 : u32\n"
        "  %5 = lt %4, %3 : bool\n"
        "  if %5 {\n"
        "    %6 = load %0, %4 : f32\n"
        "    %7 = load %1, %4 : f32\n"
        "    %8 = fma %2, %6, %7 : f32\n"
        "    store %1, %4, %8\n"
        "  }\n"
        "}\n");
  round_trip(saxpy());
}

TEST_CASE("every op, scalar kind and control construct round-trips") {
  Kernel k = kitchen_sink();
  std::string text = print(k);
  // The sample really covers the whole node list.
#define KGEN_X(Name, mnem, ...) CHECK_MESSAGE(text.find(std::string(" ") + mnem) != std::string::npos, mnem);
  KGEN_IR_OPS(KGEN_X)
#undef KGEN_X
  for (const char* ty : {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
                         "f32x4", "ptr<shared, f32>"})
    CHECK_MESSAGE(text.find(std::string(": ") + ty + "\n") != std::string::npos, ty);
  CHECK(text.find("} else {") != std::string::npos);
  CHECK(text.find("unroll 4") != std::string::npos);
  CHECK(text.find("extract %") != std::string::npos);
  round_trip(k);
}

TEST_CASE("tricky constants print exactly and read back bit-exactly") {
  CHECK(format_float(0.1) == "0.1");
  CHECK(format_float(1.0) == "1.0");
  CHECK(format_float(-0.0) == "-0.0");
  CHECK(format_float(1e-45) == "1e-45");
  CHECK(format_float(INFINITY) == "inf");
  CHECK(format_float(-INFINITY) == "-inf");
  CHECK(format_float(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(format_float(std::bit_cast<double>(0xfff0000000000123ull)) == "nan(0xfff0000000000123)");
  CHECK(format_imm(types::U64, Imm{-1, 0}) == "18446744073709551615");
  CHECK(format_imm(types::I64, Imm{INT64_MIN, 0}) == "-9223372036854775808");
  CHECK(format_imm(types::Bool, Imm{1, 0}) == "true");

  Kernel k = round_trip(kitchen_sink());
  // Compare every float immediate's bits, not just the text.
  std::vector<uint64_t> before, after;
  walk(kitchen_sink().body, [&](const Instr& in) {
    if (in.op == Op::Const) before.push_back(in.type.is_float() ? std::bit_cast<uint64_t>(in.imm.f) : uint64_t(in.imm.i));
  });
  walk(k.body, [&](const Instr& in) {
    if (in.op == Op::Const) after.push_back(in.type.is_float() ? std::bit_cast<uint64_t>(in.imm.f) : uint64_t(in.imm.i));
  });
  CHECK(before == after);
  CHECK(before.size() > 20);
}

TEST_CASE("the parser accepts arbitrary ids, comments and renumbers densely") {
  Kernel k = parse_kernel(R"(
// a comment line
kernel "odd name"(out: ptr<global, i32> write, n: i32) workgroup(dynamic) {
  %10 = buffer 0 : ptr<global, i32>    // trailing comment
  %7 = param 0 : i32
  %99 = const 3 : i32
  %3 = add %7, %99 : i32
  %5 = global_id 0 : u32
  store %10, %5, %3
  loop {
    break
  }
}
)",
                          "ids.ir");
  CHECK(k.name == "odd name");
  CHECK(k.num_values == 5);
  CHECK(k.workgroup_size == std::array<uint32_t, 3>{0, 0, 0});
  std::string text = print(k);
  CHECK(text.find("kernel \"odd name\"(out: ptr<global, i32> write, n: i32) workgroup(dynamic) {") == 0);
  CHECK(text.find("%3 = add %1, %2 : i32") != std::string::npos);
  // Parsed instructions point at their text.
  CHECK(k.body.instrs[3].loc.str() == "ids.ir:7:3");
  round_trip(k);
}

TEST_CASE("locations print as comments and are ignored when read back") {
  Kernel k = saxpy();
  std::string with = print(k, {.locations = true});
  CHECK(with.find("%4 = global_id 0 : u32  // t.cpp:1:1") != std::string::npos);
  CHECK(with.find("store %1, %4, %8  // t.cpp:2:1") != std::string::npos);
  CHECK(print(parse_kernel(with)) == print(k));
}

TEST_CASE("modules hold several kernels") {
  std::string text = print(saxpy()) + "\n" + print(kitchen_sink());
  auto ks = parse_module(text, "m.ir");
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].name == "saxpy");
  CHECK(ks[1].name == "sink");
  CHECK_THROWS_WITH_AS(parse_kernel(text, "m.ir"), doctest::Contains("m.ir:16:1: error: unexpected 'kernel' after the kernel"),
                       Error);
  CHECK(parse_module("  // nothing\n").empty());
}

TEST_CASE("parse errors name the file, line and column") {
  const char* head = "kernel k(y: ptr<global, f32> read_write, n: u32) workgroup(64, 1, 1) {\n";
  auto err = [&](const std::string& body) { return parse_error(head + body + "}\n"); };
  CHECK(err("  %0 = frobnicate : f32\n") == "bad.ir:2:8: error: unknown operation 'frobnicate'");
  CHECK(err("  %0 = const 1 : f33\n") == "bad.ir:2:18: error: unknown type 'f33'");
  CHECK(err("  %0 = param 0 : u32\n  %1 = add %0, %7 : u32\n") == "bad.ir:3:16: error: use of undefined value %7");
  CHECK(err("  %0 = param 0 : u32\n  %0 = param 0 : u32\n") == "bad.ir:3:3: error: value %0 is defined twice");
  CHECK(err("  %0 = param 0 : u32\n  %1 = const 1.5 : f32\n  %2 = add %0, %1 : u32\n") ==
        "bad.ir:4:3: error: add: operand types differ: u32 vs f32 (convert one side with cast)");
  CHECK(err("  %0 = param 0 : u32\n  %1 = add %0, %0 : i32\n") ==
        "bad.ir:3:21: error: type annotation i32 does not match the inferred type u32");
  CHECK(err("  %0 = const 300 : u8\n") == "bad.ir:2:3: error: const: literal does not fit in u8");
  CHECK(err("  %0 = const 1x : i32\n") == "bad.ir:2:14: error: bad integer literal '1x'");
  CHECK(err("  %0 = const 99999999999999999999 : i64\n").find("bad.ir:2:14: error: integer literal") == 0);
  CHECK(err("  break\n") == "bad.ir:2:3: error: break outside of a loop");
  CHECK(err("  %0 = param 0 : u32\n  %1 = lt %0, %0 : bool\n  if %1 {\n    %2 = param 0 : u32\n  }\n  %3 = add %2, %2 : u32\n") ==
        "bad.ir:7:12: error: value %2 is used outside the block that defines it");
  CHECK(err("  %0 = param 0 : u32\n  store %0\n") == "bad.ir:3:3: error: store: expects 3 operands, got 1");
  CHECK(err("  param 0 : u32\n") == "bad.ir:2:3: error: the result of param needs a name (%N = ...)");
  CHECK(err("  %0 = barrier\n") == "bad.ir:2:3: error: barrier has no result");
  CHECK(err("  %0 = param 0 : u32 %1\n") == "bad.ir:2:22: error: unexpected '%1' at the end of the instruction");
  CHECK(err("  %0 = buffer 0 : ptr<global, f32>\n  store %0, %0, %0\n").find("bad.ir:3:3: error: store: index must be") == 0);
  CHECK(err("  loop {\n") == "bad.ir:4:1: error: unexpected end of input, expected '}'");
  CHECK(parse_error("kernel k(y: ptr<shared, f32>) workgroup(dynamic) {}") ==
        "bad.ir:1:13: error: buffer parameters must be ptr<global, T>, got ptr<shared, f32>");
  CHECK(parse_error("kernel k() workgroup(1, 2) {}") == "bad.ir:1:26: error: expected ',', found ')'");
  CHECK(parse_error("kernel k() workgroup(dynamic) { $ }") == "bad.ir:1:33: error: unexpected character '$'");
}
