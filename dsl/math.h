// Math builtins and conversions. Function-style: the user's location comes in
// with the first operand (Operand), literals adopt the other operands' type.
#pragma once
#include "dsl/value.h"

namespace kgen::dsl {

// Elementwise on scalars and lines. floor..erf need float types; abs accepts
// integers too. round rounds ties to even.
Value abs(const Operand& x);
Value floor(const Operand& x);
Value ceil(const Operand& x);
Value round(const Operand& x);
Value trunc(const Operand& x);
Value sqrt(const Operand& x);
Value rsqrt(const Operand& x);
Value exp(const Operand& x);
Value exp2(const Operand& x);
Value log(const Operand& x);
Value log2(const Operand& x);
Value sin(const Operand& x);
Value cos(const Operand& x);
Value tanh(const Operand& x);
Value erf(const Operand& x);

Value min(const Operand& a, const Operand& b);
Value max(const Operand& a, const Operand& b);
Value pow(const Operand& a, const Operand& b);
Value fma(const Operand& a, const Operand& b, const Operand& c);  // a*b+c, one rounding
// c + Σ_{j<4} byte_j(a)·byte_j(b) per 32-bit lane: a, b i32 (signed bytes) or
// u32 (unsigned) lines or scalars, c i32 of the same width (ir/ops.h dot4).
// Literal operands take i32 (c) or the other packed operand's type.
Value dot4(const Operand& a, const Operand& b, const Operand& c);
// c + a.1·b.1 + a.0·b.0 per 32-bit lane, where a and b are u32 lines (or
// scalars) each lane holding two bf16 (element 0 in the low half) and c is
// f32 of the same width (ir/ops.h dot2_bf16: one vdpbf16ps per f32x16 line
// on AVX512-BF16 hosts, lane arithmetic elsewhere).
Value dot2_bf16(const Operand& a, const Operand& b, const Operand& c);
// c + a.0·b.0 + a.1·b.1 per 32-bit lane, where a and b are i32 lines (or
// scalars) each lane holding two signed 16-bit halves (element 0 the low
// one) and c is i32 of the same width, wrapping (ir/ops.h dot2_i16: one
// vpdpwssd per i32x16 line on AVX512-VNNI hosts, vpmaddwd and an add on
// AVX2). Literal operands take the other operand's type.
Value dot2_i16(const Operand& a, const Operand& b, const Operand& c);
// Byte i of the result (idx's type) is byte idx.byte(i) mod 2·bytes(a) of the
// table a ++ b (a, b one type of 4-64 bytes; ir/ops.h permute_bytes). A
// constant idx (make_line of literals) is one shuffle on the CPU (vpermi2b).
// CPU targets only.
Value permute_bytes(const Operand& a, const Operand& b, const Operand& idx);

// c ? a : b, evaluating both (a per-lane choice with a bool line `c`).
Value select(const Operand& c, const Operand& a, const Operand& b);

// Numeric conversion (lanes preserved): cast(f16, x) or cast<f16>(x).
Value cast(ir::Type to, const Operand& x);
template <ir::Type To>
Value cast(const Operand& x) {
  return cast(To, x);
}
// Reinterprets the bits; sizes must match (bitcast(u32, f) for f: f32).
Value bitcast(ir::Type to, const Operand& x);
template <ir::Type To>
Value bitcast(const Operand& x) {
  return bitcast(To, x);
}

// A constant of type t (literal rules apply): constant(f16, 0.5).
Value constant(ir::Type t, const Operand& lit);

}  // namespace kgen::dsl
