"""Gradients through views vs PyTorch: any composition of views (expand, select, slices with
steps, narrow, transpose, permute, diagonal, unfold, as_strided overlapping or not, view/reshape,
unsqueeze/squeeze) scatters the gradient back into its input correctly, and an in-place write
through one alias of a tensor changes the gradient through every other alias (CopySlices, a
view's history regenerated from its base's)."""
import random

import numpy as np
import pytest
import torch

from core_util import wt, check_same


def _both(device, fn, *arrays):
    """fn(T, *leaves) in torch and in webtorch (leaves requiring grad, from the same numbers)."""
    res = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        leaves = [T.tensor(a, device=dev).requires_grad_() for a in arrays]
        res.append((fn(T, *leaves), leaves))
    return res


def _check_grads(device, fn, *arrays):
    """fn(T, *leaves) -> a loss, or (a loss, a view whose geometry and values must match torch's)."""
    (t_out, t_leaves), (w_out, w_leaves) = _both(device, fn, *arrays)
    if isinstance(t_out, tuple):
        check_same(w_out[1], t_out[1], device=device, strides=True, what="view")
        (t_out, _), (w_out, _) = t_out, w_out
    t_out.backward()
    w_out.backward()
    for w, t in zip(w_leaves, t_leaves):
        assert (w.grad is None) == (t.grad is None)
        if t.grad is not None:
            check_same(w.grad, t.grad, device=device, what="grad")


def _arr(rng, shape):
    return np.random.RandomState(rng.randrange(1 << 30)).uniform(-2, 2, size=shape).astype("float32")


# ---- the fuzzer's findings --------------------------------------------------------------------------
def test_select_of_expanded(device):
    _check_grads(device, lambda T, x: (x.expand(5, 3).select(0, 3) * T.tensor([1, 2, .5], device=x.device)).sum(),
                 np.zeros((1, 1), "float32"))


def test_step_slice_of_expanded(device):
    _check_grads(device, lambda T, x: x.expand(2, 3)[:, ::2].sum(), np.zeros((1, 1), "float32"))


def test_overlapping_as_strided(device):
    w = np.arange(9, dtype="float32").reshape(3, 3)
    _check_grads(device, lambda T, x: (x.as_strided((3, 3), (1, 1)) * T.tensor(w, device=x.device)).sum(),
                 np.arange(6, dtype="float32"))
    # as_strided of an expanded (self-overlapping) input: the gradient is shared among the positions
    _check_grads(device, lambda T, x: (x.expand(4, 3).as_strided((2, 2), (0, 1), 1)
                                       * T.tensor(w[:2, :2], device=x.device)).sum(), np.ones((1, 3), "float32"))


def test_double_backward_through_views(device):
    u = np.array([1., -1, 2, .5], "float32")
    for view in (lambda x: x.as_strided((3, 2), (1, 1)), lambda x: x[None].expand(3, 4).select(0, 1)[::2],
                 lambda x: x.unfold(0, 2, 1).diagonal()):
        def fn(T, x):
            g, = T.autograd.grad((view(x) ** 3).sum(), x, create_graph=True)
            return (g * T.tensor(u, device=x.device)).sum()
        _check_grads(device, fn, np.array([1., 2, 3, 4], "float32"))


def test_expand_strides():
    # PyTorch's geometry: a dim of size 1 kept at 1 keeps its stride (the view's metadata, as_strided
    # reads it)
    x = np.ones((2, 1), "float32")
    for fn in (lambda t: t.t().expand(3, 1, 2), lambda t: t.unsqueeze(0).expand(1, 3, 2, 1),
               lambda t: t.expand(1, 1, 2, 1)):
        assert fn(wt.tensor(x)).stride() == fn(torch.tensor(x)).stride()


def test_inplace_through_as_strided_past_its_input(device):
    # the view's old values get their gradient at their place in the base (PyTorch's CopySlices),
    # not through the view's ops: as_strided of a 0-d select reads past its input's one element
    w = np.array([2., 3.], "float32")

    def fn(T, x):
        b = x * 1
        v = b.select(0, 1).as_strided((2,), (1,), 0)
        v.mul_(T.tensor(w, device=x.device))
        return (b * T.tensor(w, device=x.device)).sum()
    _check_grads(device, fn, np.array([1., -2.], "float32"))


def _outcome(f):
    try:
        return f()
    except RuntimeError as e:
        return "RuntimeError: " + str(e)


def test_view_of_a_base_that_gains_history(device):
    # a view made before its base was written in place with a value that requires grad
    res = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        y = T.ones(3, device=dev, requires_grad=True)
        base = T.zeros(3, device=dev)
        v = base[:2]
        base.copy_(y * 2)
        rg, node = v.requires_grad, type(v.grad_fn).__name__
        (v * T.tensor([1., 10], device=dev)).sum().backward()
        res.append((rg, node, y.grad.tolist()))
    assert res[0] == res[1]


@pytest.mark.parametrize("case", ["write_view", "write_base", "view_of_view", "detached", "no_grad_base"])
def test_views_made_without_grad(device, case):
    """PyTorch forbids writing in place with grad mode on through (or next to) a view made in
    no_grad mode of a tensor that requires grad: ambiguous, and silently wrong if allowed."""
    res = []
    for T, dev in ((torch, "cpu"), (wt, device)):
        x = T.ones(3, device=dev, requires_grad=case != "no_grad_base")
        b = x * 1
        with T.no_grad():
            u = b.detach()[:2] if case == "detached" else b[:2]
        if case == "write_base":
            b.mul_(2)
            res.append(_outcome(lambda: u.grad_fn))
        else:
            w = u[:1] if case == "view_of_view" else u
            res.append((_outcome(lambda: w.mul_(2).tolist()), _outcome(lambda: w.requires_grad)))
    assert res[0] == res[1]


