"""Shared fixtures: `device` runs a test on every backend webtorch has here.

  cpu       the numpy CPU backend
  cpu-pure  the pure-Python CPU backend (what Pyodide uses without numpy)
  webgpu    WGSL kernels through wgpu-py (lavapipe in CI)
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "py"))
sys.path.insert(0, os.path.join(ROOT, "server"))  # this checkout's webtorch_server too

DEVICES = ["cpu", "cpu-pure", "webgpu"]


def _webgpu_ok():
    try:
        from webtorch.backends import webgpu
        return webgpu.is_available()
    except Exception:  # pragma: no cover - reported by test_webgpu_available
        return False


@pytest.fixture(params=DEVICES)
def device(request):
    """The device string to create tensors on; 'cpu-pure' swaps the CPU backend for the test."""
    from webtorch import _device
    from webtorch.backends.cpu import PureBackend
    if request.param == "webgpu":
        if os.environ.get("WEBTORCH_SKIP_WEBGPU") == "1":
            pytest.skip("WEBTORCH_SKIP_WEBGPU=1 was set by the caller")
        if not _webgpu_ok():
            pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) — the webgpu tier must run")
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
