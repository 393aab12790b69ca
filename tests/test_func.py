"""torch.func against PyTorch's on the same functions and numbers (cpu, cpu-pure, webgpu): grad, grad_and_value
(argnums, has_aux), vjp, jvp, jacrev, jacfwd, hessian, linearize, vmap (in_dims/out_dims nested, chunk_size,
randomness) by op family, the compositions (vmap(grad), grad(grad), jacrev(jacrev), vmap(vmap), vmap(jacrev),
vmap(jvp)), jacrev/jacfwd vectorized as PyTorch's (vmap over the identity, chunk_size, pytrees, has_aux, nested
with each other and with vmap, forward AD through vmap), functional_call and stack_module_state, and PyTorch's
errors for misuse."""
import warnings

import numpy as np
import pytest
import torch
from core_util import cmp, raises_like, wt

X = np.array([[0.3, -0.5, 1.1], [0.7, 0.2, -0.4]], dtype="float32")
W = np.array([[0.1, 0.9], [-0.3, 0.4], [0.5, -0.8]], dtype="float32")
B = np.random.RandomState(0).uniform(-1, 1, size=(3, 4, 5)).astype("float32")
C = np.random.RandomState(1).uniform(-1, 1, size=(3, 4, 5)).astype("float32")


def _loss(x, w):
    return ((x @ w).tanh() ** 2).sum()


def _net(T, a, w):
    """Several op families in one function: matmul, nn.functional, softmax, a reduction, views and indexing."""
    h = T.nn.functional.gelu(a @ w).softmax(-1) * a.sum()
    return h.sum(0) + a[..., :2].T[0].exp().sum()


