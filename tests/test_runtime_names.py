"""torch's runtime-state names (issue #22) against PyTorch: the autocast and anomaly switches, Stream/Event,
futures (fork/wait), cond, the Sym* types, memory_format, the exception classes, DisableTorchFunction and
TorchScript's module dicts."""
import warnings

import pytest
import torch

import webtorch as wt

_AUTOCAST_SCRIPT = [  # (the cpu dtype differs: webtorch's cpu autocast computes in float32, having no bfloat16)
    "get_autocast_gpu_dtype()", "get_autocast_ipu_dtype()", "get_autocast_xla_dtype()", "is_autocast_cpu_enabled()",
    "is_autocast_ipu_enabled()", "is_autocast_xla_enabled()", "is_autocast_cache_enabled()",
    "set_autocast_ipu_dtype(T.bfloat16)", "get_autocast_dtype('ipu')", "set_autocast_ipu_dtype(T.float16)",
    "set_autocast_enabled('xla', True)", "is_autocast_xla_enabled()", "set_autocast_xla_enabled(False)",
    "is_autocast_enabled('xla')", "set_autocast_cache_enabled(False)", "is_autocast_cache_enabled()",
    "set_autocast_cache_enabled(True)", "clear_autocast_cache()", "autocast_increment_nesting()",
    "autocast_increment_nesting()", "autocast_decrement_nesting()", "autocast_decrement_nesting()",
    "set_autocast_cache_enabled(1)", "set_autocast_dtype('cpu', 3)", "set_autocast_cpu_dtype(3)",
    "set_autocast_enabled('cpu', 1)", "get_autocast_dtype('foo')",
    "is_anomaly_enabled()", "is_anomaly_check_nan_enabled()", "set_anomaly_enabled(True, False)",
    "is_anomaly_enabled()", "is_anomaly_check_nan_enabled()", "set_anomaly_enabled(False)", "is_anomaly_enabled()",
]


def _run(mod, expr):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = eval("T." + expr, {"T": mod})
        except (RuntimeError, TypeError) as e:
            r = (type(e).__name__, str(e).split(" device type")[0].split(" one of")[0])
    return (str(r).replace("webtorch.", "torch."), [str(x.message).split(" (Triggered")[0] for x in w])


def test_autocast_and_anomaly_switches():
    for expr in _AUTOCAST_SCRIPT:
        assert _run(wt, expr) == _run(torch, expr), expr


def test_autocast_region_and_switches():
    with wt.autocast("cpu", dtype=wt.float16):
        assert wt.is_autocast_enabled("cpu") and wt.autocast_increment_nesting() == 2
        assert wt.autocast_decrement_nesting() == 1
    assert not wt.is_autocast_enabled("cpu") and wt.autocast_increment_nesting() == 1
    assert wt.autocast_decrement_nesting() == 0
    wt.set_autocast_dtype("cpu", wt.float16)
    wt.set_autocast_enabled("cpu", True)
    try:
        a, b = wt.randn(2, 3), wt.randn(3, 2)
        assert (a @ b).dtype is wt.float16 and wt.get_autocast_dtype("cpu") is wt.float16
        with wt.autocast("cpu"):  # dtype=None takes set_autocast_dtype's
            assert (a @ b).dtype is wt.float16
    finally:
        wt.set_autocast_enabled("cpu", False)
        wt.set_autocast_dtype("cpu", wt.bfloat16)
    assert (a @ b).dtype is wt.float32


def test_anomaly_switch_drives_detect_anomaly():
    x = wt.tensor([0.0], requires_grad=True)
    wt.set_anomaly_enabled(True)
    try:
        with pytest.raises(RuntimeError, match="returned nan values"):
            (x * 0).div(x).sum().backward()
    finally:
        wt.set_anomaly_enabled(False)


