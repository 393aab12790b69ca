"""torch.export, torch.onnx.export and torch.jit.trace: the exported ONNX file runs in onnxruntime and
gives webtorch's and PyTorch's numbers; the exported graph prints and runs (module()) as eager on
every device; traced modules save and load; what cannot be exported raises."""
import io

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from _nn_util import assert_close, randomize, rng_for, sync, wt


def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Dropout(0.2), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3), nn.LogSoftmax(dim=-1))


def cnn(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, stride=2, groups=2), nn.GroupNorm(2, 8), nn.SiLU(),
                         nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))


def lenet(T):
    nn, F = T.nn, T.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(x.size(0), -1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    return LeNet()


def transformer(T):
    nn = T.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(20, 16)
            layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(16, 5)

        def forward(self, tokens):
            return self.head(self.encoder(self.embed(tokens) * 4.0).mean(1))
    return Encoder()


def _bytes(program):
    """The model file torch.onnx.export's ONNXProgram writes."""
    f = io.BytesIO()
    program.save(f)
    return f.getvalue()


def _pair(make, name):
    tm = make(torch)
    randomize(tm, rng_for(name), buffers=True)
    tm.eval()
    wm = sync(tm, make(wt), "cpu").eval()
    return tm, wm


def _input(name, batch):
    rng = rng_for(name + str(batch))
    if name == "transformer":
        return rng.randint(0, 20, (batch, 7)).astype(np.int64)
    shape = {"mlp": (6,), "cnn": (3, 12, 12), "lenet": (1, 28, 28)}[name]
    return rng.standard_normal((batch,) + shape).astype(np.float32)


@pytest.mark.parametrize("name,make", [("mlp", mlp), ("cnn", cnn), ("transformer", transformer),
                                       ("lenet", lenet)])
def test_onnx_runs_in_onnxruntime(name, make):
    tm, wm = _pair(make, name)
    f = io.BytesIO()
    wt.onnx.export(wm, (wt.tensor(_input(name, 3)),), f, input_names=["input"], output_names=["logits"],
                   dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)
    model = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == 17
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {i.name for i in model.graph.initializer} >= set(wm.state_dict()) - {
        k for k in wm.state_dict() if k.endswith("num_batches_tracked")}
    sess = ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])
    for batch in (3, 5):  # the example's batch and another one (dynamic axis)
        x = _input(name, batch)
        got = sess.run(["logits"], {"input": x})[0]
        with torch.no_grad():
            want = tm(torch.from_numpy(x))
        assert_close(wt.tensor(got), wm(wt.tensor(x)), "cpu", f"{name} onnxruntime vs webtorch", 1e-4, 1e-5)
        assert_close(wt.tensor(got), want, "cpu", f"{name} onnxruntime vs torch", 1e-4, 1e-5)


