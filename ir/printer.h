// The textual form of the IR. One instruction per line, nested blocks in
// braces, types after a colon:
//
//   kernel saxpy(x: ptr<global, f32> read, y: ptr<global, f32> read_write, a: f32, n: u32) workgroup(256, 1, 1) {
//     %0 = buffer 0 : ptr<global, f32>
//     %3 = global_id 0 : u32
//     %5 = lt %3, %4 : bool
//     if %5 {
//       store %1, %3, %8
//     }
//     %9 = for %6, %4, %7 unroll 4 : u32 {
//     }
//     %12 = const 1.5 : f32
//   }
//
// Buffer parameters are printed before scalar parameters (their index spaces
// are separate). The printer and parser (parser.h) agree on every detail so
// that print(parse(print(k))) == print(k) and the parsed kernel is
// structurally equal to k.
#pragma once
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace kgen::ir {

struct PrintOptions {
  bool locations = false;  // append "// file:line:col" to instructions with a known loc
  int indent = 2;          // spaces per nesting level
};

std::string print(const Kernel& k, const PrintOptions& opts = {});
// One instruction, nested blocks included, without leading indentation.
std::string print(const Instr& in, const PrintOptions& opts = {});
// The instruction's own line only ("%5 = add %3, %4 : f32", "if %5"), for
// diagnostics.
std::string print_line(const Instr& in);

// Where an op's integer attribute appears in the text. Derived from the op's
// class so that new ops get a spelling without touching the printer.
enum class AttrSyntax : uint8_t {
  Leading,  // right after the mnemonic: "buffer 0", "global_id 1", "shared 256"
  Lane,     // after the operands: "extract %4 lane 2"
  Unroll,   // after the operands, only when nonzero: "for %1, %2, %3 unroll 4"
  Generic,  // not meaningful for the op; printed as "attr N" only when nonzero
  Hint,     // a Store's hint (ir.h StoreHint), a keyword after the operands
            // only when set: "store %1, %2, %3 nontemporal"
};
AttrSyntax attr_syntax(Op op);

// Literal spellings of Const immediates. Floats print the shortest decimal
// that reads back to the same double; "inf", "-inf", "nan" (the default quiet
// NaN) and "nan(0x<64-bit pattern>)" for any other NaN. u64 prints unsigned,
// bool as true/false.
std::string format_float(double v);
std::string format_imm(Type t, const Imm& v);

// True for names that print without quotes ([A-Za-z_][A-Za-z0-9_.]*).
bool is_identifier(std::string_view s);
std::string quote_name(std::string_view s);  // identifier as-is, else "..."

}  // namespace kgen::ir