def _stream_event(T, device):
    out = []
    for make in (lambda: T.Stream(device), lambda: T.Event(device), lambda: T.Event(device, enable_timing=True),
                 lambda: T.Stream("cuda"), lambda: T.Stream(device, 1)):
        try:
            out.append(repr(make()))
        except (RuntimeError, TypeError) as e:  # (a TypeError's text is Python's own)
            out.append((type(e).__name__, str(e) if isinstance(e, RuntimeError) else ""))
    s, e = T.Stream(device), T.Event(device)
    out += [s.query(), s == T.Stream(device), s == 3, s.wait_event(e), s.synchronize(),
            e.query(), e.synchronize(), e.wait(), s.__enter__() is s]
    for call in (lambda: e.record(), lambda: s.record_event(), lambda: s.wait_stream(s), lambda: s.native_handle,
                 lambda: e.elapsed_time(T.Event(device)),
                 lambda: T.Event(device, enable_timing=True).elapsed_time(T.Event(device, enable_timing=True))):
        try:
            out.append(call())
        except (RuntimeError, ValueError) as ex:
            out.append((type(ex).__name__, str(ex)))
    return out


def test_stream_event_cpu():
    assert _stream_event(wt, "cpu") == _stream_event(torch, "cpu")


def test_stream_event_webgpu(webgpu):
    s = wt.Stream("webgpu")
    assert repr(s) == "torch.Stream device_type=webgpu, device_index=0, stream_id=0"
    start, end = wt.Event("webgpu", enable_timing=True), wt.Event("webgpu", enable_timing=True)
    start.record(s)
    y = wt.randn(64, 64, device="webgpu") @ wt.randn(64, 64, device="webgpu")
    s.record_event(end)
    end.synchronize()
    assert s.query() and end.query() and end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    assert y.shape == (64, 64)


def test_get_device_module():
    assert wt.get_device_module("cpu") is wt.cpu and wt.get_device_module(wt.device("cpu")) is wt.cpu
    assert wt.get_device_module("cuda") is wt.cuda
    assert [wt.cpu.is_available(), wt.cpu.device_count(), wt.cpu.current_device()] == \
        [torch.cpu.is_available(), torch.cpu.device_count(), torch.cpu.current_device()]
    s = wt.cpu.Stream()
    with wt.cpu.stream(s):
        assert wt.cpu.current_stream() is s
    assert wt.cpu.current_stream() is not s
    for mod in (wt, torch):
        with pytest.raises(RuntimeError, match="Invalid value of device '3', expect torch.device, str, or None"):
            mod.get_device_module(3)


def _futures(T):
    F = T.futures.Future
    out = []
    f = T.jit.fork(lambda a, b: a + b, 1, 2)
    out += [f.done(), f.wait(), T.jit.wait(f), T.wait(f), T.wait(T.fork(lambda: 4))]
    g = F()
    h = g.then(lambda fut: fut.value() * 2)
    seen = []
    g.add_done_callback(lambda fut: seen.append(fut.value()))
    out += [g.done(), h.done()]
    g.set_result(5)
    out += [g.done(), g.value(), h.wait(), seen, T.futures.wait_all([g, h]), len(T.futures.collect_all([g, h]).wait())]
    bad = F()
    bad.set_exception(ValueError("x"))
    for call in (bad.wait, bad.value, lambda: g.set_result(3), lambda: T.fork(lambda: 1 / 0),
                 lambda: bad.then(lambda fut: fut.value()).wait()):
        try:
            call()
        except (ValueError, RuntimeError, ZeroDivisionError) as e:
            out.append((type(e).__name__, str(e).split("\n")[0]))
    return out


def test_futures_fork_wait():
    assert _futures(wt) == _futures(torch)
    assert wt.Future is wt.jit.Future


