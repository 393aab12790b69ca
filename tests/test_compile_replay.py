"""torch.compile's replay on inputs and outputs as eager code sees them (the compile fuzzer's minimized findings,
test_compile_fuzz.py): inputs in any layout at any position (transposed, a strided slice, expanded, at a storage
offset, float16 at an odd offset), a layout change is a recompile (PyTorch guards strides), outputs that are views
of one another stay so, and `.item()` between a step's forward and backward gives PyTorch's gradients. Calls 4+
replay on webgpu; every call equals PyTorch eager."""
import numpy as np
import pytest
import torch

from _nn_util import wt, rng_for, randn, randomize, sync, assert_close

from webtorch._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_dynamo")
CALLS = 5


def _laid_out(T, a, layout, device, k=1):
    """A tensor equal to array a on device (torch's on cpu) in a layout: transposed, a slice of a wider tensor,
    expanded from its first row, or at element offset k of a larger storage."""
    dev = "cpu" if T is torch else device
    if layout == "transposed":
        return T.tensor(np.ascontiguousarray(a.T), device=dev).t()
    if layout == "slice":
        big = np.zeros((a.shape[0], a.shape[1] + 3), a.dtype)
        big[:, 1:1 + a.shape[1]] = a
        return T.tensor(big, device=dev)[:, 1:1 + a.shape[1]]
    if layout == "expanded":
        return T.tensor(np.ascontiguousarray(a[:1]), device=dev).expand(*a.shape)
    flat = np.zeros(a.size + k + 2, a.dtype)
    flat[k:k + a.size] = a.ravel()
    return T.tensor(flat, device=dev)[k:k + a.size].view(*a.shape)


def _fma(x, y, z):
    return x * y + z


@pytest.mark.parametrize("layout", ["transposed", "slice", "expanded", "offset"])
def test_input_layout_in_any_position(device, layout):
    """`compile(f)(a.t(), b, c)` and the like, the odd layout in each position: every call equals PyTorch (a replay
    copied the first inputs' layouts into buffers a later input's copy then took: wrong sums from call 4)."""
    rng = rng_for("layout" + layout)
    for pos in range(3):
        f = wt.compile(_fma)
        for i in range(CALLS):
            arrays = [randn(rng, 3, 4) for _ in range(3)]
            if layout == "expanded":
                arrays[pos] = np.ascontiguousarray(np.broadcast_to(arrays[pos][:1], (3, 4)))
            args = {T: [_laid_out(T, a, layout if j == pos else "contiguous", device, k=1 + i % 2)
                        for j, a in enumerate(arrays)] for T in (torch, wt)}
            assert_close(f(*args[wt]), _fma(*args[torch]), device, f"{layout} input {pos}, call {i + 1}")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] == 3 * (CALLS - 3)


def test_float16_input_at_odd_offset(device):
    """A float16 input starting at an odd element (2 bytes into a 4-byte word): replays copy it (a ValueError
    before)."""
    rng = rng_for("f16 offset")
    f = wt.compile(_fma)
    for i in range(CALLS):
        arrays = [randn(rng, 2, 3).astype(np.float16) for _ in range(3)]
        args = {T: [_laid_out(T, a, "offset", device, k=1 + 2 * (j % 2)) for j, a in enumerate(arrays)]
                for T in (torch, wt)}
        got, want = f(*args[wt]), _fma(*args[torch])
        assert got.dtype == wt.float16
        assert_close(got, want, device, f"call {i + 1}", rtol=2e-3, atol=2e-3)
    if device == "webgpu":
        assert counters["webgpu"]["replays"] == CALLS - 3


def _flat_double(x):
    return x.view(-1) * 2


def test_a_stride_change_recompiles(device):
    """Strides are guarded, as PyTorch's: after replays of a contiguous input, a transposed one of the same shape
    traces again (with PyTorch's recompile reason) and raises eager's error for .view(-1)."""
    f = wt.compile(_flat_double)
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    for _ in range(CALLS):
        assert_close(f(wt.tensor(a, device=device)), _flat_double(torch.tensor(a)), device)
    with pytest.raises(RuntimeError) as want:
        _flat_double(torch.tensor(a).t())
    with pytest.raises(RuntimeError) as got:
        f(wt.tensor(a, device=device).t())
    assert str(got.value) == str(want.value)
    assert dict(counters["recompiles"]) == {"tensor 'x' stride mismatch at index 0. expected 3, actual 1": 1}


