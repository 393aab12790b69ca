"""torch.compile's configuration surface against PyTorch 2.13: the config modules (torch._dynamo.config,
torch._inductor.config, torch._functorch.config, torch.compiler.config: keys, defaults, errors, patch, aliases,
save/load), torch.compiler.set_stance, torch._dynamo.graph_break/optimize/run and the decorators, torch._logging.set_logs
and set/get_float32_matmul_precision."""
import inspect
import logging
import warnings
from unittest import mock

import pytest
import torch
import torch._dynamo.config  # noqa: F401 (the oracle's config modules)
import torch._functorch.config  # noqa: F401
import torch._inductor.config  # noqa: F401
import torch.compiler.config  # noqa: F401

from _nn_util import wt, rng_for, randn, assert_close, same_error

import webtorch._dynamo.config  # noqa: F401
import webtorch._functorch.config  # noqa: F401
import webtorch._inductor.config  # noqa: F401
from webtorch._dynamo.eval_frame import compiled_state
from webtorch._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

CONFIGS = ["_dynamo.config", "_inductor.config", "_functorch.config", "compiler.config"]


def _config(T, name):
    mod = T
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


def _snapshot_value(v):
    """What _config_snapshot.py holds for PyTorch's default v (the rule it was generated with)."""
    def simple(x):
        if isinstance(x, (bool, int, float, str, type(None))):
            return not (isinstance(x, str) and x.startswith("/"))
        if isinstance(x, (list, tuple, set, frozenset)):
            return all(simple(y) for y in x)
        return isinstance(x, dict) and all(isinstance(k, str) and simple(y) for k, y in x.items())
    return v if simple(v) else None


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_keys_and_defaults_are_pytorchs(name):
    tc, wc = _config(torch, name), _config(wt, name)
    want = {k: _snapshot_value(e.default) for k, e in tc._config.items() if e.alias is None}
    got = wc.get_config_copy()
    assert sorted(got) == sorted(want)
    assert {k: v for k, v in got.items() if v != want[k]} == {}
    assert len(got) > {"_dynamo.config": 140, "_inductor.config": 600, "_functorch.config": 60}.get(name, 8)
    for k, e in tc._config.items():  # an alias reads the key it names
        if e.alias is not None:
            target = _config(wt, e.alias.rsplit(".", 1)[0][len("torch."):])
            assert getattr(wc, k) == getattr(target, e.alias.rsplit(".", 1)[1]), k


@pytest.mark.parametrize("get", [lambda T: T._dynamo.config.no_such_key, lambda T: T._inductor.config.triton.nope,
                                 lambda T: T._functorch.config.nope, lambda T: T._inductor.config.nope_too])
def test_unknown_key_raises_pytorchs_error(get):
    same_error(get)


@pytest.mark.parametrize("where", ["_dynamo.config", "_inductor.config.triton", "_functorch.config"])
def test_setting_unknown_key_raises_pytorchs_error(where):
    same_error(lambda T: setattr(_config(T, where), "no_such_key", 1))
    assert not hasattr(_config(wt, where), "no_such_key")


def test_programs_settings_read_back():
    """What real programs set: stored and read back, as in PyTorch."""
    for T in (torch, wt):
        d, i, f = T._dynamo.config, T._inductor.config, T._functorch.config
        settings = [(d, "suppress_errors", True), (d, "optimize_ddp", False), (d, "verbose", True),
                    (d, "automatic_dynamic_shapes", False), (d, "dynamic_shapes", False), (i, "fx_graph_cache", True),
                    (i, "coordinate_descent_tuning", True), (i.triton, "unique_kernel_names", True),
                    (i.triton, "cudagraphs", True), (i.trace, "enabled", True), (f, "enable_autograd_cache", False)]
        for obj, key, value in settings:
            old = getattr(obj, key)
            setattr(obj, key, value)
            assert getattr(obj, key) == value, (T, key)
            setattr(obj, key, old)
        assert i.get_config_copy()["triton.cudagraphs"] is False