def _cond(T, pred):
    """pred(T, value): the predicate to use (PyTorch compiles on a tensor one: its result is its bool one's)."""
    x = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
    out = [T.cond(True, lambda x: x + 1, lambda x: x - 1, (x,)).tolist(),
           T.cond(False, lambda x: x + 1, lambda x: x - 1, [x]).tolist(), T.cond(3, lambda: 1, lambda: 2)]
    y = T.cond(pred(T, True), lambda x: x.sin(), lambda x: x.cos(), (x,))
    y.sum().backward()
    out += [y.grad_fn is not None, [round(v, 5) for v in x.grad.tolist()]]
    for args in ((T.tensor([True, False]), lambda: 1, lambda: 2), ("a", lambda: 1, lambda: 2),
                 (T.tensor(True), 1, lambda x: x, (x,)), (T.tensor(True), lambda x: x, lambda x: x, x),
                 (T.tensor(True), lambda x: x, lambda x: x, (x, 3))):
        try:
            T.cond(*args)
        except RuntimeError as e:
            out.append(str(e).replace(", requires_grad=True", ""))
    return out


def test_cond():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _cond(wt, lambda T, v: T.tensor(v)) == _cond(torch, lambda T, v: v)


def _sym(T):
    out = [isinstance(3, T.SymInt), isinstance(True, T.SymBool), isinstance(1.0, T.SymFloat),
           T.sym_fresh_size(5), T.sym_fresh_size(2.5)]
    for f in (T.sym_constrain_range, T.sym_constrain_range_for_size):
        for a, k in ((3, dict(min=0, max=5)), (3, dict(min=4, max=5)), (3, dict(min=0, max=2)), (3, {}), (-1, {})):
            try:
                out.append(f(a, **k))
            except RuntimeError as e:
                out.append(str(e))
    return out


def test_sym_names():
    assert _sym(wt) == _sym(torch)


def test_classes_and_formats():
    for name in ("AcceleratorError", "OutOfMemoryError", "FatalError"):
        assert [c.__name__ for c in getattr(wt, name).__mro__] == [c.__name__ for c in getattr(torch, name).__mro__]
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        assert repr(getattr(wt, name)) == repr(getattr(torch, name))
        assert isinstance(getattr(wt, name), wt.memory_format)
    x = wt.randn(2, 3)
    assert wt.equal(x.clone(memory_format=wt.contiguous_format), x)
    assert wt.GradScaler is wt.amp.GradScaler and wt.default_generator is wt.random.default_generator
    assert wt.thread_safe_generator() is None is torch.thread_safe_generator()
    with pytest.raises(TypeError, match="No constructor defined"):
        wt.Capsule()


def test_disable_torch_function():
    class S(wt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)
    x = wt.ones(2).as_subclass(S)
    assert type(x + 1) is S
    for ctx in (wt.DisableTorchFunction, wt.DisableTorchFunctionSubclass):
        with ctx():
            assert type(x + 1) is wt.Tensor
    assert type(x + 1) is S
    from webtorch import overrides
    assert overrides.has_torch_function_unary(x) and overrides.has_torch_function_variadic(1, x)
    assert not overrides.has_torch_function_variadic(1, wt.ones(1))


def test_script_module_dicts():
    lin = wt.nn.Linear(2, 3)
    p = wt.ParameterDict(lin)
    assert [k for k, _ in p.items()] == ["weight", "bias"] and p.contains("weight") and p.getattr("bias") is lin.bias
    with pytest.raises(RuntimeError, match="does not have a field with name 'foo'"):
        p.getattr("foo")
    assert [k for k, _ in wt.BufferDict(wt.nn.BatchNorm1d(2)).items()] == \
        ["running_mean", "running_var", "num_batches_tracked"]
    seq = wt.nn.Sequential(lin)
    assert wt.ModuleDict(seq).getattr("0") is lin and wt.ModuleDict(seq).contains("0")
    with pytest.raises(TypeError, match="incompatible constructor arguments"):
        wt.ModuleDict(3)


def test_nested_io_function_as_pytorch():
    for T in (torch, wt):
        class F(T.autograd.NestedIOFunction):
            def forward_extended(self, a):
                return a

        assert issubclass(F, T.autograd.Function)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = F()
        with pytest.raises(AttributeError, match="_do_forward"):
            f(T.ones(1))
