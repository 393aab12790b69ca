"""webtorch.save / webtorch.load: round trips, PyTorch interop both ways, safetensors, and
damaged or hostile files (which must raise clean errors, never run code)."""
import collections
import io
import json
import os
import pickle
import random
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import webtorch as wt
from webtorch.serialization import CheckpointError, UnpicklingError, save_safetensors, load_safetensors


def _np(t):
    return np.array(t.detach().cpu().tolist()).reshape(tuple(t.shape))


def _sample(device):
    x = wt.arange(12, dtype=wt.float32, device=device).reshape(3, 4)
    return OrderedDict(
        w=x, col=x[:, 1], i=wt.tensor([1, -2, 3], device=device), b=wt.tensor([True, False], device=device),
        h=wt.tensor([0.5, -1.25], dtype=wt.float16, device=device) if device != "webgpu" or _f16() else x,
        s=wt.tensor(3.5, device=device),
        nested={"list": [1, 2.5, None, True, "s", (1, (2, 3))], "big": 2 ** 70, "inf": float("-inf"), 7: "int key"},
        dt=wt.float16, empty=wt.zeros(0, 3, device=device), g=wt.ones(2, requires_grad=True, device=device))


def _f16():
    from webtorch.backends import webgpu
    return webgpu.get_backend().has_f16


def _same(a, b):
    if isinstance(a, wt.Tensor):
        assert isinstance(b, wt.Tensor) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(_np(a), _np(b))
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b and type(a) is type(b)


def test_roundtrip(device, tmp_path):
    obj = _sample(device)
    p = tmp_path / "ckpt.pt"
    wt.save(obj, p)
    back = wt.load(p, map_location=device)
    _same(obj, back)
    assert back["col"]._storage is back["w"]._storage  # views stay views
    assert back["w"].device.type == wt.device(device).type
    buf = io.BytesIO()
    wt.save([wt.tensor([1.0])], buf)
    assert wt.load(io.BytesIO(buf.getvalue()))[0].tolist() == [1.0]


def test_torch_saved_state_dict_loads_without_torch_code(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 10))
    sd = model.state_dict()
    sd["half"] = torch.randn(3, 5).half()[:, 1:4]
    sd["bf16"] = torch.tensor([1.5, -2.0]).bfloat16()
    sd["bool"] = torch.tensor([True, False])
    p = tmp_path / "model.pt"
    torch.save(sd, p)
    got = wt.load(p)
    assert isinstance(got, OrderedDict) and list(got) == list(sd)
    for k, v in sd.items():
        if k == "bf16":
            assert got[k].dtype == wt.bfloat16 and got[k].tolist() == [1.5, -2.0]
            continue
        assert got[k].dtype.name == str(v.dtype).replace("torch.", ""), k
        np.testing.assert_array_equal(_np(got[k]), v.numpy())
    assert got._metadata[""]["version"] == 1  # module version metadata is kept
    # the whole module's Parameters and plain containers too
    p2 = tmp_path / "params.pt"
    torch.save({"p": torch.nn.Parameter(torch.ones(2)), "meta": [1, "x", (2.5, None)], "dt": torch.int64,
                "dev": torch.device("cpu")}, p2)
    got = wt.load(p2)
    assert got["p"].requires_grad and got["meta"] == [1, "x", (2.5, None)] and got["dt"] is wt.int64
    assert str(got["dev"]) == "cpu"


def test_webtorch_file_loads_in_real_torch(device, tmp_path):
    obj = _sample(device)
    p = tmp_path / "for_torch.pt"
    wt.save(obj, p)
    t = torch.load(p, weights_only=True)
    assert list(t) == list(obj)
    for k in ("w", "col", "i", "b", "s", "empty"):
        np.testing.assert_array_equal(t[k].numpy(), _np(obj[k]))
    assert t["col"].untyped_storage().data_ptr() == t["w"].untyped_storage().data_ptr()
    assert t["nested"] == {"list": [1, 2.5, None, True, "s", (1, (2, 3))], "big": 2 ** 70, "inf": float("-inf"),
                           7: "int key"}
    assert t["dt"] is torch.float16 and t["g"].requires_grad
    # and a state dict round-trips into a torch module
    lin = torch.nn.Linear(3, 2)
    sd = OrderedDict(weight=wt.randn(2, 3, device=device), bias=wt.randn(2, device=device))
    wt.save(sd, p)
    lin.load_state_dict(torch.load(p, weights_only=True))
    np.testing.assert_allclose(lin.weight.detach().numpy(), _np(sd["weight"]))


def test_parameters_roundtrip(tmp_path):
    from webtorch.nn.parameter import Parameter
    p = Parameter(wt.ones(3))
    wt.save({"p": p}, tmp_path / "p.pt")
    assert type(wt.load(tmp_path / "p.pt")["p"]).__name__ == "Parameter"
    assert isinstance(torch.load(tmp_path / "p.pt", weights_only=True)["p"], torch.nn.Parameter)


