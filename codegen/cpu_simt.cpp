// SIMT on the CPU. A launch call runs a range of workgroups; inside a group,
// the kernel body is split at barriers into regions:
//   * instructions that contain a barrier (the Barrier, and For/If/Loop
//     around one; the verifier keeps them under uniform control) run once
//     per group, at "group level";
//   * maximal runs of barrier-free instructions become loops over the
//     work-items (z, y, x; x innermost so LLVM vectorises across items);
//   * uniform pure values (ir::analyze_uniformity) are computed at group
//     level once, before the item loop that needs them, so group-level loop
//     bounds and conditions can use them and the item loops stay lean;
//   * a value or Var defined in one item region and used elsewhere is kept
//     per work-item in an array `T vN[WG]` indexed by the linear local id.
// Running the regions one after another is exactly a barrier's semantics.
// A barrier-free kernel is the degenerate case: one item region.
#include <unordered_map>

#include "codegen/c_emitter.h"
#include "codegen/cpp.h"
#include "codegen/cpp_dialect.h"
#include "codegen/target.h"
#include "ir/uniformity.h"

namespace kgen::codegen {

using ir::Instr;
using ir::Op;
using ir::OpClass;
using ir::ValueId;

namespace {

constexpr int kGroup = -1;  // region id of group-level code

bool contains_barrier(const Instr& in) {
  if (in.op == Op::Barrier) return true;
  for (const ir::Block& b : in.blocks)
    if (ir::uses_barrier(b)) return true;
  return false;
}

// True when `in` holds a break/continue that leaves `in` (its target loop is outside).
bool escapes_loop(const Instr& in) {
  if (in.op == Op::Break || in.op == Op::Continue) return true;
  if (in.op == Op::For || in.op == Op::Loop) return false;
  for (const ir::Block& b : in.blocks)
    for (const Instr& c : b.instrs)
      if (escapes_loop(c)) return true;
  return false;
}

bool contains_return(const Instr& in) {
  if (in.op == Op::Return) return true;
  for (const ir::Block& b : in.blocks)
    for (const Instr& c : b.instrs)
      if (contains_return(c)) return true;
  return false;
}

struct Segment {
  const Instr* group = nullptr;        // a group-level instruction, or
  std::vector<const Instr*> hoisted;   // uniform values computed before the item loop
  std::vector<const Instr*> items;     // barrier-free run, one loop over work-items
  int region = kGroup;
  bool has_return = false;
};

class CpuSimtEmitter : public CEmitter {
 public:
  CpuSimtEmitter(const ir::Kernel& k, const CppDialect& d, const CppOptions& opt)
      : CEmitter(k, d), opt_(opt), uni_(ir::analyze_uniformity(k)) {
    region_of_.assign(k.num_values, kGroup);
    spilled_.assign(k.num_values, false);
    fixed_ = k.fixed_workgroup();
    has_barrier_ = ir::uses_barrier(k.body);
    if (has_barrier_ && !fixed_)
      throw ir::Error({}, "kernel '" + k.name + "' uses barriers, which the CPU target runs as sequential regions "
                          "over a fixed workgroup: give the kernel a fixed workgroup size");
    ir::walk(k.body, [&](const Instr& in) { has_return_ |= in.op == Op::Return; });
    need_done_ = has_barrier_ && has_return_;
    plan(k.body, false);
    scan(k.body);
  }

