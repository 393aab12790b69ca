"""Saved graphs (torch.jit.save / torch.export.save) are data, never code: a node's op resolves
only through webtorch's table of the ops fx records, nothing named in a file is imported or
called while it loads, and every malformed or hostile graph raises CheckpointError, in bounded
time. Legit round trips still give PyTorch's numbers."""
import copy
import inspect
import io
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import webtorch as wt
from webtorch import _graph_file, fx
from webtorch.serialization import CheckpointError


def _model(T):
    nn = T.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 6)
            self.norm = nn.LayerNorm(6)

        def forward(self, x):
            h = self.norm(T.tanh(self.fc(x)))
            top, idx = h.max(-1)  # a multi-output op: operator.getitem nodes
            return h.view(h.shape[0], 2, 3).sum(1) * top.unsqueeze(1), idx

    return M()


def _pair():
    torch.manual_seed(0)
    tm = _model(torch)
    wm = _model(wt)
    wm.load_state_dict({k: wt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, wm


_X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def saved():
    """(the saved file's bytes, its object: format, graph JSON, tensors) of a traced model."""
    traced = wt.jit.trace(_pair()[1], wt.tensor(_X))
    buf = io.BytesIO()
    wt.jit.save(traced, buf)
    data = buf.getvalue()
    return data, wt.load(io.BytesIO(data))


def _file(obj, doc=None):
    buf = io.BytesIO()
    wt.save(dict(obj, graph=json.dumps(doc)) if doc is not None else obj, buf)
    return buf.getvalue()


def _refused(data, match=None):
    """Both loaders refuse the file with CheckpointError, quickly, importing nothing."""
    before = set(sys.modules)
    for load in (wt.jit.load, wt.export.load):
        t0 = time.perf_counter()
        with pytest.raises(CheckpointError, match=match):
            load(io.BytesIO(data))
        assert time.perf_counter() - t0 < 5
    assert set(sys.modules) == before


def _splice(obj, *nodes, output=None):
    """The saved graph with nodes inserted before its output (the output kept unless given)."""
    doc = json.loads(obj["graph"])
    doc["nodes"][-1:-1] = [list(n) for n in nodes]
    if output is not None:
        doc["nodes"][-1][3] = {"tuple": [output]}
    return doc


def _call(name, target, *args):
    return [name, "call_function", target, {"tuple": list(args)}, {"dict": []}, None]


def test_round_trips_give_pytorchs_numbers(device, saved):
    assert json.loads(saved[1]["graph"])["dims"] == {"batch": [0, 0]} and '"sym"' in saved[1]["graph"]
    tm, wm = _pair()
    with torch.no_grad():
        want = tm(torch.from_numpy(np.concatenate([_X, _X[:2]])))
    x = wt.tensor(np.concatenate([_X, _X[:2]]), device=device)  # a batch size the trace did not see
    loaded = wt.jit.load(io.BytesIO(saved[0])).to(device)
    ep = wt.export.export(wm, (wt.tensor(_X),), dynamic_shapes=({0: wt.export.Dim("batch")},))
    buf = io.BytesIO()
    wt.export.save(ep, buf)
    exported = wt.export.load(io.BytesIO(buf.getvalue()))
    assert str(exported) == str(ep)
    for got in (loaded(x), exported.module().to(device)(x)):
        np.testing.assert_allclose(got[0].detach().cpu().numpy(), want[0].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got[1].cpu().numpy(), want[1].numpy())


def test_every_recordable_op_has_one_name_the_reader_resolves():
    """The writer and the reader share one table: every routed op in webtorch's op namespaces is
    named there, and its name resolves back to it."""
    ops, refs = _graph_file._ops(), _graph_file._refs()
    spaces = (wt, wt.Tensor, wt.nn.functional, wt.linalg, wt.special)
    routed = {fn for ns in spaces for fn in vars(ns).values() if callable(fn) and hasattr(fn, "_impl")}
    assert len(routed) > 400 and routed <= set(refs) and fx._recorder.clone in routed  # the tracer's own copy op too
    assert all(ops[refs[fn]] is fn for fn in routed)
    assert all(inspect.signature(fn._impl) for fn in routed)  # the reader binds every node's arguments
    import operator
    assert ops[("operator", "getitem")] is operator.getitem
    compiled_only = type("Step", (), {"_fx_target_name": "step", "__call__": lambda self: None})()
    with pytest.raises(RuntimeError, match="cannot be saved by reference"):
        _graph_file._target_ref(compiled_only)


_SENTINEL = "webtorch_hostile_graph_sentinel"


def _payloads(path):
    """Nodes whose op is no webtorch op, each of which would write `path` (or run a shell) if called."""
    quoted = json.dumps(path)
    return {
        "os.system": [_call("p", ["os", "system"], f"touch {path}")],
        "exec": [_call("p", ["builtins", "exec"], f"open({quoted}, 'w').close()")],
        "eval": [_call("p", ["builtins", "eval"], f"open({quoted}, 'w').close()")],
        "subprocess": [_call("p", ["subprocess", "check_call"], ["touch", path])],
        "open for write": [_call("p", ["builtins", "open"], path, "w")],
        "import_module/getattr chain": [_call("m", ["importlib", "import_module"], "os"),
                                        _call("s", ["builtins", "getattr"], {"node": "m"}, "system"),
                                        _call("p", ["operator", "call"], {"node": "s"}, f"touch {path}")],
        "webtorch non-op": [_call("p", ["webtorch.serialization", "save"], {"dict": []}, path)],
        "Tensor non-op": [_call("p", ["Tensor", "__init_subclass__"])],
        "module attribute": [_call("p", ["webtorch.ops.pointwise", "__builtins__"])],
        "import side effect": [_call("p", ["unittest.__main__", "main"])],
        "wrong target type": [_call("p", "os.system", "true")],
    }


@pytest.mark.parametrize("case", sorted(_payloads("")))
def test_code_exec_payloads_never_run(case, saved, tmp_path, monkeypatch):
    """Each payload spliced into a real traced model (its output unchanged, so a working file)."""
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    monkeypatch.setattr(subprocess, "check_call", lambda *a, **k: calls.append(a))
    path = str(tmp_path / _SENTINEL)
    data = _file(saved[1], _splice(saved[1], *_payloads(path)[case]))
    _refused(data, "is not a webtorch op")
    assert not os.path.exists(path) and not calls
    assert "unittest.__main__" not in sys.modules


class _Payload:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")  # PyTorch's, writing the archive
def test_pickled_payloads_and_torchscript_archives_are_refused(tmp_path, monkeypatch):
    """A graph file is a weights-only checkpoint: a pickled global (os.system through __reduce__)
    or a real TorchScript archive is refused, nothing run."""
    path = str(tmp_path / _SENTINEL)
    files = []
    for obj in (_Payload(path), {"format": _graph_file._FORMAT, "graph": "{}", "tensors": {}, "x": _Payload(path)}):
        buf = io.BytesIO()
        torch.save(obj, buf)
        files.append(buf.getvalue())
    buf = io.BytesIO()
    torch.jit.save(torch.jit.trace(torch.nn.Linear(2, 2), torch.zeros(1, 2)), buf)
    files.append(buf.getvalue())
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    for data in files:
        _refused(data, "not a module saved by webtorch's torch.jit.save")
    assert not os.path.exists(path) and not calls


def _valid(saved):
    return copy.deepcopy(json.loads(saved[1]["graph"]))


def _malformed():
    """(what, edit of the saved graph document or of the saved object, message)."""
    def nodes(f):
        return lambda doc: (f(doc["nodes"]), doc)[1]

    def first_call(nodes):
        return next(n for n in nodes if n[1] == "call_function")

    def deep(n):
        v = "x"
        for _ in range(n):
            v = [v]
        return v
    return [
        ("not JSON", lambda doc: "{nodes: [", "not valid JSON"),
        ("JSON nested past the parser", lambda doc: "[" * 200000 + "]" * 200000, "not valid JSON"),
        ("a list", lambda doc: [], "lacks its nodes"),
        ("nodes not a list", lambda doc: dict(doc, nodes={}), "lacks its nodes"),
        ("node not a list", nodes(lambda ns: ns.insert(0, "x")), "bad node"),
        ("node of 5 fields", nodes(lambda ns: ns[0].pop()), "bad node"),
        ("unknown node kind", nodes(lambda ns: ns[-1].__setitem__(1, "call_module")), "is a 'call_module'"),
        ("target not a pair", nodes(lambda ns: first_call(ns).__setitem__(2, ["a", "b", "c"])), "not a webtorch op"),
        ("name not a string", nodes(lambda ns: ns[0].__setitem__(0, 5)), "not a string or is used twice"),
        ("name used twice", nodes(lambda ns: ns.insert(1, list(ns[0]))), "used twice"),
        ("reference to an undefined node", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"node": "nowhere"}]})), "no earlier node defines"),
        ("reference to itself (a cycle)", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"node": first_call(ns)[0]}]})), "no earlier node defines"),
        ("reference to a later node (a cycle)", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"node": ns[-2][0]}]})), "no earlier node defines"),
        ("unhashable reference", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"node": [1]}]})), "no earlier node defines"),
        ("too many arguments", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"node": ns[0][0]}] * 9})), "arguments it does not take"),
        ("unknown keyword", nodes(lambda ns: first_call(ns).__setitem__(
            4, {"dict": [["evil", 1]]})), "arguments it does not take"),
        ("kwargs not a dict", nodes(lambda ns: first_call(ns).__setitem__(4, [1])), "malformed arguments"),
        ("kwargs with a non-string key", nodes(lambda ns: first_call(ns).__setitem__(4, {"dict": [[1, 2]]})),
         "malformed arguments"),
        ("args not a tuple", nodes(lambda ns: first_call(ns).__setitem__(3, 7)), "malformed arguments"),
        ("unknown tag", nodes(lambda ns: first_call(ns).__setitem__(3, {"pickle": "x"})), "unexpected value"),
        ("two tags", nodes(lambda ns: first_call(ns).__setitem__(3, {"tuple": [], "node": "x"})),
         "unexpected value"),
        ("unknown dtype", nodes(lambda ns: first_call(ns).__setitem__(4, {"dict": [["dtype", {"dtype": "evil"}]]})),
         "unexpected value"),
        ("bad device", nodes(lambda ns: first_call(ns).__setitem__(4, {"dict": [["device", {"device": "evil:9"}]]})),
         "unexpected value"),
        ("deep nesting", nodes(lambda ns: first_call(ns).__setitem__(3, {"tuple": [deep(100)]})), "nest deeper"),
        ("integer past int64", nodes(lambda ns: first_call(ns).__setitem__(3, {"tuple": [1 << 70]})),
         "not an int64"),
        ("huge declared size", nodes(lambda ns: first_call(ns).__setitem__(
            5, {"meta": [{"tuple": [10 ** 6, 10 ** 6]}, "float32"]})), "more than 2\\*\\*31 elements"),
        ("negative size", nodes(lambda ns: first_call(ns).__setitem__(
            5, {"meta": [{"tuple": [-1]}, "float32"]})), "bad tensor meta"),
        ("size of the wrong type", nodes(lambda ns: first_call(ns).__setitem__(
            5, {"meta": [{"tuple": ["3"]}, [1]]})), "bad tensor meta"),
        ("sym over an unknown dim", nodes(lambda ns: first_call(ns).__setitem__(
            3, {"tuple": [{"sym": [[[["nope"], 1]], 0]}]})), "not the file's dynamic dims"),
        ("no output", nodes(lambda ns: ns.pop()), "does not end with its output"),
        ("nodes after the output", nodes(lambda ns: ns.append(["late"] + ns[-2][1:])), "follow the output"),
        ("output of two values", nodes(lambda ns: ns[-1].__setitem__(3, {"tuple": [1, 2]})), "has arguments"),
        ("placeholder with arguments", nodes(lambda ns: ns[0].__setitem__(3, {"tuple": [1]})), "has arguments"),
        ("placeholder that is no input", nodes(lambda ns: ns[0].__setitem__(0, "stranger")), "no input"),
        ("placeholder without meta", nodes(lambda ns: ns[0].__setitem__(5, None)), "no tensor meta"),
        ("input missing its placeholder", lambda doc: dict(doc, inputs=dict(doc["inputs"], y=["input", 1])),
         "not its placeholders"),
        ("input of unknown kind", lambda doc: dict(doc, inputs=dict(doc["inputs"], x=["code", 0])), "bad input"),
        ("parameter the file lacks", lambda doc: dict(doc, inputs=dict(doc["inputs"], p_fc_weight=[
            "parameter", "elsewhere"])), "does not hold"),
        ("parameter named by a list", lambda doc: dict(doc, inputs=dict(doc["inputs"], p_fc_weight=[
            "parameter", ["fc", "weight"]])), "does not hold"),
        ("input positions with a gap", lambda doc: dict(doc, inputs=dict(doc["inputs"], x=["input", 3])),
         "positions"),
        ("dim of a missing input", lambda doc: dict(doc, dims={"batch": [5, 0]}), "bad dynamic dim"),
        ("dim past its input's rank", lambda doc: dict(doc, dims={"batch": [0, 7]}), "outside its input"),
        ("graph not a string", lambda obj: dict(obj, graph=5), "JSON graph and a dict"),
        ("tensors not a dict", lambda obj: dict(obj, tensors=[1]), "JSON graph and a dict"),
        ("tensor not a tensor", lambda obj: dict(obj, tensors=dict(obj["tensors"], x=1)), "JSON graph and a dict"),
        ("format missing", lambda obj: {k: v for k, v in obj.items() if k != "format"}, "not a module saved"),
        ("format not a string", lambda obj: dict(obj, format=wt.zeros(1)), "not a module saved"),
        ("not a dict", lambda obj: [obj["graph"]], "not a module saved"),
    ]


