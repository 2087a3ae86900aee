// The kgen IR node list, declared once. The Op enum, mnemonics, operation
// classes and domains are derived here; the printer, parser, structural hash,
// verifier, interpreter and emitters all dispatch through these lists, so a
// new operation is one line here plus (for math) one semantic function and one
// entry per codegen dialect table.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace kgen::ir {

// X(Name, mnemonic, Class, Domain)
//   Class:  how operands/results are shaped (see OpClass)
//   Domain: which element kinds a math operation accepts (see Domain)
#define KGEN_UNARY_OPS(X)                 \
  X(Neg, "neg", Unary, Numeric)           \
  X(Not, "not", Unary, Bits)              \
  X(Abs, "abs", Unary, Numeric)           \
  X(Floor, "floor", Unary, Float)         \
  X(Ceil, "ceil", Unary, Float)           \
  X(Round, "round", Unary, Float) /* ties to even */ \
  X(Trunc, "trunc", Unary, Float)         \
  X(Sqrt, "sqrt", Unary, Float)           \
  X(Rsqrt, "rsqrt", Unary, Float)         \
  X(Exp, "exp", Unary, Float)             \
  X(Exp2, "exp2", Unary, Float)           \
  X(Log, "log", Unary, Float)             \
  X(Log2, "log2", Unary, Float)           \
  X(Sin, "sin", Unary, Float)             \
  X(Cos, "cos", Unary, Float)             \
  X(Tanh, "tanh", Unary, Float)           \
  X(Erf, "erf", Unary, Float)

#define KGEN_BINARY_OPS(X)                \
  X(Add, "add", Binary, Numeric)          \
  X(Sub, "sub", Binary, Numeric)          \
  X(Mul, "mul", Binary, Numeric)          \
  X(Div, "div", Binary, Numeric)          \
  X(Rem, "rem", Binary, Numeric)          \
  X(And, "and", Binary, Bits)             \
  X(Or, "or", Binary, Bits)               \
  X(Xor, "xor", Binary, Bits)             \
  X(Shl, "shl", Binary, Int)              \
  X(Shr, "shr", Binary, Int)              \
  X(Min, "min", Binary, Numeric)          \
  X(Max, "max", Binary, Numeric)          \
  X(Pow, "pow", Binary, Float)

#define KGEN_COMPARE_OPS(X)               \
  X(Eq, "eq", Compare, Any)               \
  X(Ne, "ne", Compare, Any)               \
  X(Lt, "lt", Compare, Numeric)           \
  X(Le, "le", Compare, Numeric)           \
  X(Gt, "gt", Compare, Numeric)           \
  X(Ge, "ge", Compare, Numeric)

// Horizontal reductions of a vector line to its lane type.
#define KGEN_REDUCE_OPS(X)                          \
  X(ReduceAdd, "reduce_add", Reduce, Numeric)       \
  X(ReduceMul, "reduce_mul", Reduce, Numeric)       \
  X(ReduceMin, "reduce_min", Reduce, Numeric)       \
  X(ReduceMax, "reduce_max", Reduce, Numeric)

// (ptr, index, value) -> old value; AtomicCas is (ptr, index, compare, value).
#define KGEN_ATOMIC_OPS(X)                          \
  X(AtomicAdd, "atomic_add", Atomic, Numeric)       \
  X(AtomicMin, "atomic_min", Atomic, Numeric)       \
  X(AtomicMax, "atomic_max", Atomic, Numeric)       \
  X(AtomicExch, "atomic_exch", Atomic, Numeric)     \
  X(AtomicCas, "atomic_cas", Atomic, Int)

// Reductions across the lanes of a subgroup (an optional target capability).
#define KGEN_SUBGROUP_REDUCE_OPS(X)                       \
  X(SubgroupAdd, "subgroup_add", SubgroupReduce, Numeric) \
  X(SubgroupMin, "subgroup_min", SubgroupReduce, Numeric) \
  X(SubgroupMax, "subgroup_max", SubgroupReduce, Numeric)

// SIMT builtins; all u32 with an axis attribute (0..2) except subgroup ones.
#define KGEN_BUILTIN_OPS(X)                            \
  X(GlobalId, "global_id", Builtin, Any)               \
  X(LocalId, "local_id", Builtin, Any)                 \
  X(GroupId, "group_id", Builtin, Any)                 \
  X(NumGroups, "num_groups", Builtin, Any)             \
  X(GroupSize, "group_size", Builtin, Any)             \
  X(SubgroupSize, "subgroup_size", Builtin, Any)       \
  X(SubgroupLane, "subgroup_lane", Builtin, Any)