  std::string run() {
    const std::string entry = cpp_entry_symbol(k_, opt_);
    out() += d_.prelude();
    line("");
    line("// kernel '" + k_.name + "'" +
         (fixed_ ? ", workgroup " + std::to_string(k_.workgroup_size[0]) + "x" + std::to_string(k_.workgroup_size[1]) +
                       "x" + std::to_string(k_.workgroup_size[2])
                 : ", workgroup size chosen at launch"));
    open("extern \"C\" void " + entry + "(const KgenArgs* a, unsigned long long group_begin, unsigned long long group_end)");
    prologue();
    if (whole_range_ok()) {
      emit_row_runs();
    } else {
      line("u32 gx = (u32)(group_begin % ngx), gy = (u32)(group_begin / ngx % ngy), gz = (u32)(group_begin / ((u64)ngx * ngy));");
      open("for (u64 g = group_begin; g < group_end; ++g)");
      if (need_done_) line("u8 kg_done[" + std::to_string(k_.workgroup_threads()) + "] = {};");
      emit_split(k_.body);
      line("if (++gx == ngx) { gx = 0; if (++gy == ngy) { gy = 0; ++gz; } }");
      close();
    }
    bool streams = opt_.stream_item_stores;
    ir::walk(k_.body, [&](const Instr& in) { streams |= ir::is_nontemporal_store(in); });
    if (streams) line("kg_stream_fence();  // order this call's streaming stores before the launch completes");
    bool tiles = false;
    ir::walk(k_.body, [&](const Instr& in) { tiles |= in.op == Op::TileMmaBf16; });
    if (tiles) line("kg_tile_release();  // the tile ops leave the tiles configured between blocks");
    close();
    return std::move(out());
  }

 private:
  // For a kernel that sees only its global x id: the call's groups taken a
  // row of the grid at a time, each row one loop over its x ids (repeated
  // for the items of other y and z, which see the same ids), so there is no
  // per-group loop set-up, which costs as much as a small group's work.
  void emit_row_runs() {
    open("for (u64 g = group_begin; g < group_end;)");
    line("const u32 gx = (u32)(g % ngx);");
    line("const u64 kg_run = ngx - gx < group_end - g ? ngx - gx : group_end - g;  // groups left in this row");
    const bool reps = !(axis_trivial(1) && axis_trivial(2));
    if (reps) open("for (u32 kg_rep = 0; kg_rep < " + wg(1) + " * " + wg(2) + "; ++kg_rep)");
    whole_range_ = true;
    emit_split(k_.body);
    whole_range_ = false;
    if (reps) close();
    line("g += kg_run;");
    close();
  }

  // ---- planning ----
  bool hoistable(const Instr& in) const {
    if (!in.has_result() || ir::has_side_effects(in.op) || ir::reads_state(in.op)) return false;
    if (op_class(in.op) == OpClass::Control || op_class(in.op) == OpClass::Local) return false;
    if (!uni_.is_uniform(in.id)) return false;
    for (ValueId a : in.args)
      if (region_of_[a] != kGroup || varying_inline(a)) return false;
    return true;
  }
  bool varying_inline(ValueId v) const {
    const Instr* d = index_.def(v);
    if (!d) return false;
    if (d->op == Op::LocalId || d->op == Op::GlobalId) return true;
    bool varies = false;
    if (inline_compare(*d))
      for (ValueId a : d->args) varies |= varying_inline(a);
    return varies;
  }
  // A scalar compare of leaves and ids (`lid < 128`) is spelled at each use,
  // like the leaves: recomputing it costs less than keeping it per item
  // across a barrier, where CSE had shared one between a kernel's two tree
  // reductions (an array of bools, a store and a load per item and level).
  bool inline_compare(const Instr& in) const {
    if (op_class(in.op) != OpClass::Compare || in.type.is_vector()) return false;
    for (ValueId a : in.args) {
      const Instr* d = index_.def(a);
      if (!d || !CEmitter::is_inline(*d)) return false;
    }
    return true;
  }
  bool is_inline(const Instr& in) const override { return CEmitter::is_inline(in) || inline_compare(in); }

  void plan(const ir::Block& b, bool in_group_loop) {
    std::vector<Segment>& segs = plan_[&b];
    auto items = [&]() -> Segment& {
      if (segs.empty() || segs.back().group) {
        segs.emplace_back();
        segs.back().region = next_region_++;
      }
      return segs.back();
    };
    for (const Instr& in : b.instrs) {
      if (is_inline(in)) continue;  // leaves and builtins are spelled at each use
      if (contains_barrier(in) || (in_group_loop && escapes_loop(in))) {
        Segment s;
        s.group = &in;
        segs.push_back(s);
        for (const ir::Block& nb : in.blocks) plan(nb, in_group_loop || in.op == Op::For || in.op == Op::Loop);
      } else if (hoistable(in)) {
        items().hoisted.push_back(&in);
      } else {
        Segment& s = items();
        s.items.push_back(&in);
        s.has_return |= contains_return(in);
        int r = s.region;
        if (in.has_result()) region_of_[in.id] = r;
        for (const ir::Block& nb : in.blocks)
          ir::walk(nb, [&](const Instr& c) { if (c.has_result()) region_of_[c.id] = r; });
      }
    }
  }

