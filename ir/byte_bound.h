// A conservative upper bound on every byte of an integer value's bits, found
// by looking at how the value was computed (masks, shifts of byte lanes,
// ors, lane moves). Codegen uses it where a faster instruction is exact only
// for small bytes: x86's vpmaddubsw saturates its 16-bit pair sums, which no
// u8·i8 pair can reach when the unsigned bytes are below 128, so dot4 of
// masked nibble codes lowers to it without changing what dot4 means.
#pragma once
#include "ir/ir.h"

namespace kgen::ir {

// 255 when nothing is known; never below the true value of any byte.
int byte_bound(const ValueIndex& index, ValueId v);

// True only when no byte of v can be 0x80 (-128 as a signed byte): then
// |b| <= 127 for every byte and x86's sign trick for signed·signed bytes
// (vpsignb moves the other operand's sign onto it, vpabsb makes the other
// unsigned, vpmaddubsw) cannot hit -(-128) nor saturate (2·128·127 < 2^15).
// Proven by a max with a constant >= -127 on signed byte lanes, bytes below
// 128 (byte_bound), or constants, through lane moves and relabelling.
bool bytes_never_min(const ValueIndex& index, ValueId v);

}  // namespace kgen::ir