def _aliases(x):
    y = x * 2
    return y, y.view(-1), y[1], y


def test_returned_aliases_stay_aliases(device):
    """Outputs that are views of one another (and one returned twice) share memory at every call, as in eager: a
    write into one shows in the others (from call 3 on each was a copy of its own); their `_base` is PyTorch's."""
    rng = rng_for("aliases")
    f = wt.compile(_aliases)
    for i in range(CALLS):
        a = randn(rng, 3, 4)
        got, want = f(wt.tensor(a, device=device)), _aliases(torch.tensor(a))
        assert got[0] is got[3]
        assert [o._base is got[0] for o in got] == [o._base is want[0] for o in want]
        got[0].add_(1)
        want[0].add_(1)
        got[2].mul_(3)
        want[2].mul_(3)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, device, f"call {i + 1}, output {k}")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] == CALLS - 3


def _net(T):
    return T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 2))


def _train_step(model, opt, where):
    def step(x, y):
        opt.zero_grad()
        h = model[1](model[0](x))
        if where == "mid_forward":
            h = h * (2.0 if h.sum().item() > 0 else 0.5)
        loss = ((model[2](h) - y) ** 2).mean()
        if where == "before_backward":
            loss = loss * (1.0 if loss.item() > 0 else 2.0)
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("where", ["before_backward", "mid_forward"])
def test_item_between_forward_and_backward(device, where):
    """A compiled training step with `.item()` between its forward and `loss.backward()`, or in the middle of the
    forward: losses and parameters equal PyTorch's at every step. (The segment after the break replayed call 3's
    backward on later graphs, or the replayed segment before it left .grad from the step before instead of
    zero_grad()'s None: wrong gradients from call 4.) On webgpu the segment whose backward reaches the earlier
    segment's graph runs eagerly, with its reason counted; the segment before the break replays."""
    rng = rng_for("item " + where)
    tm = _net(torch)
    randomize(tm, rng)
    wm = sync(tm, _net(wt), device)
    steps = {T: _train_step(m, T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), where)
             for T, m in ((torch, tm), (wt, wm))}
    f = wt.compile(steps[wt])
    for i in range(CALLS + 2):
        x, y = randn(rng, 5, 4), randn(rng, 5, 2)
        want = steps[torch](torch.tensor(x), torch.tensor(y))
        got = f(wt.tensor(x, device=device), wt.tensor(y, device=device))
        assert_close(got, want, device, f"loss at step {i + 1}")
        for (k, p), q in zip(wm.named_parameters(), tm.parameters()):
            assert_close(p, q, device, f"{k} after step {i + 1}")
    if device == "webgpu":
        assert counters["webgpu"]["replays"] > 0
        if where == "before_backward":
            assert counters["replay_refused"]["a backward in the function reaches the graph of an input"] == 1


def _aliases_with_grad(x, w):
    y = x @ w
    return y, y.view(-1)


def test_returned_aliases_that_require_grad(device):
    """Outputs that are views of one another and require grad (their backward runs after the call) are not
    replayed (the recorded backward took them as separate outputs: a write into one before backward through the
    other gave wrong gradients from call 3): the gradient equals PyTorch's at every call, the reason counted."""
    rng = rng_for("aliases grad")
    f = wt.compile(_aliases_with_grad)
    w = randn(rng, 4, 3)
    ws = {T: T.tensor(w, device="cpu" if T is torch else device, requires_grad=True) for T in (torch, wt)}
    for i in range(CALLS):
        x = randn(rng, 2, 4)
        for T, fn in ((torch, _aliases_with_grad), (wt, f)):
            a, b = fn(T.tensor(x, device="cpu" if T is torch else device), ws[T])
            a.mul_(3)
            (b * b).sum().backward()
        assert_close(ws[wt].grad, ws[torch].grad, device, f"call {i + 1}")
    if device == "webgpu":
        assert counters["replay_refused"] == {
            "outputs that require grad share memory (their replayed backward would not see them as views)": 1}