  void use(const Instr& in, int region) {
    for (ValueId a : in.args)
      if (region_of_[a] != kGroup && region_of_[a] != region) spilled_[a] = true;
    for (const ir::Block& nb : in.blocks)
      for (const Instr& c : nb.instrs) use(c, region);
  }

  void scan(const ir::Block& b) {
    for (const Segment& s : plan_.at(&b)) {
      if (s.group) {
        for (ValueId a : s.group->args)
          if (region_of_[a] != kGroup) spilled_[a] = true;
        for (const ir::Block& nb : s.group->blocks) scan(nb);
        continue;
      }
      for (const Instr* h : s.hoisted) use(*h, kGroup);
      for (const Instr* in : s.items) use(*in, s.region);
    }
  }

  // True when the kernel's only id is GlobalId x (no local, group or other
  // global ids), with no barrier, shared memory or per-item array: then
  // which group or y/z item ran an x id is unobservable.
  bool whole_range_ok() const {
    if (has_barrier_ || axis_trivial(0) || (fixed_ && (k_.workgroup_size[1] != 1 || k_.workgroup_size[2] != 1))) return false;
    bool ok = true;
    ir::walk(k_.body, [&](const Instr& in) {
      ok &= in.op != Op::LocalId && in.op != Op::GroupId && in.op != Op::SharedAlloc &&
            !(in.op == Op::GlobalId && in.attr != 0) && !(in.has_result() && spilled_[in.id]);
    });
    return ok;
  }

  // ---- names ----
  std::string wg(int axis) const {
    return fixed_ ? std::to_string(k_.workgroup_size[axis]) + "u" : std::string("wg") + "xyz"[axis];
  }
  bool axis_trivial(int axis) const { return fixed_ && k_.workgroup_size[axis] == 1; }
  std::string wg_threads() const { return std::to_string(k_.workgroup_threads()); }

  std::string ref(ValueId v) const override {
    if (v < spilled_.size() && spilled_[v]) return vname(v) + (ctx_ == kGroup ? "[0]" : "[lid]");
    if (const Instr* d = index_.def(v); d && inline_compare(*d)) return "(" + value_expr(*d) + ")";
    return CEmitter::ref(v);
  }
  std::string def_lhs(const Instr& in) const override {
    if (spilled_[in.id]) return vname(in.id) + "[lid]";
    return CEmitter::def_lhs(in);
  }
  std::string builtin(const Instr& in) const override {
    int ax = int(in.attr);
    const char xyz = "xyz"[ax];
    switch (in.op) {
      case Op::LocalId: return axis_trivial(ax) ? "0u" : std::string("l") + xyz;
      case Op::GroupId: return std::string("g") + xyz;
      case Op::NumGroups: return std::string("ng") + xyz;
      case Op::GroupSize: return wg(ax);
      case Op::GlobalId:
        if (axis_trivial(ax)) return std::string("g") + xyz;
        if (ax == 0 && ctx_ != kGroup) return "kg_ix";  // the item loop runs over global x ids
        return std::string("g") + xyz + " * " + wg(ax) + " + l" + xyz;
      default: break;
    }
    throw ir::Error(in.loc, "cpu: builtin '" + std::string(ir::op_name(in.op)) + "' is not supported");
  }
  std::string param(const Instr& in) const override { return "p" + std::to_string(in.attr); }
  std::string buffer(const Instr& in) const override { return "b" + std::to_string(in.attr); }

  void emit_return(const Instr&) override {
    if (ctx_ == kGroup) throw ir::Error({}, "cpu: return at group level");
    if (need_done_) line("{ kg_done[lid] = 1; goto " + next_label(ctx_) + "; }");
    else line("goto " + next_label(ctx_) + ";");
  }
  // The end of an item's run of region r.
  std::string next_label(int region) const { return "kg_next" + std::to_string(region); }
  void emit_barrier(const Instr&) override { line("// barrier: the item loops before and after run in sequence"); }

