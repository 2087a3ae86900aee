# TopK node tests beyond ONNX's own: opsets 1 and 10, integer and f64 inputs, k = 0, ties;
# reference in NumPy (stable sort: ties lower index first). Writes
# tests/graph/data/onnx-extra/test_topk_* (graph_onnx_extra_test).
#   python3 scripts/make-test-topk.py
import numpy as np, onnx, os
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(7)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "graph", "data", "onnx-extra")
def ref(x, k, axis, largest):
    xs = np.moveaxis(x, axis, -1)
    key = -xs.astype(np.float64) if largest and x.dtype.kind == 'f' else xs
    if largest and x.dtype.kind != 'f':
        # largest with stable ties: sort by (-value, index)
        order = np.array([sorted(range(xs.shape[-1]), key=lambda i: (-int(r[i]), i)) for r in xs.reshape(-1, xs.shape[-1])]).reshape(xs.shape)
    else:
        order = np.argsort(key, axis=-1, kind='stable')
    idx = order[..., :k]
    vals = np.take_along_axis(xs, idx, -1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis).astype(np.int64)
def make(name, opset, x, k, axis=None, largest=None, k_attr=False):
    d = f"{root}/{name}"; os.makedirs(d + "/test_data_set_0", exist_ok=True)
    attrs = {}
    if axis is not None: attrs["axis"] = axis
    if largest is not None: attrs["largest"] = largest
    if k_attr: attrs["k"] = k
    ins = ["x"] if k_attr else ["x", "k"]
    node = helper.make_node("TopK", ins, ["v", "i"], **attrs)
    et = helper.np_dtype_to_tensor_dtype(x.dtype)
    vals, idx = ref(x, k, -1 if axis is None else axis, largest is None or largest == 1)
    gi = [helper.make_tensor_value_info("x", et, x.shape)]
    if not k_attr: gi.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    g = helper.make_graph([node], name, gi, [helper.make_tensor_value_info("v", et, vals.shape), helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 8
    onnx.save(m, d + "/model.onnx")
    feeds = [x] if k_attr else [x, np.array([k], np.int64)]
    for j, t in enumerate(feeds): open(f"{d}/test_data_set_0/input_{j}.pb", "wb").write(numpy_helper.from_array(t).SerializeToString())
    for j, t in enumerate([vals, idx]): open(f"{d}/test_data_set_0/output_{j}.pb", "wb").write(numpy_helper.from_array(t).SerializeToString())
make("test_topk_opset1", 1, rng.standard_normal((3, 5)).astype(np.float32), 2, k_attr=True)
make("test_topk_opset10_axis0", 10, rng.standard_normal((4, 3, 2)).astype(np.float32), 3, axis=0)
make("test_topk_i32_smallest_ties", 11, rng.integers(-3, 3, (3, 10, 4)).astype(np.int32), 4, axis=1, largest=0)
make("test_topk_i64_big", 11, rng.integers(-2**62, 2**62, (5, 20)).astype(np.int64), 20, axis=-1)
make("test_topk_u8_ties", 11, rng.integers(0, 5, (7, 33)).astype(np.uint8), 6, axis=1)
make("test_topk_f32_ties_k1", 11, rng.integers(0, 3, (2, 9, 11)).astype(np.float32), 1, axis=-2)
make("test_topk_f64", 11, rng.standard_normal((6, 40)), 40, axis=1, largest=0)
make("test_topk_k0", 11, rng.standard_normal((3, 4)).astype(np.float32), 0, axis=1)