TRANSFORMS = {
    "grad_argnums": lambda T, x, w: T.func.grad(_loss, argnums=(0, 1))(x, w),
    "grad_and_value_aux": lambda T, x, w: T.func.grad_and_value(lambda x, w: (_loss(x, w), x.sum()), has_aux=True)(
        x, w),
    "grad_dict": lambda T, x, w: T.func.grad(lambda p: _loss(p["x"], p["w"]))({"x": x, "w": w})["w"],
    "grad_grad": lambda T, x, w: T.func.grad(T.func.grad(lambda a: (a ** 3).sin()))(x[0, 0]),
    "vjp": lambda T, x, w: T.func.vjp(lambda a: (a.exp(), a.sum()), x)[1]((x, x.sum() * 0 + 2)),
    "jvp": lambda T, x, w: T.func.jvp(lambda a, b: (a @ b).sin(), (x, w), (x.cos(), w * 2)),
    "jacrev": lambda T, x, w: T.func.jacrev(lambda a, b: (a @ b).sin(), argnums=1)(x, w),
    "jacfwd": lambda T, x, w: T.func.jacfwd(lambda a, b: (a @ b).sin(), argnums=(0, 1))(x, w),
    "jacrev_jacrev": lambda T, x, w: T.func.jacrev(T.func.jacrev(lambda a: a.sin() * a.sum()))(x[0]),
    "hessian": lambda T, x, w: T.func.hessian(lambda a: (a.sin() * a.exp()).sum())(x[0]),
    # jacrev: vmap(vjp_fn) over the identity (chunk_size rows at a time); jacfwd: vmap(jvp) over the identity
    "jacrev_chunks": lambda T, x, w: T.func.jacrev(lambda a, b: (_net(T, a, b), a.t() @ a), argnums=(0, 1),
                                                   chunk_size=3)(x, w),
    "jacrev_chunk1": lambda T, x, w: T.func.jacrev(lambda a: _net(T, a, w), chunk_size=1)(x),
    "jacrev_dict_aux": lambda T, x, w: _values(T.func.jacrev(lambda p: (_net(T, p["a"], p["w"]), p["a"].sum()),
                                                             has_aux=True)({"a": x, "w": w})),
    "jacfwd_dict_aux": lambda T, x, w: _values(T.func.jacfwd(lambda p: (_net(T, p["a"], p["w"]), p["a"].sum()),
                                                             has_aux=True)({"a": x, "w": w})),
    "jacfwd_outputs": lambda T, x, w: T.func.jacfwd(lambda a, b: (_net(T, a, b), b.sum(0)), argnums=(0, 1))(x, w),
    "jacfwd_jacrev": lambda T, x, w: T.func.jacfwd(T.func.jacrev(lambda a: _net(T, a, w).sum()))(x),
    "jacrev_jacfwd": lambda T, x, w: T.func.jacrev(T.func.jacfwd(lambda a: _net(T, a, w)))(x[0]),
    "hessian_net": lambda T, x, w: T.func.hessian(lambda a, b: _net(T, a, b).sum(), argnums=1)(x, w),
    "vmap_jacfwd": lambda T, x, w: T.func.vmap(T.func.jacfwd(lambda a: _net(T, a, w)))(x),
    "jacfwd_vmap": lambda T, x, w: T.func.jacfwd(T.func.vmap(lambda a: _net(T, a, w)))(x),
    "jvp_vmap": lambda T, x, w: T.func.jvp(T.func.vmap(lambda a: _net(T, a, w)), (x,), (x.cos(),)),
    "dual_vmap": lambda T, x, w: _dual_through_vmap(T, x, w),
    "linearize": lambda T, x, w: T.func.linearize(lambda a: a.sin() * 2, x)[1](x),
    "vmap_grad": lambda T, x, w: T.func.vmap(T.func.grad(lambda w, a: _loss(a, w)), in_dims=(None, 0))(w, x),
    "vmap_vmap": lambda T, x, w: T.func.vmap(T.func.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None)),
                                             in_dims=(0, None))(x, w[:, 0]),
    "vmap_jacrev": lambda T, x, w: T.func.vmap(T.func.jacrev(lambda a: a.sin() * a.sum()))(x),
    "vmap_jvp": lambda T, x, w: T.func.vmap(lambda a: T.func.jvp(lambda b: (b * b).sum(), (a,), (a,))[1])(x),
    "vmap_out_dims": lambda T, x, w: T.func.vmap(lambda a, b: (a * 2, b), in_dims=(1, None), out_dims=(1, None))(x, w),
    "vmap_chunks": lambda T, x, w: T.func.vmap(lambda a: a.sum(0), in_dims=1, chunk_size=2)(x),
    "vmap_dict": lambda T, x, w: T.func.vmap(lambda d: d["a"] + d["b"])({"a": x, "b": x * 2}),
    "torch_vmap": lambda T, x, w: T.vmap(lambda a: a @ w)(x),
    "rearrange": lambda T, x, w: (T.func.rearrange(x, "a b -> b a"), T.func.rearrange(w, "(a b) c -> a (b c)", a=1),
                                  T.func.rearrange([x, x], "n a b -> a (n b)"), T.func.rearrange(x, "... b -> b ...")),
}


def _values(jac_aux):
    """A Jacobian dict's values (in key order) and the aux."""
    return tuple(jac_aux[0][k] for k in sorted(jac_aux[0])) + (jac_aux[1],)


def _dual_through_vmap(T, x, w):
    fw = T.autograd.forward_ad
    with fw.dual_level():
        out = T.func.vmap(lambda a: _net(T, a, w))(fw.make_dual(x, x.cos()))
        return fw.unpack_dual(out).tangent


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform(device, name):
    cmp(device, TRANSFORMS[name], X, W)


def _set(x, y):
    z = x.clone()
    z[0] = y[1]
    z[:, 1] = 0.5
    return z