  // ---- emission ----
  void prologue() {
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferParam& b = k_.buffers[i];
      if (b.elem.lanes == 3)
        throw ir::Error({}, "cpu: buffer '" + b.name + "' holds 3-lane lines, whose packed layout the CPU target does not support");
      std::string t = tname(b.elem);
      std::string cq = b.access == ir::Access::Read ? "const " : "";
      std::string ptr = "a->buffers[" + std::to_string(i) + "]";
      if (opt_.stream_item_stores && b.access != ir::Access::Read) ptr = "__builtin_assume_aligned(" + ptr + ", 64)";
      line(cq + t + "* b" + std::to_string(i) + " = (" + cq + t + "*)" + ptr + ";  // " + b.name + " (" +
           std::string(ir::access_name(b.access)) + ")");
    }
    for (size_t i = 0; i < k_.scalars.size(); ++i) {
      std::string t = tname(k_.scalars[i].type);
      line("const " + t + " p" + std::to_string(i) + " = kg_slot<" + t + ">(a->scalars, " + std::to_string(i) + ");  // " +
           k_.scalars[i].name);
    }
    line("const u32 ngx = a->grid[0], ngy = a->grid[1], ngz = a->grid[2];");
    if (!fixed_) line("const u32 wgx = a->wg[0], wgy = a->wg[1], wgz = a->wg[2];");
    if (opt_.stream_item_stores && !fixed_)
      line("__builtin_assume(wgx % " + std::to_string(kStreamItemGroup) + "u == 0);  // so each vector step stores aligned");
    for (const Instr& in : k_.body.instrs)
      if (in.op == Op::SharedAlloc)
        line(d_.shared_decl(in.type.element(), in.attr, vname(in.id)) + ";  // shared");
  }

  void emit_split(const ir::Block& b) {
    const std::vector<Segment>& segs = plan_.at(&b);
    // Per-item arrays for values crossing regions, declared in the scope that sees all their uses.
    for (const Segment& s : segs)
      for (const Instr* in : s.items)
        if (in->has_result() && spilled_[in->id])
          line("alignas(64) " + tname(in->type) + " " + vname(in->id) + "[" + wg_threads() + "];");
    for (const Segment& s : segs) {
      if (s.group) emit_group(*s.group);
      else emit_items(s);
    }
  }

  void emit_group(const Instr& in) {
    int saved = ctx_;
    ctx_ = kGroup;
    switch (in.op) {
      case Op::Barrier: emit_barrier(in); break;
      case Op::For: {
        std::string hint = d_.unroll_hint(int(in.attr));
        if (!hint.empty()) line(hint);
        std::string iv = vname(in.id);
        open("for (" + tname(in.type) + " " + iv + " = " + ref(in.args[0]) + "; " + iv + " < " + ref(in.args[1]) + "; " +
             iv + " += " + ref(in.args[2]) + ")");
        emit_split(in.blocks[0]);
        close();
        break;
      }
      case Op::If:
        open("if (" + ref(in.args[0]) + ")");
        emit_split(in.blocks[0]);
        if (!plan_.at(&in.blocks[1]).empty()) {
          close("} else {");
          open_indent();
          emit_split(in.blocks[1]);
        }
        close();
        break;
      case Op::Loop:
        open("for (;;)");
        emit_split(in.blocks[0]);
        close();
        break;
      case Op::Break: line("break;"); break;
      case Op::Continue: line("continue;"); break;
      default: throw ir::Error(in.loc, "cpu: cannot run '" + std::string(ir::op_name(in.op)) + "' at group level");
    }
    ctx_ = saved;
  }
  void open_indent() { CEmitter::open_more(); }

