"""Issue #22: torch.profiler and torch.autograd.profiler against PyTorch 2.13: the events of the ops (top level),
record_function ranges, the summary table's columns, schedule/step/on_trace_ready, Chrome traces."""
import json
import warnings

import pytest
import torch

import webtorch as wt
from webtorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function


def _program(t, device):
    x = t.arange(12.0, device=device).reshape(3, 4).requires_grad_()
    w = t.ones(4, 2, device=device)
    with t.profiler.record_function("model"):
        y = t.matmul(x, w).relu() + 1
    y.sum().backward()
    return y


def _top_level(prof):
    return [e.name for e in prof.events() if e.cpu_parent is None]


def _header(table):
    return table.splitlines()[1].split()


def test_events_and_table_as_pytorch(device):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as tp:
        _program(torch, "cpu")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as wp:
        _program(wt, device)
    # then the backward's ops (PyTorch: its engine's nodes)
    assert _top_level(wp)[:6] == _top_level(tp)[:6] == ["aten::arange", "aten::reshape", "aten::ones", "model",
                                                        "aten::sum", "aten::ones_like"]
    model, tmodel = ([e for e in p.events() if e.name == "model"][0] for p in (wp, tp))
    assert [c.name for c in model.cpu_children] == [c.name for c in tmodel.cpu_children] == [
        "aten::matmul", "aten::relu", "aten::add"]
    assert model.cpu_children[0].input_shapes == [[3, 4], [4, 2]]
    for grouped in (False, True):
        want = tp.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=3)
        got = wp.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=3)
        assert _header(got) == _header(want)
        assert len(got.splitlines()) == len(want.splitlines()) and got.splitlines()[-1].startswith("Self CPU time")
    avg = {e.key: e for e in wp.key_averages()}
    assert avg["model"].count == 1 and avg["aten::matmul"].count == 2  # forward and x.grad
    assert model.cpu_time_total >= sum(c.cpu_time_total for c in model.cpu_children) > 0
    assert 0 <= avg["model"].self_cpu_time_total <= avg["model"].cpu_time_total


def test_memory_and_stack_columns():
    x = wt.ones(8, 8)
    with profile(profile_memory=True, with_stack=True) as wp:
        x @ x
    with torch.profiler.profile(profile_memory=True, with_stack=True) as tp:
        torch.ones(8, 8) @ torch.ones(8, 8)
    assert _header(wp.key_averages().table()) == _header(tp.key_averages().table())
    mm = [e for e in wp.events() if e.name == "aten::matmul"][0]
    assert mm.cpu_memory_usage == 8 * 8 * 4 and any("test_profiler.py" in s for s in mm.stack)
    assert "Source Location" in wp.events().table()


def test_schedule_step_and_trace_ready(tmp_path):
    seen = {}
    for lib in (torch, wt):
        ready = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
        assert [sched(i).name for i in range(12)] == [
            "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE",
            "NONE", "NONE", "NONE"]
        x = lib.ones(3)
        with warnings.catch_warnings(record=True) as w, \
                lib.profiler.profile(schedule=sched, on_trace_ready=lambda p, r=ready: r.append(p.step_num)) as p:
            warnings.simplefilter("always")
            for _ in range(10):
                x.mul(2)
                p.step()
        assert any("Profiler clears events at the end of each cycle" in str(m.message) for m in w)
        seen[lib.__name__] = (ready, sorted({e.key for e in p.key_averages() if e.key.startswith("ProfilerStep")}))
    assert seen["webtorch"] == seen["torch"] == ([5, 9], ["ProfilerStep*"])
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        wt.profiler.schedule(wait=0, warmup=0, active=0)
    assert list(ProfilerAction.__members__) == list(torch.profiler.ProfilerAction.__members__)
    assert {a.name: a.value for a in ProfilerActivity} == {
        k: int(v) for k, v in torch.profiler.ProfilerActivity.__members__.items()}
    assert wt.profiler.supported_activities() == {ProfilerActivity.CPU} and wt.profiler.kineto_available()


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    handler = wt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    with profile(on_trace_ready=handler) as p:
        with record_function("block"):
            wt.ones(2) * 3
    p.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert [(e["name"], e["ph"], e["cat"]) for e in trace][:2] == [("block", "X", "user_annotation"),
                                                                   ("aten::ones", "X", "cpu_op")]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in trace)
    files = list((tmp_path / "tb").iterdir())
    assert len(files) == 1 and files[0].name.startswith("w0.") and files[0].name.endswith(".pt.trace.json")


def test_legacy_autograd_profiler_and_record_function_decorator():
    @record_function("helper")
    def helper(x):
        return x.exp()

    assert helper(wt.zeros(1)).tolist() == [1.0]  # no profiler: the range records nothing
    x = wt.zeros(2)
    with wt.autograd.profiler.profile(record_shapes=True) as prof:
        helper(x)
    assert [e.name for e in prof.function_events] == ["helper", "aten::exp"]
    assert _header(prof.table()) == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                     "CPU", "time", "avg", "#", "of", "Calls", "Input", "Shapes"]
    total = prof.key_averages().total_average()
    assert total.key == "Total" and total.count == 2
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with wt.autograd.profiler.emit_nvtx():
            pass
    with wt.autograd.profiler.emit_itt():
        pass