#define KGEN_IR_OPS(X)                                  \
  X(Const, "const", Leaf, Any)                          \
  X(Param, "param", Leaf, Any)                          \
  X(Buffer, "buffer", Leaf, Any)                        \
  X(SharedAlloc, "shared", Leaf, Any)                   \
  KGEN_BUILTIN_OPS(X)                                   \
  KGEN_UNARY_OPS(X)                                     \
  KGEN_BINARY_OPS(X)                                    \
  KGEN_COMPARE_OPS(X)                                   \
  X(Select, "select", Select, Any)                      \
  X(Fma, "fma", Fma, Float)                             \
  X(Dot4, "dot4", Dot, Int) /* c + Σ bytes(a)·bytes(b) */ \
  X(Dot2Bf16, "dot2_bf16", Dot, Any) /* c + Σ bf16 halves(a)·halves(b) */ \
  X(Dot2I16, "dot2_i16", Dot, Int) /* c + Σ i16 halves(a)·halves(b) */ \
  X(PermuteBytes, "permute_bytes", Permute, Any) /* bytes of a ++ b picked by idx's bytes */ \
  X(TileMmaBf16, "tile_mma_bf16", Tile, Any) /* C block += A rows · B pair rows (AMX) */ \
  X(Cast, "cast", Convert, Any)                         \
  X(Bitcast, "bitcast", Convert, Any)                   \
  X(Splat, "splat", Vector, Any)                        \
  X(Construct, "construct", Vector, Any)                \
  X(Extract, "extract", Vector, Any)                    \
  X(Insert, "insert", Vector, Any)                      \
  KGEN_REDUCE_OPS(X)                                    \
  X(Load, "load", Memory, Any)                          \
  X(Store, "store", Memory, Any)                        \
  X(Prefetch, "prefetch", Memory, Any) /* a hint: no effect, never faults */ \
  KGEN_ATOMIC_OPS(X)                                    \
  X(Barrier, "barrier", Sync, Any)                      \
  X(SubgroupShuffle, "subgroup_shuffle", Subgroup, Any) \
  X(SubgroupBroadcast, "subgroup_broadcast", Subgroup, Any) \
  KGEN_SUBGROUP_REDUCE_OPS(X)                           \
  X(Var, "var", Local, Any)                             \
  X(VarLoad, "var_load", Local, Any)                    \
  X(VarStore, "var_store", Local, Any)                  \
  X(For, "for", Control, Any)                           \
  X(If, "if", Control, Any)                             \
  X(Loop, "loop", Control, Any)                         \
  X(Break, "break", Control, Any)                       \
  X(Continue, "continue", Control, Any)                 \
  X(Return, "return", Control, Any)

enum class Op : uint16_t {
#define KGEN_X(name, ...) name,
  KGEN_IR_OPS(KGEN_X)
#undef KGEN_X
      NumOps
};

enum class OpClass : uint8_t {
  Leaf, Builtin, Unary, Binary, Compare, Select, Fma, Convert, Vector, Reduce,
  Memory, Atomic, Sync, Subgroup, SubgroupReduce, Local, Control,
  // dot4(a, b, c): per 32-bit lane, c + Σ_{j<4} byte_j(a)·byte_j(b), the
  // bytes signed where the operand is i32, unsigned where u32; c and the
  // result are i32, wrapping (x86 vpdpbusd, CUDA dp4a, SPIR-V OpSDot).
  // dot2_bf16(a, b, c): per 32-bit lane of u32 a and b, each holding two
  // bf16 (element 0 in the low half), and f32 c: c + a.1·b.1, rounded, then
  // + a.0·b.0, rounded; the products are exact (x86 vdpbf16ps, whose order
  // this is). Subnormal inputs and results may be flushed to zero.
  // dot2_i16(a, b, c): per 32-bit lane of i32 a and b, each holding two
  // signed 16-bit halves (element 0 in the low half), and i32 c: c + a.0·b.0
  // + a.1·b.1, wrapping (x86 vpdpwssd; vpmaddwd and an add elsewhere).
  Dot,
  // permute_bytes(a, b, idx): a table of the bytes of a then b (a and b of
  // one type, 4 to 64 bytes, a power of two); the result has idx's type (an
  // integer line or scalar) and its byte i is table byte idx.byte(i) mod the
  // table's size (x86 vpermi2b; a CPU target capability).
  Permute,
  // tile_mma_bf16(c, ci, a, ai, b, bi, m, n, kp, ldc, lda, ldb), a statement
  // over three buffers: for i < m, j < n (each 1..32),
  //   C[ci + i·ldc + j] = (attr ? C[ci + i·ldc + j] : 0)
  //                       + Σ_{p < kp} dot2_bf16(A pair (i, p), B[bi + p·ldb + j])
  // where A pair (i, p) is the bf16 elements ai + i·lda + 2p (low half) and
  // + 2p + 1, B holds u32 words of bf16 pairs (the k-pair-interleaved layout)
  // and C is f32; each pair's sum rounds as dot2_bf16 does, p in order.
  // Indices are u64, sizes and strides u32. A 32×32 block of C over all of
  // K is the unit a matrix engine (x86 AMX: 2×2 tiles of 16×16) keeps in its
  // tile registers; a CPU target capability (TargetCaps::matrix_tiles).
  Tile
};

// Element kinds a math op accepts. Numeric: ints and floats. Float: floats.
// Int: ints. Bits: ints and bool. Any: no restriction from the domain.
enum class Domain : uint8_t { Any, Numeric, Float, Int, Bits };

struct OpInfo {
  std::string_view mnemonic;
  OpClass cls;
  Domain domain;
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).mnemonic; }
inline OpClass op_class(Op op) { return op_info(op).cls; }
std::optional<Op> parse_op(std::string_view mnemonic);

// True for ops whose execution has an effect beyond producing their value
// (memory writes, atomics, barriers, variable stores, control flow). Such
// instructions are never removed or merged by CSE/DCE.
bool has_side_effects(Op op);
// True for ops whose result can change between two executions with equal
// operands (loads, atomics, variable loads, subgroup ops): not CSE-able.
bool reads_state(Op op);
// Number of nested blocks an instruction of this op owns (For/Loop 1, If 2).
int num_blocks(Op op);

}  // namespace kgen::ir
