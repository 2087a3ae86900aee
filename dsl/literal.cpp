#include "dsl/literal.h"

#include <cmath>
#include <sstream>

#include "dsl/context.h"
#include "ir/half.h"
#include "ir/typing.h"

namespace kgen::dsl {

namespace {

// True when the float type `t` holds the integer value `v` exactly.
bool float_holds_exactly(ir::ScalarKind k, long double v) {
  double d = double(v);
  if ((long double)d != v) return false;  // beyond 2^53 and not representable
  switch (k) {
    case ir::ScalarKind::F64: return true;
    case ir::ScalarKind::F32: return std::isfinite(float(d)) && double(float(d)) == d;
    case ir::ScalarKind::F16: return std::fabs(d) <= 65504.0 && double(ir::round_f16(float(d))) == d;
    case ir::ScalarKind::BF16: return std::isfinite(float(d)) && double(ir::round_bf16(float(d))) == d;
    default: return false;
  }
}

bool int_holds(ir::Type t, const Literal& l) {
  if (l.kind == Literal::Kind::UInt) {
    if (t.kind == ir::ScalarKind::U64) return true;
    if (l.u > uint64_t(INT64_MAX)) return false;
    return ir::imm_fits(t, ir::Imm{int64_t(l.u), 0});
  }
  if (l.i < 0 && !t.is_signed()) return false;  // imm_fits accepts any u64 bit pattern
  return ir::imm_fits(t, ir::Imm{l.i, 0});
}

}  // namespace

ir::Type Literal::int_type(size_t bytes, bool is_signed) {
  using K = ir::ScalarKind;
  switch (bytes) {
    case 1: return is_signed ? K::I8 : K::U8;
    case 2: return is_signed ? K::I16 : K::U16;
    case 4: return is_signed ? K::I32 : K::U32;
    default: return is_signed ? K::I64 : K::U64;
  }
}

std::string Literal::str() const {
  switch (kind) {
    case Kind::Bool: return i ? "true" : "false";
    case Kind::Int: return std::to_string(i);
    case Kind::UInt: return std::to_string(u);
    case Kind::Float: {
      std::ostringstream os;
      os.precision(17);
      os << f;
      return os.str();
    }
  }
  return "?";
}

ir::ValueId literal_for(ir::Type target, const Literal& lit, ir::SourceLoc loc) {
  auto fail = [&](const std::string& why) -> ir::ValueId {
    throw ir::Error(loc, "literal " + lit.str() + " " + why);
  };
  if (target.is_pointer() || target.is_void()) return fail("cannot be used as " + target.str());
  const ir::Type s = target.scalar();
  ir::Imm imm;
  switch (lit.kind) {
    case Literal::Kind::Bool:
      if (!s.is_bool()) return fail("is a bool and cannot be used as " + target.str());
      imm = {lit.i, double(lit.i)};
      break;
    case Literal::Kind::Int:
    case Literal::Kind::UInt: {
      const bool u = lit.kind == Literal::Kind::UInt;
      if (s.is_bool()) return fail("cannot be used as bool (write true or false)");
      if (s.is_int()) {
        if (!int_holds(s, lit)) return fail("is not representable as " + target.str());
        imm = u ? ir::Imm{int64_t(lit.u), double(lit.u)} : ir::Imm{lit.i, double(lit.i)};
      } else {
        long double v = u ? (long double)lit.u : (long double)lit.i;
        if (!float_holds_exactly(s.kind, v)) return fail("is not exactly representable as " + target.str());
        imm = {0, double(v)};
        imm.i = int64_t(imm.f);  // same payload as Builder::const_float
      }
      break;
    }
    case Literal::Kind::Float:
      if (!s.is_float())
        return fail("is not representable as " + target.str() +
                    " (float literals only convert to float types; write an integer literal or cast)");
      if (!ir::imm_fits(s, ir::Imm{0, lit.f})) return fail("overflows " + target.str());
      imm = {0, lit.f};
      if (std::isfinite(lit.f) && std::fabs(lit.f) < 9.2e18) imm.i = int64_t(lit.f);
      break;
  }
  return builder_at(loc, "literal").constant(target, imm);
}

}  // namespace kgen::dsl
