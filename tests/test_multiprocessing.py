"""Issue #22: torch.multiprocessing against PyTorch 2.13: Python's multiprocessing re-exported, spawn's errors, the
sharing strategies, cpu tensors to child processes by value and, after share_memory(), by shared memory."""
import multiprocessing

import pytest
import torch
from _mp_worker import exit3, fail, square_into

import webtorch as wt
import webtorch.multiprocessing as mp


def test_names_and_sharing_strategies():
    assert set(mp.__all__) == set(torch.multiprocessing.__all__)
    assert mp.Queue is multiprocessing.Queue and mp.reducer is torch.multiprocessing.reducer
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("nope")
    e = mp.ProcessExitedException("m", 1, 2, 3, "SIGKILL")
    assert (e.error_index, e.error_pid, e.exit_code, e.signal_name) == (1, 2, 3, "SIGKILL")
    assert isinstance(mp.ProcessRaisedException("m", 0, 1), mp.spawn.__globals__["ProcessException"])


def test_spawn_tensors_and_errors():
    q = mp.get_context("spawn").SimpleQueue()
    model = wt.nn.Linear(2, 1)
    with wt.no_grad():
        model.weight.zero_(), model.bias.zero_()
    assert model.share_memory() is model and model.weight.is_shared() and not wt.ones(1).is_shared()
    assert mp.spawn(square_into, args=(q, wt.tensor([1.0, 2.0]), model), nprocs=2) is None
    assert sorted([q.get(), q.get()]) == [(0, [1.0, 4.0], False, True), (1, [2.0, 5.0], False, True)]
    assert model.weight.tolist() == [[3.0, 3.0]] and model.bias.tolist() == [3.0]  # both children's updates
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom in 1") as info:
        mp.start_processes(fail, nprocs=2, start_method="fork")
    assert info.value.error_index == 1 and "-- Process 1 terminated with the following error:" in str(info.value)
    ctx = mp.start_processes(exit3, nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        while not ctx.join():
            pass