def test_patch_as_pytorchs():
    """patch(...) in its three forms, as a context manager and a decorator, nested, restored after an exception."""
    got = {}
    for T in (torch, wt):
        c, seen = T._dynamo.config, []
        with c.patch(recompile_limit=3, verbose=True):
            seen.append((c.recompile_limit, c.cache_size_limit, c.verbose))
            with c.patch("recompile_limit", 5):
                seen.append(c.recompile_limit)
            seen.append(c.recompile_limit)
        seen.append((c.recompile_limit, c.verbose))

        @c.patch({"capture_scalar_outputs": True})
        def inner():
            return c.capture_scalar_outputs
        seen += [inner(), inner(), c.capture_scalar_outputs]
        with pytest.raises(ValueError):
            with T._inductor.config.patch({"triton.cudagraphs": True}):
                seen.append(T._inductor.config.triton.cudagraphs)
                raise ValueError
        seen.append(T._inductor.config.triton.cudagraphs)
        with c.patch(cache_size_limit=2):  # an alias
            seen.append(c.recompile_limit)
        seen.append(c.recompile_limit)
        got[T] = seen
    assert got[wt] == got[torch] == [(3, 3, True), 5, 3, (8, False), True, True, False, True, False, 2, 8]


@pytest.mark.parametrize("make", [lambda T: T._dynamo.config.patch("recompile_limit"),
                                  lambda T: T._dynamo.config.patch({"recompile_limit": 1}, verbose=True),
                                  lambda T: T._dynamo.config.patch(no_such_key=1).__enter__(),
                                  lambda T: T._dynamo.config.patch(verbose=True, no_such_key=1).__enter__()])
def test_patch_errors_as_pytorchs(make):
    same_error(make)
    assert wt._dynamo.config.verbose is False


def test_mock_patch_object_as_pytorch():
    """unittest.mock.patch.object deletes the attribute, then sets it back: the key stays a key."""
    got = {}
    for T in (torch, wt):
        c = T._inductor.config
        with mock.patch.object(c, "max_autotune", True), mock.patch.object(c.triton, "cudagraphs", True):
            inside = (c.max_autotune, c.triton.cudagraphs)
        got[T] = inside, c.max_autotune, c.triton.cudagraphs, hasattr(c, "max_autotune")
    assert got[wt] == got[torch] == ((True, True), False, False, True)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # load_config sets the deprecated keys too, as PyTorch does
def test_save_and_load_config():
    c = wt._dynamo.config
    saved = c.save_config()
    c.recompile_limit, c.verbose = 2, True
    c.load_config(saved)
    assert (c.recompile_limit, c.verbose) == (8, False)
    c.load_config({"verbose": True})
    assert c.verbose is True
    c.verbose = False
    with pytest.warns(UserWarning, match="key no_such_key with value 1 is not understood by this config"):
        c.load_config({"no_such_key": 1})


def test_alias_across_modules():
    """torch.compiler.config.recompile_limit and torch._dynamo.config.cache_size_limit are the same value."""
    for T in (torch, wt):
        with T._dynamo.config.patch(recompile_limit=4):
            assert T.compiler.config.recompile_limit == T._dynamo.config.cache_size_limit == 4
        T.compiler.config.capture_scalar_outputs = True
        assert T._dynamo.config.capture_scalar_outputs is True
        T.compiler.config.capture_scalar_outputs = False


def test_deprecated_key_warns_as_pytorch():
    msgs = {}
    torch._dynamo.config._config["inline_inbuilt_nn_modules"]._deprecation_warned = False
    wt._dynamo.config._warned.discard("inline_inbuilt_nn_modules")
    for T in (torch, wt):
        with pytest.warns(FutureWarning) as rec:
            assert T._dynamo.config.inline_inbuilt_nn_modules is True
        msgs[T] = str(rec[0].message)
    assert msgs[wt] == msgs[torch]