# ---- random compositions of views ---------------------------------------------------------------
def _storage_size(t):
    return t.untyped_storage().nbytes() // t.element_size()


def _as_strided_step(rng, t, distinct):
    """as_strided within t's storage: small sizes and strides (0 and 1 overlap) unless `distinct`."""
    n = _storage_size(t)
    for _ in range(20):
        nd = rng.randint(1, 3)
        size = tuple(rng.randint(1, 3) for _ in range(nd))
        stride = tuple(rng.randint(0, 4) for _ in range(nd))
        extent = sum((s - 1) * st for s, st in zip(size, stride)) + 1
        positions = {sum(i * st for i, st in zip(idx, stride)) for idx in np.ndindex(*size)}
        if extent <= n and (not distinct or len(positions) == int(np.prod(size))):
            return ("as_strided", size, stride, rng.randrange(n - extent + 1))
    return None


def _random_view(rng, t, writable):
    """A random view step of torch tensor t; `writable`: no view whose elements share memory."""
    nd, shape = t.dim(), tuple(t.shape)
    steps = [("unsqueeze", rng.randrange(nd + 1)), ("reshape", (-1,)), _as_strided_step(rng, t, writable)]
    if t.is_contiguous() or t.dim() <= 1:
        steps.append(("view", (-1,)))
    if not writable:
        ones = [d for d in range(nd) if shape[d] == 1]
        if ones:
            d = rng.choice(ones)
            steps.append(("expand", shape[:d] + (rng.randint(2, 3),) + shape[d + 1:]))
        else:
            steps.append(("expand", (rng.randint(2, 3),) + shape))
    if nd:
        d = rng.randrange(nd)
        n = shape[d]
        if n:
            steps.append(("select", d, rng.randrange(n)))
            size = rng.randint(1, n)
            step = rng.randint(size, size + 1) if writable else rng.randint(1, 2)
            steps.append(("unfold", d, size, step))
        start = rng.randint(0, n)
        steps.append(("narrow", d, start, rng.randint(0, n - start)))
        steps.append(("slice", d, rng.randint(0, n), rng.randint(0, n), rng.randint(1, 3)))
        if 1 in shape:
            steps.append(("squeeze", shape.index(1)))
        if n and n % 2 == 0:
            steps.append(("reshape", shape[:d] + (2, n // 2) + shape[d + 1:]))
    if nd >= 2:
        d1, d2 = rng.sample(range(nd), 2)
        steps.append(("transpose", d1, d2))
        steps.append(("permute", tuple(rng.sample(range(nd), nd))))
        steps.append(("diagonal", rng.randint(-shape[d1], shape[d2]), d1, d2))
    return rng.choice([s for s in steps if s is not None])


def _apply(t, step):
    name, *a = step
    if name == "slice":
        d, start, stop, st = a
        return t[(slice(None),) * d + (slice(start, stop, st),)]
    return getattr(t, name)(*a)


def _random_chain(rng, t, writable, n):
    """1 to n random view steps from torch tensor t."""
    chain = []
    for _ in range(rng.randint(1, n)):
        step = _random_view(rng, t, writable)
        chain.append(step)
        t = _apply(t, step)
    return chain, t


def _run_chain(T, t, chain):
    for step in chain:
        t = _apply(t, step)
    return t


def _random_shape(rng):
    return tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))


def _cases(device, n):
    """n random cases per seed; a quarter on webgpu, whose dispatches cost lavapipe ~55 us each (its
    graph code is the cpu's: the sample there checks the kernels: index_add, strided copies)."""
    return range(n // 4 if device == "webgpu" else n)


@pytest.mark.parametrize("seed", range(4))
def test_random_view_chains(device, seed):
    rng = random.Random(seed)
    for _ in _cases(device, 16):
        shape = _random_shape(rng)
        x_np = _arr(rng, shape)
        rev = tuple(reversed(range(len(shape))))  # "t": a non-contiguous (column-major) base
        base = rng.choice([lambda x: x, lambda x: x * 1, lambda x: x.permute(rev).contiguous().permute(rev)])
        chain, tv = _random_chain(rng, base(torch.tensor(x_np)), False, 4)
        w_np = _arr(rng, tuple(tv.shape))

        def fn(T, x):
            v = _run_chain(T, base(x), chain)
            return (v * T.tensor(w_np, device=x.device)).sum(), v
        _check_grads(device, fn, x_np)


@pytest.mark.parametrize("seed", range(4))
def test_random_inplace_through_alias(device, seed):
    rng = random.Random(100 + seed)
    for _ in _cases(device, 12):
        shape = _random_shape(rng)
        x_np, y_np = _arr(rng, shape), _arr(rng, shape)
        chain1, v1 = _random_chain(rng, torch.tensor(x_np) * 1, True, 3)
        chain2, v2 = _random_chain(rng, torch.tensor(x_np) * 1, False, 3)
        c1, c2 = _arr(rng, tuple(v1.shape)), _arr(rng, tuple(v2.shape))
        write = rng.choice(["mul_", "add_", "copy_"])
        late = rng.random() < 0.3  # the second alias made after the write

        def fn(T, x, y):
            b = x * 1
            v1 = _run_chain(T, b, chain1)
            v2 = None if late else _run_chain(T, b, chain2)
            src = (y.sum() * T.tensor(c1, device=x.device)).exp()
            if write == "mul_":
                v1.mul_(src)
            elif write == "add_":
                v1.add_(src)
            else:
                v1.copy_(src)
            if late:
                v2 = _run_chain(T, b, chain2)
            return (v2 * T.tensor(c2, device=x.device)).sum() + (v1 * T.tensor(c1, device=x.device)).sum() + b.sum()
        _check_grads(device, fn, x_np, y_np)
