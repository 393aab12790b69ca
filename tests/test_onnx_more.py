"""torch.onnx beyond export's file: ONNXProgram (what export returns in PyTorch 2.13), ExportableModule,
InputObserver, torch.onnx.errors and torch.onnx.ops (symbolic ops written as their custom-domain operators;
rotary_embedding and attention with PyTorch's numbers on every device)."""
import io
import warnings

import numpy as np
import onnx
import pytest
import torch
from _nn_util import assert_close, rng_for, wt


def _both(rng, *shape, device="cpu"):
    a = rng.standard_normal(shape).astype("float32")
    return torch.tensor(a), wt.tensor(a, device=device)


ROTARY = [((2, 3, 5, 8), (2, 5, 4), {}), ((2, 5, 12), (2, 5, 3), {"num_heads": 2}),
          ((2, 3, 5, 8), (7, 2), {"rotary_embedding_dim": 4, "interleaved": True, "pos": 1})]


@pytest.mark.parametrize("x_shape,cache_shape,kw", ROTARY)
def test_rotary_embedding_matches_pytorch(device, x_shape, cache_shape, kw):
    rng = rng_for(f"rotary{x_shape}{kw}")
    kw = dict(kw)
    x, cos, sin = _both(rng, *x_shape, device=device), _both(rng, *cache_shape, device=device), \
        _both(rng, *cache_shape, device=device)
    if kw.pop("pos", None):
        pos = rng.randint(0, cache_shape[0], (x_shape[0], x_shape[-2]))
        kw_t, kw_w = dict(kw, position_ids=torch.tensor(pos)), dict(kw, position_ids=wt.tensor(pos, device=device))
    else:
        kw_t = kw_w = kw
    want = torch.onnx.ops.rotary_embedding(x[0], cos[0], sin[0], **kw_t)
    assert_close(wt.onnx.ops.rotary_embedding(x[1], cos[1], sin[1], **kw_w), want, device, "rotary_embedding")
    with pytest.raises(RuntimeError, match="must be 3D when position_ids is not provided"):
        wt.onnx.ops.rotary_embedding(x[1], cos[1][0], sin[1][0])


ATTENTION = [({}, False), ({"softcap": 2.0, "qk_matmul_output_mode": 2}, "float"),
             ({"is_causal": True, "scale": 0.3, "qk_matmul_output_mode": 3}, False), ({"past": True}, "bool"),
             ({"q_num_heads": 4, "kv_num_heads": 2, "3d": True}, False)]


@pytest.mark.parametrize("kw,mask", ATTENTION)
def test_attention_matches_pytorch(device, kw, mask):
    rng = rng_for(f"attention{kw}{mask}")
    kw = dict(kw)
    three_d, past = kw.pop("3d", False), kw.pop("past", False)
    q_shape, kv_shape = ((2, 5, 16), (2, 6, 8)) if three_d else ((2, 4, 5, 8), (2, 2, 6, 8))
    q, k, v = (_both(rng, *s, device=device) for s in (q_shape, kv_shape, kv_shape))
    extra_t, extra_w = [], []
    total = 9 if past else 6
    if mask == "float":
        m = _both(rng, 5, total, device=device)
        extra_t, extra_w = [m[0]], [m[1]]
    elif mask == "bool":
        m = rng.rand(5, total) > 0.3
        extra_t, extra_w = [torch.tensor(m)], [wt.tensor(m, device=device)]
    if past:
        pk, pv = _both(rng, 2, 2, 3, 8, device=device), _both(rng, 2, 2, 3, 8, device=device)
        extra_t, extra_w = extra_t + [pk[0], pv[0]], extra_w + [pk[1], pv[1]]
    want = torch.onnx.ops.attention(q[0], k[0], v[0], *extra_t, **kw)
    got = wt.onnx.ops.attention(q[1], k[1], v[1], *extra_w, **kw)
    assert len(got) == 4
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, device, f"attention output {i}")


