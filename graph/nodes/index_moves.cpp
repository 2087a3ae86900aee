// Moves addressed by an index tensor: GatherElements, GatherND,
// ScatterElements (and the deprecated Scatter) and ScatterND onto
// ops/layout/index_moves.h. Each op describes its move once from the node;
// inference takes the output shape from it (the builders check the shapes),
// host folding runs the move's reference, lowering plans its kernels.
#include "graph/lower.h"
#include "graph/nodes/util.h"
#include "ops/layout/index_moves.h"

namespace kgen::graph {

namespace {

InferCtx ctx_of(const LowerCtx& c) { return InferCtx{const_cast<Graph&>(c.g), const_cast<Node&>(c.node)}; }

// One index move: its output shape (checking the node), reference and plan
// over slots 0..n_in-1 (the inputs) and n_in (the output).
struct IndexMove {
  int n_in;
  std::function<Shape(const InferCtx&)> out_shape;
  std::function<void(const InferCtx&, const std::vector<const void*>& in, void* out)> reference;
  std::function<void(const InferCtx&, ops::Plan&, const ops::MoveVariant&)> plan;
};

OpHandler index_handler(const char* op, IndexMove m) {
  OpHandler h;
  h.op = op;
  h.infer = [m](InferCtx& c) {
    c.require_inputs(m.n_in, m.n_in);
    if (c.dtype(1) != ScalarKind::I32 && c.dtype(1) != ScalarKind::I64) c.invalid("indices must be int32 or int64");
    try {
      c.set_out(0, c.dtype(0), m.out_shape(c));
    } catch (const std::invalid_argument& e) {
      if (std::string(e.what()).find(c.node.where()) == 0) throw;
      c.invalid(e.what());  // an ops/ builder's message
    }
  };
  h.eval = [m](EvalCtx& e) {
    std::vector<const void*> in;
    for (const Tensor* t : e.in) in.push_back(t->data());
    m.reference(InferCtx{e.g, e.node}, in, e.out[0].mutable_data());
  };
  h.lower = [m](LowerCtx& c) {
    ops::Plan plan;
    m.plan(ctx_of(c), plan, ops::move_variant_for(c.caps()));
    std::vector<int> slots;
    for (int i = 0; i < m.n_in; ++i) slots.push_back(c.in_slot(i));
    slots.push_back(c.out_slot(0));
    c.steps(plan, slots);
  };
  return h;
}

int elem(ScalarKind k) { return int(dtype_bytes(k)); }

ops::ScatterReduce reduction(const InferCtx& c) {
  const std::string r = c.node.attr_str("reduction", "none");
  if (r == "none") return ops::ScatterReduce::None;
  if (r == "add") return ops::ScatterReduce::Add;
  if (r == "mul") return ops::ScatterReduce::Mul;
  if (r == "max") return ops::ScatterReduce::Max;
  if (r == "min") return ops::ScatterReduce::Min;
  c.invalid("reduction '" + r + "'");
}

ops::GatherElements gather_elements_of(const InferCtx& c) {
  ops::GatherElements g;
  g.elem_bytes = elem(c.dtype(0));
  g.data_shape = c.shape(0);
  g.index_shape = c.shape(1);
  g.axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(g.data_shape.size()));
  g.index_kind = c.dtype(1);
  return g;
}

ops::GatherND gather_nd_of(const InferCtx& c) {
  ops::GatherND g;
  g.elem_bytes = elem(c.dtype(0));
  g.data_shape = c.shape(0);
  g.index_shape = c.shape(1);
  g.batch_dims = c.node.attr_int("batch_dims", 0);
  g.index_kind = c.dtype(1);
  return g;
}

ops::ScatterElements scatter_elements_of(const InferCtx& c) {
  ops::ScatterElements s;
  s.dtype = c.dtype(0);
  s.data_shape = c.shape(0);
  s.index_shape = c.shape(1);
  s.axis = normalize_axis(c, c.node.attr_int("axis", 0), int64_t(s.data_shape.size()));
  s.index_kind = c.dtype(1);
  s.reduce = reduction(c);
  if (c.shape(2) != s.index_shape) c.invalid("updates of shape " + shape_str(c.shape(2)) + " for indices " + shape_str(s.index_shape));
  if (c.dtype(2) != s.dtype) c.invalid("updates of another type than the data");
  return s;
}

ops::ScatterND scatter_nd_of(const InferCtx& c) {
  ops::ScatterND s;
  s.dtype = c.dtype(0);
  s.data_shape = c.shape(0);
  s.index_shape = c.shape(1);
  s.index_kind = c.dtype(1);
  s.reduce = reduction(c);
  const Shape want = ops::scatter_nd_updates_shape(s);
  if (c.shape(2) != want) c.invalid("updates of shape " + shape_str(c.shape(2)) + ", expected " + shape_str(want));
  if (c.dtype(2) != s.dtype) c.invalid("updates of another type than the data");
  return s;
}

IndexMove gather_elements_move() {
  return {2, [](const InferCtx& c) { return Shape(ops::gather_elements_out_shape(gather_elements_of(c))); },
          [](const InferCtx& c, const std::vector<const void*>& in, void* out) {
            ops::reference_gather_elements(gather_elements_of(c), in[0], in[1], out);
          },
          [](const InferCtx& c, ops::Plan& p, const ops::MoveVariant& v) { ops::plan_gather_elements(p, gather_elements_of(c), 0, 1, 2, v); }};
}

IndexMove gather_nd_move() {
  return {2, [](const InferCtx& c) { return Shape(ops::gather_nd_out_shape(gather_nd_of(c))); },
          [](const InferCtx& c, const std::vector<const void*>& in, void* out) { ops::reference_gather_nd(gather_nd_of(c), in[0], in[1], out); },
          [](const InferCtx& c, ops::Plan& p, const ops::MoveVariant& v) { ops::plan_gather_nd(p, gather_nd_of(c), 0, 1, 2, v); }};
}

IndexMove scatter_elements_move() {
  return {3, [](const InferCtx& c) {
            ops::check_scatter_elements(scatter_elements_of(c));
            return c.shape(0);
          },
          [](const InferCtx& c, const std::vector<const void*>& in, void* out) {
            ops::reference_scatter_elements(scatter_elements_of(c), in[0], in[1], in[2], out);
          },
          [](const InferCtx& c, ops::Plan& p, const ops::MoveVariant& v) {
            ops::plan_scatter_elements(p, scatter_elements_of(c), 0, 1, 2, 3, v);
          }};
}

IndexMove scatter_nd_move() {
  return {3, [](const InferCtx& c) {
            scatter_nd_of(c);
            return c.shape(0);
          },
          [](const InferCtx& c, const std::vector<const void*>& in, void* out) {
            ops::reference_scatter_nd(scatter_nd_of(c), in[0], in[1], in[2], out);
          },
          [](const InferCtx& c, ops::Plan& p, const ops::MoveVariant& v) { ops::plan_scatter_nd(p, scatter_nd_of(c), 0, 1, 2, 3, v); }};
}

}  // namespace

void register_index_moves_nodes() {
  register_handler(index_handler("GatherElements", gather_elements_move()));
  register_handler(index_handler("GatherND", gather_nd_move()));
  register_handler(index_handler("ScatterElements", scatter_elements_move()));
  register_handler(index_handler("Scatter", scatter_elements_move()));  // opsets 9-10: ScatterElements without reduction
  register_handler(index_handler("ScatterND", scatter_nd_move()));
}

}  // namespace kgen::graph