def test_compile_reads_the_recompile_limit_through_the_alias():
    f = wt.compile(lambda x: x + 1)
    with wt._dynamo.config.patch(cache_size_limit=1):
        f(wt.ones(1))
        with pytest.raises(wt._dynamo.exc.FailOnRecompileLimitHit):
            with wt._dynamo.config.patch(fail_on_recompile_limit_hit=True):
                f(wt.ones(2))
    assert f(wt.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert len(compiled_state(f).entries) == 2


def test_suppress_errors_with_fail_on_limit_raises_as_pytorch():
    for T in (torch, wt):
        T._dynamo.reset()
    same_error(lambda T: T._dynamo.config.patch(suppress_errors=True, fail_on_recompile_limit_hit=True)(
        lambda: T.compile(lambda x: x + 1)(T.ones(1)))())


# ---------------------------------------------------------------- set_stance, run, error_on_recompile


def _stance_program(T, device):
    """A compiled function run under every stance: (is_compiling() inside it, its value) per call, and the error at a
    recompile under fail_on_recompile. It returns is_compiling(): a side effect would add guards in PyTorch."""
    def f(x):
        return T.compiler.is_compiling(), x * 2 + 1

    def dev(*shape):
        return T.ones(*shape, device=device) if T is wt else T.ones(*shape)
    cf = T.compile(f)
    out = []
    with T.compiler.set_stance("force_eager"):
        out.append(cf(dev(2)))
    out.append(cf(dev(2)))
    with T.compiler.set_stance("eager_on_recompile"):
        out += [cf(dev(2)), cf(dev(3, 2))]
    with T.compiler.set_stance("fail_on_recompile"):
        out.append(cf(dev(2)))
        with pytest.raises(RuntimeError) as e:
            cf(dev(4, 4, 4))
    first = str(e.value).splitlines()[0]

    @T.compiler.set_stance("force_eager")
    def eager_call(x):
        return cf(x)
    out.append(eager_call(dev(2)))
    out.append(cf(dev(2)))
    T.compiler.set_stance("force_eager")
    try:
        out.append(cf(dev(2)))
    finally:
        T.compiler.set_stance("default")
    fresh = T.compile(lambda x: (T.compiler.is_compiling(), x + 1))  # new code (PyTorch caches per code object)
    with T.compiler.set_stance("eager_on_recompile"):
        out.append(fresh(dev(2)))
    return [c for c, _ in out], [o.tolist() for _, o in out], first


def test_set_stance_as_pytorch(device):
    """force_eager runs eagerly (is_compiling() False), eager_on_recompile uses cached entries and runs new ones
    eagerly, fail_on_recompile raises PyTorch's error at a recompile; function, context manager, decorator."""
    want = _stance_program(torch, "cpu")
    got = _stance_program(wt, device)
    assert got[0] == want[0] == [False, True, True, False, True, False, True, False, False]
    assert got[1] == want[1]
    assert got[2] == want[2]
    assert got[2].startswith("Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: ")


def test_fail_on_recompile_raises_at_the_first_compile_too():
    for T in (torch, wt):
        cf = T.compile(lambda x: x - 1)
        with T.compiler.set_stance("fail_on_recompile"):
            with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance is 'fail_on_recompile'"):
                cf(T.ones(2))
        assert cf(T.ones(2)).tolist() == [0.0, 0.0]


def test_eager_then_compile():
    seen = {}
    for T in (torch, wt):
        cf = T.compile(lambda x: (T.compiler.is_compiling(), x + 1))
        with T.compiler.set_stance("eager_then_compile"):
            seen[T] = [cf(T.ones(2))[0], cf(T.ones(2))[0]]
    assert seen[wt] == seen[torch] == [False, True]


@pytest.mark.parametrize("make", [lambda T: T.compiler.set_stance("force_eager", force_backend="eager"),
                                  lambda T: (T.compiler.set_stance("no_such_stance"),
                                             T.compile(lambda x: x + 1)(T.ones(1)))])
def test_set_stance_errors_as_pytorch(make):
    try:
        same_error(make)
    finally:
        for T in (torch, wt):
            T.compiler.set_stance("default")


def test_set_stance_inside_a_compiled_function_raises_as_pytorch():
    msgs = {}
    for T in (torch, wt):
        def f(x):
            T.compiler.set_stance("force_eager")
            return x + 1
        cf = T.compile(f)
        for _ in range(2):  # a call that raised cached nothing: the next one raises too
            with pytest.raises(AssertionError) as e:
                cf(T.ones(1))
        msgs[T] = str(e.value).splitlines()[0]
        assert T.compiler.set_stance("default") is not None
    assert msgs[wt].startswith("Attempt to trace forbidden callable <function set_stance at ")
    assert msgs[torch].startswith("Attempt to trace forbidden callable <function set_stance at ")


def test_set_stance_force_backend_and_skip_guard_eval():
    for T in (torch, wt):
        with T.compiler.set_stance(force_backend="eager"):
            assert T.compile(lambda x: x * 3)(T.ones(2)).tolist() == [3.0, 3.0]
        cf = T.compile(lambda x: x * 4)
        cf(T.ones(2))
        with T.compiler.set_stance(skip_guard_eval_unsafe=True):
            assert cf(T.ones(2)).tolist() == [4.0, 4.0]
            with pytest.raises(RuntimeError, match="Recompilation triggered with skip_guard_eval_unsafe stance"):
                cf(T.ones(3, 3))


def test_error_on_recompile_as_pytorch():
    lines = {}
    for T in (torch, wt):
        def f(x):
            return x + 2
        cf = T.compile(f)
        cf(T.ones(2))
        with T._dynamo.config.patch(error_on_recompile=True):
            assert cf(T.ones(2)).tolist() == [3.0, 3.0]
            with pytest.raises(T._dynamo.exc.RecompileError) as e:
                cf(T.ones(2, 2))
        lines[T] = str(e.value).splitlines()[0]
    assert lines[wt] == lines[torch].replace("torch", "webtorch") or lines[wt] == lines[torch]
    assert lines[wt].startswith("Recompiling function f in ")


def test_run_uses_cached_entries_only():
    """torch._dynamo.run(): cached entries run compiled, anything else eagerly (no new compile)."""
    seen = {}
    for T in (torch, wt):
        cf = T.compile(lambda x: (T.compiler.is_compiling(), x + 1))
        seen[T] = [cf(T.ones(2))[0]]
        seen[T] += [T._dynamo.run(cf)(T.ones(2))[0], T._dynamo.run(cf)(T.ones(6, 6))[0]]
    assert seen[wt] == seen[torch] == [True, True, False]

    def in_with(T):
        with T._dynamo.run():
            pass
    same_error(in_with)


# ---------------------------------------------------------------- graph_break, capture_scalar_outputs, optimize


def _gb_fn(T, msg=None):
    def f(x, w):
        y = (x @ w).relu()
        if msg is None:
            T._dynamo.graph_break()
        else:
            T._dynamo.graph_break(msg=msg)
        return (y * 2).sum(1)
    return f


@pytest.mark.parametrize("msg", [None, "here"])
def test_graph_break_explain_matches_pytorch(msg):
    rng = rng_for("gb_explain")
    x, w = randn(rng, 4, 3), randn(rng, 3, 5)
    got = {T: T._dynamo.explain(_gb_fn(T, msg))(T.tensor(x), T.tensor(w)) for T in (torch, wt)}
    want, e = got[torch], got[wt]
    assert (e.graph_count, e.graph_break_count) == (want.graph_count, want.graph_break_count) == (2, 1)
    assert e.break_reasons[0].reason == want.break_reasons[0].reason
    line = inspect.getsourcelines(_gb_fn)[1] + (4 if msg is None else 6)
    assert e.break_reasons[0].user_stack[-1].lineno == want.break_reasons[0].user_stack[-1].lineno == line


def test_graph_break_fullgraph_raises_as_pytorch():
    msgs = {}
    for T in (torch, wt):
        with pytest.raises(T._dynamo.exc.Unsupported) as e:
            T.compile(_gb_fn(T), fullgraph=True)(T.ones(2, 3), T.ones(3, 2))
        msgs[T] = str(e.value).split("\n\nfrom user code:")[0]
    assert msgs[wt] == msgs[torch].rstrip()


def test_graph_break_splits_the_frame(device):
    """Compiled == PyTorch eager over calls that trace, capture and replay; the break statement runs eagerly and the
    statements around it are compiled segments (replayed on webgpu)."""
    rng = rng_for("gb_split")
    tf, wf = _gb_fn(torch), wt.compile(_gb_fn(wt))
    for i in range(8):
        x, w = randn(rng, 4, 3), randn(rng, 3, 5)
        assert_close(wf(wt.tensor(x, device=device), wt.tensor(w, device=device)),
                     tf(torch.tensor(x), torch.tensor(w)), device, f"call {i + 1}")
    assert [s.eager for s in compiled_state(wf).plan.segments] == [False, True, False]
    if device == "webgpu":
        assert counters["webgpu"]["replays"] > 0, counters


def test_graph_break_outside_compile_is_a_no_op():
    assert wt._dynamo.graph_break() is None and torch._dynamo.graph_break() is None


def test_capture_scalar_outputs_lets_item_through_fullgraph():
    """PyTorch captures .item() with capture_scalar_outputs=True, so fullgraph=True does not raise; webtorch still
    breaks there (same results) and does not raise either."""
    def make(T):
        def f(x):
            s = x.sum().item()
            return x * s
        return f
    x = randn(rng_for("css"), 5)
    out = {}
    with pytest.raises(wt._dynamo.exc.Unsupported):  # webtorch's break without the flag
        wt.compile(make(wt), fullgraph=True)(wt.tensor(x))
    for T in (torch, wt):
        with T._dynamo.config.patch(capture_scalar_outputs=True):
            out[T] = T.compile(make(T), fullgraph=True)(T.tensor(x))
    assert_close(out[wt], out[torch], "cpu")


def test_capture_dynamic_output_shape_ops_lets_data_dependent_ops_through_fullgraph(device):
    """With capture_dynamic_output_shape_ops=True PyTorch captures nonzero under fullgraph=True; webtorch (which on
    webgpu breaks at the read of nonzero's size) does not raise either, and computes PyTorch's values."""
    x = randn(rng_for("cdos"), 6)

    def make(T):
        return lambda t: (T.nonzero(t > 0).float() * t.sum()).sum()
    out = {}
    for T in (torch, wt):
        with T._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
            out[T] = T.compile(make(T), fullgraph=True)(T.tensor(x, device=device) if T is wt else T.tensor(x))
    assert_close(out[wt], out[torch], device)


def test_optimize_compiles_with_the_backend():
    x = randn(rng_for("optimize"), 3)
    out = {T: T._dynamo.optimize("eager")(lambda t: t.sin() * 2)(T.tensor(x)) for T in (torch, wt)}
    assert_close(out[wt], out[torch], "cpu")
    for T in (torch, wt):
        with pytest.raises(T._dynamo.exc.Unsupported):
            T._dynamo.optimize("eager", nopython=True)(_gb_fn(T))(T.ones(2, 3), T.ones(3, 2))


# ---------------------------------------------------------------- names around torch.compile


def test_decorators_return_the_function():
    def g(x):
        return x + 1
    for T in (torch, wt):
        assert T.compiler.allow_in_graph(g) is g and T._dynamo.allow_in_graph(g) is g
        assert T.compiler.assume_constant_result(g) is g and g._dynamo_marked_constant is True
        assert T.compiler.cudagraph_mark_step_begin() is None
    assert wt._dynamo.disallow_in_graph(g) is g
    assert wt.compile(lambda x: g(x) * 2)(wt.ones(2)).tolist() == [4.0, 4.0]


def test_substitute_in_graph_as_pytorch():
    def original(a, b):
        return a + b

    for T in (torch, wt):
        @T.compiler.substitute_in_graph(original)
        def poly(a, b):
            return a + b
        assert poly(1, 2) == 3 and poly.__torch_dynamo_original__ is original
    same_error(lambda T: T.compiler.substitute_in_graph(3))
    same_error(lambda T: T.compiler.substitute_in_graph(original)(3))
    for T in (torch, wt):
        def other(a, c):
            return a
        with pytest.raises(TypeError, match="Signature mismatch between"):
            T.compiler.substitute_in_graph(original)(other)


def test_list_backends():
    names = wt.compiler.list_backends()
    assert set(names) <= set(torch.compiler.list_backends()) and "inductor" in names
    assert set(wt.compiler.list_backends(exclude_tags=())) <= set(torch.compiler.list_backends(exclude_tags=()))
    for name in wt.compiler.list_backends(exclude_tags=()):
        assert wt.compile(lambda x: x * 2, backend=name)(wt.ones(1)).tolist() == [2.0]


def test_set_logs():
    try:
        for T in (torch, wt):
            T._logging.set_logs(dynamo=logging.DEBUG, graph_breaks=True, recompiles=True)
        wt._logging.set_logs(modules={"my.module": logging.INFO})
        assert logging.getLogger("webtorch._dynamo").level == logging.DEBUG
        assert logging.getLogger("my.module").level == logging.INFO
        same_error(lambda T: T._logging.set_logs(no_such_component=10))
    finally:
        torch._logging.set_logs()
        wt._logging.set_logs(dynamo=logging.NOTSET)
        logging.getLogger("my.module").setLevel(logging.NOTSET)


def test_float32_matmul_precision():
    try:
        for T in (torch, wt):
            assert T.get_float32_matmul_precision() == "highest"
            T.set_float32_matmul_precision("high")
            assert T.get_float32_matmul_precision() == "high"
        msgs = {}
        for T in (torch, wt):
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                T.set_float32_matmul_precision("fastest")
            msgs[T] = [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in rec]
            assert T.get_float32_matmul_precision() == "high"
        assert msgs[wt] == msgs[torch] and len(msgs[wt]) == 1
        same_error(lambda T: T.set_float32_matmul_precision(1))
        a = randn(rng_for("mm"), 4, 4)
        wt.set_float32_matmul_precision("medium")
        assert_close(wt.tensor(a) @ wt.tensor(a), torch.tensor(a) @ torch.tensor(a), "cpu")
    finally:
        for T in (torch, wt):
            T.set_float32_matmul_precision("highest")