_OBJECT_EDITS = {"graph not a string", "tensors not a dict", "tensor not a tensor", "format missing",
                 "format not a string", "not a dict"}


@pytest.mark.parametrize("what,edit,match", _malformed(), ids=[m[0] for m in _malformed()])
def test_malformed_graphs_raise_one_error(what, edit, match, saved):
    if what in _OBJECT_EDITS:
        buf = io.BytesIO()
        wt.save(edit(dict(saved[1])), buf)
        data = buf.getvalue()
    else:
        doc = edit(_valid(saved))
        data = _file(saved[1], doc) if not isinstance(doc, str) else _file(dict(saved[1], graph=doc))
    _refused(data, match)


def test_module_paths_that_name_no_attribute(saved):
    """Tensor paths that Module refuses or that would overwrite its attributes."""
    obj = saved[1]
    for path in ("", "a..b", "forward", "norm", "__class__"):
        doc = _valid(saved)
        doc["inputs"]["p_fc_weight"] = ["parameter", path]
        _refused(_file(dict(obj, tensors=dict(obj["tensors"], **{path: obj["tensors"]["fc.weight"]})), doc),
                 "do not make a module")


def test_truncated_files(saved):
    data = saved[0]
    for n in sorted({0, 1, 4, 30, 100, len(data) // 3, len(data) // 2, len(data) - 22, len(data) - 1}):
        _refused(data[:n])


def test_a_graph_cannot_view_past_its_storage(device, saved):
    """A graph may call any op, as_strided included: a view outside its storage raises PyTorch's
    error when the graph runs (it used to read past the buffer), as eager does."""
    cases = [((9,), (1,), 0), ((2,), (-1,), 0), ((2,), (3,), 5), ((2,), (1,), -1), ((2,), (1, 1), 0)]
    for size, stride, offset in cases:
        with pytest.raises(RuntimeError) as want:
            torch.zeros(8).as_strided(size, stride, offset)
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(want.value))}$"):
            wt.zeros(8, device=device).as_strided(size, stride, offset)
        view = _call("v", ["Tensor", "as_strided"], {"node": "x"}, list(size), list(stride), offset)
        doc = _splice(saved[1], view, output={"node": "v"})
        loaded = wt.jit.load(io.BytesIO(_file(saved[1], doc))).to(device)
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(want.value))}$"):
            loaded(wt.zeros(2, 4, device=device))
    np.testing.assert_array_equal(wt.arange(6.0, device=device).as_strided((2, 2), (1, 2), 1).cpu().numpy(),
                                  torch.arange(6.0).as_strided((2, 2), (1, 2), 1).numpy())
