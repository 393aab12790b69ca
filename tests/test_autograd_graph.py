"""Graph semantics of the autograd engine, each checked against what PyTorch does."""
import gc
import warnings

import numpy as np
import pytest
import torch

import webtorch as wt


def _np(t):
    return np.array(t.detach().cpu().tolist())


def _both(fn):
    """fn(T) run with T = torch and T = webtorch."""
    return fn(torch), fn(wt)


def _error(fn, T):
    with pytest.raises(Exception) as e:
        fn(T)
    return type(e.value), str(e.value)


def assert_same_error(fn):
    """fn(T) raises in both libraries, with the same type and message."""
    t, w = _error(fn, torch), _error(fn, wt)
    assert w == t


# ---- the seed example ----------------------------------------------------------------------
def test_seed_example_prints_like_torch(capsys):
    outs = []
    for T in (torch, wt):
        x = T.tensor(2.0, requires_grad=True)
        y = x ** 3 + 2 * x
        names = [type(y.grad_fn).__name__] + [type(n).__name__ for n, _ in y.grad_fn.next_functions]
        y.backward()
        print(x.grad)
        outs.append((names, capsys.readouterr().out, repr(y), repr(x), str(y.grad_fn.next_functions[1][0]
                                                                         .next_functions[1])))
    assert outs[1][0] == ["AddBackward0", "PowBackward0", "MulBackward0"]
    assert outs[1][1] == "tensor(14.)\n"
    assert outs[1][:4] == outs[0][:4]
    assert outs[1][4] == outs[0][4] == "(None, 0)"  # the Python 2 in 2 * x


def test_grad_fn_names_and_next_functions_like_torch():
    def graph(T):
        a = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = T.tensor([[0.5, -1.0], [2.0, 1.5]], requires_grad=True)
        c = T.tensor([[1.0, 1.0], [1.0, 1.0]])
        outs = [a + b, a - b, a * b, a / b, a ** 2, a ** b, 2 ** a, a.sum(), a.sum(0), a.mean(), a @ b, T.mm(a, b),
                a.exp(), a.log(), a.sin(), a.tanh(), a.sigmoid(), a.relu(), a.abs(), a.sqrt(), -a, a.t(),
                a.view(4), a.reshape(4), a[0], a[:, 1:], a.unsqueeze(0), a.permute(1, 0), a.expand(3, 2, 2),
                a.clone(), T.cat([a, b]), T.stack([a, b]), a * c, c * a, a + 1, 1 + a, a * 2, a / 2, T.where(c > 0, a, b),
                a.softmax(0), a.log_softmax(1), a.max(), a.amax(0), a.cumsum(0), a.prod(), a.var(), a.std(),
                a.gather(0, T.tensor([[0, 1]])), a.index_select(0, T.tensor([1])), a.flip(0), a.clamp(0, 1),
                a.roll(1, 0), a.take(T.tensor([3, 0])), T.take_along_dim(a, T.tensor([[1], [0]]), 1),
                T.maximum(a, b), a.sort(0)[0], a.squeeze(), a.transpose(0, 1), a.bmm(b.unsqueeze(0)) if False
                else T.bmm(a.unsqueeze(0), b.unsqueeze(0)), T.dot(a[0], b[0]), T.mv(a, b[0])]
        return [(type(o.grad_fn).__name__,
                 [(type(n).__name__ if n is not None else None, nr) for n, nr in o.grad_fn.next_functions])
                for o in outs]
    t, w = _both(graph)
    assert w == t


def test_leaf_metadata():
    for T in (torch, wt):
        x = T.ones(2)
        assert not x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
        assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
        y = x * 2
        assert y.requires_grad and not y.is_leaf and type(y.grad_fn).__name__ == "MulBackward0"
        d = y.detach()
        assert d.is_leaf and not d.requires_grad and d.grad_fn is None
        z = T.ones(2) * 3  # no input requires grad: nothing recorded
        assert z.grad_fn is None and not z.requires_grad and z.is_leaf


def test_requires_grad_errors_like_torch():
    assert_same_error(lambda T: T.tensor([1, 2]).requires_grad_())
    assert_same_error(lambda T: (T.ones(2, requires_grad=True) * 2).requires_grad_(False))


