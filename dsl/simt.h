// The SIMT model: work-item/group indices, workgroup barriers, atomics and
// subgroup operations. Builtins are u32 and recorded fresh at each call (the
// optimizer merges repeats).
#pragma once
#include <source_location>

#include "dsl/memory.h"

namespace kgen::dsl {

using SrcLoc = std::source_location;

Value global_id(int axis = 0, SrcLoc loc = SrcLoc::current());   // group_id * group_size + local_id
Value local_id(int axis = 0, SrcLoc loc = SrcLoc::current());
Value group_id(int axis = 0, SrcLoc loc = SrcLoc::current());
Value num_groups(int axis = 0, SrcLoc loc = SrcLoc::current());
Value group_size(int axis = 0, SrcLoc loc = SrcLoc::current());
Value subgroup_size(SrcLoc loc = SrcLoc::current());
Value subgroup_lane(SrcLoc loc = SrcLoc::current());

// Workgroup barrier (memory and execution). Every work-item of the group must
// reach it: the verifier rejects barriers under divergent control flow.
void barrier(SrcLoc loc = SrcLoc::current());

// Atomic read-modify-write of an element of a buffer or shared array; returns
// the old value. 32/64-bit scalar elements; cas needs integers.
Value atomic_add(const ElemRef& e, const Operand& v);
Value atomic_min(const ElemRef& e, const Operand& v);
Value atomic_max(const ElemRef& e, const Operand& v);
Value atomic_exch(const ElemRef& e, const Operand& v);
Value atomic_cas(const ElemRef& e, const Operand& compare, const Operand& v);
// The same as (array, index, ...), for code that keeps indices separate.
Value atomic_add(const Array& a, const Operand& index, const Operand& v);
Value atomic_min(const Array& a, const Operand& index, const Operand& v);
Value atomic_max(const Array& a, const Operand& index, const Operand& v);
Value atomic_exch(const Array& a, const Operand& index, const Operand& v);
Value atomic_cas(const Array& a, const Operand& index, const Operand& compare, const Operand& v);

// Subgroup operations (a target capability). Reductions return the combined
// value to every lane; shuffle reads x from lane `lane` (u32), broadcast
// does the same with a lane that must be uniform.
Value subgroup_add(const Operand& x);
Value subgroup_min(const Operand& x);
Value subgroup_max(const Operand& x);
Value subgroup_shuffle(const Operand& x, const Operand& lane);
Value subgroup_broadcast(const Operand& x, const Operand& lane);

}  // namespace kgen::dsl
