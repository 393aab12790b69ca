"""Shared fixtures: `device` runs a test on every backend webtorch has here.

  cpu       the numpy CPU backend
  cpu-pure  the pure-Python CPU backend (what Pyodide uses without numpy)
  webgpu    WGSL kernels through wgpu-py (lavapipe in CI)
"""
import os

import pytest

DEVICES = ["cpu", "cpu-pure", "webgpu"]


def _webgpu_ok():
    try:
        from webtorch.backends import webgpu
        return webgpu.is_available()
    except Exception:  # pragma: no cover - reported by test_webgpu_available
        return False


def require_webgpu():
    """The webgpu tier runs: skipped only when the caller says so, a failure without an adapter."""
    if os.environ.get("WEBTORCH_SKIP_WEBGPU") == "1":
        pytest.skip("WEBTORCH_SKIP_WEBGPU=1 was set by the caller")
    if not _webgpu_ok():
        pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) — the webgpu tier must run")


@pytest.fixture
def webgpu():
    """A test (or, through `pytestmark = pytest.mark.usefixtures("webgpu")`, a module) of the webgpu tier."""
    require_webgpu()
    return "webgpu"


@pytest.fixture(params=DEVICES)
def device(request):
    """The device string to create tensors on; 'cpu-pure' swaps the CPU backend for the test."""
    from webtorch import _device
    from webtorch.backends.cpu import PureBackend
    if request.param == "webgpu":
        require_webgpu()
        yield "webgpu"
        return
    if request.param == "cpu-pure":
        prev = _device._backends.get("cpu")
        _device._backends["cpu"] = PureBackend()
        try:
            yield "cpu"
        finally:
            if prev is None:
                _device._backends.pop("cpu", None)
            else:
                _device._backends["cpu"] = prev
        return
    yield "cpu"


pytest_plugins = ["opinfo.summary"]  # the OpInfo tier's counts at the end of the run


@pytest.fixture
def fresh_dynamo():
    """torch.compile state reset around a test: no compiled entries or counters from another test."""
    import webtorch as wt
    from webtorch._dynamo.utils import counters
    wt.compiler.reset()
    counters.clear()
    yield
    wt.compiler.reset()