# one example per family of batching rules (and the alignments each must make)
FAMILIES = {
    "elementwise": lambda T, x, y: x + y * 2 + x[0] - T.where(x > 0, x, y).abs() ** 1.5,
    "inplace": lambda T, x, y: x.clone().mul_(y).add_(1),
    "reductions": lambda T, x, y: x.sum() + x.sum(-1).mean() + x.amax((0, 1)) + x.var(1).sum() + x.max(),
    "dim_values": lambda T, x, y: (x.max(1)[0] + x.max(1).indices, x.argmax(), x.topk(2)[1], x.sort(0)[0]),
    "softmax_scan": lambda T, x, y: (x.softmax(-1), T.nn.functional.log_softmax(x, 0), x.cumsum(1), x.logsumexp(1)),
    "views": lambda T, x, y: (x.view(20).reshape(2, -1), x.permute(1, 0) + x.T, x.transpose(0, 1), x.flatten(),
                              x.unsqueeze(-1).squeeze(), x[0].expand(3, 5), x.repeat(2, 1, 1)),
    "indexing": lambda T, x, y: (x[1:, ::2], x[..., 0], x[:, T.tensor([0, 2], device=x.device)], _set(x, y),
                                 x.as_strided((2, 3), (1, 5), 2), x.new_zeros(3).copy_(y[0, :3]),
                                 x.gather(1, T.tensor([[0, 1], [2, 3], [4, 0], [1, 1]], device=x.device))),
    "joins_splits": lambda T, x, y: (T.cat([x, y], 1), T.stack([x, y], -1),
                                     T.cat([x, T.ones(4, 1, device=x.device)], 1), x.split(2, 1)[1],
                                     x.unbind(0)[2], x.chunk(2, 0)[0], x.narrow(1, 1, 2)),
    "matmul": lambda T, x, y: (x @ y.T, x @ y[0], x[0] @ y[1], x @ T.ones(5, 2, device=x.device),
                               T.ones(2, 4, device=x.device) @ x, T.outer(x[0], y[0])),
    "nn": lambda T, x, y: (T.nn.functional.linear(x, y, y[:, 0]), T.nn.functional.layer_norm(x, (5,)),
                           T.nn.functional.cross_entropy(x, T.tensor([1, 0, 4, 2], device=x.device)),
                           T.nn.functional.mse_loss(x, y), T.relu(x) + T.nn.functional.gelu(y),
                           T.nn.functional.conv1d(x.unsqueeze(0), T.ones(2, 4, 3, device=x.device))),
    "creation": lambda T, x, y: (T.zeros_like(x) + 1, x.new_zeros(2), T.ones_like(y) * x),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_vmap_rules_match_the_loop_without_fallback(device, family):
    fn = FAMILIES[family]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        cmp(device, lambda T, x, y: T.func.vmap(lambda a, b: fn(T, a, b))(x, y), B, C)


def test_fallback_warns_and_matches_the_loop(device):
    fn = lambda T, x, y: T.func.vmap(lambda a, b: T.cross(a, b, dim=0))(x, y)  # noqa: E731
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                         "batching rule for aten::cross"):
        cmp(device, fn, B[:, :3], C[:, :3])


def test_randomness(device):
    x = wt.zeros(4, 3, device=device)
    same = wt.func.vmap(lambda a: wt.rand_like(a), randomness="same")(x).cpu()
    assert bool((same == same[0]).all())
    diff = wt.func.vmap(lambda a: wt.rand_like(a), randomness="different")(x).cpu()
    assert not bool((diff == diff[0]).all())


def test_jacobians_run_one_backward_per_chunk(device, monkeypatch):
    """jacrev: one backward for all the rows of the identity (ceil(rows / chunk_size) with chunk_size);
    jacfwd: one jvp (two backwards) for all the columns; no per-example fallback."""
    from webtorch._functorch import eager_transforms
    calls = []
    real = eager_transforms._autograd_grad
    monkeypatch.setattr(eager_transforms, "_autograd_grad", lambda *a, **k: calls.append(1) or real(*a, **k))
    x, w = wt.tensor(X, device=device), wt.tensor(W, device=device)
    f = lambda a, b: wt.nn.functional.gelu(a @ b).softmax(-1)  # noqa: E731  (4 output, 6 input elements)
    runs = []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        for jac in (wt.func.jacrev(f, argnums=1), wt.func.jacrev(f, argnums=1, chunk_size=3),
                    wt.func.jacfwd(f, argnums=1)):
            calls.clear()
            jac(x, w)
            runs.append(len(calls))
    assert runs == [1, 2, 2]