  // A test on the global or local x id that the item loop's bound can take
  // over: `if (gid.x < u) {...}` as the segment's last item, or `if (gid.x >=
  // u) return;`, both u32 with u uniform, after pure, unshared values only
  // (the items past u would have computed nothing else); the same on lid.x
  // (a tree reduction's `if (lid < s)`), which bounds the group's x range.
  struct XBound {
    const Instr* guard = nullptr;
    ValueId limit = 0;
    bool early_return = false;
    bool local = false;  // the test is on the local x id
  };
  XBound x_bound(const Segment& s) const {
    if (axis_trivial(0)) return {};
    for (size_t i = 0; i < s.items.size(); ++i) {
      const Instr& in = *s.items[i];
      if (in.op == Op::If) {
        if (!in.blocks[1].instrs.empty()) return {};
        const Instr* c = index_.def(in.args[0]);
        if (!c || (c->op != Op::Lt && c->op != Op::Ge) || spilled_[c->id]) return {};
        const Instr* g = index_.def(c->args[0]);
        const ValueId u = c->args[1];
        const bool u32s = index_.type(c->args[0]) == ir::Type(ir::ScalarKind::U32) && index_.type(u) == ir::Type(ir::ScalarKind::U32);
        const bool x_id = g && (g->op == Op::GlobalId || g->op == Op::LocalId) && g->attr == 0;
        if (!x_id || !u32s || region_of_[u] != kGroup || varying_inline(u)) return {};
        const bool local = g->op == Op::LocalId;
        const auto& then = in.blocks[0].instrs;
        if (c->op == Op::Lt && i + 1 == s.items.size()) return {&in, u, false, local};
        if (c->op == Op::Ge && then.size() == 1 && then[0].op == Op::Return && !need_done_) return {&in, u, true, local};
        return {};
      }
      if (!in.blocks.empty() || ir::has_side_effects(in.op) || op_class(in.op) == OpClass::Control ||
          (in.has_result() && spilled_[in.id]))
        return {};
    }
    return {};
  }

  void emit_items(const Segment& s) {
    ctx_ = kGroup;
    for (const Instr* h : s.hoisted) emit_instr(*h);
    if (s.items.empty()) return;
    ctx_ = s.region;
    bool need_lid = need_done_;
    for (const Instr* in : s.items) {
      if (in->has_result() && spilled_[in->id]) need_lid = true;
      auto args_spilled = [&](const Instr& c) {
        for (ValueId a : c.args) need_lid |= bool(spilled_[a]);
      };
      args_spilled(*in);
      for (const ir::Block& nb : in->blocks) ir::walk(nb, args_spilled);
    }
    const XBound xb = x_bound(s);
    const std::string x0 = "kg_x0_" + std::to_string(s.region), xe = "kg_xe_" + std::to_string(s.region);
    if (!axis_trivial(0)) {
      // Global x ids as the loop variable: u32 below a u32 bound cannot wrap,
      // so LLVM sees contiguous accesses (validate_launch keeps the x extent
      // below 2^32); a guard `gid.x < n` becomes the bound, so full groups
      // run no test and the last one stops at n.
      if (whole_range_) {
        line("const u32 " + x0 + " = gx * " + wg(0) + ";");
        line("u32 " + xe + " = (gx + (u32)kg_run) * " + wg(0) + ";");
      } else {
        line("const u32 " + x0 + " = gx * " + wg(0) + ";");
        line("u32 " + xe + " = " + x0 + " + " + wg(0) + ";");
      }
      if (xb.guard && xb.local) line("if (" + ref(xb.limit) + " < " + wg(0) + ") " + xe + " = " + x0 + " + " + ref(xb.limit) + ";");
      else if (xb.guard) line("if (" + xe + " > " + ref(xb.limit) + ") " + xe + " = " + ref(xb.limit) + ";");
    }
    int loops = 0;
    for (int ax = 2; ax >= 0; --ax) {
      if (axis_trivial(ax) || (whole_range_ && ax > 0)) continue;
      std::string l = std::string("l") + "xyz"[ax];
      if (ax == 0 && opt_.stream_item_stores && whole_range_) {
        open_stream_chunk(x0, xe);
        ++loops;
      }
      if (ax == 0) {
        const bool chunked = opt_.stream_item_stores && whole_range_;
        if (opt_.assume_independent_items) line("#pragma clang loop vectorize(assume_safety)");
        if (opt_.fold_item_tail) line("#pragma clang loop vectorize_predicate(enable)");
        open("for (u32 kg_ix = " + (chunked ? std::string("kg_c") : x0) + "; kg_ix < " + (chunked ? "kg_ce" : xe) + "; ++kg_ix)");
        if (!whole_range_) line("const u32 lx = kg_ix - " + x0 + ";");
      } else {
        open("for (u32 " + l + " = 0; " + l + " < " + wg(ax) + "; ++" + l + ")");
      }
      ++loops;
    }
    if (loops == 0) open("");  // 1x1x1 workgroup: a plain block
    if (need_lid) {
      std::string lx = axis_trivial(0) ? "0u" : "lx", ly = axis_trivial(1) ? "0u" : "ly", lz = axis_trivial(2) ? "0u" : "lz";
      line("const u32 lid = (" + lz + " * " + wg(1) + " + " + ly + ") * " + wg(0) + " + " + lx + ";");
    }
    if (need_done_) line("if (kg_done[lid]) continue;");
    if (s.has_return) open("");
    for (const Instr* in : s.items) {
      if (in != xb.guard) emit_instr(*in);
      else if (!xb.early_return) emit_block(in->blocks[0]);  // the loop bound is the test
    }
    if (s.has_return) {
      close();
      line(next_label(s.region) + ":;");
    }
    for (int i = 0; i < std::max(loops, 1); ++i) close();
    ctx_ = kGroup;
  }

