"""Issue #22: torch.utils.benchmark against PyTorch 2.13: Measurement's statistics and repr, Compare's tables (plain,
trimmed, colorized, with warnings), the helpers, Timer's measurements, and the Fuzzer family (same draws per seed)."""
import importlib

import pytest
import torch

import webtorch as wt

SPEC = dict(stmt="x + 1", setup="pass", label="ops", sub_label="add", description="10")
TIMES = [([1.2e-3, 1.3e-3, 1.25e-3, 1.4e-3, 1.22e-3], {}), ([2.5e-3, 2.4e-3, 2.45e-3, 2.6e-3], {"description": "100"}),
         ([0.9e-3, 1.0e-3, 0.95e-3, 0.97e-3], {"sub_label": "mul", "stmt": "x * 2"}),
         ([5e-3, 5.1e-3, 4.9e-3, 5.5e-3], {"sub_label": "mul", "stmt": "x * 2", "description": "100"}),
         ([7e-3, 7.1e-3], {"sub_label": "mul", "stmt": "x * 2", "description": "100", "num_threads": 2}),
         ([1e-6, 3e-6, 1.1e-6, 1.05e-6, 0.9e-6], {"label": "other", "setup": "y = 1"})]


def _measurements(T):
    B = importlib.import_module(T.__name__ + ".utils.benchmark")
    return B, [B.Measurement(100, times, B.TaskSpec(**dict(SPEC, **kw))) for times, kw in TIMES]


def _body(m):
    return repr(m).splitlines()[1:]  # after the object's address


def test_measurement_and_compare_as_pytorch():
    (tb, tms), (wb, wms) = _measurements(torch), _measurements(wt)
    for t, w in zip(tms, wms):
        assert _body(w) == _body(t)
        assert (w.median, w.mean, w.iqr, w.significant_figures, w.has_warnings, w.title, w.env, w.as_row_name) == (
            t.median, t.mean, t.iqr, t.significant_figures, t.has_warnings, t.title, t.env, t.as_row_name)
    tc, wc = tb.Compare(tms), wb.Compare(wms)
    assert str(wc) == str(tc)
    for step in (lambda c: c.trim_significant_figures(), lambda c: c.colorize(),
                 lambda c: (c.highlight_warnings(), c.colorize(rowwise=True))):
        step(tc), step(wc)
        assert str(wc) == str(tc)
    assert (wb.select_unit(3.2e-5), wb.trim_sigfig(3.14159, 2), wb.unit_to_english("ms"),
            wb.ordered_unique([3, 1, 3, 2])) == (tb.select_unit(3.2e-5), tb.trim_sigfig(3.14159, 2),
                                                 tb.unit_to_english("ms"), tb.ordered_unique([3, 1, 3, 2]))
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        wb.Compare([1])


def test_timer(device):
    B = wt.utils.benchmark
    t = B.Timer("x * 2", globals={"x": wt.ones(10, device=device)}, label="t", description=device)
    m = t.timeit(20)
    assert (m.number_per_run, len(m.raw_times), m.title) == (20, 1, "t") and m.median > 0
    m = t.blocked_autorange(min_run_time=0.01)
    assert m.number_per_run >= 1 and sum(m.raw_times) >= 0.01
    m = t.adaptive_autorange(min_run_time=0.01, max_run_time=0.1)
    assert len(m.raw_times) >= 1 and "Times are in" in str(B.Compare([m]))
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        t.repeat()
    with pytest.raises(RuntimeError, match="C\\+\\+"):
        B.Timer("x", language=B.Language.CPP)


def _benchmark(T):
    return importlib.import_module(T.__name__ + ".utils.benchmark")


def _fuzzer_spec(B, T):
    P = B.FuzzedParameter
    return dict(parameters=[P("k0", 1, 64, distribution="loguniform"), P("k1", 1, 16, distribution="uniform"),
                            [P("dim", 1, 3, distribution="uniform"), P("s", 1, 3, distribution="uniform", strict=True)],
                            P("f", 0.5, 2.0, distribution="uniform")],
                tensors=[B.FuzzedTensor("x", size=("k0", "k1", 3), steps=(1, "s", 1), dim_parameter="dim",
                                        probability_contiguous=0.3, max_elements=2000),
                         B.FuzzedTensor("y", size=("k1", "k0"), dtype=T.int32)],
                constraints=[lambda params: params["k0"] % 2 == 0], seed=7)


