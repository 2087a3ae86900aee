#include "ir/builder.h"

namespace kgen::ir {

Builder::Builder(Kernel& k) : k_(k) {
  stack_.push_back({&k_.body, Op::Const, nullptr, 0});
  scopes_.emplace_back();
  // Continue numbering after any values already in the kernel.
  values_.resize(k_.num_values);
  walk(k_.body, [&](const Instr& in) {
    if (in.has_result()) values_[in.id] = {in.type, in.op, in.attr, true};
  });
}

ValueInfo Builder::info(ValueId v) const {
  if (v >= values_.size()) return {};
  return values_[v];
}

Instr& Builder::append(Instr in) {
  Block* b = stack_.back().block;
  b->instrs.push_back(std::move(in));
  return b->instrs.back();
}

ValueId Builder::emit(Instr in) {
  in.loc = loc;
  in.blocks.assign(num_blocks(in.op), Block{});
  if (in.op == Op::Break || in.op == Op::Continue) {
    if (loop_depth() == 0) throw Error(loc, std::string(op_name(in.op)) + " outside of a loop");
  }
  if (in.op == Op::SharedAlloc && stack_.size() != 1)
    throw Error(loc, "shared arrays must be declared at the top level of the kernel, not inside control flow");
  in.type = infer_type(in, k_, [this](ValueId v) { return info(v); });
  bool result = !in.type.is_void() && in.op != Op::If && in.op != Op::Loop;
  if (result) {
    in.id = k_.num_values++;
    values_.resize(k_.num_values);
    // The value is visible only in this block and the blocks nested in it.
    values_[in.id] = {in.type, in.op, in.attr, true};
    scopes_.back().push_back(in.id);
  }
  return append(std::move(in)).id;
}

ValueId Builder::constant(Type t, Imm v) {
  Instr in;
  in.op = Op::Const;
  in.type = t;
  in.imm = v;
  return emit(std::move(in));
}

ValueId Builder::op(Op o, std::vector<ValueId> args, int64_t attr, Type type) {
  Instr in;
  in.op = o;
  in.args = std::move(args);
  in.attr = attr;
  in.type = type;
  return emit(std::move(in));
}

int Builder::loop_depth() const {
  int d = 0;
  for (const Frame& f : stack_) d += (f.owner == Op::For || f.owner == Op::Loop);
  return d;
}

ValueId Builder::begin_for(ValueId start, ValueId end, ValueId step, int unroll) {
  ValueId iv = op(Op::For, {start, end, step}, unroll);
  Instr& f = stack_.back().block->instrs.back();
  stack_.push_back({&f.blocks[0], Op::For, &f, 0});
  scopes_.emplace_back();
  return iv;
}

void Builder::pop(Op expected, const char* what) {
  if (stack_.size() <= 1 || stack_.back().owner != expected)
    throw Error(loc, std::string("unbalanced ") + what + ": no open block of that kind");
  stack_.pop_back();
  for (ValueId v : scopes_.back()) values_[v].valid = false;  // out of scope now
  scopes_.pop_back();
}

void Builder::end_for() { pop(Op::For, "end_for"); }

void Builder::begin_if(ValueId cond) {
  op(Op::If, {cond});
  Instr& f = stack_.back().block->instrs.back();
  stack_.push_back({&f.blocks[0], Op::If, &f, 0});
  scopes_.emplace_back();
}

void Builder::begin_else() {
  if (stack_.size() <= 1 || stack_.back().owner != Op::If || stack_.back().block != &stack_.back().owner_in->blocks[0])
    throw Error(loc, "else without a matching if");
  Instr* f = stack_.back().owner_in;
  pop(Op::If, "else");
  stack_.push_back({&f->blocks[1], Op::If, f, 0});
  scopes_.emplace_back();
}

void Builder::end_if() { pop(Op::If, "end_if"); }

void Builder::begin_loop() {
  op(Op::Loop, {});
  Instr& f = stack_.back().block->instrs.back();
  stack_.push_back({&f.blocks[0], Op::Loop, &f, 0});
  scopes_.emplace_back();
}

void Builder::end_loop() { pop(Op::Loop, "end_loop"); }

}  // namespace kgen::ir
