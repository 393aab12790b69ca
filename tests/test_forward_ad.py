"""torch.autograd.forward_ad and torch.autograd.functional against PyTorch (cpu, cpu-pure, webgpu): the tangent
of each op family's result through make_dual/unpack_dual, in-place ops and views carrying tangents, a level's
exit dropping them, PyTorch's errors; and autograd.functional's jvp, vjp, vhp, hvp, jacobian (reverse and
forward mode) and hessian with PyTorch's tuple rules."""
import numpy as np
import pytest
from core_util import cmp, raises_like

X = np.array([[0.3, -0.5, 1.1], [0.7, 0.2, -0.4]], dtype="float32")
V = np.array([[1.0, 0.5, -2.0], [0.25, -1.0, 3.0]], dtype="float32")
W = np.array([[0.1, 0.9], [-0.3, 0.4], [0.5, -0.8]], dtype="float32")


def _inplace(T, d, w):
    z = T.zeros_like(d)
    z.add_(d.exp())
    z[0] = d[1] * 2
    return z


OPS = {
    "pointwise": lambda T, d, w: (d.exp() * d.sin() / (1 + d * d)).tanh(),
    "reductions": lambda T, d, w: (d.sum(), d.mean(0), d.amax(1), d.var(), d.max(1)[0], d.logsumexp(1)),
    "matmul": lambda T, d, w: (d @ w, T.nn.functional.linear(d, w.T, w[0])),
    "views": lambda T, d, w: (d.T, d[1:, ::2], d.reshape(3, 2), d.unsqueeze(0).expand(2, 2, 3), d.permute(1, 0)),
    "joins": lambda T, d, w: (T.cat([d, d * 2], 0), T.stack([d, d.cos()], 1), d.split(1, 1)[2], d.unbind(0)[1]),
    "nn": lambda T, d, w: (d.softmax(-1), T.nn.functional.layer_norm(d, (3,)), T.nn.functional.gelu(d),
                           T.nn.functional.mse_loss(d, d.detach() * 0 + 1), d.cumsum(1)),
    "where_clamp": lambda T, d, w: (T.where(d > 0, d, d * d), d.clamp(-0.4, 0.4), d.abs() ** 1.5),
    "inplace": _inplace,
}


def _tangents(T, fn, x, v, w):
    fw = T.autograd.forward_ad
    with fw.dual_level():
        out = fn(T, fw.make_dual(x, v), w)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(fw.unpack_dual(o).tangent for o in outs), tuple(fw.unpack_dual(o).primal for o in outs)


@pytest.mark.parametrize("name", list(OPS))
def test_tangents(device, name):
    cmp(device, lambda T, x, v, w: _tangents(T, OPS[name], x, v, w), X, V, W)


def test_dual_metadata_and_level_exit(device):
    def run(T, x, v):
        fw = T.autograd.forward_ad
        with fw.dual_level() as level:
            d = fw.make_dual(x, v)
            y = d * 3
            inside = (level, fw.unpack_dual(y).tangent, fw.unpack_dual(x).tangent is None,
                      fw.unpack_dual(d.detach()).tangent is None, fw.unpack_dual(d.argmax()).tangent is None,
                      type(fw.unpack_dual(d)).__name__, fw.unpack_dual(d)._fields, d.requires_grad)
        return inside, fw.unpack_dual(y).tangent is None
    cmp(device, run, X, V)


ERRORS = [
    (lambda T, x: T.autograd.forward_ad.make_dual(x, x), "no level exists"),
    (lambda T, x: _in_level(T, lambda fw: fw.make_dual(x, x[0])), "different size than that of the original"),
    (lambda T, x: _in_level(T, lambda fw: fw.make_dual(x.long(), x.long())), "Expected primal to be floating"),
    (lambda T, x: _in_level(T, lambda fw: fw.enter_dual_level()), "Nested forward mode AD is not supported"),
    (lambda T, x: T.autograd.functional.vhp(lambda a: a, x, x), "should contain a single element"),
    (lambda T, x: T.autograd.functional.jvp(lambda a: a, x, x[0]), "v has invalid size"),
    (lambda T, x: T.autograd.functional.jacobian(lambda a: a, x, strategy="forward-mode"), "vectorize=True"),
    (lambda T, x: T.autograd.functional.jacobian(lambda a: a, x, strategy="forward-mode", vectorize=True,
                                                 strict=True), '`strict=True` and `strategy="forward-mode"`'),
    (lambda T, x: T.autograd.functional.jacobian(lambda a: a, x, vectorize=True, strict=True),
     "`strict=True` and `vectorized=True` are not supported together"),
    (lambda T, x: T.autograd.functional.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="fw"),
     'Expected strategy to be either "forward-mode" or "reverse-mode".'),
    (lambda T, x: T.autograd.grad(x.clone().requires_grad_() * 2, x, T.ones(2, 2), is_grads_batched=True),
     "we interpret the first dimension of each grad_output as the batch dimension"),
]