def _sparse_fuzzer_spec(B, T):
    P = B.FuzzedParameter
    return dict(parameters=[P("k0", 2, 8, distribution="uniform"), P("k1", 2, 8, distribution="uniform"),
                            P("dim", 1, 3, distribution="uniform"), P("sparse_dim", 1, 3, distribution="uniform"),
                            P("density", 0.1, 0.9, distribution="uniform"),
                            P("coalesced", 0, 1, distribution="uniform")],
                tensors=[B.FuzzedSparseTensor("x", size=("k0", "k1", 4), dim_parameter="dim", sparse_dim="sparse_dim",
                                              density="density", coalesced="coalesced", dtype=T.float64),
                         B.FuzzedSparseTensor("y", size=("k1", 3), coalesced="coalesced")], seed=11)


def _as_pytorch(spec, n, check):
    tf, wf = (_benchmark(T).Fuzzer(**spec(_benchmark(T), T)) for T in (torch, wt))
    for (tt, tp, tpar), (wtn, wp, wpar) in zip(tf.take(n), wf.take(n)):
        assert wpar == tpar and str(wp) == str(tp)
        for k in tt:
            check(tt[k], wtn[k])
    assert wf.rejection_rate == tf.rejection_rate


@pytest.mark.parametrize("device", ["cpu", "cpu-pure"], indirect=True)
def test_fuzzer_as_pytorch(device):
    """Same parameters, sizes, strides, dtypes, memory orders and values as PyTorch's for one seed."""
    def check(t, w):
        assert (w.shape, w.stride(), str(w.dtype), w.tolist()) == (t.shape, t.stride(), str(t.dtype), t.tolist())
    _as_pytorch(_fuzzer_spec, 6, check)


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
@pytest.mark.parametrize("device", ["cpu", "cpu-pure"], indirect=True)
def test_sparse_fuzzer_as_pytorch(device):
    def check(t, w):
        assert (w._indices().tolist(), w._values().tolist(), w.shape) == (
            t._indices().tolist(), t._values().tolist(), t.shape)
    _as_pytorch(_sparse_fuzzer_spec, 6, check)


def test_fuzzer_random_state_draws_as_numpy():
    np = pytest.importorskip("numpy")
    from webtorch.utils.benchmark.fuzzer import _RandomState
    for seed in (0, 123, 2 ** 32 - 1):
        a, b = np.random.RandomState(seed), _RandomState(seed)
        for high in (2, 17, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 7, 2 ** 63):
            assert b.randint(-5, high) == a.randint(-5, high, dtype=np.int64)
        assert (b.uniform(1.5, 7.25), b.rand()) == (a.uniform(1.5, 7.25), a.rand())
        assert [b.permutation(n) for n in (0, 1, 2, 9)] == [a.permutation(n).tolist() for n in (0, 1, 2, 9)]
        assert [b.choice(3, (0.2, 0.3, 0.5)) for _ in range(10)] == [
            a.choice(np.arange(3), p=(0.2, 0.3, 0.5)) for _ in range(10)]


def test_fuzzer_errors_and_aliases_as_pytorch():
    TB, WB = _benchmark(torch), _benchmark(wt)

    def outcome(f):
        try:
            return f()
        except Exception as e:  # the type and message are what is compared
            return type(e).__name__, str(e)

    def cases(B):
        P, T = B.FuzzedParameter, B.FuzzedTensor
        custom = P("c", distribution={1: 0.5, 2: 0.6})   # PyTorch 2.13 accepts only unnormalized dicts here
        aliased = P("a", distribution={1: 0.2, 2: 0.3})
        aliased._distribution = {5: 0.25, B.ParameterAlias("n"): 0.75}
        draw = B.Fuzzer([P("n", 1, 9, distribution="uniform"), aliased], [], seed=3)
        yield from (outcome(f) for f in (
            lambda: P("p", 1, 2, distribution="normal"), lambda: P("p", distribution={1: 0.5, 2: 0.5}),
            lambda: P("p", distribution={1: -0.5, 2: 1.5}), lambda: P("p", 1, distribution={1: 0.5, 2: 0.6}),
            lambda: next(B.Fuzzer([custom], [], seed=1).take(1)),
            lambda: [p for _, _, p in draw.take(8)], lambda: repr(B.ParameterAlias("n")),
            lambda: B.Fuzzer([P("x", 1, 2, distribution="uniform")], [T("x", size=(1,))]),
            lambda: B.Fuzzer._resolve_aliases({"a": B.ParameterAlias("b"), "b": B.ParameterAlias("a")}),
            lambda: next(B.Fuzzer([P("n", 1, 9, distribution="uniform")], [T("x", size=("n",), max_elements=0)],
                                  seed=0).take(1)),
            lambda: next(B.Fuzzer([P("n", 5, 1, distribution="uniform")], [], seed=0).take(1)),
            lambda: next(B.Fuzzer([], [], seed=2 ** 32).take(1))))

    assert list(cases(WB)) == list(cases(TB))