def test_non_leaf_grad_access_warns_like_torch():
    msgs = []
    for T in (torch, wt):
        y = T.ones(2, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            assert y.grad is None
        msgs.append([str(r.message).split(" (Triggered")[0] for r in rec if r.category is UserWarning])
    assert msgs[1] == msgs[0] and len(msgs[1]) == 1


def test_detach_shares_storage_and_version():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    assert y.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_detach_in_place():
    for T in (torch, wt):
        x = T.ones(3, requires_grad=True)
        y = x * 2
        assert y.detach_() is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    assert_same_error(lambda T: (T.ones(3, requires_grad=True) * 1)[1:].detach_())


# ---- recording and grad modes -----------------------------------------------------------------
def test_grad_modes_as_context_managers_and_decorators():
    x = wt.ones(2, requires_grad=True)
    with wt.no_grad():
        assert not wt.is_grad_enabled()
        assert (x * 2).grad_fn is None and not (x * 2).requires_grad
        with wt.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert wt.is_grad_enabled()

    @wt.no_grad()
    def f(t):
        return t * 2

    @wt.enable_grad()
    def g(t):
        return t * 2

    @wt.inference_mode()
    def h(t):
        return t * 2

    @wt.set_grad_enabled(False)
    def k(t):
        return t * 2

    assert not f(x).requires_grad and not k(x).requires_grad and wt.is_grad_enabled()
    with wt.no_grad():
        assert g(x).requires_grad
    r = h(x)
    assert not r.requires_grad and r.is_inference() and not x.is_inference()
    assert wt.is_grad_enabled() and not wt.is_inference_mode_enabled()

    with wt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert wt.is_grad_enabled()
    wt.set_grad_enabled(False)  # as a function: takes effect at once
    try:
        assert not wt.is_grad_enabled()
    finally:
        wt.set_grad_enabled(True)
    with wt.inference_mode():
        assert wt.is_inference_mode_enabled() and not wt.is_grad_enabled()
        with wt.inference_mode(False):
            assert not wt.is_inference_mode_enabled() and wt.is_grad_enabled()
    # a decorator works for every call, and restores the mode on exceptions
    @wt.no_grad()
    def boom():
        raise ValueError
    for _ in range(2):
        with pytest.raises(ValueError):
            boom()
        assert wt.is_grad_enabled()


def test_grad_modes_match_torch():
    def run(T):
        x = T.ones(2, requires_grad=True)
        out = []
        for ctx in (T.no_grad(), T.enable_grad(), T.set_grad_enabled(False), T.set_grad_enabled(True),
                    T.inference_mode(), T.inference_mode(False)):
            with T.no_grad():
                with ctx:
                    out.append((T.is_grad_enabled(), T.is_inference_mode_enabled(), (x * 2).requires_grad))
            with ctx:
                out.append((T.is_grad_enabled(), T.is_inference_mode_enabled(), (x * 2).requires_grad))
        out.append(T.is_grad_enabled())  # the set_grad_enabled constructed above changed the mode at once
        T.set_grad_enabled(True)
        return out
    t, w = _both(run)
    assert w == t


def test_inference_tensor_cannot_require_grad_outside():
    assert_same_error(lambda T: _inference_ones(T).requires_grad_())


def _inference_ones(T):
    with T.inference_mode():
        return T.ones(2)


# ---- backward / retain_graph / freeing -----------------------------------------------------------
def test_second_backward_raises_like_torch():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    assert_same_error(run)

    def via_grad(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x.sin() * x).sum()
        T.autograd.grad(y, x)
        T.autograd.grad(y, x)
    assert_same_error(via_grad)


def test_retain_graph_allows_second_backward_and_accumulates():
    for T in (torch, wt):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        g1 = _np(x.grad)
        y.backward()
        np.testing.assert_allclose(_np(x.grad), 2 * g1, rtol=1e-6)


def test_saved_tensors_released_after_backward():
    x = wt.randn(3, requires_grad=True)
    h = x.exp()  # ExpBackward0 saves its output
    node = h.grad_fn
    y = (h * x).sum()
    assert node._saved and y.grad_fn.next_functions[0][0]._saved
    y.backward()
    assert not node._saved and node._freed
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node.saved_tensors

    x2 = wt.randn(3, requires_grad=True)
    y2 = (x2.exp() * x2).sum()
    y2.backward(retain_graph=True)
    assert y2.grad_fn.next_functions[0][0]._saved  # kept


def test_intermediates_freed_after_backward():
    import weakref
    # as PyTorch: the graph holds what a formula reads (h * h reads h) and only that (h * 2's
    # gradient for h reads the 2; h would be read for the 2's, which needs none)
    for T in (torch, wt):
        x = T.randn(64, requires_grad=True)
        h = x.exp()
        ref = weakref.ref(h)
        y = (h * h).sum()
        del h
        gc.collect()
        assert ref() is not None, T  # held by the graph for backward
        y.backward()
        gc.collect()
        assert ref() is None, T
        h = x.exp()
        ref = weakref.ref(h)
        y = (h * 2).sum()
        del h
        gc.collect()
        assert ref() is None, T


def test_backward_gradient_argument_and_errors_like_torch():
    for T in (torch, wt):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).backward(T.tensor([1.0, 0.5, -1.0]))
        assert x.grad.tolist() == [2.0, 2.0, -6.0]
    assert_same_error(lambda T: (T.ones(3, requires_grad=True) * 2).backward())
    assert_same_error(lambda T: T.ones(3).sum().backward())
    assert_same_error(lambda T: T.ones(2).backward())
    assert_same_error(lambda T: T.autograd.grad((T.ones(2, requires_grad=True) * 2).sum(),
                                                [T.ones(2, requires_grad=True)]))
    assert_same_error(lambda T: T.autograd.grad(T.ones(2, requires_grad=True).sum(), T.ones(2, requires_grad=True),
                                                T.ones(2)))
    assert_same_error(lambda T: T.ones(2, requires_grad=True).sum().backward(inputs=[]))


