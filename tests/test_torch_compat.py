"""What unmodified PyTorch programs touch, compared with PyTorch 2.13: `import torch` as webtorch
(only where asked), torch.accelerator, torch.backends flags, nn.parallel, torch.distributed,
torch.onnx, legacy tensor types and `.type()`, `size=` keywords, `range` indices, `Tensor.data`."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from _nn_util import assert_close, wt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ALIAS_CHECKS = r'''
import importlib.util, sys
import webtorch
assert "site-packages/torch" in importlib.util.find_spec("torch").origin  # importing webtorch shadows nothing
from webtorch import _torch_alias
_torch_alias.install()
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim.lr_scheduler
import torch.backends.cudnn as cudnn
from torch.utils.data import DataLoader, TensorDataset
from torch.optim import lr_scheduler
from torch.nn.parallel import DataParallel
from torch import autograd
assert torch is webtorch and nn is webtorch.nn and F is webtorch.nn.functional and DataParallel is nn.DataParallel
assert lr_scheduler is torch.optim.lr_scheduler is webtorch.optim.lr_scheduler and DataLoader is webtorch.utils.data.DataLoader
assert autograd is webtorch.autograd and cudnn is webtorch.backends.cudnn
assert webtorch.__spec__.name == "webtorch" and not hasattr(F, "__path__")
print(torch.float32, torch.zeros(2, dtype=torch.int64), torch.Size([2]))
for name in ("torch.nope", "torch.utils.tensorboard", "torch.nn.nope"):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        print(type(e).__name__, e.name, e)
try:
    import torch.nn.functional.nope
except ModuleNotFoundError as e:
    print(e)
_torch_alias.uninstall()
assert not any(k == "torch" or k.startswith("torch.") for k in sys.modules)
assert "site-packages/torch" in importlib.util.find_spec("torch").origin
'''


def test_import_torch_alias_only_where_installed():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py"))
    r = subprocess.run([sys.executable, "-c", ALIAS_CHECKS], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "torch.float32 tensor([0, 0]) torch.Size([2])",
        "ModuleNotFoundError torch.nope No module named 'torch.nope'",
        "ModuleNotFoundError tensorboard No module named 'tensorboard'",  # PyTorch's, without the tensorboard package
        "ModuleNotFoundError torch.nn.nope No module named 'torch.nn.nope'",
        "No module named 'torch.nn.functional.nope'; 'torch.nn.functional' is not a package"]


def test_accelerator():
    from webtorch import webgpu
    has = webgpu.is_available()
    assert wt.accelerator.is_available() is has
    assert wt.accelerator.device_count() == (1 if has else 0)
    assert wt.accelerator.current_accelerator() == (wt.device("webgpu") if has else None)
    if has:
        wt.accelerator.synchronize()
    else:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            wt.accelerator.synchronize()


def test_backend_flags_default_as_pytorch_cpu_and_settable():
    for mod, names in (("cudnn", ("allow_tf32", "benchmark", "deterministic", "enabled")),
                       ("cuda.matmul", ("allow_tf32",))):
        t, w = torch.backends, wt.backends
        for part in mod.split("."):
            t, w = getattr(t, part), getattr(w, part)
        for n in names:
            assert getattr(w, n) == getattr(t, n), f"{mod}.{n}"
    assert wt.backends.cudnn.is_available() is torch.backends.cudnn.is_available() is False
    assert wt.backends.mps.is_available() is False
    wt.backends.cudnn.benchmark = True
    wt.backends.cuda.matmul.allow_tf32 = True
    try:
        assert wt.backends.cudnn.benchmark and wt.backends.cuda.matmul.allow_tf32
    finally:
        wt.backends.cudnn.benchmark = False
        wt.backends.cuda.matmul.allow_tf32 = False


def test_is_device_flags(device):
    x = wt.zeros(1, device=device)
    assert (x.is_cuda, x.is_xpu, x.is_mps, x.is_meta) == (False, False, False, False)
    assert x.is_webgpu is (device == "webgpu")


def test_distributed_not_initialized_as_pytorch():
    assert not wt.distributed.is_initialized()
    import torch.distributed as tdist
    for name in ("get_rank", "get_world_size"):
        with pytest.raises(ValueError) as want:
            getattr(tdist, name)()
        with pytest.raises(ValueError) as got:
            getattr(wt.distributed, name)()
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match=r"^Default process group has not been initialized"):
        wt.nn.parallel.DistributedDataParallel(wt.nn.Linear(2, 2))


def test_data_parallel_as_pytorch(device):
    tm = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)))
    wm = wt.nn.DataParallel(wt.nn.Sequential(wt.nn.Linear(3, 4), wt.nn.Tanh(), wt.nn.Linear(4, 2)))
    assert list(wm.state_dict()) == list(tm.state_dict()) and repr(wm) == repr(tm)
    assert isinstance(wm.module, wt.nn.Sequential)
    wm.load_state_dict({k: wt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    wm.to(device)
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    tout, wout = tm(torch.tensor(x)), wm(wt.tensor(x, device=device))
    tout.pow(2).sum().backward()
    wout.pow(2).sum().backward()
    assert_close(wout, tout, device, "out")
    for (n, tp), wp in zip(tm.named_parameters(), wm.parameters()):
        assert_close(wp.grad, tp.grad, device, n)


def _same_tensor(got, want):
    assert repr(got) == repr(want) and got.dtype.__repr__() == repr(want.dtype)


def test_legacy_tensor_types():
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
                 "ByteTensor", "BoolTensor"):
        T, W = getattr(torch, name), getattr(wt, name)
        _same_tensor(W([1, 0, 2]), T([1, 0, 2]))
        assert W(2, 3).shape == T(2, 3).shape and W(2, 3).dtype.__repr__() == repr(T(2, 3).dtype)
        assert W(wt.Size([4])).shape == (4,) == T(torch.Size([4])).shape
        assert W().shape == T().shape
        assert repr(W) == repr(T) and W.dtype.__repr__() == repr(T.dtype)
        for src in ("float32", "int64", "bool"):
            assert isinstance(wt.zeros(2, dtype=getattr(wt, src)), W) == \
                isinstance(torch.zeros(2, dtype=getattr(torch, src)), T), (name, src)
    assert isinstance(wt.randn(2), wt.FloatTensor) and isinstance(wt.nn.Parameter(wt.randn(2)), wt.FloatTensor)
    assert not issubclass(wt.FloatTensor, wt.Tensor)
    with pytest.raises(TypeError, match=r"torch.LongTensor\(tensor\) expected a tensor of dtype torch.int64"):
        wt.LongTensor(wt.zeros(2))
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        wt.FloatTensor(2, device="webgpu")


@pytest.mark.parametrize("target", ["torch.LongTensor", "LongTensor", "int64", "IntTensor", "DoubleTensor"])
def test_type_conversions(target):
    x = np.array([1.5, -2.25, 3.0], dtype=np.float32)
    got, want = wt.tensor(x), torch.tensor(x)
    if target.startswith("torch."):
        g, w = got.type(target), want.type(target)
    else:
        g, w = got.type(getattr(wt, target)), want.type(getattr(torch, target))
    _same_tensor(g, w)
    assert g.type() == w.type()


def test_type_to_cpu_type_leaves_webgpu(device):
    g = wt.arange(3, device=device).type(wt.FloatTensor)
    assert g.device.type == "cpu" and g.type() == "torch.FloatTensor"
    with pytest.raises(ValueError, match="invalid type: 'torch.NopeTensor'"):
        g.type("torch.NopeTensor")


@pytest.mark.parametrize("call", [
    lambda T: T.empty(size=(2, 3)).shape, lambda T: T.zeros(size=(2, 3)), lambda T: T.ones(size=[4]),
    lambda T: T.rand(size=(3,)).shape, lambda T: T.randn(size=(1, 2)).shape,
    lambda T: T.full(size=(2,), fill_value=7), lambda T: T.zeros(size=(2,), dtype=T.int64)])
def test_size_keyword(call):
    got, want = call(wt), call(torch)
    assert repr(got) == repr(want)


def test_size_keyword_and_positional_conflict():
    with pytest.raises(TypeError, match=r"^zeros\(\) got multiple values for argument 'size'$"):
        wt.zeros(2, size=(2,))


RANGE_INDEXES = [range(2), (slice(None), range(0, 4, 2)), (range(2), range(1, 3)), range(0),
                 (Ellipsis, range(3, 0, -1))]


@pytest.mark.parametrize("k", range(len(RANGE_INDEXES)))
def test_range_index_get_set_and_grad(device, k):
    idx = RANGE_INDEXES[k]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    out = []
    for T, dev in ((wt, device), (torch, "cpu")):
        a = T.tensor(x, device=dev, requires_grad=True)
        y = a[idx]
        (y * T.arange(1, y.numel() + 1, device=dev).reshape(y.shape)).sum().backward()
        b = T.tensor(x, device=dev)
        b[idx] = -1.0
        out.append((y, a.grad, b))
    for g, w in zip(*out):
        assert tuple(g.shape) == tuple(w.shape)
        if w.numel():  # (the helper reads an empty tensor's shape as (0,))
            assert_close(g, w, device)


def test_data_has_its_own_version_counter(device):
    """As PyTorch: .data shares memory, has no history, and writing it is invisible to autograd
    (backward then uses the new values, no version error); `p.data = t` swaps the memory."""
    res = []
    for T, dev in ((wt, device), (torch, "cpu")):
        x = T.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf and d._base is None
        y = (x * x).sum()
        x.data.mul_(2)
        y.backward()
        assert x._version == 0
        x.data = T.tensor([7.0, 8.0], device=dev)
        res.append((d, x.grad, x.detach()))
        assert x.requires_grad and x.shape == (2,)
    for g, w in zip(*res):
        assert_close(g, w, device)


def test_functional_data_parallel_without_cuda_raises_as_pytorch():
    """nn.parallel.data_parallel (the old pytorch/examples dcgan's forward) finds no device on a CPU-only
    PyTorch: its RuntimeError, not a silent run; under the cuda alias it runs the module."""
    for lib in (torch, wt):
        with pytest.raises(RuntimeError, match="^device type could not be determined$"):
            lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2), None)