def test_symbolic_ops_eager_and_in_the_exported_model(tmp_path):
    for T in (torch, wt):
        z = T.onnx.ops.symbolic("custom::Op", [T.ones(2)], {"a": 1}, dtype=T.int64, shape=[2, 3], version=1)
        assert z.dtype == T.int64 and tuple(z.shape) == (2, 3) and not z.any()
        outs = T.onnx.ops.symbolic_multi_out("custom::Two", [None], dtypes=(1, T.float16), shapes=([1], [2, 2]))
        assert [str(o.dtype).split(".")[1] for o in outs] == ["float32", "float16"]
    for call, err in ((lambda T: T.onnx.ops.symbolic("a::B", [], dtype=99, shape=[2]), RuntimeError),
                      (lambda T: T.onnx.ops.symbolic("a::B", [], {"t": [T.ones(1)]}, dtype=1, shape=[2]), ValueError),
                      (lambda T: T.onnx.ops.symbolic_multi_out("a::B", [], dtypes=[1], shapes=[]), RuntimeError)):
        with pytest.raises(err) as te:
            call(torch)
        with pytest.raises(err) as we:
            call(wt)
        assert str(we.value).split(":")[0] == str(te.value).split(":")[0]

    class M(wt.nn.Module):
        def forward(self, x):
            v = wt.onnx.ops.symbolic("custom_domain::CustomOp", (x + 1,), {"s": "v", "n": 3, "fs": [1, 2.5]},
                                     dtype=x.dtype, shape=x.shape, version=2, metadata_props={"k": "v"})
            a, b = wt.onnx.ops.symbolic_multi_out("custom_domain::Two", (x, None), dtypes=(x.dtype, wt.int64),
                                                  shapes=(x.shape, [1, 2]))
            return (v + a).relu(), b
    model = wt.onnx.export(M(), (wt.randn(2, 3),)).model_proto
    onnx.checker.check_model(model)
    nodes = {n.op_type: n for n in model.graph.node}
    custom = nodes["CustomOp"]
    assert custom.domain == "custom_domain" and list(nodes["Two"].input)[1] == ""
    assert {a.name: onnx.helper.get_attribute_value(a) for a in custom.attribute} == {"s": b"v", "n": 3,
                                                                                      "fs": [1.0, 2.5]}
    assert [(p.key, p.value) for p in custom.metadata_props] == [("k", "v")]
    assert {o.domain: o.version for o in model.opset_import} == {"": 18, "custom_domain": 2}


def _mlp(T):
    return T.nn.Sequential(T.nn.Linear(4, 8), T.nn.GELU(), T.nn.Linear(8, 3))


