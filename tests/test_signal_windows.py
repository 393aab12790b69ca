"""torch.signal.windows (all 11) and the top-level window functions against PyTorch on cpu, cpu-pure and webgpu:
lengths 0, 1, 2, odd and even, sym / periodic, parameters, dtypes, errors."""
import numpy as np
import pytest
import torch

import webtorch as wt

LENGTHS = [0, 1, 2, 7, 16]
PARAMS = {"general_cosine": {"a": [0.5, 0.3, 0.2]}, "exponential": {"tau": 2.5}, "gaussian": {"std": 0.7},
          "kaiser": {"beta": 5.0}, "general_hamming": {"alpha": 0.6}}


@pytest.mark.parametrize("name", torch.signal.windows.__all__)
def test_signal_windows(device, name):
    assert sorted(wt.signal.windows.__all__) == sorted(torch.signal.windows.__all__)
    kw = PARAMS.get(name, {})
    for dtype in ("float32", "float64"):
        if dtype == "float64" and device == "webgpu":
            continue
        for M in LENGTHS:
            for sym in (True, False):
                want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
                got = getattr(wt.signal.windows, name)(M, sym=sym, dtype=getattr(wt, dtype), device=device, **kw)
                assert got.dtype == getattr(wt, dtype) and got.device.type == device.split("-")[0]
                np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_functions(device, name):
    for dtype in ("float32", "float64"):
        if dtype == "float64" and device == "webgpu":
            continue
        for n in LENGTHS:
            for periodic in (True, False):
                want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                got = getattr(wt, name)(n, periodic, dtype=getattr(wt, dtype), device=device)
                assert got.dtype == getattr(wt, dtype) and tuple(got.shape) == tuple(want.shape)
                np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert getattr(wt, name)(5, requires_grad=True).requires_grad


def test_window_parameters_and_errors():
    np.testing.assert_allclose(wt.hamming_window(9, False, 0.6, 0.4).numpy(),
                               torch.hamming_window(9, False, 0.6, 0.4).numpy(), rtol=1e-6)
    np.testing.assert_allclose(wt.kaiser_window(9, True, 3.0).numpy(), torch.kaiser_window(9, True, 3.0).numpy(),
                               rtol=1e-5)
    with pytest.raises(RuntimeError, match="hann_window requires non-negative window_length, got window_length=-1"):
        wt.hann_window(-1)
    with pytest.raises(RuntimeError, match="kaiser_window expects floating point dtypes"):
        wt.kaiser_window(3, dtype=wt.int32)
    with pytest.raises(ValueError, match="general_cosine requires non-negative window length, got M=-1"):
        wt.signal.windows.hann(-1)
    with pytest.raises(ValueError, match="gaussian expects float32 or float64 dtypes"):
        wt.signal.windows.gaussian(3, dtype=wt.float16)
    with pytest.raises(ValueError, match="Tau must be positive, got: 0 instead."):
        wt.signal.windows.exponential(3, tau=0)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        wt.signal.windows.exponential(3, center=1.0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        wt.signal.windows.kaiser(3, beta=-1.0)
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        wt.signal.windows.general_cosine(3, a=1.0)
    np.testing.assert_allclose(wt.signal.windows.exponential(6, center=1.0, sym=False).numpy(),
                               torch.signal.windows.exponential(6, center=1.0, sym=False).numpy(), rtol=1e-6)
