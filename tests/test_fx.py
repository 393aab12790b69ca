"""torch.fx's symbolic tracing against PyTorch's: the printed graph and generated code, results, the Graph
editing API, Interpreter/Transformer, replace_pattern, ShapeProp, fx.wrap, Tracer subclasses, copies, and the
errors of control flow on proxies. Both sides trace the same source (M(T) built on torch or webtorch)."""
import copy
import math
import operator
import pickle

import numpy as np
import pytest
import torch

import webtorch as wt


def _len_wrapped(x):
    return x.shape[0] + 1


torch.fx.wrap("_len_wrapped")
wt.fx.wrap("_len_wrapped")


def _models(T):
    nn, F = T.nn, T.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 5)
            self.p = nn.Parameter(T.ones(5))
            self.seq = nn.Sequential(nn.ReLU(), nn.Linear(5, 3))

        def forward(self, x, y=2):
            h = self.linear(x).relu() + self.p
            h = T.cat([h, h * 0.5], dim=1)
            a, b = h.chunk(2, dim=1)
            return self.seq(a - b).sum(dim=-1, keepdim=True) * y, T.relu(h)[:, 1:3].transpose(0, 1)

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1)
            self.bn = nn.BatchNorm2d(3)

        def forward(self, x):
            h = T.flatten(self.bn(self.conv(x)), 1)
            return T.sigmoid(h).view(x.size(0), -1) @ self.conv.weight.flatten()[: h.shape[1]].unsqueeze(1)

    class Math(nn.Module):
        def forward(self, x):
            return x * math.sqrt(x.shape[-1]) + _len_wrapped(x) - x.mean()

    return {"mlp": MLP, "conv": Conv, "math": Math}


INPUTS = {"mlp": (2, 4), "conv": (2, 2, 4, 4), "math": (3, 4)}