def test_backward_inputs_only_accumulates_into_them():
    for T in (torch, wt):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], requires_grad=True)
        h = a * b
        h.retain_grad()
        (h * a).sum().backward(inputs=[b])
        assert a.grad is None and b.grad.tolist() == [1.0, 4.0]
        (a * b).sum().backward(inputs=b)
        assert b.grad.tolist() == [2.0, 6.0] and a.grad is None


def test_autograd_grad():
    def run(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = T.tensor([1.5, 0.25, -0.5], requires_grad=True)
        u = T.tensor([1.0, 1.0, 1.0], requires_grad=True)
        y = (x * w).sin()
        gx, gw, gu = T.autograd.grad(y, [x, w, u], grad_outputs=T.tensor([1.0, 2.0, 3.0]), retain_graph=True,
                                     allow_unused=True)
        assert gu is None and x.grad is None and w.grad is None  # grad() never accumulates into .grad
        (gx2,) = T.autograd.grad(y.sum(), x)  # a single tensor input -> a 1-tuple
        mat = T.autograd.grad(y.sum(), [u], allow_unused=True, materialize_grads=True) \
            if T is torch else T.autograd.grad(y.sum(), [u], allow_unused=True, materialize_grads=True)
        return [_np(gx), _np(gw), _np(gx2), _np(mat[0])]
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-6)


def test_grad_of_multiple_outputs_and_shared_subgraph():
    def run(T):
        x = T.tensor([[0.5, -1.0], [2.0, 0.3]], requires_grad=True)
        h = x.exp()
        a, b = (h * x).sum(0), h.mean()
        return [_np(g) for g in T.autograd.grad([a, b], [x, h], [T.tensor([1.0, -2.0]), T.tensor(3.0)])]
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-6)


# ---- higher order ------------------------------------------------------------------------------
def test_higher_order_derivatives():
    def run(T):
        x = T.tensor([0.7, -1.3], requires_grad=True)
        y = (x ** 3 * x.sin()).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        assert g.requires_grad and g.grad_fn is not None
        (gg,) = T.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = T.autograd.grad(gg.sum(), x)
        return [_np(g), _np(gg), _np(ggg)]
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-5)


