"""torch.export's builders and program transforms against PyTorch's: ShapesCollection / AdditionalInputs give
PyTorch's dynamic_shapes specs, register_dataclass carries dataclasses through export, unflatten mirrors the
module hierarchy, run_decompositions / default_decompositions lower the graph, draft_export reports instead
of raising; the programs give PyTorch's numbers on every device."""
import dataclasses

import pytest
import torch
from _nn_util import assert_close, randomize, rng_for, sync, wt


def _spec(s):
    """A dynamic_shapes spec with Dims as comparable strings (PyTorch's DimHint(DYNAMIC) is webtorch's Dim.DYNAMIC)."""
    if isinstance(s, dict):
        return {k: _spec(v) for k, v in s.items()}
    if isinstance(s, (tuple, list)):
        return type(s)(_spec(v) for v in s)
    if s is None or isinstance(s, int):
        return s
    return "DYNAMIC" if "DYNAMIC" in repr(s) else repr(s)


def model(T):
    nn = T.nn

    class Sub(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.register_buffer("scale", T.linspace(0.5, 2.0, 4))

        def forward(self, x):
            return self.lin(x) * self.scale

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()
            self.fc = nn.Linear(4, 2)
            self.act = nn.GELU()

        def forward(self, x, y):
            return self.fc(self.act(self.sub(x) + y))
    return M()


def _pair(device):
    tm = model(torch)
    randomize(tm, rng_for("export_more"))
    return tm, sync(tm, model(wt), device)


def _inputs(batch, device, seed=""):
    rng = rng_for(f"export_more{batch}{seed}")
    x, y = rng.standard_normal((batch, 4)).astype("float32"), rng.standard_normal((batch, 4)).astype("float32")
    return (torch.tensor(x), torch.tensor(y)), (wt.tensor(x, device=device), wt.tensor(y, device=device))


def test_shapes_collection_and_additional_inputs_give_pytorchs_specs(device):
    tm, wm = _pair(device)
    (tx, ty), (x, y) = _inputs(3, device)
    specs = []
    for T, m, a, b in ((torch, tm, tx, ty), (wt, wm, x, y)):
        sc = T.export.ShapesCollection()
        sc[a] = (T.export.Dim.DYNAMIC, 4)
        sc[b] = {0: T.export.Dim.DYNAMIC}
        ai = T.export.AdditionalInputs()
        ai.add(tuple(T.randn(5, 4) for _ in range(2)))
        ai.add((T.randn(3, 4), T.randn(3, 4)))
        specs.append((_spec(sc.dynamic_shapes(m, (a,), {"y": b})), _spec(ai.dynamic_shapes(m, (a, b))), len(sc)))
    assert specs[0] == specs[1]
    ep = wt.export.export(wm, (x, y), dynamic_shapes=sc)
    assert ep.range_constraints and "f32[s0, 4]" in str(ep)
    ai = wt.export.AdditionalInputs()
    ai.add((wt.randn(5, 4, device=device), wt.randn(5, 4, device=device)))
    ep = wt.export.export(wm, (x, y), dynamic_shapes=ai)
    (tx, ty), (x, y) = _inputs(6, device)
    with torch.no_grad():
        assert_close(ep.module()(x, y), tm(tx, ty), device, "AdditionalInputs program vs torch")
    with pytest.raises(ValueError, match="not found in args"):
        sc = wt.export.ShapesCollection()
        sc[wt.ones(2)] = {0: wt.export.Dim.DYNAMIC}
        sc.dynamic_shapes(wm, (x, y))
    ai = wt.export.AdditionalInputs()
    ai.add((x, y, 3))
    with pytest.raises(ValueError, match="differing"):
        ai.dynamic_shapes(lambda x, y, n=2: x, (x, y, 2.0))


def test_register_dataclass_through_export(device):
    progs = []
    for T in (torch, wt):
        @dataclasses.dataclass
        class Inp:
            feature: T.Tensor
            bias: int

        @dataclasses.dataclass
        class Out:
            res: T.Tensor
            other: T.Tensor
        T.export.register_dataclass(Inp)
        T.export.register_dataclass(Out)

        class Mod(T.nn.Module):
            def forward(self, x, y):
                return Out(res=(x.feature + x.bias).relu(), other=y * 2)
        dev = {} if T is torch else {"device": device}
        ep = T.export.export(Mod(), (Inp(T.arange(-2.0, 2.0, **dev).view(2, 2), 1), T.ones(3, **dev)))
        out = ep.module()(Inp(T.arange(4.0, **dev).view(2, 2) - 3, 1), T.arange(3.0, **dev))
        progs.append((ep, out, Out))
    (tep, tout, _), (ep, out, Out) = progs
    assert isinstance(out, Out)
    assert_close(out.res, tout.res, device, "res")
    assert_close(out.other, tout.other, device, "other")
    assert ep.graph_signature.user_inputs == ["x_feature", "y"]
    assert [s.arg.name for s in tep.graph_signature.input_specs][:1] == ["x_feature"]

    @dataclasses.dataclass
    class Unregistered:
        t: wt.Tensor
    with pytest.raises(ValueError, match="Unsupported input type"):
        wt.export.export(lambda u: u.t + 1, (Unregistered(wt.ones(2)),))
    with pytest.raises(ValueError, match="not a dataclass"):
        wt.export.register_dataclass(int)


def test_unflatten_mirrors_the_hierarchy_and_runs(device):
    tm, wm = _pair(device)
    (tx, ty), (x, y) = _inputs(3, device)
    tu = torch.export.unflatten(torch.export.export(tm, (tx, ty)))
    u = wt.export.unflatten(wt.export.export(wm, (x, y), dynamic_shapes={"x": {0: wt.export.Dim("b")}, "y": {0:
                                                                        wt.export.Dim("b")}}))
    assert [(n, type(m).__name__) for n, m in u.named_modules()] == [(n, type(m).__name__) for n, m in
                                                                     tu.named_modules()]
    assert list(u.state_dict()) == list(tu.state_dict())
    with torch.no_grad(), wt.no_grad():
        assert_close(u(x, y), tu(tx, ty), device, "unflatten vs torch")
        assert_close(u.sub(x), tu.sub(tx), device, "a submodule of the unflattened program vs torch's")
        assert_close(u.sub.lin(y), tu.sub.lin(ty), device, "a nested submodule vs torch's")
        u.sub.lin.weight.mul_(0)
        tu.sub.lin.weight.mul_(0)
        (tx, ty), (x, y) = _inputs(3, device, "again")
        assert_close(u(x, y), tu(tx, ty), device, "unflatten after a weight edit")
        assert u(*_inputs(5, device)[1]).shape == (5, 2)
        # a module swapped in takes the recorded call's place (top level and nested), as in PyTorch
        t_fc, t_lin = torch.nn.Linear(4, 2), torch.nn.Linear(4, 4)
        randomize(t_fc, rng_for("swap fc"))
        randomize(t_lin, rng_for("swap lin"))
        tu.fc, tu.sub.lin = t_fc, t_lin
        u.fc, u.sub.lin = sync(t_fc, wt.nn.Linear(4, 2), device), sync(t_lin, wt.nn.Linear(4, 4), device)
        assert_close(u(x, y), tu(tx, ty), device, "unflatten with swapped submodules vs torch")
        assert_close(u.sub(x), tu.sub(tx), device, "a submodule with a swapped child vs torch")

    class Adapter(wt.export.FlatArgsAdapter):
        def adapt(self, target_spec, input_spec, input_args, metadata=None, obj=None):
            return input_args[:2]
    with pytest.raises(TypeError, match="abstract"):
        wt.export.FlatArgsAdapter()
    ua = wt.export.unflatten(wt.export.export(wm, (x, y)), Adapter())
    assert_close(ua(x, y, x), wm(x, y), device, "adapted")


def test_run_decompositions_and_default_decompositions(device):
    tm, wm = _pair(device)
    (tx, ty), (x, y) = _inputs(3, device)
    table = wt.export.default_decompositions()
    assert isinstance(table, wt.export.CustomDecompTable) and isinstance(table, dict)
    assert wt.nn.functional.linear in table and len(table) > 500
    ep = wt.export.export(wm, (x, y), dynamic_shapes=({0: wt.export.Dim("b")}, {0: wt.export.Dim("b")}))
    low = ep.run_decompositions()
    names = {n.target.__name__ for n in low.graph.nodes if n.op == "call_function"}
    assert "linear" not in names and "gelu" not in names and "addmm" in names
    del table[wt.nn.functional.linear]
    kept = ep.run_decompositions(table)
    assert "linear" in {n.target.__name__ for n in kept.graph.nodes if n.op == "call_function"}
    (tx, ty), (x, y) = _inputs(4, device)
    with torch.no_grad():
        want = tm(tx, ty)
    for p in (low, kept):
        assert_close(p.module()(x, y), want, device, "run_decompositions vs torch")
    with pytest.raises(NotImplementedError, match="decomposition other than"):
        ep.run_decompositions({wt.nn.functional.linear: lambda *a: None})


def test_draft_export_reports_instead_of_raising():
    reports = []
    for T in (torch, wt):
        class Branch(T.nn.Module):
            def forward(self, x):
                return x * 2 if x.sum() > 0 else x - 1
        ep = T.export.draft_export(Branch(), (T.ones(3),))
        fine = T.export.draft_export(T.nn.Linear(2, 2), (T.ones(3, 2),))
        reports.append((ep._report.successful(), [str(f.failure_type) for f in ep._report.failures],
                        fine._report.successful(), "No issues are found" in str(fine._report),
                        "1 issue(s) found" in str(ep._report), ep.module()(T.ones(3) * 3).tolist()))
        with pytest.raises(RuntimeError, match="Runtime assertion failed for expression"):
            ep.module()(-T.ones(3))  # the other branch: the program checks the value it read
    assert reports[0] == reports[1]
    assert wt.export.Constraint is not None


def test_nested_inputs_with_shapes_collection():
    got = []
    for T in (torch, wt):
        class M(T.nn.Module):
            def forward(self, inp):
                return inp["x"] + inp["others"][0].sum(1, keepdim=True)
        x, y = T.randn(3, 4), T.randn(3, 5)
        sc = T.export.ShapesCollection()
        sc[x] = {0: T.export.Dim.DYNAMIC}
        sc[y] = {0: T.export.Dim.DYNAMIC}
        args = ({"x": x, "others": [y, 2]},)
        ep = T.export.export(M(), args, dynamic_shapes=sc)
        out = ep.module()({"x": T.arange(24.0).view(6, 4), "others": [T.arange(30.0).view(6, 5), 2]})
        got.append((_spec(sc.dynamic_shapes(M(), args)), out.tolist()))
    assert got[0] == got[1]
