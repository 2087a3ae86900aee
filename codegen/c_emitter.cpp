#include "codegen/c_emitter.h"

#include <algorithm>

#include "ir/byte_bound.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;
using ir::OpClass;
using ir::Type;

CEmitter::CEmitter(const ir::Kernel& k, const Dialect& d) : k_(k), d_(d), index_(k) {
  if (d_.has_line_access()) {
    find_line_accesses(k_.body);
    find_live_values();
  }
}

bool CEmitter::removable(const Instr& in) {
  if (!in.has_result() || !in.blocks.empty()) return false;
  switch (op_class(in.op)) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Fma:
    case OpClass::Dot:
    case OpClass::Permute:
    case OpClass::Select:
    case OpClass::Convert:
    case OpClass::Vector:
    case OpClass::Reduce: return true;
    case OpClass::Memory: return in.op == Op::Load;
    case OpClass::Local: return in.op == Op::VarLoad;
    default: return false;
  }
}

std::vector<ir::ValueId> CEmitter::printed_operands(const Instr& in) const {
  if (in.op == Op::Construct) {
    if (line_loads_.count(in.id)) {
      const Instr* l0 = index_.def(in.args[0]);
      return {l0->args[0], l0->args[1]};
    }
    if (auto src = shuffle_sources(in, nullptr); !src.empty()) return src;  // the extracts' sources
  }
  if (in.op == Op::Store) {
    if (merged_stores_.count(&in)) return {};
    if (auto ls = line_stores_.find(&in); ls != line_stores_.end()) return {in.args[0], in.args[1], ls->second};
  }
  return in.args;
}

void CEmitter::find_live_values() {
  std::vector<ir::ValueId> work;
  auto mark = [&](const Instr& in) {
    for (ir::ValueId v : printed_operands(in))
      if (live_.insert(v).second) work.push_back(v);
  };
  ir::walk(k_.body, [&](const Instr& in) {
    if (!removable(in)) mark(in);
  });
  while (!work.empty()) {
    const ir::ValueId v = work.back();
    work.pop_back();
    if (const Instr* d = index_.def(v)) mark(*d);
  }
  prune_ = true;
}

namespace {

// An index as root + constant offset (root itself with 0 if not an add of a
// constant).
std::pair<ir::ValueId, int64_t> split_offset(const ir::ValueIndex& index, ir::ValueId idx) {
  // Through chains of constant adds: a line at `base + 15` whose first
  // element's load was shared (CSE) with another line's `base + 15` still
  // has one root.
  int64_t off = 0;
  for (int depth = 0; depth < 8; ++depth) {
    const Instr* d = index.def(idx);
    const Instr* c = d && d->op == Op::Add ? index.def(d->args[1]) : nullptr;
    if (!c || c->op != Op::Const) break;
    off += c->imm.i;
    idx = d->args[0];
  }
  return {idx, off};
}

bool whole_line(Type t) {
  return t.is_vector() && !t.is_bool() && (t.lanes == 2 || t.lanes == 4 || t.lanes == 8 || t.lanes == 16);
}

// May write memory (conservatively: anything with a nested block).
bool may_write(const Instr& in) {
  return in.op == Op::Store || in.op == Op::Barrier || op_class(in.op) == OpClass::Atomic ||
         op_class(in.op) == OpClass::Tile || !in.blocks.empty();
}
bool pure(const Instr& in) {
  return !ir::has_side_effects(in.op) && !ir::reads_state(in.op) && in.blocks.empty() && in.op != Op::Load;
}

}  // namespace