def test_backward_create_graph_makes_grad_differentiable():
    def run(T):
        x = T.tensor([0.7, -1.3], requires_grad=True)
        w = T.tensor([2.0, 0.5], requires_grad=True)
        ((x * w).tanh().sum()).backward(create_graph=True)
        assert x.grad.requires_grad
        penalty = (x.grad ** 2).sum()  # gradient penalty: d/dw of |dL/dx|^2
        (gw,) = T.autograd.grad(penalty, w)
        return [_np(x.grad), _np(gw)]
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-5)


def test_create_graph_grad_is_a_copy_as_torchs():
    """backward(create_graph=True) stores a copy of its own (CopyBackwards), never a view of the gradient, so
    Optimizer.zero_grad(set_to_none=False) detaches it in place; copy_ from a grad-requiring source records
    CopyBackwards, as PyTorch."""
    def run(T):
        T.manual_seed(0)
        m = T.nn.Linear(3, 2)
        x = T.ones(4, 3, requires_grad=True)
        m(x).pow(2).sum().backward(create_graph=True)
        names = [type(t.grad.grad_fn).__name__ for t in (m.weight, m.bias, x)]
        T.optim.SGD(m.parameters(), lr=0.1).zero_grad(set_to_none=False)
        e = T.zeros(2, 3).copy_(x[:1] * 2)
        return names, [_np(p.grad) for p in m.parameters()], [m.weight.grad.requires_grad, type(e.grad_fn).__name__]
    (wn, wg, wf), (tn, tg, tf) = _both(run)
    assert wn == tn and wf == tf
    for a, b in zip(wg, tg):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("op", ["index", "gather", "index_select", "flip", "roll", "take", "index_put"])
def test_indexing_double_backward_matches_torch(device, op):
    """The backward of a take (a put into zeros) and of a put (a take) differentiate again."""
    ops = {"index": lambda x, i: x[i([2, 0, 2])], "gather": lambda x, i: x.gather(1, i([[1, 1], [0, 2], [2, 2]])),
           "index_select": lambda x, i: x.index_select(1, i([2, 2, 0])), "flip": lambda x, i: x.flip(0),
           "roll": lambda x, i: x.roll(1, 1), "take": lambda x, i: x.take(i([7, 7])),
           "index_put": lambda x, i: x.index_put((i([1, 1]),), x[0, :3] * 2, accumulate=True)}
    dev = "cpu" if device == "cpu-pure" else device

    def run(T):
        gen = np.random.default_rng(0)
        x = T.tensor(gen.standard_normal((3, 3)).tolist(), device=dev if T is wt else "cpu", requires_grad=True)
        y = ops[op](x, lambda v: T.tensor(v, device=x.device))
        w = T.tensor(gen.standard_normal(tuple(y.shape)).tolist(), device=x.device, requires_grad=True)
        (g,) = T.autograd.grad((y * w).sum(), x, create_graph=True)
        assert g.grad_fn is not None
        (gw,) = T.autograd.grad((g * g.detach().cos()).sum(), w)
        return [_np(g), _np(gw)]
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_hessian_vector_product_matches_torch():
    def run(T):
        A = T.tensor([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 3.0]])
        x = T.tensor([0.2, -0.4, 0.9], requires_grad=True)
        f = (x @ A @ x) * 0.5 + x.exp().sum() + (x.softmax(0) * x).sum()
        (g,) = T.autograd.grad(f, x, create_graph=True)
        (hv,) = T.autograd.grad(g, x, grad_outputs=T.tensor([1.0, 0.0, -1.0]))
        return _np(hv)
    t, w = _both(run)
    np.testing.assert_allclose(w, t, rtol=1e-5, atol=1e-6)