def _copy_weights(tm, wm):
    wm.load_state_dict({k: wt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _pair(name):
    torch.manual_seed(0)
    tm = _models(torch)[name]()
    wm = _models(wt)[name]()
    _copy_weights(tm, wm)
    return tm.eval(), wm.eval()


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_symbolic_trace_like_pytorch(name):
    tm, wm = _pair(name)
    tg, wg = torch.fx.symbolic_trace(tm), wt.fx.symbolic_trace(wm)
    assert str(wg.graph) == str(tg.graph)
    assert wg.code == tg.code
    assert type(wg).__name__ == type(tg).__name__ == type(tm).__name__
    x = np.random.default_rng(1).standard_normal(INPUTS[name]).astype(np.float32)
    for want, got in zip(_flat(tg(torch.tensor(x))), _flat(wg(wt.tensor(x)))):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert wg.print_readable(print_output=False) == tg.print_readable(print_output=False).replace(
        "        # No stacktrace found for following nodes\n", "")


def _flat(v):
    return list(v) if isinstance(v, tuple) else [v]


def test_graph_editing_like_pytorch():
    def edit(T):
        g = T.fx.Graph()
        x = g.placeholder("x")
        out = g.output(x)
        with g.inserting_after(x):
            a = g.call_function(T.relu, (x,))
            b = g.call_function(T.neg, (x,))
        with g.inserting_before(out):
            c = g.call_function(operator.add, (a, b))
            d = g.call_method("sum", (c,), {"dim": 0})
        out.args = ((c, d),)
        g.lint()
        names = [n.name for n in g.nodes]
        users = {n.name: sorted(u.name for u in n.users) for n in g.nodes}
        with pytest.raises(RuntimeError, match="still had 2 users"):
            g.erase_node(x)
        e = g.call_function(T.sin, (x,))
        g.eliminate_dead_code()
        assert e not in list(g.nodes)
        b.replace_all_uses_with(a)
        g.erase_node(b)
        gm = T.fx.GraphModule(T.nn.Module(), g)
        return names, users, str(g), gm.code, [v.tolist() for v in gm(T.tensor([1.0, -2.0]))]
    assert edit(wt) == edit(torch)


def test_interpreter_transformer_and_shape_prop():
    tm, wm = _pair("mlp")
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    results = []
    for T, m in ((torch, tm), (wt, wm)):
        gm = T.fx.symbolic_trace(m)
        out = T.fx.Interpreter(gm).run(T.tensor(x))

        class NegRelu(T.fx.Transformer):
            def call_method(self, target, args, kwargs):
                if target == "relu":
                    return super().call_function(T.neg, args, kwargs)
                return super().call_method(target, args, kwargs)
        t = NegRelu(gm).transform()
        from_shape_prop = __import__(T.__name__ + ".fx.passes.shape_prop", fromlist=["ShapeProp"])
        from_shape_prop.ShapeProp(gm).propagate(T.tensor(x))
        metas = [(n.name, tuple(n.meta["tensor_meta"].shape), str(n.meta["tensor_meta"].dtype).split(".")[-1])
                 for n in gm.graph.nodes if "tensor_meta" in n.meta and hasattr(n.meta["tensor_meta"], "shape")]
        results.append(([o.detach().numpy() for o in out], t.code, [o.detach().numpy() for o in t(T.tensor(x))],
                        metas))
    (to, tc, tt, tmeta), (wo, wc, wtt, wmeta) = results
    for a, b in zip(to + tt, wo + wtt):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    assert wc == tc and "torch.neg" in wc and wmeta == tmeta


def test_replace_pattern_like_pytorch():
    def run(T):
        class M(T.nn.Module):
            def forward(self, x, w):
                a = T.relu(x + w)
                b = T.relu(x * 2 + w)
                return a + b + T.relu(w)

        def pattern(a, b):
            return T.relu(a + b)

        def replacement(a, b):
            return T.sigmoid(a - b)
        gm = T.fx.symbolic_trace(M())
        matches = T.fx.replace_pattern(gm, pattern, replacement)
        gm.graph.lint()
        return len(matches), [m.anchor.name for m in matches], gm.code, \
            gm(T.tensor([1.0, -1.0]), T.tensor([0.5, 2.0])).tolist()
    (*w, wv), (*t, tv) = run(wt), run(torch)
    assert w == t and wv == pytest.approx(tv, rel=1e-6)


def test_tracer_subclass_leaf_modules_and_concrete_args():
    def run(T):
        class Leafy(T.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return isinstance(m, T.nn.Sequential) or super().is_leaf_module(m, qualname)

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.Tanh())

            def forward(self, x, scale, flag):
                return self.body(x) * scale if flag else x
        g1 = Leafy().trace(M(), concrete_args={"flag": True})
        g2 = T.fx.Tracer().trace(M(), concrete_args={"flag": True})
        g3 = T.fx.symbolic_trace(M(), concrete_args={"flag": False})
        return str(g1), [n.op for n in g2.nodes], [n.op for n in g3.graph.nodes]
    w, t = run(wt), run(torch)
    assert w[0] == t[0] and w[1] == t[1]
    assert [op for op in w[2] if op != "call_function"] == [op for op in t[2] if op != "call_function"]


def test_control_flow_and_iteration_errors():
    for T in (torch, wt):
        def branchy(x):
            if x.sum() > 0:
                return x
            return -x
        with pytest.raises(T.fx.proxy.TraceError, match="symbolically traced variables cannot be used as inputs to "
                                                        "control flow"):
            T.fx.symbolic_trace(branchy)

        def loop(x):
            return [v for v in x]
        with pytest.raises(T.fx.proxy.TraceError, match="Proxy object cannot be iterated"):
            T.fx.symbolic_trace(loop)

        def unpack(x):
            a, b = x.split(1)
            return a - b
        gm = T.fx.symbolic_trace(unpack)
        assert gm(T.tensor([3.0, 1.0])).tolist() == [2.0]


def test_copies_and_pickle():
    _, wm = _pair("mlp")
    gm = wt.fx.symbolic_trace(wm)
    x = wt.randn(2, 4)
    for other in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm))):
        assert other.code == gm.code and type(other).__name__ == "MLP"
        for a, b in zip(other(x), gm(x)):
            assert a.tolist() == b.tolist()
        other.linear.weight.data.zero_()
        assert gm.linear.weight.abs().sum().item() > 0  # a deep copy owns its weights


def test_recompile_after_edit_and_graph_module_from_dict():
    for T in (torch, wt):
        gm = T.fx.symbolic_trace(lambda x: x + 1)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is operator.add:
                node.target = operator.mul
        gm.recompile()
        assert gm(T.tensor([3.0])).tolist() == [3.0] and "x * 1" in gm.code
        g = T.fx.Graph()
        x = g.placeholder("x")
        w = g.get_attr("lin.weight")
        g.output(g.call_module("lin", (x,)) + 0 if False else g.call_function(operator.matmul, (x, w)))
        gm2 = T.fx.GraphModule({"lin": T.nn.Linear(2, 2), "lin.weight": T.ones(2, 2)}, g)
        assert gm2(T.ones(1, 2)).tolist() == [[2.0, 2.0]]