def zoo(T):
    """Many layers at once: transposed/1-d/'same' convolution, padding, pooling, instance and layer norm,
    embedding, attention with weights, causal scaled_dot_product_attention, activations, views."""
    nn, F = T.nn, T.nn.functional

    class Zoo(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
            self.c1 = nn.Conv1d(4, 6, 3, padding="same")
            self.inorm = nn.InstanceNorm1d(6, affine=True)
            self.mha = nn.MultiheadAttention(6, 2, batch_first=True)
            self.ln = nn.LayerNorm(6)
            self.emb = nn.Embedding(10, 6, padding_idx=0)

        def forward(self, x, tok):
            y = F.leaky_relu(self.up(x), 0.1)
            y = F.elu(F.avg_pool2d(F.pad(y, (1, 1, 1, 1)), 2, count_include_pad=False)).flatten(2)
            y = F.hardtanh(self.c1(y), -0.5, 0.5) + F.relu6(y[:, :1] * 3)
            y = T.cat([F.softplus(self.inorm(y)).transpose(1, 2), self.emb(tok)], 1)
            a, w = self.mha(y, y, y)
            y = self.ln(F.hardswish(a) + y)
            q, k = y.chunk(2, dim=-1)
            y = F.scaled_dot_product_attention(q.unsqueeze(1), k.unsqueeze(1), k.unsqueeze(1), is_causal=True)
            return y.squeeze(1).amax(-1) + w.mean((1, 2)).unsqueeze(1), F.adaptive_max_pool2d(x, 1).sigmoid()
    return Zoo()


def test_onnx_layer_zoo_and_default_transformer_encoder():
    tm, wm = _pair(zoo, "zoo")
    rng = rng_for("zoo inputs")

    def inputs(b):
        return rng.standard_normal((b, 3, 4, 4)).astype(np.float32), rng.randint(0, 10, (b, 4)).astype(np.int64)
    data = _bytes(wt.onnx.export(wm, tuple(wt.tensor(a) for a in inputs(2)), None, input_names=["x", "tok"],
                                 dynamic_axes={"x": {0: "b"}, "tok": {0: "b"}}))
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for b in (2, 3):
        x, tok = inputs(b)
        got = sess.run(None, {"x": x, "tok": tok})
        with torch.no_grad():
            want = tm(torch.from_numpy(x), torch.from_numpy(tok))
        mine = wm(wt.tensor(x), wt.tensor(tok))
        for g, w, m in zip(got, want, mine):
            assert_close(wt.tensor(g), w, "cpu", "zoo vs torch", 1e-4, 1e-5)
            assert_close(wt.tensor(g), m, "cpu", "zoo vs webtorch", 1e-4, 1e-5)
    enc = wt.nn.TransformerEncoder(wt.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1).eval()
    x = wt.randn(3, 5, 8)
    sess = ort.InferenceSession(_bytes(wt.onnx.export(enc, (x,), None, input_names=["src"],
                                                      dynamic_axes={"src": [0, 1]})))
    for shape in ((3, 5, 8), (2, 5, 8)):
        x = wt.randn(*shape)
        assert_close(wt.tensor(sess.run(None, {"src": x.numpy()})[0]), enc(x), "cpu", "encoder", 1e-4, 1e-5)


def test_onnx_op_mapping_and_opset():
    wm = _pair(cnn, "cnn")[1]
    data = _bytes(wt.onnx.export(wm, (wt.randn(2, 3, 12, 12),), None, opset_version=18))
    ops = [n.op_type for n in onnx.load_from_string(data).graph.node]
    for op in ("Conv", "BatchNormalization", "Relu", "MaxPool", "InstanceNormalization", "Sigmoid",
               "AveragePool", "GlobalAveragePool", "Gemm"):
        assert op in ops, op
    wm = _pair(transformer, "transformer")[1]
    data = _bytes(wt.onnx.export(wm, (wt.tensor(_input("transformer", 2)),), None))
    ops = [n.op_type for n in onnx.load_from_string(data).graph.node]
    for op in ("Gather", "LayerNormalization", "Softmax", "MatMul", "ReduceMean"):
        assert op in ops, op
    with pytest.raises(ValueError, match="opset_version 16"):
        wt.onnx.export(wm, (wt.tensor(_input("transformer", 2)),), None, opset_version=16)


def test_onnx_unmapped_op_names_it():
    class M(wt.nn.Module):
        def forward(self, x):
            return x.cumsum(1)
    with pytest.raises(wt.onnx.OnnxExporterError, match="'torch.cumsum'"):
        wt.onnx.export(M(), (wt.randn(2, 3),), io.BytesIO())


def test_export_prints_graph_and_module_equals_eager(device):
    tm, wm = _pair(lenet, "lenet")
    wm = wm.to(device)
    x = wt.tensor(_input("lenet", 2), device=device)
    batch = wt.export.Dim("batch")
    ep = wt.export.export(wm, (x,), dynamic_shapes={"x": {0: batch}})
    text = str(ep)
    assert 'conv2d: "f32[batch, 6, 28, 28]" = torch.nn.functional.conv2d(x, p_conv1_weight, p_conv1_bias' in text
    assert 'view: "f32[batch, 400]" = torch.Tensor.view(max_pool2d_1, batch, -1)' in text
    assert "p_fc1_weight: PARAMETER target='fc1.weight'" in text and "x: USER_INPUT" in text
    sig = ep.graph_signature
    assert sig.parameters[:2] == ["conv1.weight", "conv1.bias"] and sig.user_inputs == ["x"]
    assert [n.op for n in ep.graph.nodes].count("call_function") == 12
    m = ep.module()
    for b in (2, 3):
        xb = wt.tensor(_input("lenet", b), device=device)
        assert_close(m(xb), wm(xb), device, f"module() batch {b}", 1e-6, 1e-6)
    with torch.no_grad():
        assert_close(m(xb), tm(torch.from_numpy(_input("lenet", 3))), device, "module() vs torch")
    with pytest.raises(RuntimeError, match=r"Expected input at \*args\[0\]\.shape\[1\] to be equal to 1, but got 2"):
        m(wt.randn(2, 2, 28, 28, device=device))
    with pytest.raises(RuntimeError, match="ExportedProgram directly"):
        ep(x)
    f = io.BytesIO()
    wt.export.save(ep, f)
    f.seek(0)
    loaded = wt.export.load(f)
    assert str(loaded) == str(ep)
    assert_close(loaded.module().to(device)(xb), m(xb), device, "export.load", 0, 0)


def test_export_static_and_graph_level_ops():
    wm = _pair(mlp, "mlp")[1]
    ep = wt.export.export(wm, (wt.randn(2, 6),))
    assert "f32[2, 16]" in str(ep.graph) and "Range constraints: {}" in str(ep)
    with pytest.raises(RuntimeError, match=r"shape\[0\] to be equal to 2, but got 3"):
        ep.module()(wt.randn(3, 6))

    def f(x, y):  # operators, methods, indexing, in-place ops and constants all become nodes
        z = (x * 2 + y)[:, 1:]
        z.relu_()
        return z.sum(-1, keepdim=True) - wt.arange(2.0).unsqueeze(1), x.max(1)
    x, y = wt.randn(2, 4), wt.randn(2, 4)
    ep = wt.export.export(f, (x, y))
    targets = [n.format_node().split(" = ")[1].split("(")[0] for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["torch.mul", "torch.add", "torch.Tensor.__getitem__", "torch.relu_", "torch.sum",
                       "torch.unsqueeze", "torch.sub", "torch.max", "operator.getitem", "operator.getitem"]
    got, want = ep.module()(x, y), f(x, y)
    assert_close(got[0], want[0], "cpu") and assert_close(got[1].indices, want[1].indices, "cpu")


def test_export_dynamic_dim_the_graph_cannot_express_raises():
    class M(wt.nn.Module):
        def forward(self, x):
            return x * 2 if x.shape[0] < 4 else x.sum(0)
    with pytest.raises(RuntimeError, match="graph cannot express"):
        wt.export.export(M(), (wt.randn(2, 3),), dynamic_shapes=({0: wt.export.Dim("b")},))
    with pytest.raises(ValueError, match="example size 1"):
        wt.export.export(M(), (wt.randn(1, 3),), dynamic_shapes=({0: wt.export.Dim("b")},))


def test_jit_trace_runs_saves_and_loads(tmp_path):
    tm, wm = _pair(cnn, "cnn")
    x = wt.tensor(_input("cnn", 2))
    traced = wt.jit.trace(wm, x)
    assert_close(traced(x), wm(x), "cpu", "traced", 1e-6, 1e-6)
    traced.save(str(tmp_path / "m.pt"))
    loaded = wt.jit.load(str(tmp_path / "m.pt"))
    assert set(loaded.state_dict()) == set(wm.state_dict())
    x5 = wt.tensor(_input("cnn", 5))  # a batch size the trace did not see
    with torch.no_grad():
        assert_close(loaded(x5), tm(torch.from_numpy(_input("cnn", 5))), "cpu", "loaded vs torch")
    assert str(loaded.graph) == str(traced.graph)
    with pytest.raises(NotImplementedError, match="torch.jit.trace"):
        wt.jit.script(wm)

    @wt.jit.ignore
    def helper(v):
        return v + 1
    assert helper(1) == 2 and wt.jit.unused(helper) is helper and wt.jit.is_scripting() is False


def test_onnx_without_numpy_writes_the_same_bytes():
    """Pyodide offline has no numpy: the file written by the pure-Python path is the numpy path's."""
    import os
    import subprocess
    import sys
    code = ("import sys; sys.modules['numpy'] = None; sys.path.insert(0, sys.argv[1])\n"
            "import webtorch as wt\nwt.manual_seed(0)\n"
            "m = wt.nn.Sequential(wt.nn.Linear(3, 4), wt.nn.ReLU(), wt.nn.LayerNorm(4))\n"
            "wt.onnx.export(m, (wt.randn(2, 3),), sys.stdout.buffer)\n")
    py = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "py")
    pure = subprocess.run([sys.executable, "-c", code, py], capture_output=True, check=True).stdout
    wt.manual_seed(0)
    m = wt.nn.Sequential(wt.nn.Linear(3, 4), wt.nn.ReLU(), wt.nn.LayerNorm(4))
    assert pure == _bytes(wt.onnx.export(m, (wt.randn(2, 3),), None))


def test_reading_a_traced_value_raises_in_export_and_warns_in_jit_trace():
    def f(x):
        return x * 2 if x.sum() > 0 else x - 1
    with pytest.raises(RuntimeError, match=r"reads a traced tensor's value as a Python number \(Tensor.__bool__"):
        wt.export.export(f, (wt.ones(3),))
    with pytest.warns(wt.jit.TracerWarning, match="might cause the trace to be incorrect"):
        traced = wt.jit.trace(f, wt.ones(3))
    assert traced(-wt.ones(3)).tolist() == [-2.0] * 3  # as PyTorch's trace: the example's branch
    # an op being decomposed that reads values inside (one_hot's num_classes) stays one node
    graph = wt.fx.trace_module(lambda x: wt.nn.functional.one_hot(x.argmax(-1)), (wt.eye(3),),
                               leaf=lambda fn: fn.__name__ != "one_hot")[0]
    assert [n.target.__name__ for n in graph.nodes if n.op == "call_function"] == ["argmax", "one_hot"]
    graph = wt.fx.trace_module(wt.nn.functional.relu6, (wt.eye(3),), leaf=lambda fn: fn.__name__ != "relu6")[0]
    assert "relu6" not in str(graph) and "torch.nn.functional.hardtanh(%input, 0.0, 6.0" in str(graph)