def test_safetensors(device, tmp_path):
    x = wt.arange(6, dtype=wt.float32, device=device).reshape(2, 3)
    d = {"a": x, "b": wt.tensor([1, 2], device=device), "t": x.t(), "z": wt.tensor(2.0, device=device)}
    p = tmp_path / "m.safetensors"
    wt.save(d, p)  # by extension
    raw = p.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    assert header["a"]["dtype"] == "F32" and header["a"]["shape"] == [2, 3] and header["b"]["dtype"] == "I64"
    assert (8 + n) % 8 == 0
    back = wt.load(p, map_location=device)
    for k in d:
        np.testing.assert_array_equal(_np(back[k]), _np(d[k]))
    back2 = load_safetensors(str(p))
    assert back2["t"].tolist() == x.t().tolist()
    save_safetensors({"w": x}, tmp_path / "x.bin", metadata={"format": "pt"})
    assert wt.load(tmp_path / "x.bin")["w"].tolist() == x.tolist()
    with pytest.raises(TypeError):
        save_safetensors({"w": [1, 2]}, tmp_path / "bad.safetensors")


def test_pure_python_byte_paths(monkeypatch):
    """The no-numpy (Pyodide) conversions give the same bytes and values."""
    from webtorch import _checkpoint_io as S
    for dt in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "bfloat16"):
        a = np.arange(-3, 5).astype({"bool": "bool", "bfloat16": "float32"}.get(dt, dt))
        data = (a.view(np.uint32) >> 16).astype("<u2").tobytes() if dt == "bfloat16" else \
            a.astype(S._NP_LE[dt]).tobytes()
        fast, fdt = S._from_bytes(data, dt)
        monkeypatch.setattr(S, "_np", None)
        slow, sdt = S._from_bytes(data, dt)
        monkeypatch.undo()
        assert fdt == sdt and [float(v) for v in fast] == [float(v) for v in list(slow)], dt
    t = wt.tensor([1.5, -2.0, 3.25])
    b1 = S._storage_bytes(t._storage)
    monkeypatch.setattr(S, "_np", None)
    assert S._storage_bytes(t._storage) == b1


# ---- damaged and hostile files --------------------------------------------------------------------
def _ok_or_clean(data, expect):
    try:
        got = wt.load(io.BytesIO(data))
    except CheckpointError as e:
        assert "not a valid webtorch/PyTorch checkpoint" in str(e) or "Weights only load failed" in str(e)
        return False
    if expect is not None:
        _same(expect, got)
    return True


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fz")
    wt.save(OrderedDict(w=wt.arange(6, dtype=wt.float32).reshape(2, 3), n=[1, "a"]), d / "w.pt")
    torch.save(OrderedDict(w=torch.arange(6, dtype=torch.float32).reshape(2, 3), n=[1, "a"]), d / "t.pt")
    save_safetensors({"w": wt.arange(6, dtype=wt.float32).reshape(2, 3)}, d / "s.safetensors")
    return {k: (d / f).read_bytes() for k, f in (("w", "w.pt"), ("t", "t.pt"), ("s", "s.safetensors"))}