# ---- in-place ----------------------------------------------------------------------------------
def test_inplace_on_saved_tensor_raises_like_torch():
    def saved_output(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()

    def saved_input(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        b = a.sin()
        a.mul_(2)
        b.sum().backward()

    def saved_input_other_op(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = x * 1
        d = c * x
        c.add_(1)
        d.sum().backward()

    def through_detach(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        e = x.sigmoid()
        f = e * 2
        e.detach().zero_()
        f.sum().backward()

    def through_setitem(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        g = x.exp()
        g[0] = 1
        g.sum().backward()

    def leaf_under_no_grad(T):
        w = T.ones(2, 2, requires_grad=True)
        h = (w * w).sum()
        with T.no_grad():
            w.add_(1)
        h.backward()

    for fn in (saved_output, saved_input, saved_input_other_op, through_detach, through_setitem, leaf_under_no_grad):
        assert_same_error(fn)


def test_version_counter():
    for T in (torch, wt):
        x = T.ones(3)
        v = x[1:]
        assert x._version == 0
        x.add_(1)
        v.mul_(2)
        x[0] = 5
        assert x._version == v._version == 3


def test_inplace_on_leaf_requiring_grad_raises_like_torch():
    assert_same_error(lambda T: T.ones(2, requires_grad=True).add_(1))
    assert_same_error(lambda T: T.ones(2, requires_grad=True).exp_())
    assert_same_error(lambda T: T.ones(3, requires_grad=True)[1:].mul_(2))

    def setitem(T):
        x = T.ones(3, requires_grad=True)
        x[0] = 2.0
    assert_same_error(setitem)
    for T in (torch, wt):  # allowed without grad mode: the optimizer's update
        p = T.ones(2, requires_grad=True)
        with T.no_grad():
            p.sub_(T.tensor([0.5, 1.0]))
        assert p.tolist() == [0.5, 0.0] and p.is_leaf and p.requires_grad


def _inplace_view_cases(T, device):
    kw = dict(device=device)
    x = T.tensor([[1.0, -2.0, 0.5], [0.3, 1.5, -0.7]], requires_grad=True, **kw)
    w = T.tensor([0.2, -1.1, 2.0], requires_grad=True, **kw)
    outs = []

    y = x * 1                      # write through a row view
    y[0] = w * 3
    outs.append(y)

    y = x.sin()                    # in-place op on a column view (mul_ saves the view's old value)
    y[:, 1].mul_(w[:2])
    outs.append(y)

    y = x * 2                      # view of a view, and a transposed view
    y.t()[1:].add_(x.t()[:2] ** 2)
    outs.append(y)

    y = x.sin()                    # masked/advanced setitem (index_put_ through autograd)
    y[y > 0] = 0.0
    outs.append(y)

    y = (x * 1).view(6)            # view of a view of a non-leaf
    y.view(2, 3)[1].copy_(w.exp())
    outs.append(y)
    loss = sum(((o * (k + 1)) ** 2).sum() for k, o in enumerate(outs))
    gx, gw = T.autograd.grad(loss, [x, w])
    return [type(o.grad_fn).__name__ for o in outs[:3]], [_np(gx), _np(gw)]


def test_inplace_on_views_of_non_leaf(device):
    names_t, grads_t = _inplace_view_cases(torch, "cpu")
    names_w, grads_w = _inplace_view_cases(wt, device)
    assert names_w == names_t == ["CopySlices"] * 3
    for a, b in zip(grads_t, grads_w):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_view_sees_base_history():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        y.mul_(x)  # the base changes after the view was taken
        (g,) = T.autograd.grad((v * v).sum(), x)
        return _np(g)
    t, w = _both(run)
    np.testing.assert_allclose(w, t)


def test_inplace_ops_record_like_torch():
    def run(T):
        x = T.tensor([0.5, 1.5, -0.5], requires_grad=True)
        y = x * 1
        y.add_(x)
        y.mul_(2)
        y.sub_(x, alpha=2)
        y.div_(3)
        y.exp_()
        (g,) = T.autograd.grad(y.sum(), x)
        return type(y.grad_fn).__name__, _np(g)
    (nt, gt), (nw, gw) = _both(run)
    assert nw == nt
    np.testing.assert_allclose(gw, gt, rtol=1e-5)


# ---- hooks ------------------------------------------------------------------------------------------
def test_tensor_hooks_like_torch():
    def run(T):
        seen = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        hx = x.register_hook(lambda g: seen.append(("x", g.tolist())))
        x.register_hook(lambda g: g * 10)  # leaf: changes what is accumulated
        h = x * x
        h.register_hook(lambda g: seen.append(("h", g.tolist())))
        h.register_hook(lambda g: g + 1)  # non-leaf: changes what flows on
        removed = h.register_hook(lambda g: g * 0)
        removed.remove()
        h.sum().backward()
        hx.remove()
        (x * 3).sum().backward()
        return seen, x.grad.tolist()
    t, w = _both(run)
    assert w == t


def test_retain_grad():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        h.retain_grad()
        assert h.retains_grad and not x.retains_grad
        k = h * 3
        (k * k).sum().backward()
        return _np(h.grad), _np(x.grad)
    for a, b in zip(*_both(run)):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    assert_same_error(lambda T: T.ones(2).retain_grad())
    assert_same_error(lambda T: T.ones(2).register_hook(lambda g: g))


def test_node_hooks_and_post_accumulate_hook():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda gout: calls.append(("pre", gout[0].tolist())))
    y.grad_fn.register_hook(lambda gin, gout: calls.append(("post", gin[0].tolist())))
    x.register_post_accumulate_grad_hook(lambda p: calls.append(("acc", p.grad.tolist())))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [3.0, 3.0]), ("acc", [3.0, 3.0])]



def test_engine_runs_nodes_in_torchs_order():
    """Each node runs once all its consumers delivered; among ready nodes the newest first (PyTorch's
    ready queue by sequence number): the order node pre-hooks and tensor hooks observe."""
    def run(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], requires_grad=True)
        seen = []
        u, v = a * b, a + b
        w = u.exp() * v.sin() + u
        z = (w * 2 + v.cos()).sum()
        for t in (u, v, w):
            t.register_hook(lambda g, t=t: seen.append(("tensor", g.tolist())))
        nodes, stack = set(), [z.grad_fn]
        while stack:
            node = stack.pop()
            if node not in nodes and not hasattr(node, "variable"):
                nodes.add(node)
                node.register_prehook(lambda g, n=node: seen.append(n.name()))
                stack += [n for n, _ in node.next_functions if n is not None]
        T.autograd.grad(z, [a], retain_graph=True)
        z.backward(inputs=[b])
        return seen
    t, w = _both(run)
    assert w == t


# ---- custom Function ------------------------------------------------------------------------------
def _my_functions(T):
    class ScaledExp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, idx):
            y = x.exp() * scale
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            ctx.seen_needs = ctx.needs_input_grad
            return y, idx * 2

        @staticmethod
        def backward(ctx, gy, gidx):
            x, y = ctx.saved_tensors
            return gy * y, None, None

    class SortWithIndices(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return T.zeros_like(gv).scatter(0, i, gv)
    return ScaledExp, SortWithIndices


def test_custom_function_like_torch():
    def run(T):
        ScaledExp, SortWithIndices = _my_functions(T)
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y, i2 = ScaledExp.apply(x, 2.0, T.tensor([1, 2]))
        node = y.grad_fn
        info = [type(node).__name__, node.seen_needs if hasattr(node, "seen_needs") else None,
                i2.requires_grad, [(type(n).__name__ if n is not None else None, k) for n, k in node.next_functions]]
        v, i = SortWithIndices.apply(x * 1)
        info += [v.requires_grad, i.requires_grad, i.dtype == T.int64]
        (v * T.tensor([1.0, 2.0, 3.0]) + y).sum().backward()
        return info, _np(x.grad)
    t, w = _both(run)
    assert w[0][0] == "ScaledExpBackward"
    assert w[0] == t[0]
    np.testing.assert_allclose(w[1], t[1], rtol=1e-6)


def test_custom_function_needs_input_grad_and_saved_tensors_freed():
    ScaledExp, _ = _my_functions(wt)
    x = wt.tensor([0.5, -1.0], requires_grad=True)
    s = wt.tensor([1.0, 2.0])
    y, _ = ScaledExp.apply(x, s, wt.tensor([1]))
    assert y.grad_fn.seen_needs == (True, False, False)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with wt.no_grad():  # not recorded at all
        y2, _ = ScaledExp.apply(x, 2.0, wt.tensor([1]))
    assert y2.grad_fn is None and not y2.requires_grad


def test_custom_function_gradcheck_and_double_backward():
    class Cube(wt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2
    x = wt.tensor([0.3, -1.2, 2.0], dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(Cube.apply, (x,))
    assert wt.autograd.gradgradcheck(Cube.apply, (x,))
    (g,) = wt.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = wt.autograd.grad(g.sum(), x)
    assert gg.tolist() == pytest.approx([6 * v for v in x.tolist()])


def test_custom_function_returning_input_and_non_tensor_args():
    class Ident(wt.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    y = Ident.apply(x, 5)
    assert y is not x and type(y.grad_fn).__name__ == "IdentBackward"
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


# ---- grad_fn names over the whole op table -------------------------------------------------------
# Ops that webtorch builds from other ops (one definition per primitive, see DESIGN.md) and that
# do not yet have their own node (ops._common.Composite gives one at no dispatch cost), so their
# outputs carry the last primitive's node rather than PyTorch's fused node (rdiv_scalar: PyTorch
# records reciprocal * scalar, two kernels where webtorch runs one). A known gap, listed exactly:
# the test fails on any new difference, and when one gets its own node (then shrink the list).
COMPOSITE_NAMES = {
    "deg2rad", "rad2deg", "clamp_tensor", "roll_flat", "repeat", "repeat_newdim", "tile", "repeat_interleave",
    "scatter", "scatter_value", "scatter_add", "masked_fill", "masked_fill_bcast", "index_add",
    "index_copy", "index_fill", "masked_scatter", "index_put_accumulate", "matmul_batched_bcast",
    "diag_1d", "diag_2d", "einsum_trace_diag", "einsum_outer_sum",
}


def test_grad_fn_names_over_op_table():
    from _autograd_cases import CASES, build, float_outputs
    same, differ = set(), set()
    for case in CASES:
        names = []
        for T in (torch, wt):
            args, _ = build(T, case, "cpu", T.float32)
            names.append([type(o.grad_fn).__name__ for o in float_outputs(case.fn(T, *args))])
        (same if names[0] == names[1] else differ).add(case.name)
    assert differ - COMPOSITE_NAMES == set(), "grad_fn names differ from PyTorch's"
    assert COMPOSITE_NAMES - differ == set(), "these now match PyTorch: remove them from COMPOSITE_NAMES"
    assert len(same) > 100


def test_gradcheck_through_inplace_views():
    def f(x, w):
        y = x * 1
        y[0] = w * x[1]
        y[:, 2].mul_(w[:2].exp())
        y.t()[0].add_(x[:, 1] ** 2)
        return y.tanh()
    x = wt.tensor([[0.3, -0.5, 0.8], [1.1, 0.2, -0.4]], dtype=wt.float64, requires_grad=True)
    w = wt.tensor([0.7, -0.2, 0.5], dtype=wt.float64, requires_grad=True)
    assert wt.autograd.gradcheck(f, (x, w))
    assert wt.autograd.gradgradcheck(f, (x, w))


# ---- the graphs users print: a small MLP and the seed's CustomNet ------------------------------
def _graph_names(t):
    """The grad_fn graph below t, breadth first: each node's name and its next_functions' names."""
    rows, seen, queue = [], set(), [t.grad_fn]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        rows.append((type(n).__name__, [type(m).__name__ if m is not None else None for m, _ in n.next_functions]))
        queue.extend(m for m, _ in n.next_functions)
    return rows


def _mlp_loss(T, device):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    x = T.tensor(np.random.RandomState(0).standard_normal((5, 4)).tolist(), device=device)
    return T.nn.functional.cross_entropy(model(x), T.tensor([0, 2, 1, 1, 0], device=device))


def _custom_net_loss(T, device):
    nn = T.nn

    class CustomNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, kernel_size=3)
            self.bn1 = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)

        def forward(self, x):
            return self.pool(T.nn.functional.relu(self.bn1(self.conv1(x))))
    x = T.tensor(np.random.RandomState(1).standard_normal((2, 3, 6, 6)).tolist(), device=device)
    return CustomNet().to(device)(x).mean()


@pytest.mark.parametrize("make", [_mlp_loss, _custom_net_loss], ids=["mlp", "custom_net"])
def test_model_graph_names_like_torch(make, device, capsys):
    want = _graph_names(make(torch, "cpu"))
    loss = make(wt, device)
    got = _graph_names(loss)
    with capsys.disabled():
        print(f"\n{make.__name__} grad_fn graph:", " -> ".join(name for name, _ in got))
    assert got == want
    loss.backward()  # and the graph runs
