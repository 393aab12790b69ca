"""Issue #22: torch.utils.benchmark against PyTorch 2.13: Measurement's statistics and repr, Compare's tables (plain,
trimmed, colorized, with warnings), the helpers, and Timer's measurements."""
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