void CEmitter::find_line_accesses(const ir::Block& b) {
  const auto& v = b.instrs;
  std::unordered_map<ir::ValueId, size_t> pos;
  std::vector<long> last_write(v.size());  // the last writing instruction before i, -1 if none
  long lw = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].has_result()) pos[v[i].id] = i;
    for (const ir::Block& nb : v[i].blocks) find_line_accesses(nb);
    last_write[i] = lw;
    if (may_write(v[i])) lw = long(i);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const Instr& in = v[i];
    if (in.op == Op::Construct && whole_line(in.type)) {
      bool ok = true;
      size_t first = i;
      ir::ValueId ptr = ir::kNoValue, root = ir::kNoValue;
      int64_t off0 = 0;
      for (size_t q = 0; ok && q < in.args.size(); ++q) {
        const Instr* d = index_.def(in.args[q]);
        ok = d && d->op == Op::Load && pos.count(d->id) && pos[d->id] < i;
        if (!ok) break;
        auto [r, off] = split_offset(index_, d->args[1]);
        if (q == 0) ptr = d->args[0], root = r, off0 = off;
        ok = d->args[0] == ptr && r == root && off == off0 + int64_t(q);
        first = std::min(first, pos[d->id]);
      }
      if (ok && last_write[i] < long(first)) line_loads_.insert(in.id);
    }
    if (in.op == Op::Store) {
      // A run of plain stores, or of streaming ones (dsl store_line(stream)).
      const bool nt = ir::is_nontemporal_store(in);
      const Instr* e = index_.def(in.args[2]);
      if (!e || e->op != Op::Extract || e->attr != 0) continue;
      const Type lt = index_.type(e->args[0]);
      if (!whole_line(lt)) continue;
      auto [root, off0] = split_offset(index_, in.args[1]);
      std::vector<const Instr*> run{&in};
      size_t j = i + 1;
      for (; j < v.size() && run.size() < size_t(lt.lanes); ++j) {
        const Instr& s = v[j];
        if (s.op != Op::Store) {
          if (pure(s)) continue;
          break;
        }
        const Instr* es = index_.def(s.args[2]);
        auto [r, off] = split_offset(index_, s.args[1]);
        if (ir::is_nontemporal_store(s) != nt || s.args[0] != in.args[0] || !es || es->op != Op::Extract ||
            es->args[0] != e->args[0] || es->attr != int64_t(run.size()) || r != root || off != off0 + int64_t(run.size()))
          break;
        run.push_back(&s);
      }
      if (run.size() != size_t(lt.lanes)) continue;
      line_stores_[&in] = e->args[0];
      for (size_t q = 1; q < run.size(); ++q) merged_stores_.insert(run[q]);
      i = j - 1;
    }
  }
}

void CEmitter::line(const std::string& s) {
  out_.append(size_t(indent_) * 2, ' ');
  out_ += s;
  out_ += '\n';
}

void CEmitter::open(const std::string& head) {
  line(head.empty() ? "{" : head + " {");
  ++indent_;
}

void CEmitter::close(const std::string& tail) {
  --indent_;
  line(tail);
}

bool CEmitter::is_inline(const Instr& in) const {
  switch (op_class(in.op)) {
    case OpClass::Leaf:
    case OpClass::Builtin: return true;
    default: return false;
  }
}

std::string CEmitter::ref(ir::ValueId v) const {
  const Instr* in = index_.def(v);
  if (!in) throw ir::Error({}, "codegen: value %" + std::to_string(v) + " has no definition");
  switch (in->op) {
    case Op::Const: return d_.literal(in->type, in->imm);
    case Op::Param: return param(*in);
    case Op::Buffer: return buffer(*in);
    default: break;
  }
  if (op_class(in->op) == OpClass::Builtin) return builtin(*in);
  return vname(v);
}

std::string CEmitter::def_lhs(const Instr& in) const { return tname(in.type) + " " + vname(in.id); }

void CEmitter::emit_block(const ir::Block& b) {
  for (const Instr& in : b.instrs) emit_instr(in);
}

void CEmitter::emit_barrier(const Instr& in) { line(d_.barrier() + ";"); }

std::string CEmitter::math_expr(Op op, Type operand, Type result, std::vector<std::string> args) const {
  const OpRule* r = d_.ops().find(op);
  Type ct = d_.compute_type(operand);
  if (ct != operand)
    for (std::string& a : args) a = d_.cast(ct, operand, a);
  const char* fmt = nullptr;
  if (r) {
    bool v = ct.is_vector();
    if (v && !d_.vector_ops(ct)) return {};  // no operators on such lines: lane by lane
    if (ct.is_float()) fmt = v ? r->vflt : r->flt;
    else if (ct.is_bool()) fmt = v ? r->vbool : r->bool_;
    else fmt = v ? r->vint : r->int_;
  }
  if (!fmt) {
    if (ct.is_vector()) return {};  // caller scalarises
    throw ir::Error({}, "codegen: dialect '" + std::string(d_.name()) + "' cannot express '" +
                            std::string(ir::op_name(op)) + "' on " + operand.str());
  }
  Type res_ct = op_class(op) == OpClass::Compare ? result : ct;
  FormatVars vars;
  vars.T = d_.type_name(ct);
  vars.E = d_.type_name(ct.scalar());
  vars.R = d_.type_name(res_ct);
  vars.f = ct.kind == ir::ScalarKind::F32 ? "f" : "";
  vars.B = std::to_string(operand.bits() - 1);  // of the IR type: an i8 held in an i32 shifts by (b & 7)
  std::string e = format_op(fmt, args, vars);
  if (res_ct != result) e = d_.cast(result, res_ct, e);  // round back to f16/bf16
  return e;
}

