#include <doctest/doctest.h>

#include "ir/builder.h"
#include "ir/half.h"

using namespace kgen::ir;

TEST_CASE("types print and parse") {
  for (const char* s : {"f32", "u8x16", "bf16x4", "ptr<global, f32x4>", "ptr<shared, i32>", "bool", "f64x2"}) {
    auto t = parse_type(s);
    REQUIRE(t.has_value());
    CHECK(t->str() == s);
  }
  CHECK_FALSE(parse_type("f33").has_value());
  CHECK_FALSE(parse_type("f32x5").has_value());
  CHECK(Type(ScalarKind::F16, 8).bytes() == 16);
}

TEST_CASE("builder infers types and rejects mismatches with the location") {
  Kernel k;
  k.name = "t";
  k.buffers = {{"x", types::F32, Access::Read}, {"y", types::F32, Access::ReadWrite}};
  k.scalars = {{"n", types::U32}};
  Builder b(k);
  b.loc = SourceLoc{intern_file("user.cpp"), 42, 7};
  ValueId x = b.buffer(0), y = b.buffer(1);
  ValueId i = b.builtin(Op::GlobalId, 0);
  ValueId v = b.load(x, i);
  CHECK(b.type_of(v) == types::F32);
  ValueId two = b.const_float(types::F32, 2.0);
  ValueId p = b.op(Op::Mul, {v, two});
  b.store(y, i, p);
  CHECK_THROWS_WITH_AS(b.op(Op::Add, {v, i}), doctest::Contains("user.cpp:42:7: error: add: operand types differ"), Error);
  CHECK_THROWS_WITH_AS(b.store(x, i, p), doctest::Contains("read-only buffer 'x'"), Error);
  CHECK_THROWS_WITH_AS(b.const_int(types::U8, 300), doctest::Contains("does not fit in u8"), Error);
  CHECK_THROWS_AS(b.break_(), Error);
}

TEST_CASE("values go out of scope with their block") {
  Kernel k;
  k.scalars = {{"n", types::I32}};
  Builder b(k);
  ValueId zero = b.const_int(types::I32, 0), one = b.const_int(types::I32, 1);
  ValueId n = b.param(0);
  ValueId iv = b.begin_for(zero, n, one);
  ValueId inner = b.op(Op::Add, {iv, one});
  b.end_for();
  CHECK_THROWS_WITH_AS(b.op(Op::Add, {inner, one}), doctest::Contains("not defined here"), Error);
}

TEST_CASE("half and bfloat16 conversions round to nearest even") {
  CHECK(f16_to_f32(f32_to_f16(1.0f)) == 1.0f);
  CHECK(f32_to_f16(65504.0f) == 0x7bff);
  CHECK(f32_to_f16(1e6f) == 0x7c00);
  CHECK(f16_to_f32(0x0001) == doctest::Approx(5.960464477539063e-08));
  CHECK(f32_to_f16(5.960464477539063e-08f) == 0x0001);
  CHECK(f32_to_f16(1.0f + 1.0f / 2048.0f) == 0x3c00);  // tie -> even
  CHECK(bf16_to_f32(f32_to_bf16(3.0f)) == 3.0f);
  CHECK(f32_to_bf16(1.0f + 1.0f / 256.0f) == 0x3f80);  // tie -> even
}

TEST_CASE("dot2_bf16 types: u32 operands of one width and an f32 accumulator") {
  Kernel k;
  Builder b(k);
  ValueId u = b.const_int(types::U32, 0x3f803f80), f = b.const_float(types::F32, 1.0), s = b.const_int(types::I32, 1);
  CHECK(b.type_of(b.op(Op::Dot2Bf16, {u, u, f})) == types::F32);
  ValueId ul = b.const_int(Type(ScalarKind::U32, 16), 3), fl = b.const_float(Type(ScalarKind::F32, 16), 0.0);
  CHECK(b.type_of(b.op(Op::Dot2Bf16, {ul, ul, fl})) == Type(ScalarKind::F32, 16));
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2Bf16, {s, u, f}), doctest::Contains("two u32 operands"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2Bf16, {u, u, s}), doctest::Contains("f32 accumulator"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2Bf16, {ul, ul, f}), doctest::Contains("one width"), Error);
}

TEST_CASE("dot2_i16 types: i32 operands and accumulator of one width") {
  Kernel k;
  Builder b(k);
  ValueId s = b.const_int(types::I32, 0x00030002), c = b.const_int(types::I32, 7), u = b.const_int(types::U32, 1);
  CHECK(b.type_of(b.op(Op::Dot2I16, {s, s, c})) == types::I32);
  ValueId sl = b.const_int(Type(ScalarKind::I32, 16), 3);
  CHECK(b.type_of(b.op(Op::Dot2I16, {sl, sl, sl})) == Type(ScalarKind::I32, 16));
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2I16, {u, s, c}), doctest::Contains("i32 operands"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2I16, {sl, s, c}), doctest::Contains("one width"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot2I16, {s, s, u}), doctest::Contains("i32 accumulator"), Error);
}

TEST_CASE("dot4 types: packed i32/u32 operands of one width and an i32 accumulator") {
  Kernel k;
  Builder b(k);
  ValueId u = b.const_int(types::U32, 0x01020304), s = b.const_int(types::I32, -5), c = b.const_int(types::I32, 7);
  CHECK(b.type_of(b.op(Op::Dot4, {u, s, c})) == types::I32);
  CHECK(b.type_of(b.op(Op::Dot4, {s, s, c})) == types::I32);
  ValueId ul = b.const_int(Type(ScalarKind::U32, 16), 3), cl = b.const_int(Type(ScalarKind::I32, 16), 0);
  CHECK(b.type_of(b.op(Op::Dot4, {ul, ul, cl})) == Type(ScalarKind::I32, 16));
  ValueId f = b.const_float(types::F32, 1.0), uc = b.const_int(types::U32, 1);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot4, {f, u, c}), doctest::Contains("must be i32 or u32"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot4, {u, u, uc}), doctest::Contains("i32 accumulator"), Error);
  CHECK_THROWS_WITH_AS(b.op(Op::Dot4, {ul, u, cl}), doctest::Contains("one width"), Error);
}