def _in_level(T, fn):
    fw = T.autograd.forward_ad
    with fw.dual_level():
        return fn(fw)


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(device, case):
    fn, phrase = ERRORS[case]
    raises_like(device, fn, X, phrase=phrase)


def _f(a, b):
    return (a @ b).sin()


def _g(T, a, b):
    """Views, a reduction, matmul and nn.functional in one function."""
    h = T.nn.functional.softplus(a.t()[::2].T @ b[::2]) * a.amax(1, keepdim=True)
    return T.nn.functional.layer_norm(h, (2,)) + a[:, 1:].sum()


def _batched_grads(T, x, w):
    """autograd.grad(is_grads_batched=True): one vjp per row of the grad_outputs' first dim (None: an unused input)."""
    a, b, c = x.clone().requires_grad_(), w.clone().requires_grad_(), w.clone().requires_grad_()
    out = _g(T, a, b)
    return T.autograd.grad((out, a.sum()), (a, b, c), (T.eye(4, device=x.device).reshape(4, 2, 2),
                                                       T.ones(4, device=x.device)), is_grads_batched=True,
                           allow_unused=True)


FUNCTIONAL = {
    "jvp": lambda T, x, v, w: T.autograd.functional.jvp(_f, (x, w), (v, w * 2)),
    "vjp": lambda T, x, v, w: T.autograd.functional.vjp(lambda a: a.exp() * 2, x, v),
    "vhp": lambda T, x, v, w: T.autograd.functional.vhp(lambda a: (a ** 3).sum(), x, v),
    "hvp": lambda T, x, v, w: T.autograd.functional.hvp(lambda a, b: (a ** 3).sum() * (b * b).sum(), (x, w),
                                                        (v, w)),
    "jacobian": lambda T, x, v, w: T.autograd.functional.jacobian(_f, (x, w)),
    "jacobian_forward": lambda T, x, v, w: T.autograd.functional.jacobian(
        lambda a, b: (_f(a, b), b.sum()), (x, w), vectorize=True, strategy="forward-mode"),
    "jacobian_vectorized": lambda T, x, v, w: T.autograd.functional.jacobian(
        lambda a, b: (_g(T, a, b), a.sum(0), b.detach() * 2), (x, w), vectorize=True),
    "jacobian_forward_views": lambda T, x, v, w: T.autograd.functional.jacobian(
        lambda a: _g(T, a, w), x, vectorize=True, strategy="forward-mode"),
    "grad_batched": lambda T, x, v, w: _batched_grads(T, x, w),
    "hessian": lambda T, x, v, w: T.autograd.functional.hessian(lambda a: (a ** 3).prod(), x[0]),
    "hessian_vectorized": lambda T, x, v, w: T.autograd.functional.hessian(lambda a, b: _g(T, a, b).sum(), (x, w),
                                                                           vectorize=True),
    "hessian_forward_over_reverse": lambda T, x, v, w: T.autograd.functional.hessian(
        lambda a: _g(T, a, w).sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode"),
    "hessian_tuple": lambda T, x, v, w: T.autograd.functional.hessian(lambda a, b: (a ** 3).sum() * b.sum(),
                                                                      (x[0], w[0])),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional(device, name):
    cmp(device, FUNCTIONAL[name], X, V, W)


def _views_written(T, x, v, w):
    """In-place writes through views (PyTorch's forward-differentiable views): each view's new tangent lands in
    its base's tangent (zeros where the base had none), and every other view of that base reads its part."""
    fw = T.autograd.forward_ad
    dev = x.device
    with fw.dual_level():
        d = fw.make_dual(x, v)
        b = T.zeros(2, 3, device=dev)
        other = b[:, 1]
        b[0].copy_(d[1] * 2)                           # a plain base gains a tangent through its view
        b.t()[2].mul_(d[:, 0].exp())                   # a view of a view, written by a dual
        b[1, :2] = d[0, 1:]                            # setitem into a view
        e = fw.make_dual(x * 1, v.flip(0))
        part = e[:, 1:]
        part.add_(d[:, :2] ** 2)                       # a dual base, its view written by a dual
        e.t()[0].zero_()                               # then the base through another view
        s = T.empty_strided((3, 2), (1, 3), device=dev).fill_(0.5)   # a base not laid out contiguously
        s[1:].mul_(d.t()[1:])
        dd = fw.make_dual(x * 1, v * 1)
        dd[0].mul_(3)                                  # make_dual's result is its own base
        m = d * 1
        m.detach()[1].fill_(4.0)                       # a detached alias: the tangent stands
        y = d * 1
        yv = y[:, ::2]
        y.mul_(d.cos())                                # the base written: its view reads its new tangent
        tangents = [fw.unpack_dual(t).tangent for t in (b, other, e, part, s, dd, m, yv * 1)]
        return tangents, fw.unpack_dual(x * 1).tangent is None, fw.unpack_dual(part).primal


def test_inplace_through_views(device):
    cmp(device, _views_written, X, V, W)
