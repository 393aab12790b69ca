"""Issue #22: torch.hash_tensor / Tensor.hash_tensor, torch.jit's TorchScript names and the torch.backends
fp32_precision flags, against PyTorch 2.13 on the same inputs."""
import warnings
from typing import Dict, List, Optional, Tuple

import pytest
import torch

import webtorch as wt

HASH_CASES = [((2, 3), torch.float32, {}), ((2, 3), torch.float32, {"dim": 1}),
              ((3, 5, 7), torch.float32, {"dim": (0, 2), "keepdim": True}), ((4, 5), torch.float64, {"dim": 0}),
              ((5,), torch.int8, {}), ((3, 4), torch.int64, {"dim": []}), ((), torch.float32, {"dim": 0}),
              ((2, 3), torch.float16, {"dim": -1}), ((3,), torch.bool, {}), ((2, 0), torch.float32, {"dim": 0})]


@pytest.mark.parametrize("shape,dtype,kw", HASH_CASES)
def test_hash_tensor_cpu(shape, dtype, kw):
    x = (torch.randn(shape) * 100).to(dtype)
    expected = torch.hash_tensor(x, **kw)
    got = wt.tensor(x.tolist(), dtype=getattr(wt, str(dtype)[6:])).hash_tensor(**kw)
    assert str(got.dtype) == "torch.uint64" and tuple(got.shape) == tuple(expected.shape)
    assert got.tolist() == expected.tolist()


def test_hash_tensor_errors(device):
    x = wt.ones(2, 3, device=device)
    if device == "webgpu":
        with pytest.raises(TypeError, match="uint64 is not supported on webgpu"):
            wt.hash_tensor(x)
        return
    values = [[1.5, -2.0, 7.25], [3.0, 4.0, -0.5]]
    assert (wt.hash_tensor(wt.tensor(values, device=device), 1, keepdim=True).tolist()
            == torch.hash_tensor(torch.tensor(values), 1, keepdim=True).tolist())
    assert wt.hash_tensor(wt.tensor([-1, 5], device=device)).item() == torch.hash_tensor(torch.tensor([-1, 5])).item()
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        wt.hash_tensor(x, mode=1)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        wt.hash_tensor(wt.ones(0, device=device))
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        wt.hash_tensor(wt.ones(2, 0, device=device), 1)
    with pytest.raises(NotImplementedError, match="\"xor_sum_cpu\" not implemented for 'ComplexFloat'"):
        wt.hash_tensor(wt.ones(2, dtype=wt.complex64, device=device))
    assert not wt.hash_tensor(wt.ones(2, requires_grad=True, device=device)).requires_grad


@pytest.mark.parametrize("obj,typ", [([1, 2], List[int]), ([1, "a"], List[int]), ({"a": [1]}, Dict[str, List[int]]),
                                     (None, Optional[int]), ((1, "a"), Tuple[int, str]), ((1,), Tuple[int, str]),
                                     (3, int), (3.0, (int, str)), ("s", Optional[str])])
def test_jit_isinstance(obj, typ):
    assert wt.jit.isinstance(obj, typ) == torch.jit.isinstance(obj, typ)


def test_jit_script_names():
    assert wt.jit.Attribute(3, int) == (3, int) and wt.jit.Attribute(3, int).type is int
    assert issubclass(wt.jit.Error, Exception)
    with pytest.raises(TypeError, match="No constructor defined"):
        wt.jit.ScriptFunction()
    wt.jit.CompilationUnit()
    with pytest.raises(NotImplementedError):
        wt.jit.CompilationUnit("def f(x):\n    return x\n")
    assert wt.jit.onednn_fusion_enabled() is torch.jit.onednn_fusion_enabled() is False
    wt.jit.enable_onednn_fusion(True)
    assert wt.jit.onednn_fusion_enabled() is True
    wt.jit.enable_onednn_fusion(False)
    with pytest.warns(DeprecationWarning):
        old = wt.jit.set_fusion_strategy([("DYNAMIC", 3)])
    with pytest.warns(DeprecationWarning):
        assert old == torch.jit.set_fusion_strategy([("DYNAMIC", 3)]) == [("STATIC", 2), ("DYNAMIC", 10)]
    with pytest.warns(DeprecationWarning):
        assert wt.jit.set_fusion_strategy(old) == torch.jit.set_fusion_strategy(old) == [("DYNAMIC", 3)]
    with pytest.warns(UserWarning, match="Only works in script mode"), wt.jit.strict_fusion():
        pass
    with pytest.warns(DeprecationWarning):
        cls = wt.jit.interface(type("Iface", (), {}))
    assert cls.__name__ == "Iface"
    with pytest.raises(NotImplementedError):
        wt.jit.export_opnames(wt.nn.Linear(2, 2))


def test_jit_script_if_tracing_and_trace_module():
    double = wt.jit.script_if_tracing(lambda x: x * 2)
    x = wt.randn(4, 3)
    assert double(x).tolist() == (x * 2).tolist()
    m = wt.nn.Linear(3, 2)
    traced = wt.jit.trace_module(m, {"forward": x})
    y = wt.randn(5, 3)
    assert wt.allclose(traced(y), m(y))
    with pytest.raises(AttributeError, match="expected a dictionary"):
        wt.jit.trace_module(m, x)


def test_backends_fp32_precision():
    pairs = [(wt.backends, torch.backends), (wt.backends.cudnn, torch.backends.cudnn),
             (wt.backends.mkldnn, torch.backends.mkldnn)]
    for w, t in pairs:
        assert w.fp32_precision == t.fp32_precision
    for op in ("conv", "rnn"):
        assert getattr(wt.backends.cudnn, op).fp32_precision == getattr(torch.backends.cudnn, op).fp32_precision
    for op in ("conv", "matmul", "rnn"):
        assert getattr(wt.backends.mkldnn, op).fp32_precision == getattr(torch.backends.mkldnn, op).fp32_precision
    assert wt.backends.cudnn.depthwise_kernel == torch.backends.cudnn.depthwise_kernel
    assert wt.backends.cudnn.benchmark_limit is torch.backends.cudnn.benchmark_limit is None
    conv = wt.backends.mkldnn.conv
    conv.fp32_precision = "bf16"
    assert conv.fp32_precision == "bf16"
    conv.fp32_precision = "none"
    with pytest.raises(RuntimeError, match="Unknown precision: bad"):
        conv.fp32_precision = "bad"
    with pytest.raises(AttributeError, match="Unknown attribute foo"), warnings.catch_warnings():
        conv.foo = 1