Dot4Form CEmitter::dot4_form(const Instr& in) const {
  const Type ta = index_.type(in.args[0]), tb = index_.type(in.args[1]);
  if (ta.is_signed() && tb.is_signed()) {
    if (ir::bytes_never_min(index_, in.args[1])) return Dot4Form::SignedNoMinB;
    if (ir::bytes_never_min(index_, in.args[0])) return Dot4Form::SignedNoMinA;
    return Dot4Form::Exact;
  }
  for (size_t u = 0; u < 2; ++u) {
    const Type tu = index_.type(in.args[u]), ts = index_.type(in.args[1 - u]);
    if (!tu.is_signed() && ts.is_signed() && ir::byte_bound(index_, in.args[u]) < 128) return Dot4Form::SmallUnsigned;
  }
  return Dot4Form::Exact;
}

std::string CEmitter::dot4_pair(const Instr& in) const {
  // dot4(a, b, dot4(a2, b2, c)) with both u8·i8 and the unsigned bytes below
  // 64 (Dialect::dot4_pair). The inner dot4 stays as it is where used
  // elsewhere; unused, the C++ compiler drops it.
  if (in.op != Op::Dot4) return {};
  const Instr* inner = index_.def(in.args[2]);
  if (!inner || inner->op != Op::Dot4) return {};
  const Type ta = index_.type(in.args[0]), tb = index_.type(in.args[1]);
  if (index_.type(inner->args[0]) != ta || index_.type(inner->args[1]) != tb || ta.is_signed() == tb.is_signed()) return {};
  const size_t u = ta.is_signed() ? 1 : 0;
  if (ir::byte_bound(index_, in.args[u]) >= 64 || ir::byte_bound(index_, inner->args[u]) >= 64) return {};
  const std::string args[5] = {ref(in.args[0]), ref(in.args[1]), ref(inner->args[0]), ref(inner->args[1]), ref(inner->args[2])};
  return d_.dot4_pair(ta, tb, args);
}

std::vector<int> CEmitter::permute_pattern(const Instr& in) const {
  // The index's lanes when it is a constant (a line constant, a splat or a
  // construct of constants), as table bytes per result byte; else empty.
  const Type idx = index_.type(in.args[2]);
  const int table_bytes = 2 * index_.type(in.args[0]).bytes();
  auto constant = [&](ir::ValueId v) -> const Instr* {
    const Instr* d = index_.def(v);
    return d && d->op == Op::Const ? d : nullptr;
  };
  std::vector<int64_t> lanes;
  const Instr* d = index_.def(in.args[2]);
  if (!d) return {};
  if (d->op == Op::Const) lanes.assign(size_t(idx.lanes), d->imm.i);
  else if (d->op == Op::Splat && constant(d->args[0])) lanes.assign(size_t(idx.lanes), constant(d->args[0])->imm.i);
  else if (d->op == Op::Construct) {
    for (ir::ValueId v : d->args) {
      if (!constant(v)) return {};
      lanes.push_back(constant(v)->imm.i);
    }
  } else {
    return {};
  }
  std::vector<int> pattern;
  for (int64_t l : lanes)
    for (int b = 0; b < idx.scalar_bytes(); ++b) pattern.push_back(int((uint64_t(l) >> (8 * b)) & uint64_t(table_bytes - 1)));
  return pattern;
}