@pytest.mark.parametrize("kind", ["w", "t", "s"])
def test_truncated_everywhere(files, kind):
    data = files[kind]
    cuts = sorted(set(list(range(0, 64)) + list(range(0, len(data), max(1, len(data) // 150)))))
    for k in cuts:
        if k < len(data):
            assert not _ok_or_clean(data[:k], None), k


@pytest.mark.parametrize("kind", ["w", "t", "s"])
def test_garbled_everywhere(files, kind):
    data = files[kind]
    expect = wt.load(io.BytesIO(data)) if kind != "s" else None
    step = max(1, len(data) // 300)
    for pos in range(0, len(data), step):
        for val in (0x00, 0xFF, data[pos] ^ 0x55):
            bad = bytearray(data)
            bad[pos] = val
            _ok_or_clean(bytes(bad), expect)


def _zip_with_pickle(pkl, extra=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        for k, v in (extra or {}).items():
            z.writestr("archive/" + k, v)
    return buf.getvalue()


class _Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


@pytest.mark.parametrize("proto", [2, 4])
def test_hostile_pickles_never_run(tmp_path, proto):
    marker = tmp_path / "pwned"
    for payload in (_Evil(os.system, f"touch {marker}"), {"x": _Evil(eval, "1+1")},
                    [_Evil(__import__, "subprocess")]):
        data = _zip_with_pickle(pickle.dumps(payload, protocol=proto))
        with pytest.raises(UnpicklingError) as ei:
            wt.load(io.BytesIO(data))
        assert "Unsupported global" in str(ei.value)
        assert any(f"GLOBAL {n} was not an allowed global" in str(ei.value) for n in ("posix.system", "eval",
                                                                                   "__import__", "nt.system"))
        assert isinstance(ei.value, RuntimeError) and isinstance(ei.value, pickle.UnpicklingError)
    assert not marker.exists()


def test_garbled_pickle_stream(files):
    """Valid zip, damaged data.pkl: the interpreter itself must fail cleanly."""
    z = zipfile.ZipFile(io.BytesIO(files["t"]))
    pre = z.namelist()[0].split("/")[0] + "/"
    pkl = z.read(pre + "data.pkl")
    storages = {n[len(pre):]: z.read(n) for n in z.namelist() if "/data/" in n}
    for pos in range(len(pkl)):
        for val in (0x00, 0x28, 0x52, 0xFF):
            bad = bytearray(pkl)
            bad[pos] = val
            _ok_or_clean(_zip_with_pickle(bytes(bad), storages), None)
    for cut in range(len(pkl)):
        assert not _ok_or_clean(_zip_with_pickle(pkl[:cut], storages), None)


def test_lying_metadata(files):
    pkl_big = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
               b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQK\x00K\x64\x85K\x01\x85\x89)tR.")
    with pytest.raises(CheckpointError, match="reaches element"):
        wt.load(io.BytesIO(_zip_with_pickle(pkl_big, {"data/0": b"\0" * 24})))
    with pytest.raises(CheckpointError, match="holds 8 bytes"):
        wt.load(io.BytesIO(_zip_with_pickle(pkl_big, {"data/0": b"\0" * 8})))
    with pytest.raises(CheckpointError, match="missing"):
        wt.load(io.BytesIO(_zip_with_pickle(pkl_big)))
    with pytest.raises(CheckpointError, match="raw pickle"):
        wt.load(io.BytesIO(pickle.dumps([1, 2], protocol=2)))
    with pytest.raises(CheckpointError, match="unrecognized format"):
        wt.load(io.BytesIO(b"hello world, not a checkpoint"))
    with pytest.raises(CheckpointError, match="empty"):
        wt.load(io.BytesIO(b""))
    hdr = json.dumps({"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
    with pytest.raises(CheckpointError, match="outside the file"):
        wt.load(io.BytesIO(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 8))
    deep = b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b"."
    with pytest.raises(CheckpointError, match="nest deeper than 1000"):
        wt.load(io.BytesIO(_zip_with_pickle(deep)))


def test_no_numpy_end_to_end(monkeypatch, tmp_path):
    """Pyodide without numpy: the pure backend and struct/array conversions, both directions."""
    from webtorch import _device, _checkpoint_io as S
    from webtorch.backends.cpu import PureBackend
    monkeypatch.setattr(S, "_np", None)
    monkeypatch.setitem(_device._backends, "cpu", PureBackend())
    torch.save(OrderedDict(w=torch.tensor([[1.5, -2.0]]), h=torch.tensor([0.5], dtype=torch.float16),
                           i=torch.tensor([7, -9]), b=torch.tensor([True])), tmp_path / "t.pt")
    got = wt.load(tmp_path / "t.pt")
    assert got["w"].tolist() == [[1.5, -2.0]] and got["h"].tolist() == [0.5] and got["i"].tolist() == [7, -9]
    assert got["b"].tolist() == [True]
    wt.save(got, tmp_path / "w.pt")
    t = torch.load(tmp_path / "w.pt", weights_only=True)
    assert t["w"].tolist() == [[1.5, -2.0]] and t["h"].dtype is torch.float16 and t["i"].tolist() == [7, -9]
    save_safetensors({"w": got["w"]}, tmp_path / "s.safetensors")
    assert load_safetensors(tmp_path / "s.safetensors")["w"].tolist() == [[1.5, -2.0]]


def test_optimizer_state_dict_through_files(tmp_path):
    """An Adam state dict saved by webtorch resumes a torch.optim.Adam, and back."""
    p = wt.tensor([1.0, 2.0], requires_grad=True)
    opt = wt.optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = wt.tensor([0.5, -1.0])
    opt.step()
    wt.save(opt.state_dict(), tmp_path / "opt.pt")
    tp = torch.tensor([1.0, 2.0], requires_grad=True)
    topt = torch.optim.Adam([tp], lr=0.1, amsgrad=True)
    topt.load_state_dict(torch.load(tmp_path / "opt.pt", weights_only=True))
    assert topt.state[tp]["step"].item() == 1.0
    torch.save(topt.state_dict(), tmp_path / "topt.pt")
    opt2 = wt.optim.Adam([wt.tensor([1.0, 2.0], requires_grad=True)], lr=0.5)
    opt2.load_state_dict(wt.load(tmp_path / "topt.pt"))
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["betas"] == (0.9, 0.999)
    st = opt2.state[opt2.param_groups[0]["params"][0]]
    assert st["step"] == 1.0 and st["exp_avg"].tolist() == pytest.approx([0.05, -0.1])


# ---- whole objects (issue #9) ---------------------------------------------------------------------
Pair = collections.namedtuple("Pair", "a b")


class Point:
    """A user class: refused by weights_only=True until allow-listed, as in PyTorch."""

    def __init__(self, x, t):
        self.x, self.t = x, t


def _torch_net():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                            torch.nn.Flatten(), torch.nn.Linear(36, 10), torch.nn.LayerNorm(10), torch.nn.GELU())
    m[1].running_mean.uniform_(-1, 1)
    return m.eval()


def _torch_error(data, **kw):
    with pytest.raises(pickle.UnpicklingError) as ei:
        torch.load(io.BytesIO(data), **kw)
    return str(ei.value)


def test_torch_pickled_module_loads_when_trusted(device):
    m = _torch_net()
    buf = io.BytesIO()
    torch.save(m, buf)
    data = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError) as ei:  # the default refuses, with PyTorch's words
        wt.load(io.BytesIO(data))
    assert str(ei.value) == _torch_error(data)
    w = wt.load(io.BytesIO(data), weights_only=False, map_location=device)
    assert type(w) is wt.nn.Sequential and type(w[5]) is wt.nn.Linear and not w.training
    assert type(w[5].weight) is wt.nn.Parameter and w[5].weight.device.type == wt.device(device).type
    x = torch.randn(2, 1, 8, 8)
    np.testing.assert_allclose(_np(w(wt.tensor(x.numpy(), device=device))), m(x).detach().numpy(), atol=1e-5)


def test_webtorch_module_saved_whole(device, tmp_path):
    m = wt.nn.Sequential(wt.nn.Linear(3, 2), wt.nn.ReLU()).to(device)
    wt.save(m, tmp_path / "m.pt")
    names = zipfile.ZipFile(tmp_path / "m.pt").namelist()
    on_gpu = ["m/webtorch.locations"] if device == "webgpu" else []  # where webtorch.load restores them
    assert names == ["m/data.pkl", "m/.format_version", "m/.storage_alignment", "m/byteorder", "m/data/0", "m/data/1",
                     *on_gpu, "m/version", "m/.data/serialization_id"]  # torch's records, no webtorch.json
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL webtorch.nn.modules.container.Sequential was not"):
        wt.load(tmp_path / "m.pt")
    x = wt.randn(4, 3, device=device)
    for back in (wt.load(tmp_path / "m.pt", weights_only=False, map_location=device),
                 _with_safe([wt.nn.Sequential, wt.nn.Linear, wt.nn.ReLU], tmp_path / "m.pt", map_location=device)):
        assert type(back[0].weight) is wt.nn.Parameter and back[0].weight.requires_grad
        np.testing.assert_array_equal(_np(back(x)), _np(m(x)))
    assert wt.serialization.get_safe_globals() == []


def _with_safe(globs, f, **kw):
    with wt.serialization.safe_globals(globs):
        assert wt.serialization.get_safe_globals() == globs
        return wt.load(f, **kw)


def test_any_object_both_ways(tmp_path):
    """numpy arrays, sets, bytes, complex, user classes, shared views: webtorch -> torch and back."""
    x = wt.arange(6, dtype=wt.float32).reshape(2, 3)
    obj = {"np": np.arange(4.0), "set": {1, 2}, "b": b"xy", "c": 1 + 2j, "ba": bytearray(b"q"),
           "p": Point(3, x[:, 1]), "x": x, "sz": x.shape, "dt": wt.int64, "dev": wt.device("cpu")}
    wt.save(obj, tmp_path / "w.pt")
    t = torch.load(tmp_path / "w.pt", weights_only=False)
    np.testing.assert_array_equal(t["np"], obj["np"])
    assert (t["set"], t["b"], t["c"], t["ba"], t["p"].x) == ({1, 2}, b"xy", 1 + 2j, bytearray(b"q"), 3)
    assert t["p"].t.tolist() == [1.0, 4.0]
    assert t["p"].t.untyped_storage().data_ptr() == t["x"].untyped_storage().data_ptr()
    assert t["sz"] == torch.Size([2, 3]) and type(t["sz"]) is torch.Size and t["dt"] is torch.int64
    assert str(_torch_error((tmp_path / "w.pt").read_bytes())) == str(
        pytest.raises(pickle.UnpicklingError, wt.load, tmp_path / "w.pt").value)
    torch.save(t, tmp_path / "t.pt")
    for f in ("w.pt", "t.pt"):
        back = wt.load(tmp_path / f, weights_only=False)
        np.testing.assert_array_equal(back["np"], obj["np"])
        assert (back["set"], back["b"], back["c"], back["ba"]) == ({1, 2}, b"xy", 1 + 2j, bytearray(b"q"))
        assert type(back["p"]) is Point and back["p"].t._storage is back["x"]._storage
        assert back["p"].t.tolist() == [1.0, 4.0] and back["dt"] is wt.int64 and back["sz"] == (2, 3)
    # without numpy and user classes, weights_only=True reads it on both sides
    del obj["np"], obj["p"]
    wt.save(obj, tmp_path / "w2.pt")
    t = torch.load(tmp_path / "w2.pt", weights_only=True)
    torch.save(t, tmp_path / "t2.pt")
    back = wt.load(tmp_path / "t2.pt")
    assert (back["set"], back["b"], back["c"], back["ba"], back["dt"]) == ({1, 2}, b"xy", 1 + 2j, bytearray(b"q"),
                                                                          wt.int64)
    assert type(back["sz"]) is wt.Size and back["x"].tolist() == x.tolist()


def test_safe_globals_allow_user_class(tmp_path):
    torch.save({"p": Point(1.5, torch.ones(2))}, tmp_path / "p.pt")
    data = (tmp_path / "p.pt").read_bytes()
    with pytest.raises(pickle.UnpicklingError) as ei:
        wt.load(tmp_path / "p.pt")
    assert str(ei.value) == _torch_error(data)
    assert f"add_safe_globals([{__name__}.Point])" in str(ei.value)
    wt.serialization.add_safe_globals([Point])
    try:
        assert wt.serialization.get_safe_globals() == [Point]
        got = wt.load(tmp_path / "p.pt")["p"]
        assert type(got) is Point and got.x == 1.5 and got.t.tolist() == [1.0, 1.0]
    finally:
        wt.serialization.clear_safe_globals()
    assert wt.serialization.get_safe_globals() == []
    got = _with_safe([(Point, f"{__name__}.Point")], tmp_path / "p.pt")["p"]
    assert type(got) is Point
    with pytest.raises(pickle.UnpicklingError):  # outside the block it is refused again
        wt.load(tmp_path / "p.pt")
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        wt.load(tmp_path / "p.pt", pickle_module=pickle)


def test_map_location_forms(device, tmp_path):
    torch.save({"w": torch.arange(4.0)[1:]}, tmp_path / "t.pt")
    want = wt.device(device).type
    seen = []
    for ml, dev in ((device, want), (wt.device(device), want), ({"cpu": device}, want), (None, "cpu"),
                    (lambda s, loc: seen.append(loc), "cpu"),  # None: where it was saved
                    (lambda s, loc: wt.tensor([9.0, 1.0, 2.0, 3.0], device=device)._storage, want)):
        got = wt.load(tmp_path / "t.pt", map_location=ml)["w"]
        assert got.device.type == dev and got.tolist() == [1.0, 2.0, 3.0]
    assert seen == ["cpu"]
    assert wt.load(tmp_path / "t.pt", map_location={"cuda:0": "cpu"})["w"].device.type == "cpu"
    with pytest.raises(TypeError, match="must return a storage"):
        wt.load(tmp_path / "t.pt", map_location=lambda s, loc: "cpu")


def test_record_layout_matches_torch(tmp_path):
    sd = OrderedDict(w=torch.ones(2, 3), b=torch.zeros(3))
    torch.save(sd, tmp_path / "t.pt")
    wt.save(wt.load(tmp_path / "t.pt"), tmp_path / "t2.pt")
    zt, zw = zipfile.ZipFile(tmp_path / "t.pt"), zipfile.ZipFile(tmp_path / "t2.pt")
    assert [n for n in zw.namelist() if not n.endswith("webtorch.json")] == \
        [n.replace("t/", "t2/") for n in zt.namelist()]
    for n in ("data.pkl", "version", ".format_version", ".storage_alignment", "byteorder"):
        assert zw.read("t2/" + n) == zt.read("t/" + n), n  # the same pickle bytes as torch.save writes
    assert len(zw.read("t2/.data/serialization_id")) == 40


# ---- hostile files (issue #11): a fixed corpus, seeded mutations, bombs measured in a subprocess ----
class _Pid:
    def __init__(self, numel, key="0"):
        self.pid = ("storage", torch.FloatStorage, key, "cpu", numel)


class _R:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class _PidPickler(pickle.Pickler):
    def persistent_id(self, obj):
        return obj.pid if isinstance(obj, _Pid) else None


def _crafted(obj):
    buf = io.BytesIO()
    _PidPickler(buf, 2).dump(obj)
    return buf.getvalue()


def _view(size, stride, offset=0, numel=6):
    return _crafted(_R(torch._utils._rebuild_tensor_v2, _Pid(numel), offset, size, stride, False, OrderedDict()))


def _zip(pkl, extra=None, deflate=False, big=None):
    """A PyTorch-layout zip; big=(record, MiB) streams that many zero MiB into a deflated record."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        if not big or big[0] != "data.pkl":
            z.writestr("archive/data.pkl", pkl)
        for k, v in dict({"version": b"3\n"}, **(extra or {})).items():
            z.writestr("archive/" + k, v)
        if big:
            with z.open("archive/" + big[0], "w") as w:
                for _ in range(big[1]):
                    w.write(bytes(1 << 20))
    return buf.getvalue()


def _lie(data, name, size):
    """Rewrite the uncompressed size that `name`'s local and central headers declare."""
    data, nb = bytearray(data), name.encode()
    for sig, name_len_at, size_at, name_at in ((b"PK\x03\x04", 26, 22, 30), (b"PK\x01\x02", 28, 24, 46)):
        i = data.find(sig)
        while i >= 0:
            n = struct.unpack_from("<H", data, i + name_len_at)[0]
            if data[i + name_at:i + name_at + n] == nb:
                struct.pack_into("<I", data, i + size_at, size)
            i = data.find(sig, i + 4)
    return bytes(data)


def _chain(n, lists=False):
    """memo i = (memo i-1, memo i-1) (or a list of them): 2**n nodes when expanded, n in the file."""
    out = bytearray(b")q\x00")
    for i in range(1, n):
        out += (b"0(h%ch%clq%c" if lists else b"0h%ch%c\x86q%c") % (i - 1, i - 1, i)
    return bytes(out)


_ST = {"data/0": struct.pack("<6f", *range(6))}
_OK = object()
_CORPUS = {  # case: (make the file, the error it must raise or _OK)
    "deep tuple (10^6, 1 KB deflated)": (lambda: _zip(b"\x80\x02)" + b"\x85" * 10 ** 6 + b".", deflate=True),
                                         "nest deeper"),
    "deep tuple as a dict key": (lambda: _zip(b"\x80\x02}()" + b"\x85" * 10 ** 6 + b"K\x01u.", deflate=True),
                                 "nest deeper"),
    "deep list": (lambda: _zip(b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b"."), "nest deeper"),
    "billion laughs (lists)": (lambda: _zip(b"\x80\x02" + _chain(60, lists=True) + b"."), _OK),
    "billion laughs as a dict key": (lambda: _zip(b"\x80\x02}(" + _chain(60) + b"K\x01u."), "expands to more than"),
    "billion laughs in a set": (lambda: _zip(b"\x80\x02c__builtin__\nset\n" + _chain(60) + b"\x85\x85R."),
                                "expands to more than"),
    "self-referencing list": (lambda: _zip(b"\x80\x02]q\x00h\x00a."), _OK),
    "record inflates past its declared size": (lambda: _lie(_zip(_view((6,), (1,)), deflate=True, big=("data/0", 64)),
                                                    "archive/data/0", 24), "Bad CRC"),
    "data.pkl inflates past its declared size": (lambda: _lie(_zip(b"\x80\x02N.", deflate=True, big=("data.pkl", 64)),
                                                      "archive/data.pkl", 3), "Bad CRC"),
    "declared size beyond deflate's ratio": (lambda: _lie(_zip(_view((6,), (1,), numel=1 << 29), _ST, deflate=True),
                                                          "archive/data/0", 1 << 31), "declares 2147483648 bytes from"),
    "deflate bomb matching its pickle": (lambda: _zip(_view((1 << 26,), (1,), numel=1 << 26), deflate=True,
                                              big=("data/0", 256)), "inflate to more than 64 MiB"),
    "truncated zip": (lambda: _zip(_view((6,), (1,)), _ST)[:150], "bad zip|truncated"),
    "bad CRC": (lambda: _zip(_view((6,), (1,)), _ST).replace(struct.pack("<f", 5), struct.pack("<f", 7)), "Bad CRC"),
    "storage smaller than declared": (lambda: _zip(_view((6,), (1,)), {"data/0": bytes(8)}),
                                      "holds 8 bytes, expected 24"),
    "huge storage numel": (lambda: _zip(_view((6,), (1,), numel=1 << 62), _ST), "expected 18446744073709551616"),
    "view past the storage": (lambda: _zip(_view((2, 4), (4, 1)), _ST), "reaches element 7"),
    "negative stride": (lambda: _zip(_view((2, 3), (3, -1)), _ST), "bad tensor stride"),
    "numel over 2**63": (lambda: _zip(_view((1 << 32, 1 << 32), (0, 0)), _ST),
                         "numel: integer multiplication overflow"),
    "size over int64": (lambda: _zip(_view((1 << 63,), (0,)), _ST), "bad tensor size"),
    "huge offset": (lambda: _zip(_view((1,), (1,), offset=1 << 70), _ST), "bad storage offset"),
    "empty view of huge dims": (lambda: _zip(_view((0, 1 << 62, 4), (1, 1, 1)), _ST), _OK),
    "unknown opcode": (lambda: _zip(b"\x80\x02\xff."), "unsupported pickle opcode 0xff"),
    "protocol 0 opcode": (lambda: _zip(b"I1\n."), "unsupported pickle opcode 0x49"),
    "huge string length": (lambda: _zip(b"\x80\x02\x8d" + struct.pack("<Q", 1 << 62) + b"."), "truncated"),
    "memo never stored": (lambda: _zip(b"\x80\x02h\x07."), "never stored"),
    "stack underflow": (lambda: _zip(b"\x80\x02\x86."), "underflow"),
    "no STOP": (lambda: _zip(b"\x80\x02N"), "without STOP"),
    "Tensor(huge)": (lambda: _zip(b"\x80\x02ctorch\nTensor\nJ\xff\xff\xff\x7f\x85R."), "sized by the file"),
    "bytearray(huge)": (lambda: _zip(b"\x80\x02c__builtin__\nbytearray\nJ\xff\xff\xff\x7f\x85R."), "sized by the file"),
    "calling a dtype": (lambda: _zip(b"\x80\x02ctorch\nfloat32\n)R."), "cannot rebuild"),
    "BUILD on a list": (lambda: _zip(b"\x80\x02]}b."), "Can only build Tensor"),
    "os.system": (lambda: _zip(pickle.dumps(_R(os.system, "true"), protocol=2)),
                  "GLOBAL posix.system was not an allowed"),
}


@pytest.mark.parametrize("case", list(_CORPUS))
def test_hostile_corpus(case):
    make, expect = _CORPUS[case]
    data = make()
    t0 = time.perf_counter()
    if expect is _OK:
        got = wt.load(io.BytesIO(data))
        if case.startswith("billion"):
            assert got[0] is got[1]  # shared references stay shared, never copied
    else:
        with pytest.raises(CheckpointError, match=expect):
            wt.load(io.BytesIO(data))
    assert time.perf_counter() - t0 < 10


def test_hostile_safetensors():
    def st(header, body=b""):
        h = json.dumps(header).encode() if not isinstance(header, bytes) else header
        return struct.pack("<Q", len(h)) + h + body
    w = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    for data, msg in ((struct.pack("<Q", 1 << 62) + b"{}", "does not fit"),
                      (st({"a": dict(w, data_offsets=[0, 1 << 40])}, bytes(8)), "outside the file"),
                      (st({"a": w, "b": dict(w, data_offsets=[4, 12])}, bytes(12)), "gaps or overlapping"),
                      (st({"a": w, "b": w}, bytes(8)), "gaps or overlapping"),
                      (st({"a": w}, bytes(12)), "belong to no tensor"),
                      (st({"a": dict(w, shape=[1 << 32, 1 << 32, 0])}, bytes(8)), "numel: integer multiplication"),
                      (st({"a": dict(w, shape=[-1])}, bytes(8)), "bad shape"),
                      (st({"a": dict(w, dtype="F99")}, bytes(8)), "bad safetensors entry"),
                      (st(b'{"a":' + b"[" * 100000 + b"]" * 100000 + b"}"), "not valid JSON"),
                      (st({"a": 5}), "bad safetensors entry"),
                      *((st({"__metadata__": meta, "a": w}, bytes(8)), "__metadata__ must map str to str")
                        for meta in ({"n": 1}, {"n": None}, {"n": {"k": "v"}}, {"n": ["v"]}, "v", ["v"], 5))):
        with pytest.raises(CheckpointError, match=msg):
            wt.load(io.BytesIO(data))
    for meta in ({"format": "pt", "": "é"}, {}, None):  # the spec's str -> str (null: none, as safetensors reads it)
        got = wt.load(io.BytesIO(st({"__metadata__": meta, "a": w}, struct.pack("<2f", 1.5, -2))))
        assert list(got) == ["a"] and got["a"].tolist() == [1.5, -2]


def test_safetensors_from_every_kind_of_source(device, tmp_path):
    """A path, bytes, a seekable file and a stream that only reads (read whole) load the same tensors
    as PyTorch saved them (bfloat16, bool, a 0-d and an empty one included)."""
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) - 7.25
    want = {"f": x, "h": x.half(), "bf": x.bfloat16(), "i": x.long() * 3, "b": x > 0, "s": x[0, 0, 0].clone(),
            "e": torch.zeros(0, 3, dtype=torch.int32)}
    if device == "webgpu" and not _f16():
        del want["h"]
    header, body = {"__metadata__": {"format": "pt"}}, b""
    for k, v in want.items():  # written here from PyTorch's bytes, in the spec's layout
        raw = v.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if v.numel() else b""
        header[k] = {"dtype": {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64",
                               torch.bool: "BOOL", torch.int32: "I32"}[v.dtype], "shape": list(v.shape),
                     "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    h = json.dumps(header).encode()
    data = struct.pack("<Q", len(h)) + h + body
    p = tmp_path / "t.safetensors"
    p.write_bytes(data)

    class Stream:  # no seek, no readinto
        def __init__(self):
            self.f = io.BytesIO(data)

        def read(self, n=-1):
            return self.f.read(n)
    with open(p, "rb") as fh:
        for src in (p, str(p), data, bytearray(data), memoryview(data), fh, Stream()):
            got = wt.load(src, map_location=device)
            assert list(got) == list(want)
            for k, v in want.items():
                assert str(got[k].dtype) == str(v.dtype) and got[k].device.type == device.split("-")[0]
                w = (got[k].float(), v.float()) if v.dtype == torch.bfloat16 else (got[k], v)
                np.testing.assert_array_equal(_np(w[0]), w[1].numpy())


def test_loads_peak_near_the_file_size(tmp_path):
    """A 128 MiB safetensors file or torch.save zip loads with a peak of at most 1.25x its size (each
    tensor read into memory its storage keeps: no whole-file read, no per-tensor copies; 4.0x
    before), measured with tracemalloc, which sees numpy's buffers."""
    n = 32 << 20
    want = np.arange(n, dtype=np.float32)
    save_safetensors({"w": wt.from_numpy(want)}, tmp_path / "big.safetensors")
    torch.save({"w": torch.from_numpy(want)}, tmp_path / "big.pt")
    for path, how in ((tmp_path / "big.safetensors", "path"), (tmp_path / "big.safetensors", "file"),
                      (tmp_path / "big.pt", "path")):
        tracemalloc.start()
        try:
            with open(path, "rb") as fh:
                t = wt.load(path if how == "path" else fh)["w"]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= 1.25 * 4 * n, (path.name, how, peak / (4 * n))
        assert np.array_equal(t.numpy(), want)
        del t


def test_views_may_outgrow_their_storage_only_so_far(tmp_path):
    """A stride-0 view holds more elements than its storage: PyTorch's loader accepts any within the
    storage's bounds, so a (10**6 x 10**6) view of one element is a memory bomb the moment anything
    touches it. webtorch refuses views over MAX_VIEW_NUMEL (2**31) elements beyond their storage's,
    from PyTorch's files (data.pkl) and its own (webtorch.json); smaller ones load as PyTorch's."""
    from webtorch.serialization import MAX_VIEW_NUMEL
    assert MAX_VIEW_NUMEL == 2 ** 31
    one = torch.tensor([2.5])
    ok = {"rows": torch.arange(3.0).expand(4, 3), "edge": one.expand(MAX_VIEW_NUMEL)}
    bombs = (one.expand(10 ** 6, 10 ** 6), one.expand(MAX_VIEW_NUMEL + 1), one.expand(3, 2 ** 30, 1).transpose(0, 2))

    def as_webtorch(t):  # the same view of the same storage
        base = t.untyped_storage()
        st = wt.from_numpy(torch.tensor([], dtype=t.dtype).set_(base).numpy())
        return st.as_strided(t.shape, t.stride(), t.storage_offset())
    for save, conv in ((torch.save, lambda t: t), (wt.save, as_webtorch)):
        save({k: conv(v) for k, v in ok.items()}, tmp_path / "ok.pt")
        got = wt.load(tmp_path / "ok.pt")
        back = torch.load(tmp_path / "ok.pt")
        assert got["edge"].shape == back["edge"].shape and got["edge"].stride() == (0,)
        np.testing.assert_array_equal(_np(got["rows"]), back["rows"].numpy())
        assert float(got["edge"][MAX_VIEW_NUMEL - 1]) == 2.5
        for bomb in bombs:
            save(conv(bomb), tmp_path / "bomb.pt")
            assert torch.load(tmp_path / "bomb.pt").shape == bomb.shape  # PyTorch takes it
            with pytest.raises(CheckpointError, match="a view may outgrow its storage up to 2147483648 elements"):
                wt.load(tmp_path / "bomb.pt")


def test_seeded_mutations(files):
    """Random byte changes of valid files (whole zips, and data.pkl re-zipped): a clean error or a value."""
    rng = random.Random(0)
    buf = io.BytesIO()
    torch.save(_torch_net(), buf)
    sources = [files["t"], files["w"], buf.getvalue(), files["s"]]
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    pkl = z.read("archive/data.pkl")
    recs = {n[len("archive/"):]: z.read(n) for n in z.namelist() if n != "archive/data.pkl"}
    for i in range(600):
        src = bytearray(pkl if i % 2 else rng.choice(sources))
        for _ in range(rng.randint(1, 6)):
            src[rng.randrange(len(src))] = rng.randrange(256)
        data = _zip(bytes(src), recs) if i % 2 else bytes(src)
        t0 = time.perf_counter()
        _ok_or_clean(data, None)
        assert time.perf_counter() - t0 < 10


_BOMB_CHECK = """
import io, sys, time, tracemalloc
import webtorch as wt
from webtorch.serialization import CheckpointError
wt.load(io.BytesIO(open(sys.argv[1], "rb").read()))  # warm: imports and first allocations
for f in sys.argv[2:]:
    data = open(f, "rb").read()
    t0 = time.perf_counter()
    tracemalloc.start()  # not ru_maxrss: a child starts with its parent's (pytest's) high-water mark
    try:
        wt.load(io.BytesIO(data))
        raise SystemExit(f + " loaded")
    except CheckpointError:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f, round(time.perf_counter() - t0, 3), peak // 1024)
"""


def test_bombs_stay_small_in_memory(tmp_path):
    """Each bomb inflates to 64-256 MiB if read naively; the loader's peak stays under 16 MiB above base."""
    names = []
    for i, case in enumerate(("record inflates past its declared size", "data.pkl inflates past its declared size",
                              "deflate bomb matching its pickle", "declared size beyond deflate's ratio")):
        (tmp_path / f"b{i}.pt").write_bytes(_CORPUS[case][0]())
        names.append(str(tmp_path / f"b{i}.pt"))
    (tmp_path / "ok.pt").write_bytes(_zip(_view((6,), (1,)), _ST))
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(__file__)), "py"))
    out = subprocess.run([sys.executable, "-c", _BOMB_CHECK, str(tmp_path / "ok.pt")] + names, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert len(rows) == len(names)
    for f, secs, kib in rows:
        assert float(secs) < 10 and int(kib) < 16 * 1024, (f, secs, kib)


def test_subclassed_and_shared_containers_keep_their_type(tmp_path):
    """A namedtuple, torch.Size, numpy float or a shared container is not a plain tree: it keeps its type
    and identity through data.pkl."""
    wt.save({"s": wt.ones(2, 3).shape, "f": np.float64(1.5)}, tmp_path / "s.pt")
    got = wt.load(tmp_path / "s.pt", weights_only=False)
    assert type(got["s"]) is wt.Size and type(got["f"]) is np.float64
    assert "webtorch.json" not in str(zipfile.ZipFile(tmp_path / "s.pt").namelist())
    assert type(torch.load(tmp_path / "s.pt", weights_only=False)["s"]) is torch.Size
    shared = [1, [2]]
    wt.save({"a": shared, "b": shared}, tmp_path / "a.pt")  # aliasing survives (data.pkl, not JSON)
    got = wt.load(tmp_path / "a.pt")
    assert got["a"] is got["b"] and got["a"] == shared
    laughs = wt.load(io.BytesIO(_CORPUS["billion laughs (lists)"][0]()))
    wt.save(laughs, tmp_path / "l.pt")  # 2**60 nodes if walked as a tree: saved as the 60 it has
    assert (tmp_path / "l.pt").stat().st_size < 4096
    wt.save([Pair(1, 2)], tmp_path / "n.pt")
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Pair was not"):
        wt.load(tmp_path / "n.pt")