  // The streaming entry's item loop runs in chunks of kStreamItemGroup ids,
  // each first prefetching the lines its inputs read kStreamPrefetchItems
  // ahead: with streaming stores Intel's hardware prefetcher stops running
  // ahead of an item with more than a few cycles of arithmetic (a silu of
  // 2^26 floats, one thread: half the plain stores' speed without them).
  void open_stream_chunk(const std::string& x0, const std::string& xe) {
    const std::string step = std::to_string(kStreamItemGroup) + "u";
    open("for (u32 kg_c = " + x0 + "; kg_c < " + xe + "; kg_c += " + step + ")");
    for (const auto& [buf, bytes] : own_x_loads()) {
      const std::string ahead = "(u64)kg_c * " + std::to_string(bytes) + " + " + std::to_string(kStreamPrefetchItems * bytes);
      for (uint32_t at = 0; at < kStreamItemGroup * bytes; at += 64)
        line("__builtin_prefetch((const char*)" + buf + " + " + ahead + " + " + std::to_string(at) + ", 0, 3);");
    }
    line("const u32 kg_ce = " + xe + " - kg_c < " + step + " ? " + xe + " : kg_c + " + step + ";");
  }
  // The buffers loaded at the item's own x id, with their element bytes.
  std::vector<std::pair<std::string, uint32_t>> own_x_loads() const {
    std::vector<bool> seen(k_.buffers.size(), false);
    ir::walk(k_.body, [&](const Instr& in) {
      const Instr* b = in.op == Op::Load ? index_.def(in.args[0]) : nullptr;
      if (b && b->op == Op::Buffer && is_global_x_id(index_, in.args[1])) seen[size_t(b->attr)] = true;
    });
    std::vector<std::pair<std::string, uint32_t>> out;
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i]) out.emplace_back("b" + std::to_string(i), uint32_t(k_.buffers[i].elem.bytes()));
    return out;
  }

  const CppOptions& opt_;
  ir::Uniformity uni_;
  bool fixed_ = false, has_barrier_ = false, has_return_ = false, need_done_ = false;
  bool whole_range_ = false;  // emitting emit_row_runs()
  std::unordered_map<const ir::Block*, std::vector<Segment>> plan_;
  std::vector<int> region_of_;
  std::vector<bool> spilled_;
  int next_region_ = 0;
  int ctx_ = kGroup;
};

}  // namespace

std::string cpp_entry_symbol(const ir::Kernel& k, const CppOptions& opt) {
  if (!opt.entry.empty()) return opt.entry;
  std::string s = "kgen_";
  for (char c : k.name) s += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
  return s;
}

std::string emit_cpp(const ir::Kernel& k, const CppOptions& opt) {
  check_capabilities(k, cpu_caps());
  static const CppDialect dialect;
  return dialect.with_helpers(CpuSimtEmitter(k, dialect, opt).run());
}

}  // namespace kgen::codegen
