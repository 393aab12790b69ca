"""torch.xpu, torch.mps and torch.mtia as PyTorch 2.13 (a CPU build) has them: every public name, each
called as scripts call them, answers as PyTorch's (its value, or its exception type and message)."""
import inspect

import pytest
import torch

import webtorch as wt

CALLS = ["set_device(0)", "manual_seed(1)", "manual_seed_all(1)", "set_rng_state_all([])", "set_stream(None)",
         "stream(None)", "is_bf16_supported(False)", "set_per_process_memory_fraction(0.5)", "device(0).__enter__()",
         "device(None).__enter__()", "set_device(None)", "can_device_access_peer(0, 1)",
         "StreamContext(None).__enter__()",
         "attach_out_of_memory_observer(print)", "profiler.start()", "profiler.stop()", "profiler.is_capturing_metal()",
         "compile_shader('x')", "graph(None)", "Event()", "Stream()", "MemPool()", "XPUGraph()", "MTIAGraph()"]


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (the exception is the answer compared)
        msg = str(e) if not isinstance(e, TypeError) else ""  # a missing argument: the type only
        return type(e).__name__, msg
    return "value", None if inspect.isclass(type(r)) and type(r).__module__.startswith(("torch", "webtorch")) else r


@pytest.mark.parametrize("mod", ["xpu", "mps", "mtia"])
def test_every_name_answers_as_pytorchs(mod):
    tm, wm = getattr(torch, mod), getattr(wt, mod)
    assert sorted(tm.__all__) == sorted(wm.__all__)
    for name in tm.__all__:
        t, w = getattr(tm, name), getattr(wm, name)
        if callable(t) and not inspect.isclass(t):
            assert _outcome(w) == _outcome(t), name
        elif not callable(t) and not inspect.ismodule(t):
            assert w == t, name
    for call in CALLS:
        head = call.split("(")[0].split(".")[0]
        if head in tm.__all__:
            w, t = (_outcome(lambda m=m, call=call: eval(call, {}, vars(m))) for m in (wm, tm))
            assert w == t, call


def test_device_choice_idiom():
    """pytorch/examples' device choice runs unchanged (mnist_forward_forward, gat, ...)."""
    for m in (torch, wt):
        use_xpu = m.xpu.is_available()
        use_mps = m.backends.mps.is_available()
        assert (use_xpu, use_mps, m.mps.is_available(), m.mtia.is_available()) == (False, False, False, False)