def test_onnx_program_runs_saves_and_exports_as_pytorch(tmp_path):
    tm = _mlp(torch)
    wm = _mlp(wt)
    wm.load_state_dict({k: wt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.RandomState(0).standard_normal((2, 4)).astype("float32")
    program = wt.onnx.export(wm, (wt.tensor(x),), dynamic_shapes=({0: wt.export.Dim("batch")},))
    assert isinstance(program, wt.onnx.ONNXProgram) and "ONNXProgram(" in repr(program)
    assert isinstance(program.exported_program, wt.export.ExportedProgram)
    x5 = np.random.RandomState(1).standard_normal((5, 4)).astype("float32")
    with torch.no_grad():
        want = tm(torch.tensor(x5))
    (got,) = program(wt.tensor(x5))
    assert_close(got, want, "cpu", "ONNXProgram() vs torch", 1e-5, 1e-6)
    assert_close(program.call_reference(wt.tensor(x5))[0], want, "cpu", "call_reference vs torch", 1e-5, 1e-6)
    program.save(str(tmp_path / "m.onnx"))
    saved = onnx.load(str(tmp_path / "m.onnx"))
    assert saved == program.model_proto and {i.name for i in saved.graph.initializer} >= set(wm.state_dict())
    f = io.BytesIO()
    program.save(f, include_initializers=False, keep_initializers_as_inputs=True)
    bare = onnx.load_from_string(f.getvalue())
    assert not {i.name for i in bare.graph.initializer} & set(wm.state_dict())
    assert [i.name for i in bare.graph.input] == ["input", "0.weight", "0.bias", "2.weight", "2.bias"]
    # f given: written and returned (dynamo=True, PyTorch 2.13's default); dynamo=False: written, None returned
    assert isinstance(wt.onnx.export(wm, (wt.tensor(x),), str(tmp_path / "a.onnx")), wt.onnx.ONNXProgram)
    with pytest.warns(DeprecationWarning, match="legacy TorchScript-based ONNX export"):
        assert wt.onnx.export(wm, (wt.tensor(x),), str(tmp_path / "b.onnx"), dynamo=False) is None
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    with torch.no_grad():
        tm[0].weight.mul_(-1)
    program.apply_weights({"0.weight": wt.tensor(tm[0].weight.detach().numpy())})
    with pytest.warns(wt.onnx.errors.OnnxExporterWarning, match="not found in the model"):
        program.apply_weights({"nope": wt.ones(1)})
    with torch.no_grad():
        assert_close(program(wt.tensor(x5))[0], tm(torch.tensor(x5)), "cpu", "apply_weights vs torch", 1e-5, 1e-6)
    ep = wt.export.export(wm, (wt.tensor(x),))
    assert_close(wt.onnx.export(ep)(wt.tensor(x))[0], wm(wt.tensor(x)), "cpu", "exported program to onnx")

    class Exportable(wt.onnx.ExportableModule):
        def __init__(self):
            super().__init__()
            self.model = wm

        def forward(self, x):
            return self.model(x)

        def example_arguments(self):
            return (wt.tensor(x),), None

        def input_names(self):
            return ("features",)

        def dynamic_shapes(self):
            return ({0: "batch"},)
    for T in (torch, wt):
        with pytest.raises(TypeError, match="abstract"):
            T.onnx.ExportableModule()
    program = Exportable().to_onnx()
    assert program.model_proto.graph.input[0].name == "features"
    assert_close(program(wt.tensor(x5))[0], want, "cpu", "ExportableModule.to_onnx vs torch", 1e-5, 1e-6)


def test_onnx_errors_are_pytorchs():
    for args in (("aten::foo", 17, None), ("aten::foo", 17, 18), ("my::foo", 17, None)):
        w, t = wt.onnx.errors.UnsupportedOperatorError(*args), torch.onnx.errors.UnsupportedOperatorError(*args)
        assert str(w) == str(t) and isinstance(w, wt.onnx.OnnxExporterError) and isinstance(w, RuntimeError)
    assert issubclass(wt.onnx.errors.OnnxExporterWarning, UserWarning)
    assert set(wt.onnx.errors.__all__) == set(torch.onnx.errors.__all__)
    assert set(wt.onnx.ops.__all__) == set(torch.onnx.ops.__all__)


def _spec(s):
    if isinstance(s, dict):
        return {k: _spec(v) for k, v in s.items()}
    if isinstance(s, (tuple, list)):
        return type(s)(_spec(v) for v in s)
    return s if s is None else "DYNAMIC"


def test_input_observer_infers_pytorchs_arguments_and_shapes():
    got = []
    for T in (torch, wt):
        class M(T.nn.Module):
            def forward(self, x, w, y=None):
                return x * 2 + w.sum() + (0 if y is None else y.sum())
        m = M()
        obs = T.onnx.InputObserver()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with obs(m):
                m(T.ones(2, 3), T.ones(4, 4))
                m(T.ones(5, 3), T.ones(4, 4))
            positional = (_spec(obs.infer_dynamic_shapes()),
                          _spec(obs.infer_dynamic_shapes(set_batch_dimension_for={1})),
                          [tuple(a.shape) for a in obs.infer_arguments()],
                          [tuple(a.shape) for a in obs.infer_arguments(1)])
            obs2 = T.onnx.InputObserver()
            with obs2(m):
                m(T.ones(2, 3), w=T.ones(4, 4), y=T.ones(4))
                m(T.ones(5, 3), w=T.ones(4, 4), y=T.ones(6))
            args, kwargs = obs2.infer_arguments(as_args_kwargs=True)
            named = (_spec(obs2.infer_dynamic_shapes()), [tuple(a.shape) for a in args],
                     {k: tuple(v.shape) for k, v in kwargs.items()}, obs.num_obs())
            obs3 = T.onnx.InputObserver()
            with obs3(m):  # y only in the later calls: the first call's arguments get an empty y
                m(T.ones(2, 3), w=T.ones(4, 4))
                m(T.ones(5, 3), w=T.ones(4, 4), y=T.ones(6))
            optional = (_spec(obs3.infer_dynamic_shapes()),
                        {k: tuple(v.shape) for k, v in obs3.infer_arguments(0).items()})
        with pytest.raises(RuntimeError, match="No inputs were captured"):
            T.onnx.InputObserver().infer_arguments()
        got.append((positional, named, optional))
    assert got[0] == got[1]
    program = wt.onnx.export(m, obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes())
    report = obs.check_discrepancies(program)
    assert [r["SUCCESS"] for r in report] == [True, True] and report[1]["index"] == 1


def test_symbolic_op_in_a_webgpu_model(webgpu):
    class M(wt.nn.Module):
        def forward(self, x):
            return wt.onnx.ops.symbolic("custom::Op", (x,), {"k": 1}, dtype=x.dtype, shape=x.shape) + x
    x = wt.randn(2, 3, device="webgpu")
    assert_close(M()(x), x, "webgpu", "symbolic's zeros on the inputs' device")
    nodes = [(n.op_type, n.domain) for n in wt.onnx.export(M(), (x,)).model_proto.graph.node]
    assert ("Op", "custom") in nodes
