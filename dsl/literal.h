// C++ literals inside kernel expressions (`x + 5`, `acc = 0.5f`), and THE rule
// that gives them an IR type. literal_for is the only place literal typing
// and conversion happen; every DSL entry point that accepts a literal
// funnels through it.
//
// The rule. A literal has no IR type of its own; it takes the type of the
// other operand it meets (the element type of a line included: `v * 2` with
// v: f32x4 records const<f32x4>(2)). It is accepted only if that type holds
// it exactly, and never converts between kinds:
//   - an integer literal converts to any integer type whose range holds it,
//     and to a float type only if the float holds it exactly
//     (`h + 2049` with h: f16 is an error: f16 cannot represent 2049);
//   - a float literal converts to float types only (rounding to nearest is
//     fine, overflow is not); against an integer it is an error even when
//     integral-valued (`i + 2.0`): write `2`, or cast explicitly;
//   - bool literals only meet bools; integers never become bools.
// Where no other operand gives a type (`var(0.0f)`, `for_range(0, 10, ...)`,
// `select(c, 1, 2)`), a literal has its natural type: the IR type of its C++
// type (int -> i32, unsigned -> u32, int64_t -> i64, float -> f32,
// double -> f64, bool -> bool).
#pragma once
#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>

#include "ir/ir.h"

namespace kgen::dsl {

template <class T>
concept ArithmeticLiteral = std::is_arithmetic_v<T>;

struct Literal {
  enum class Kind : uint8_t { Bool, Int, UInt, Float };
  Kind kind = Kind::Int;
  int64_t i = 0;   // Bool, Int
  uint64_t u = 0;  // UInt
  double f = 0.0;  // Float
  ir::Type natural;

  template <ArithmeticLiteral T>
  static Literal of(T v) {
    Literal l;
    if constexpr (std::is_same_v<T, bool>) {
      l.kind = Kind::Bool, l.i = v, l.natural = ir::types::Bool;
    } else if constexpr (std::is_floating_point_v<T>) {
      l.kind = Kind::Float, l.f = double(v);
      l.natural = sizeof(T) == 4 ? ir::types::F32 : ir::types::F64;
    } else if constexpr (std::is_signed_v<T>) {
      l.kind = Kind::Int, l.i = int64_t(v);
      l.natural = int_type(sizeof(T), true);
    } else {
      l.kind = Kind::UInt, l.u = uint64_t(v);
      l.natural = int_type(sizeof(T), false);
    }
    return l;
  }
  std::string str() const;  // as the user wrote it, for messages

 private:
  static ir::Type int_type(size_t bytes, bool is_signed);
};

// Records a constant of type `target` holding `lit`, or throws ir::Error at
// `loc` saying why the literal does not fit (see the rule above).
ir::ValueId literal_for(ir::Type target, const Literal& lit, ir::SourceLoc loc);

}  // namespace kgen::dsl
