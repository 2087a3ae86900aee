// Type names for kernels written in the DSL. They are plain ir::Type values, so
// element types are ordinary runtime data: a C++ parameter `ir::Type dt` picks
// the dtype of a kernel variant, and `line(f32, 16)` builds a vector type.
#pragma once
#include <cstdint>

#include "ir/ir.h"
#include "ir/type.h"

namespace kgen::dsl {

using ir::Access;
using ir::Type;

inline constexpr Type bool_ = ir::types::Bool;
inline constexpr Type i8 = ir::types::I8;
inline constexpr Type i16 = ir::types::I16;
inline constexpr Type i32 = ir::types::I32;
inline constexpr Type i64 = ir::types::I64;
inline constexpr Type u8 = ir::types::U8;
inline constexpr Type u16 = ir::types::U16;
inline constexpr Type u32 = ir::types::U32;
inline constexpr Type u64 = ir::types::U64;
inline constexpr Type f16 = ir::types::F16;
inline constexpr Type bf16 = ir::types::BF16;
inline constexpr Type f32 = ir::types::F32;
inline constexpr Type f64 = ir::types::F64;

// A vector "line" of `lanes` elements (2, 3, 4, 8 or 16); checked where used.
constexpr Type line(Type elem, int lanes) { return Type(elem.kind, uint8_t(lanes)); }

}  // namespace kgen::dsl