std::vector<ir::ValueId> CEmitter::shuffle_sources(const Instr& in, std::vector<int>* pattern) const {
  std::vector<ir::ValueId> sources;
  for (ir::ValueId v : in.args) {
    const Instr* d = index_.def(v);
    if (!d || d->op != Op::Extract || index_.type(d->args[0]) != in.type) return {};
    auto at = std::find(sources.begin(), sources.end(), d->args[0]);
    if (at == sources.end()) {
      if (sources.size() == 2) return {};
      at = sources.insert(sources.end(), d->args[0]);
    }
    if (pattern) pattern->push_back(int(at - sources.begin()) * in.type.lanes + int(d->attr));
  }
  return sources;
}

std::string CEmitter::construct_shuffle(const Instr& in) const {
  std::vector<int> pattern;
  const std::vector<ir::ValueId> sources = shuffle_sources(in, &pattern);
  if (sources.empty()) return "";
  const std::string a = ref(sources[0]), b = sources.size() == 2 ? ref(sources[1]) : a;
  return d_.shuffle(in.type, a, b, pattern);
}

std::string CEmitter::value_expr(const Instr& in) const {
  std::vector<std::string> a;
  a.reserve(in.args.size());
  for (ir::ValueId v : in.args) a.push_back(ref(v));
  auto ty = [&](size_t i) { return index_.type(in.args[i]); };
  switch (op_class(in.op)) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Fma: return math_expr(in.op, ty(0), in.type, a);
    case OpClass::Dot:
      if (in.op == Op::Dot2Bf16) return d_.dot2_bf16(ty(0), a);
      if (in.op == Op::Dot2I16) return d_.dot2_i16(ty(0), a);
      if (const std::string pair = dot4_pair(in); !pair.empty()) return pair;
      return d_.dot4(ty(0), ty(1), a, dot4_form(in));
    case OpClass::Permute: return d_.permute_bytes(ty(0), in.type, a, permute_pattern(in));
    case OpClass::Select: return d_.select(ty(0), ty(1), a[0], a[1], a[2]);
    case OpClass::Convert:
      return in.op == Op::Cast ? d_.cast(in.type, ty(0), a[0]) : d_.bitcast(in.type, ty(0), a[0]);
    case OpClass::Vector:
      switch (in.op) {
        case Op::Splat: return d_.splat(in.type, a[0]);
        case Op::Construct:
          if (line_loads_.count(in.id)) {
            const Instr* l0 = index_.def(in.args[0]);
            return d_.load_line(in.type, ref(l0->args[0]), index_ref(l0->args[1]));
          }
          if (std::string sh = construct_shuffle(in); !sh.empty()) return sh;
          return d_.construct(in.type, a);
        case Op::Extract: return d_.extract(ty(0), a[0], int(in.attr));
        case Op::Insert: return a[0];  // the lane is assigned by emit_value
        default: break;
      }
      break;
    case OpClass::Reduce: return d_.reduce(in.op, ty(0), a[0]);
    case OpClass::Subgroup:
    case OpClass::SubgroupReduce: return d_.subgroup(in.op, ty(0), a);
    case OpClass::Memory: {
      // (see Dialect::pointer_offsets)
      const Instr* ix = index_.def(in.args[1]);
      if (d_.pointer_offsets() && ix && ix->op == Op::Add && ix->type == ir::types::U64) {
        const Instr* c = index_.def(ix->args[1]);
        if (c && c->op == Op::Const) return d_.load(in.type, "(" + a[0] + " + " + ref(ix->args[0]) + ")", ref(ix->args[1]));
      }
      return d_.load(in.type, a[0], index_ref(in.args[1]));
    }
    case OpClass::Atomic: {
      std::vector<std::string> rest(a.begin() + 2, a.end());
      return d_.atomic_in(ty(0).space, in.op, in.type, a[0], index_ref(in.args[1]), rest);
    }
    case OpClass::Local:
      if (in.op == Op::Var) return a[0];
      if (in.op == Op::VarLoad) return a[0];
      break;
    default: break;
  }
  throw ir::Error(in.loc, "codegen: no expression for '" + std::string(ir::op_name(in.op)) + "'");
}