ERRORS = [
    (lambda T, x: T.func.jacrev(lambda a: a, chunk_size=0)(x), "jacrev: `chunk_size` should be greater than 0."),
    (lambda T, x: T.func.jacrev(lambda a: a, argnums=())(x), "argnums must be non-empty"),
    (lambda T, x: T.func.jacfwd(lambda a, b: a, argnums=(0, -2))(x, x), "argnums elements must be unique, got (0, 0)"),
    (lambda T, x: T.func.jacfwd(lambda a: a, argnums="a")(x), "argnums must be int or Tuple[int, ...], got:"),
    (lambda T, x: T.func.jacrev(lambda a: 3)(x), "vjp(f, *primals): expected f(*primals) to return only tensors"),
    (lambda T, x: T.func.jacfwd(lambda a: a, has_aux=True)(x), "jvp(f, primals, tangents): output of function f "
                                                               "should be a tuple"),
    (lambda T, x: T.func.grad(lambda a: a ** 2)(x), "Expected f(*args) to return a scalar Tensor"),
    (lambda T, x: T.func.vmap(lambda a: a.item())(x), "calling .item() on a Tensor"),
    (lambda T, x: T.func.vmap(lambda a: bool(a.sum() > 0))(x), "data-dependent control flow"),
    (lambda T, x: T.func.vmap(lambda a, b: a + b)(x, x[0]), "Expected all tensors to have the same size"),
    (lambda T, x: T.func.vmap(lambda a: a, in_dims=2)(x), "so expected in_dim to satisfy -2 <= in_dim < 2"),
    (lambda T, x: T.func.vmap(lambda a: a, in_dims=(0, 1))(x), "in_dims is not compatible with the structure"),
    (lambda T, x: T.func.rearrange(x, "a b c -> a"), "Identifiers only on one side of rearrange expression"),
    (lambda T, x: T.func.vmap(lambda a: T.rand_like(a))(x), "called random operation while in randomness error"),
    (lambda T, x: T.func.vmap(lambda a: T.zeros(3, device=x.device).add_(a))(x),
     "doesn't match the broadcast shape [2, 3]"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(device, case):
    fn, phrase = ERRORS[case]
    raises_like(device, fn, X, phrase=phrase)


def _models(T, n):
    gen = np.random.RandomState(3)
    models = []
    for _ in range(n):
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))
        with T.no_grad():
            for p in m.parameters():
                p.copy_(T.tensor(gen.uniform(-1, 1, size=tuple(p.shape)).astype("float32")))
        models.append(m)
    return models


def test_ensemble_with_stack_module_state(device):
    def run(T, x):
        models = [m.to(x.device) for m in _models(T, 2)]
        params, buffers = T.func.stack_module_state(models)
        base = models[0]

        def one(p, b, data):
            return T.func.functional_call(base, (p, b), (data,))
        out = T.func.vmap(one, in_dims=(0, 0, None))(params, buffers, x)
        g = T.func.vmap(T.func.grad(lambda p, b, d: one(p, b, d).pow(2).sum()), in_dims=(0, 0, None))(
            params, buffers, x)
        return out, g["0.weight"], params["2.bias"].requires_grad
    cmp(device, run, X)


def test_functional_call_strict_and_tied(device):
    def run(T, x):
        m = _models(T, 1)[0].to(x.device)
        p = {k: v * 2 for k, v in m.named_parameters()}
        return T.func.functional_call(m, p, x), m(x)
    cmp(device, run, X)
    raises_like(device, lambda T, x: T.func.functional_call(_models(T, 1)[0], {"0.weight": x}, (x,), strict=True),
                X, phrase="Missing key(s)")


def test_names():
    assert set(torch.func.__all__) <= set(dir(wt.func))


def test_as_strided_scatter_matches_the_loop(device):
    """PyTorch's vmap has no rule for as_strided_scatter (forward AD's writes through views use it): webtorch's
    batches it per example, as the loop."""
    a = wt.tensor(B[0], device=device)
    b = wt.tensor(C[0, :, :2], device=device)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        got = wt.func.vmap(lambda x, y: x.as_strided_scatter(y, (2,), (2,), 1))(a, b)
        shared = wt.func.vmap(lambda y: a[0].as_strided_scatter(y, (2,), (2,), 1))(b)
    assert got.tolist() == wt.stack([a[i].as_strided_scatter(b[i], (2,), (2,), 1) for i in range(4)]).tolist()
    assert shared.tolist() == wt.stack([a[0].as_strided_scatter(b[i], (2,), (2,), 1) for i in range(4)]).tolist()
