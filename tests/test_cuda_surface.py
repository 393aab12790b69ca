"""torch.cuda, torch.accelerator, torch.version / __version__, torch.types and torch.serialization's
names against the installed PyTorch (a CPU build: exactly a machine without CUDA), and the cuda
alias (`python -m webtorch --device webgpu`: "cuda" names the WebGPU device)."""
import importlib.util
import io
import operator
import os
import subprocess
import sys
import warnings

import pytest
import torch
from core_util import cuda_alias

import webtorch as wt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# every call PyTorch without CUDA answers (a value, or an exception whose type and text we match)
NO_CUDA_CALLS = [
    "C.is_available()", "C.device_count()", "C.is_initialized()", "C.manual_seed(0)", "C.manual_seed_all(1)",
    "C.seed()", "C.seed_all()", "C.initial_seed()", "C.get_rng_state()", "C.get_rng_state_all()",
    "C.set_rng_state_all([])", "C.current_device()", "C.synchronize()", "C.init()", "C.get_device_name()",
    "C.get_device_name(0)", "C.get_device_capability()", "C.get_device_properties()", "C.get_arch_list()",
    "C.get_gencode_flags()", "C.is_bf16_supported()", "C.is_tf32_supported()", "C.has_half", "C.has_magma",
    "C.default_generators", "C.set_device(0)", "C.set_device(-1)", "C.set_device('cpu')", "C.Stream()", "C.Event()",
    "C.current_stream()", "C.default_stream()", "C.get_stream_from_external(0)",
    "C.set_sync_debug_mode(0)", "C.get_sync_debug_mode()", "C.can_device_access_peer(0, 0)", "C.cudart()",
    "C.ipc_collect()", "C.check_error(0)", "C.CudaError(1)", "C.cudaStatus.SUCCESS", "C.cudaStatus.ERROR_NOT_READY",
    "C.FloatTensor([1.0])", "C.LongTensor(2)", "C.FloatStorage(2)", "isinstance(T.ones(2), C.FloatTensor)",
    "C.device(0).__enter__()", "C.device(-1).__enter__()", "C.device_of(T.ones(1)).__enter__()",
    "C.stream(None).__enter__()", "C.StreamContext(None).__exit__(None, None, None)",
    "C.memory_allocated()", "C.max_memory_allocated()", "C.memory_reserved()", "C.max_memory_reserved()",
    "C.memory_cached()", "C.max_memory_cached()", "dict(C.memory_stats())", "C.memory_stats_as_nested_dict()",
    "C.memory_summary()", "C.memory_snapshot()", "C.empty_cache()", "C.reset_peak_memory_stats()",
    "C.reset_accumulated_memory_stats()", "C.reset_max_memory_allocated()", "C.reset_max_memory_cached()",
    "dict(C.host_memory_stats())", "C.host_memory_stats_as_nested_dict()", "C.reset_peak_host_memory_stats()",
    "C.mem_get_info()", "C.set_per_process_memory_fraction(0.5)", "C.get_per_process_memory_fraction()",
    "C.caching_allocator_alloc(8)", "C.caching_allocator_delete(0)", "C.caching_allocator_enable()",
    "C.caching_allocator_disabled().__enter__()", "C.get_allocator_backend()", "C.list_gpu_processes()",
    "C.change_current_allocator(None)", "C.MemPool()", "C.device_memory_used()", "C.utilization()",
    "C.temperature()", "C.power_draw()", "C.clock_rate()", "C.memory_usage()", "C.CUDAGraph()",
    "C.graph(None)", "C.graph_pool_handle()", "C.is_current_stream_capturing()",
    "C.make_graphed_callables(abs, (T.ones(1),))", "C.nvtx.range_push('a')", "C.nvtx.mark('a')",
    "C.nccl.is_available([])", "C.profiler.start()", "C.tunable.is_enabled()", "C.amp.amp_definitely_not_available()",
    "T.ones(2).cuda()", "T.ones(2).to('cuda')", "T.zeros(2, device='cuda:0')", "T.nn.Linear(1, 1).cuda()",
    "repr(T.device('cuda'))", "repr(T.device('cuda', 1))", "T.ones(1).is_cuda", "T.backends.cuda.is_built()",
    "[f() for f in (B.cuda.flash_sdp_enabled, B.cuda.math_sdp_enabled, B.cuda.cudnn_sdp_enabled, "
    "B.cuda.mem_efficient_sdp_enabled, B.cuda.fp16_bf16_reduction_math_sdp_allowed, B.cuda.is_flash_attention_available, "
    "B.cuda.is_ck_sdpa_available, B.cudnn.is_available, B.cudnn.version, B.mps.is_available, B.mps.is_built, "
    "B.cusparselt.is_available, B.kleidiai.is_available, B.mha.get_fastpath_enabled)]",
    "B.cuda.matmul.allow_tf32", "B.cuda.cublas_workspace_size()", "B.cuda.sdp_kernel().__enter__()",
    "B.mps.get_name()", "B.mps.is_macos13_or_newer()", "(B.cudnn.enabled, B.cudnn.benchmark, B.mkldnn.enabled)",
]