void CEmitter::emit_lanewise(const Instr& in) {
  // No vector form in the dialect: compute lane by lane with the scalar rule.
  Type operand = index_.type(in.args[0]);
  std::vector<std::string> lanes;
  for (int l = 0; l < operand.lanes; ++l) {
    std::vector<std::string> a;
    for (size_t i = 0; i < in.args.size(); ++i) a.push_back(d_.extract(index_.type(in.args[i]), ref(in.args[i]), l));
    if (in.op == Op::Dot2Bf16) lanes.push_back(d_.dot2_bf16(operand.scalar(), a));
    else if (in.op == Op::Dot2I16) lanes.push_back(d_.dot2_i16(operand.scalar(), a));
    else if (op_class(in.op) == OpClass::Dot)
      lanes.push_back(d_.dot4(operand.scalar(), index_.type(in.args[1]).scalar(), a, dot4_form(in)));
    else lanes.push_back(math_expr(in.op, operand.scalar(), in.type.scalar(), a));
  }
  line(def_lhs(in) + " = " + d_.construct(in.type, lanes) + ";");
}

void CEmitter::emit_value(const Instr& in) {
  std::string e = value_expr(in);
  if (e.empty()) return emit_lanewise(in);
  line(def_lhs(in) + " = " + e + ";");
  if (in.op == Op::Insert) line(d_.insert_lane(ref(in.id), int(in.attr), ref(in.args[1])) + ";");
}

void CEmitter::emit_instr(const Instr& in) {
  if (is_inline(in)) return;
  if (prune_ && removable(in) && !live_.count(in.id)) return;
  switch (op_class(in.op)) {
    case OpClass::Memory:
      if (in.op == Op::Store) {
        if (merged_stores_.count(&in)) return;
        if (auto ls = line_stores_.find(&in); ls != line_stores_.end()) {
          const Type lt = index_.type(ls->second);
          // (A run's stores all carry its first store's hint.)
          line((ir::is_nontemporal_store(in) ? d_.store_line_nontemporal(lt, ref(in.args[0]), index_ref(in.args[1]), ref(ls->second))
                                             : d_.store_line(lt, ref(in.args[0]), index_ref(in.args[1]), ref(ls->second))) +
               ";");
          return;
        }
        const Type elem = index_.type(in.args[2]);
        line((ir::is_nontemporal_store(in) ? d_.store_nontemporal(elem, ref(in.args[0]), index_ref(in.args[1]), ref(in.args[2]))
                                           : d_.store(elem, ref(in.args[0]), index_ref(in.args[1]), ref(in.args[2]))) +
             ";");
        return;
      }
      if (in.op == Op::Prefetch) {
        const std::string s = d_.prefetch(ref(in.args[0]), ref(in.args[1]), in.attr);
        if (!s.empty()) line(s + ";");
        return;
      }
      return emit_value(in);
    case OpClass::Tile: {
      std::vector<std::string> a;
      for (ir::ValueId v : in.args) a.push_back(ref(v));
      line(d_.tile_mma_bf16(a, in.attr != 0) + ";");
      return;
    }
    case OpClass::Sync: return emit_barrier(in);
    case OpClass::Local:
      if (in.op == Op::VarStore) {
        line(ref(in.args[0]) + " = " + ref(in.args[1]) + ";");
        return;
      }
      return emit_value(in);
    case OpClass::Control:
      switch (in.op) {
        case Op::For: {
          std::string hint = d_.unroll_hint(int(in.attr));
          if (!hint.empty()) line(hint);
          std::string iv = vname(in.id);
          open("for (" + tname(in.type) + " " + iv + " = " + ref(in.args[0]) + "; " + iv + " < " + ref(in.args[1]) +
               "; " + iv + " += " + ref(in.args[2]) + ")");
          loop_body_entry();
          emit_block(in.blocks[0]);
          close();
          for_exit();
          return;
        }
        case Op::If:
          open("if (" + ref(in.args[0]) + ")");
          emit_block(in.blocks[0]);
          if (!in.blocks[1].instrs.empty()) {
            close("} else {");
            ++indent_;
            emit_block(in.blocks[1]);
          }
          close();
          return;
        case Op::Loop:
          open("for (;;)");
          loop_body_entry();
          emit_block(in.blocks[0]);
          close();
          return;
        case Op::Break: line("break;"); return;
        case Op::Continue: line("continue;"); return;
        case Op::Return: return emit_return(in);
        default: break;
      }
      break;
    default: return emit_value(in);
  }
}

}  // namespace kgen::codegen
