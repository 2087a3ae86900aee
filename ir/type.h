// Scalar, vector ("line") and pointer types of the kgen IR.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kgen::ir {

// Every scalar kind, declared once: (Enum, text name, byte size, is_int, is_signed, is_float)
#define KGEN_SCALAR_KINDS(X)            \
  X(Bool, "bool", 1, false, false, false) \
  X(I8, "i8", 1, true, true, false)       \
  X(I16, "i16", 2, true, true, false)     \
  X(I32, "i32", 4, true, true, false)     \
  X(I64, "i64", 8, true, true, false)     \
  X(U8, "u8", 1, true, false, false)      \
  X(U16, "u16", 2, true, false, false)    \
  X(U32, "u32", 4, true, false, false)    \
  X(U64, "u64", 8, true, false, false)    \
  X(F16, "f16", 2, false, true, true)     \
  X(BF16, "bf16", 2, false, true, true)   \
  X(F32, "f32", 4, false, true, true)     \
  X(F64, "f64", 8, false, true, true)

enum class ScalarKind : uint8_t {
#define KGEN_X(e, ...) e,
  KGEN_SCALAR_KINDS(KGEN_X)
#undef KGEN_X
      Void,
};

// Where a pointer points. Values of pointer type only come from buffer
// parameters and shared allocations; there is no pointer arithmetic.
enum class AddrSpace : uint8_t { None, Global, Shared };

// A type: scalar kind x lanes (1 = scalar, 2..16 = a vector "line"),
// optionally a pointer to such elements in an address space.
struct Type {
  ScalarKind kind = ScalarKind::Void;
  uint8_t lanes = 1;
  AddrSpace space = AddrSpace::None;

  constexpr Type() = default;
  constexpr Type(ScalarKind k, uint8_t l = 1, AddrSpace s = AddrSpace::None) : kind(k), lanes(l), space(s) {}

  bool is_void() const { return kind == ScalarKind::Void; }
  bool is_pointer() const { return space != AddrSpace::None; }
  bool is_vector() const { return lanes > 1; }
  bool is_bool() const { return !is_pointer() && kind == ScalarKind::Bool; }
  bool is_int() const;    // any integer kind (not bool), value type
  bool is_signed() const;
  bool is_float() const;  // f16, bf16, f32, f64
  bool is_numeric() const { return is_int() || is_float(); }

  Type element() const { return Type(kind, lanes); }  // pointee for pointers
  Type scalar() const { return Type(kind, 1); }       // lane type
  Type with_lanes(int l) const { return Type(kind, uint8_t(l), space); }
  Type pointer_to(AddrSpace s) const { return Type(kind, lanes, s); }
  int bits() const { return scalar_bytes() * 8; }
  int scalar_bytes() const;
  int bytes() const { return scalar_bytes() * lanes; }  // of the value (pointee for pointers)

  bool operator==(const Type&) const = default;
  std::string str() const;  // "f32", "f32x4", "ptr<global, f32x4>"
};

std::string_view scalar_name(ScalarKind k);
std::optional<ScalarKind> parse_scalar_kind(std::string_view s);
// Parses "f32", "u8x16", "ptr<global, f32>", "void".
std::optional<Type> parse_type(std::string_view s);

namespace types {
#define KGEN_X(e, name, ...) inline constexpr Type e{ScalarKind::e};
KGEN_SCALAR_KINDS(KGEN_X)
#undef KGEN_X
inline constexpr Type Void{};
}  // namespace types

constexpr int kMaxLanes = 16;
inline bool valid_lanes(int l) { return l == 1 || l == 2 || l == 3 || l == 4 || l == 8 || l == 16; }

}  // namespace kgen::ir