def _outcome(T, expr):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = repr(eval(expr, {"T": T, "C": T.cuda, "A": T.accelerator, "B": T.backends}))
        except Exception as e:  # noqa: BLE001 - the exception is the answer compared
            got = f"{type(e).__name__}: {e}"
    return got.replace("torch.", "T.").replace("webtorch.", "T."), [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("expr", NO_CUDA_CALLS)
def test_cuda_without_cuda_as_pytorch(expr):
    want, got = _outcome(torch, expr), _outcome(wt, expr)
    if "object at 0x" in want[0]:  # a context manager's or a Stream's repr: the same kind of object
        want, got = (want[0].split(" object at")[0].rsplit(".", 1)[-1], want[1]), \
            (got[0].split(" object at")[0].rsplit(".", 1)[-1], got[1])
    assert got == want


def test_cuda_and_accelerator_names_complete():
    for mod in ("cuda", "accelerator", "serialization", "types", "version"):
        theirs = getattr(torch, mod)
        names = getattr(theirs, "__all__", None) or [n for n in dir(theirs) if not n.startswith("_")]
        assert [n for n in names if not n.startswith("_") and not hasattr(getattr(wt, mod), n)] == [], mod


def test_accelerator_without_adapter_raises_as_pytorch(monkeypatch):
    monkeypatch.setattr(wt.accelerator, "is_available", lambda: False)
    for name in ("synchronize", "current_device_index", "empty_cache", "memory_allocated", "memory_stats",
                 "get_memory_info", "reset_peak_memory_stats", "current_stream", "get_device_capability"):
        for lib in (torch, wt):
            with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
                getattr(lib.accelerator, name)()


def test_accelerator_on_webgpu(webgpu):
    A = wt.accelerator
    assert A.is_available() and A.current_accelerator() == wt.device("webgpu") and A.current_device_index() == 0
    A.synchronize()
    A.reset_peak_memory_stats()
    x = wt.ones(1 << 16, device="webgpu")
    assert A.memory_allocated() >= 4 * (1 << 16) and A.max_memory_allocated() >= A.memory_allocated()
    assert A.memory_stats()["allocated_bytes.all.current"] == wt.webgpu.memory_allocated()
    assert A.memory_reserved() >= A.memory_allocated() and A.max_memory_reserved() >= A.memory_reserved()
    free, total = A.get_memory_info()
    assert 0 <= free <= total
    assert wt.float32 in A.get_device_capability()["supported_dtypes"]
    with A.device_index(0), A.device_index(None):
        A.current_stream().synchronize()
    with pytest.warns(FutureWarning, match="Use `current_device_index` instead."):
        assert A.current_device_idx() == 0
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        A.memory_allocated("cpu")
    del x
    A.empty_cache()


def test_cuda_alias_names_the_webgpu_device(webgpu):
    with cuda_alias():
        C = wt.cuda
        assert C.is_available() and C.device_count() == 1 and C.current_device() == 0
        assert C.get_device_name() == wt.webgpu.get_device_name()
        x = wt.ones(3).cuda()
        assert x.device == wt.device("webgpu") and x.is_cuda and wt.device("cuda:0") == wt.device("webgpu")
        for y in (wt.zeros(2, device="cuda"), wt.ones(2).to("cuda"), wt.ones(2).to(wt.device("cuda", 0)),
                  wt.nn.Linear(2, 2).cuda().weight, C.FloatTensor([1.0, 2.0])):
            assert y.device.type == "webgpu"
        assert isinstance(x, C.FloatTensor) and not isinstance(x, wt.FloatTensor)
        C.synchronize()
        C.reset_peak_memory_stats()
        assert C.memory_allocated() > 0 and C.max_memory_allocated() >= C.memory_allocated()
        assert C.memory_stats() == wt.accelerator.memory_stats() and "allocated_bytes.all.current" in \
            C.memory_summary()
        start, end = C.Event(enable_timing=True), C.Event(enable_timing=True)
        start.record()
        (x * 2).sum().item()
        end.record()
        assert start.elapsed_time(end) >= 0
        with C.device(0), C.stream(C.Stream()):
            pass
        with wt.autocast("cuda"):
            assert wt.is_autocast_enabled("cuda")
        with pytest.raises(RuntimeError, match="one webgpu device"):
            wt.ones(1, device="cuda:1")
    assert not wt.cuda.is_available() and not x.is_cuda


VERSIONS = ["2.0", "2.13", "2.13.0", "2.13.1", "2.12.1", "2.14.0a0", "2.13.0rc1", "3", "2.13.0+cpu", "1.13.1"]


@pytest.mark.parametrize("other", VERSIONS + [(2, 0), (2, 13, 0), (3, 0), [2, 14]])
def test_version_compares_as_pytorchs(other):
    ours, theirs = wt.__version__, torch.torch_version.TorchVersion("2.13.0+webtorch.0.1.0")
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        assert op(ours, other) == op(theirs, other), (op, other)
    assert isinstance(wt.__version__, str) and wt.__version__.startswith(torch.__version__.split("+")[0])


def test_version_module():
    assert (wt.version.cuda, wt.version.hip, wt.version.rocm, wt.version.xpu, wt.version.debug) == \
        (None, None, None, None, False)
    assert wt.version.__version__ is wt.__version__ and wt.version.webtorch in wt.__version__
    assert wt.torch_version.TorchVersion("2.1.0") > "2.0" and wt.torch_version.TorchVersion("2.1") == (2, 1, 0)


def test_types():
    assert wt.types.Number == int | float | bool and wt.device in wt.types.Device.__args__
    assert str in wt.types.FileLike.__args__ and wt.types.Storage is wt._tensor.Storage


def _cuda_tagged(obj):
    """What PyTorch on a CUDA machine saves: storages tagged 'cuda:0'."""
    real = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        buf = io.BytesIO()
        torch.save(obj, buf)
    finally:
        torch.serialization.location_tag = real
    return buf.getvalue()


@pytest.mark.parametrize("kwargs", [{}, {"map_location": "cuda"}, {"weights_only": False}, {"map_location": "cpu"},
                                    {"map_location": {"cuda:0": "cpu"}}, {"map_location": lambda s, loc: s}])
def test_load_cuda_file_as_pytorch_without_cuda(kwargs):
    data = _cuda_tagged({"w": torch.arange(3.0)})
    try:
        want = torch.load(io.BytesIO(data), **kwargs)["w"].tolist()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            wt.load(io.BytesIO(data), **kwargs)
        assert str(got.value) == str(e)
        return
    got = wt.load(io.BytesIO(data), **kwargs)["w"]
    assert got.device.type == "cpu" and got.tolist() == want


def test_load_cuda_file_under_alias_on_webgpu(webgpu):
    with cuda_alias():
        w = wt.load(io.BytesIO(_cuda_tagged({"w": torch.arange(3.0)})))["w"]
    assert w.device.type == "webgpu" and w.tolist() == [0.0, 1.0, 2.0]


def test_files_keep_webgpu_and_load_in_pytorch(webgpu, tmp_path):
    """torch.load restores the device the tensor was saved from; the file still loads in PyTorch."""
    wt.manual_seed(0)
    model = wt.nn.Sequential(wt.nn.Linear(3, 4), wt.nn.ReLU(), wt.nn.Linear(4, 2)).to("webgpu")
    x = wt.randn(5, 3, device="webgpu")
    wt.save(model.state_dict(), tmp_path / "sd.pt")
    wt.save(model, tmp_path / "model.pt")
    sd = wt.load(tmp_path / "sd.pt")
    assert all(v.device.type == "webgpu" for v in sd.values())
    assert all(v.device.type == "cpu" for v in wt.load(tmp_path / "sd.pt", map_location="cpu").values())
    assert all(v.device.type == "cpu" for v in wt.load(tmp_path / "sd.pt", map_location={"webgpu:0": "cpu"}).values())
    seen = []
    wt.load(tmp_path / "sd.pt", map_location=lambda s, loc: seen.append(loc))
    assert set(seen) == {"webgpu:0"}
    whole = wt.load(tmp_path / "model.pt", weights_only=False)
    assert whole[0].weight.device.type == "webgpu" and whole(x).tolist() == model(x).tolist()
    theirs = torch.load(tmp_path / "sd.pt")  # PyTorch reads it without map_location
    assert {k: v.tolist() for k, v in theirs.items()} == {k: v.tolist() for k, v in sd.items()}


def test_serialization_names_as_pytorchs(tmp_path):
    S, TS = wt.serialization, torch.serialization
    assert [e.name for e in S.LoadEndianness] == [e.name for e in TS.LoadEndianness]
    for lib in (S, TS):
        with pytest.raises(TypeError, match="Invalid argument type in function set_default_load_endianness"):
            lib.set_default_load_endianness("little")
        assert lib.get_default_load_endianness() is None and lib.get_crc32_options() is True
        with lib.set_default_mmap_options(1):
            assert lib.get_default_mmap_options() == 1
        assert lib.get_default_mmap_options() == 2
        assert lib.check_module_version_greater_or_equal(torch, (2, 0)) is True
        with pytest.raises(RuntimeError, match="validate"[:0] + "Attempting to deserialize object on a CUDA device"):
            lib.validate_cuda_device("cuda:0")
        with lib.mkdtemp() as d:
            assert isinstance(d, str)
    assert S.storage_to_tensor_type(wt.ones(1)._storage) is wt.FloatTensor
    assert str(S.StorageType("FloatStorage")) == "StorageType(dtype=torch.float32)"

    class Unsafe:
        pass
    import collections
    torch.save({"d": collections.deque(), "w": torch.ones(1)}, tmp_path / "u.pt")
    assert S.get_unsafe_globals_in_checkpoint(tmp_path / "u.pt") == TS.get_unsafe_globals_in_checkpoint(
        tmp_path / "u.pt") == ["collections.deque"]
    torch.save({"w": torch.ones(1)}, tmp_path / "s.pt")
    assert S.get_unsafe_globals_in_checkpoint(tmp_path / "s.pt") == []


def _cli(tmp_path, *opts):
    script = tmp_path / "idiom.py"
    script.write_text("import torch\n"
                      "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                      "x = torch.ones(2).to(device)\n"
                      "print(torch.cuda.is_available(), torch.cuda.device_count(), x.device.type, x.is_cuda)\n")
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "py")}
    return subprocess.run([sys.executable, "-m", "webtorch", *opts, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_cuda_alias_and_opt_out(webgpu, tmp_path):
    from webtorch.__main__ import NOTICE
    r = _cli(tmp_path, "--device", "webgpu")
    assert (r.returncode, r.stdout, r.stderr) == (0, "True 1 webgpu True\n", NOTICE)
    r = _cli(tmp_path, "--device", "webgpu", "--no-cuda-alias")
    assert (r.returncode, r.stdout, r.stderr) == (0, "False 0 cpu False\n", "")


def test_playground_cuda_switch_plumbing(webgpu):
    """The page's checkbox goes with each run to the worker, which hands it to run_user_code."""
    web = os.path.join(ROOT, "web")
    html, app, worker = (open(os.path.join(web, *p), encoding="utf-8").read()
                         for p in (("index.html",), ("src", "app.js"), ("src", "worker.js")))
    assert 'id="cuda-alias" type="checkbox" checked' in html and "cudaAlias: $('cuda-alias').checked" in app
    assert "run(m.id, m.code, m.cudaAlias)" in worker and "__wt_run(__wt_code, cuda_alias=" in worker
    spec = importlib.util.spec_from_file_location("webtorch_playground", os.path.join(web, "src", "playground.py"))
    playground = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(playground)
    try:
        playground.set_cuda_alias(True)
        assert wt.cuda.is_available() and wt.device("cuda") == wt.device("webgpu")
        playground.set_cuda_alias(False)
        assert not wt.cuda.is_available() and wt.device("cuda").type == "cuda"
    finally:
        wt._device.set_cuda_alias(False)
