// The expressions of fused elementwise chains (ops/elementwise/fusion.h): an
// immutable DAG whose every node computes in one scalar kind, known when the
// node is built. The kinds a node computes in: bool, the integer kinds, f32
// and f64; f16 and bf16 are storage only (an f16 input computes in f32).
//
// Kind rules (numpy's for operands of one kind, ONNX's ops):
//   - an op's operands must have one kind; f32 meeting f64 computes in f64
//     (the f32 side is cast), any other mix is refused: cast explicitly;
//   - an untyped literal, lit(v), takes the kind of the operands it meets
//     (it must be exact there: lit(0.5) cannot meet an integer); alone, or
//     among untyped literals only, it is f32;
//   - integer nodes wrap as C++ arithmetic on that type does (u8 255 + 1 is
//     0), whatever width the target computes them in;
//   - comparisons yield bool; and/or/xor/not are logical on bool, bitwise on
//     integers.
// Builders for the ops themselves: ops/elementwise/expr_ops.h, compositions:
// expr_math.h and activations.h. A misused builder throws std::invalid_argument.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/ir.h"

namespace kgen::ops::fusion {

struct Node;
// An immutable expression handle (shared subexpressions are evaluated once).
struct Expr {
  std::shared_ptr<const Node> node;
  // The kind the expression computes in: bool, an integer kind, f32 or f64.
  ir::ScalarKind kind() const;
};

struct Node {
  // Cast: C's conversion (float -> int truncates toward zero, saturating,
  // NaN -> 0; int -> int wraps; to bool: != 0). SaturateCast: to an integer
  // kind, the value rounded half to even and clamped to the kind's range
  // (QuantizeLinear); elsewhere as Cast.
  enum class Kind { Input, Const, Op, Round, Cast, SaturateCast } kind = Kind::Const;
  int input = -1;                    // Input: index into Chain::inputs
  double value = 0;                  // Const: the value (integers: see ivalue)
  int64_t ivalue = 0;                // Const of bool or an integer kind: the value (u64: its bits)
  ir::Op op = ir::Op::Add;           // Op: the IR op (integer Div/Rem/Shl/Shr/Pow as expr_ops.h defines them)
  ir::ScalarKind to = ir::ScalarKind::F32;    // Round: round through this type; Cast, SaturateCast: the target
  ir::ScalarKind type = ir::ScalarKind::F32;  // the result's kind
  bool weak = false;                 // an untyped literal (or an op of only those): takes its operands' kind
  std::vector<Expr> args;
};

inline ir::ScalarKind Expr::kind() const { return node->type; }

// The kind an element of storage type k computes in: f32 for f16 and bf16, else k.
ir::ScalarKind compute_kind(ir::ScalarKind k);
bool is_float_kind(ir::ScalarKind k);  // f16, bf16, f32, f64
bool is_int_kind(ir::ScalarKind k);    // i8 .. u64

// Input `input` read as f32 (its dtype must be f32, f16 or bf16).
Expr in(int input);
// Input `input` of storage type `dtype`, computing in compute_kind(dtype).
Expr in(int input, ir::ScalarKind dtype);
// An untyped literal (see the kind rules above).
Expr lit(double v);
// A literal of kind k: exact for bool and integers (|v| < 2^53), rounded for
// floats (f16/bf16: rounded there, computing in f32).
Expr lit(double v, ir::ScalarKind k);
// An integer literal of integer kind k, the whole 64-bit range (u64: v's bits).
Expr int_lit(int64_t v, ir::ScalarKind k);
// An IR op on 1, 2 or 3 operands: Neg Abs Not Exp Exp2 Log Log2 Sqrt Rsqrt
// Sin Cos Tanh Erf Floor Ceil Round Trunc | Add Sub Mul Div Rem Min Max Pow
// And Or Xor Shl Shr | Lt Le Gt Ge Eq Ne (yield bool) | Fma Select
// (Select's first operand: a bool).
Expr apply(ir::Op op, std::vector<Expr> args);
// Rounds the float value through `to` (f32, f16 or bf16) and back: a cast in
// the middle of a chain that keeps the node's kind.
Expr round_to(ir::ScalarKind to, Expr a);
// Converts to `to` (Node::Kind::Cast); to f16/bf16 the value is rounded there
// and computes on in f32.
Expr cast(ir::ScalarKind to, Expr a);
// Node::Kind::SaturateCast: to an integer kind, round half to even and clamp
// (NaN -> 0); otherwise cast.
Expr saturate_cast(ir::ScalarKind to, Expr a);

}  // namespace kgen::ops::fusion
