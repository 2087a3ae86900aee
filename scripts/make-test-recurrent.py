# Recurrent node tests beyond ONNX's own: directions, layouts, initial states,
# GRU linear_before_reset; outputs from onnx.reference (PyPI onnx). Writes
# tests/graph/data/onnx-extra/test_{rnn,gru,lstm}_* (graph_onnx_extra_test).
#   python3 scripts/make-test-recurrent.py
import numpy as np, onnx, os
from onnx import helper, TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator
rng = np.random.default_rng(3)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "graph", "data", "onnx-extra")
G = {"RNN": 1, "GRU": 3, "LSTM": 4}
def make(name, op, S, B, I, H, direction="forward", layout=0, bias=True, init=True, peep=False, lbr=None, outs=("Y", "Y_h", "Y_c"), const=False):
    D = 2 if direction == "bidirectional" else 1
    g = G[op]
    X = rng.standard_normal((B, S, I) if layout else (S, B, I)).astype(np.float32)
    feeds = {"X": X, "W": (rng.standard_normal((D, g * H, I)) / np.sqrt(I)).astype(np.float32),
             "R": (rng.standard_normal((D, g * H, H)) * 0.8 / np.sqrt(H)).astype(np.float32)}
    ins = ["X", "W", "R"]
    if bias: feeds["B"] = rng.standard_normal((D, 2 * g * H)).astype(np.float32)
    ins.append("B" if bias else "")
    ins.append("")  # sequence_lens
    st = (B, D, H) if layout else (D, B, H)
    if init: feeds["initial_h"] = rng.standard_normal(st).astype(np.float32)
    ins.append("initial_h" if init else "")
    if op == "LSTM":
        if init: feeds["initial_c"] = rng.standard_normal(st).astype(np.float32)
        ins.append("initial_c" if init else "")
        if peep: feeds["P"] = rng.standard_normal((D, 3 * H)).astype(np.float32)
        ins.append("P" if peep else "")
    while ins[-1] == "": ins.pop()
    outs = [o for o in outs if op == "LSTM" or o != "Y_c"]
    attrs = dict(hidden_size=H, direction=direction, layout=layout)
    if lbr is not None: attrs["linear_before_reset"] = lbr
    node = helper.make_node(op, ins, outs, **attrs)
    inits = [numpy_helper.from_array(feeds.pop(k), k) for k in ("W", "R", "B", "P") if const and k in feeds]
    gi = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    go = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs if o]
    m = helper.make_model(helper.make_graph([node], name, gi, go, initializer=inits), opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 10
    res = ReferenceEvaluator(m).run(None, feeds)
    outs = [o for o in outs if o]
    d = f"{root}/{name}"; os.makedirs(d + "/test_data_set_0")
    onnx.save(m, d + "/model.onnx")
    for j, (k, v) in enumerate(feeds.items()):
        open(f"{d}/test_data_set_0/input_{j}.pb", "wb").write(numpy_helper.from_array(v, k).SerializeToString())
    for j, v in enumerate(res):
        open(f"{d}/test_data_set_0/output_{j}.pb", "wb").write(numpy_helper.from_array(v, outs[j]).SerializeToString())
for op in ("RNN", "GRU", "LSTM"):
    make(f"test_{op.lower()}_bidirectional", op, 5, 3, 4, 6, "bidirectional")
    make(f"test_{op.lower()}_reverse_layout1", op, 4, 2, 3, 5, "reverse", layout=1)
    make(f"test_{op.lower()}_bidi_layout1_nobias", op, 3, 2, 3, 4, "bidirectional", layout=1, bias=False, init=False)
make("test_gru_lbr", "GRU", 4, 3, 2, 5, "bidirectional", lbr=1)
make("test_lstm_peep_bidi", "LSTM", 4, 3, 2, 5, "bidirectional", peep=True)
make("test_lstm_only_yh", "LSTM", 3, 2, 2, 3, outs=("", "Y_h"))
make("test_lstm_const_weights", "LSTM", 4, 3, 2, 5, "bidirectional", peep=True, const=True)
make("test_gru_const_weights", "GRU", 4, 3, 2, 5, "reverse", lbr=1, const=True)
make("test_rnn_const_weights", "RNN", 4, 3, 2, 5, "bidirectional", layout=1, const=True)
