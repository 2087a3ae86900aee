// ir::byte_bound: the per-byte upper bound that lets codegen lower dot4 of
// small unsigned bytes to a saturating pair multiply. It must never be below
// a byte's true value; where it cannot tell, it says 255.
#include <doctest/doctest.h>

#include "ir/builder.h"
#include "ir/byte_bound.h"

using namespace kgen::ir;

namespace {

const Type U32 = types::U32, U8x16(ScalarKind::U8, 16), U32x4(ScalarKind::U32, 4), I8x16(ScalarKind::I8, 16);

struct Fixture {
  Kernel k;
  Builder b{k};
  ValueId words, bytes;
  Fixture() {
    k.name = "bounds";
    k.buffers = {{"w", U32x4, Access::Read}, {"q", U8x16, Access::Read}, {"s", I8x16, Access::Read}};
    words = b.load(b.buffer(0), b.const_int(U32, 0));
    bytes = b.load(b.buffer(1), b.const_int(U32, 0));
  }
  ValueId splat(Type line, int64_t v) { return b.op(Op::Splat, {b.const_int(line.scalar(), v)}, 0, line); }
  int bound(ValueId v) { return byte_bound(ValueIndex(k), v); }
};

}  // namespace

TEST_CASE("byte_bound: masks bound every byte, loads are unknown") {
  Fixture f;
  CHECK(f.bound(f.words) == 255);
  CHECK(f.bound(f.b.op(Op::And, {f.words, f.splat(U32x4, 0x0f0f0f0f)})) == 15);
  CHECK(f.bound(f.b.op(Op::And, {f.words, f.splat(U32x4, 0x7f3f0f01)})) == 127);
  CHECK(f.bound(f.b.op(Op::And, {f.words, f.splat(U32x4, 0x80)})) == 128);
  // Shifting a u32 moves bits across bytes: unknown until masked again.
  ValueId sh = f.b.op(Op::Shr, {f.words, f.splat(U32x4, 4)});
  CHECK(f.bound(sh) == 255);
  CHECK(f.bound(f.b.op(Op::And, {sh, f.splat(U32x4, 0x0f0f0f0f)})) == 15);
}

TEST_CASE("byte_bound: byte-lane shifts, ors and lane moves") {
  Fixture f;
  ValueId hi = f.b.op(Op::Shr, {f.bytes, f.splat(U8x16, 4)});  // u8 >> 4: at most 15
  CHECK(f.bound(hi) == 15);
  ValueId two = f.b.op(Op::Shl, {f.b.op(Op::And, {f.bytes, f.splat(U8x16, 3)}), f.splat(U8x16, 4)});  // at most 48
  CHECK(f.bound(two) == 48);
  CHECK(f.bound(f.b.op(Op::Or, {hi, two})) == 63);  // Q6_K's 6-bit codes
  CHECK(f.bound(f.b.op(Op::Shl, {hi, f.splat(U8x16, 4)})) == 240);
  CHECK(f.bound(f.b.op(Op::Shl, {f.bytes, f.splat(U8x16, 1)})) == 255);
  // Relabelled or moved bytes keep their bound.
  ValueId w = f.b.op(Op::Bitcast, {hi}, 0, U32x4);
  CHECK(f.bound(w) == 15);
  ValueId lane = f.b.op(Op::Extract, {w}, 2, U32);
  CHECK(f.bound(f.b.op(Op::Construct, {lane, lane, lane, lane}, 0, U32x4)) == 15);
  // Arithmetic shifts fill with the sign: only known for a clear sign bit.
  ValueId s = f.b.load(f.b.buffer(2), f.b.const_int(U32, 0));
  CHECK(f.bound(f.b.op(Op::Shr, {s, f.splat(I8x16, 4)})) == 255);
  ValueId pos = f.b.op(Op::And, {s, f.splat(I8x16, 0x70)});
  CHECK(f.bound(f.b.op(Op::Shr, {pos, f.splat(I8x16, 4)})) == 7);
  // Sums are not tracked.
  CHECK(f.bound(f.b.op(Op::Add, {hi, hi})) == 255);
}

TEST_CASE("bytes_never_min: a max with a constant above -128 on signed bytes, through lane moves") {
  Fixture f;
  ValueId s = f.b.load(f.b.buffer(2), f.b.const_int(Type(ScalarKind::U32), 0));
  auto never = [&](ValueId v) { return bytes_never_min(ValueIndex(f.k), v); };
  CHECK_FALSE(never(s));
  ValueId clamped = f.b.op(Op::Max, {s, f.splat(I8x16, -127)});
  CHECK(never(clamped));
  CHECK(never(f.b.op(Op::Max, {f.splat(I8x16, 5), s})));  // either operand order
  CHECK_FALSE(never(f.b.op(Op::Max, {s, f.splat(I8x16, -128)})));
  CHECK_FALSE(never(f.b.op(Op::Min, {s, f.splat(I8x16, 100)})));
  // Unsigned bytes: a max says nothing of 0x80 (128 is above any small constant).
  CHECK_FALSE(never(f.b.op(Op::Max, {f.bytes, f.splat(U8x16, 1)})));
  // Relabelled and moved lanes keep it; bytes below 128 have it too.
  ValueId w = f.b.op(Op::Bitcast, {clamped}, 0, U32x4);
  CHECK(never(w));
  ValueId lane = f.b.op(Op::Extract, {w}, 1, U32);
  CHECK(never(f.b.op(Op::Construct, {lane, lane, lane, lane}, 0, U32x4)));
  CHECK_FALSE(never(f.b.op(Op::Construct, {lane, f.b.op(Op::Extract, {f.words}, 0, U32), lane, lane}, 0, U32x4)));
  CHECK(never(f.b.op(Op::And, {f.words, f.splat(U32x4, 0x7f7f7f7f)})));
  CHECK(never(f.splat(U32x4, 0x7f01ff00)));
  CHECK_FALSE(never(f.splat(U32x4, 0x00800000)));
}
