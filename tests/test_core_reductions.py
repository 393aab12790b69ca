"""Core tensor library vs PyTorch: reductions, scans, matmul family and einsum, and the
shape-building ops (cat, stack, sort, topk, tril/triu, flip, roll, repeat, tile, softmax)."""
import numpy as np
import pytest
import torch

from _op_table import REDUCTIONS
from core_util import wt, cmp, raises_like, arr, skip_unsupported

X = arr((3, 4, 5))


@pytest.mark.parametrize("op", REDUCTIONS, ids=[op.name for op in REDUCTIONS])
def test_float_reductions(device, op):
    """Each reduction row of the op table over its dim forms (None: no dim argument), keepdim or
    not, and a 0-d input."""
    name = op.name
    for dim in op.dims:
        for keep in (False, True) if dim is not None else (False,):
            kw = {} if dim is None else {"dim": dim, "keepdim": keep}
            cmp(device, lambda T, x: getattr(T, name)(x, **kw), X, rtol=1e-4, atol=1e-5)
    if op.zero_d:
        cmp(device, lambda T, x: getattr(T, name)(x) if None in op.dims else getattr(T, name)(x, 0),
            arr((), "float32"))


def test_reduction_variants(device):
    cmp(device, lambda T, x: x.std(1, unbiased=False), X)
    cmp(device, lambda T, x: x.var(0, correction=0), X)
    cmp(device, lambda T, x: x.var(), X)
    cmp(device, lambda T, x: T.std_mean(x, 1), X)
    cmp(device, lambda T, x: T.var_mean(x, (0, 1), keepdim=True), X)
    cmp(device, lambda T, x: x.norm(1), X, rtol=1e-5)
    cmp(device, lambda T, x: x.norm(p=1, dim=1), X)
    cmp(device, lambda T, x: x.norm(float("inf"), dim=-1), X)
    cmp(device, lambda T, x: x.norm(dim=(1, 2), keepdim=True), X)
    cmp(device, lambda T, x: x.sum(dtype=T.float32), arr((3, 4), "int64"))
    cmp(device, lambda T, x: x.mean(1, dtype=T.float32), arr((3, 4), "int32"))
    # integer and bool inputs
    for dt in ("int64", "int32", "bool", "uint8"):
        a = arr((3, 4), dt, -3, 4)
        cmp(device, lambda T, x: x.sum(), a)
        cmp(device, lambda T, x: x.sum(1, keepdim=True), a)
        cmp(device, lambda T, x: x.prod(0), a)
        cmp(device, lambda T, x: x.amax(1), a)
        cmp(device, lambda T, x: x.amin(), a)
        cmp(device, lambda T, x: x.max(), a)


def test_reduction_empty(device):
    e = arr((0, 3))
    cmp(device, lambda T, x: x.sum(), e)
    cmp(device, lambda T, x: x.sum(0), e)
    cmp(device, lambda T, x: x.prod(0), e)
    cmp(device, lambda T, x: x.mean(0), e)  # nan, as in torch
    cmp(device, lambda T, x: x.amax(1), e)
    cmp(device, lambda T, x: x.all(), e)
    cmp(device, lambda T, x: x.any(0), e)
    cmp(device, lambda T, x: x.cumsum(0), e)
    cmp(device, lambda T, x: x.logsumexp(0), e)
    raises_like(device, lambda T, x: x.amax(0), e, phrase="Expected reduction dim 0 to have non-zero size")
    raises_like(device, lambda T, x: x.max(), e, phrase="Expected reduction dim to be specified for input.numel() == 0")
    raises_like(device, lambda T, x: x.argmax(), e, phrase="Expected reduction dim to be specified for input.numel() "
                                                           "== 0")
    raises_like(device, lambda T, x: x.max(1), arr((3, 0)), phrase="Expected reduction dim 1 to have non-zero size")


def test_max_min_arg(device):
    a = X.copy()
    a[0, 1, :2] = a[0, 1, 2]  # ties: the first index wins
    for f in ("max", "min"):
        cmp(device, lambda T, x: getattr(x, f)(), a)
        for dim in (0, 1, -1):
            for keep in (False, True):
                w, t = cmp(device, lambda T, x: getattr(x, f)(dim, keepdim=keep), a)
                assert type(w).__name__ == type(t).__name__ and w.values is w[0] and w.indices is w[1]
        cmp(device, lambda T, x, y: getattr(T, f)(x, y), a, arr((5,)))  # binary form
    for f in ("argmax", "argmin"):
        cmp(device, lambda T, x: getattr(x, f)(), a)
        cmp(device, lambda T, x: getattr(T, f)(x, 1), a)
        cmp(device, lambda T, x: getattr(x, f)(dim=-1, keepdim=True), a)
        cmp(device, lambda T, x: getattr(x, f)(0), arr((4, 3), "int64"))
    cmp(device, lambda T, x: x.max(0), arr((), "float32"))
    cmp(device, lambda T, x: T.aminmax(x, dim=1), a)
    nan = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    cmp(device, lambda T, x: (x.max(), x.amin(), x.argmax(), x.sum()), nan)
    raises_like(device, lambda T, x: x.max(3), X, phrase="Dimension out of range (expected to be in range of [-3, 2], "
                                                         "but got 3)")
    raises_like(device, lambda T, x: x.sum((0, 0)), X, phrase="appears multiple times in the list of dims")


def test_all_any(device):
    for dt in ("bool", "float32", "int64"):
        a = arr((3, 4), dt, 0, 2)
        cmp(device, lambda T, x: (x.all(), x.any()), a)
        cmp(device, lambda T, x: (x.all(1), x.any(0, keepdim=True), T.all(x, -1)), a)
    cmp(device, lambda T, x: (x.all(), x.any()), arr((), "bool"))
    cmp(device, lambda T, x: x.all(0), arr((4,), "uint8", 0, 2))


def test_scans(device):
    for dim in (0, 1, -1):
        cmp(device, lambda T, x: x.cumsum(dim), X, rtol=1e-5, atol=1e-5)
        cmp(device, lambda T, x: T.cumprod(x, dim), arr((3, 4, 5), lo=0.5, hi=1.5), rtol=1e-5)
        cmp(device, lambda T, x: x.cummax(dim), X)
        cmp(device, lambda T, x: T.cummin(x, dim), X)
        cmp(device, lambda T, x: T.logcumsumexp(x, dim), X, rtol=1e-5)
    cmp(device, lambda T, x: x.cumsum(0), arr((5,), "int64"))
    cmp(device, lambda T, x: x.cumsum(0), arr((5,), "bool"))
    cmp(device, lambda T, x: x.cumsum(0, dtype=T.float32), arr((5,), "int32"))
    cmp(device, lambda T, x: x.cumsum(0), arr((), "float32"))
    raises_like(device, lambda T, x: x.cumsum(2), arr((2, 2)), phrase="Dimension out of range")


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((2, 3, 4), (2, 4, 5)), ((1, 4), (4, 1)), ((0, 4), (4, 3)), ((3, 0), (0, 2))])
def test_matmul(device, sa, sb):
    cmp(device, lambda T, a, b: a @ b, arr(sa), arr(sb), rtol=1e-5, atol=1e-5)
    cmp(device, lambda T, a, b: T.matmul(a, b), arr(sa), arr(sb), rtol=1e-5, atol=1e-5)


def test_matmul_family(device):
    a, b = arr((3, 4)), arr((4, 5))
    cmp(device, lambda T, a, b: T.mm(a, b), a, b, atol=1e-5)
    cmp(device, lambda T, a, b: a.mm(b), a, b, atol=1e-5)
    cmp(device, lambda T, a, b: b.T @ a.T, a, b, atol=1e-5)  # transposed operands
    cmp(device, lambda T, a, b: T.bmm(a, b), arr((2, 3, 4)), arr((2, 4, 5)), atol=1e-5)
    cmp(device, lambda T, a, v: T.mv(a, v), a, arr((4,)), atol=1e-5)
    cmp(device, lambda T, a, v: a.mv(v), a, arr((4,)), atol=1e-5)
    cmp(device, lambda T, u, v: T.dot(u, v), arr((4,)), arr((4,)), atol=1e-5)
    cmp(device, lambda T, u, v: T.outer(u, v), arr((3,)), arr((4,)))
    cmp(device, lambda T, u, v: u.outer(v), arr((3,), "int64"), arr((2,), "int64"))
    cmp(device, lambda T, a, b: a @ b, arr((3, 4), "int64"), arr((4, 2), "int64"))
    cmp(device, lambda T, x, a, b: T.addmm(x, a, b, beta=0.5, alpha=2), arr((3, 5)), a, b, atol=1e-5)
    cmp(device, lambda T, a: T.trace(a), arr((4, 4)))
    cmp(device, lambda T, a: (T.diag(a), T.diag(a, 1)), arr((3, 4)))
    cmp(device, lambda T, v: T.diag(v), arr((3,)))
    cmp(device, lambda T, a, b: T.tensordot(a, b, dims=([1], [0])), a, b, atol=1e-5)
    cmp(device, lambda T, a, b: T.inner(a, b), arr((2, 4)), arr((3, 4)), atol=1e-5)

    def imatmul(T, a, b):
        a @= b
        return a
    cmp(device, imatmul, arr((3, 3)), arr((3, 3)), atol=1e-5)


def test_matmul_errors(device):
    raises_like(device, lambda T, a, b: a @ b, arr((3, 4)), arr((5, 2)),
                phrase="mat1 and mat2 shapes cannot be multiplied (3x4 and 5x2)")
    raises_like(device, lambda T, a, b: T.mm(a, b), arr((3,)), arr((3, 2)), phrase="self must be a matrix")
    raises_like(device, lambda T, a, b: T.bmm(a, b), arr((2, 3, 4)), arr((3, 4, 5)),
                phrase="Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].")
    raises_like(device, lambda T, a, b: T.dot(a, b), arr((3,)), arr((4,)),
                phrase="inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                       "elements, but got 3 and 4 elements respectively")
    raises_like(device, lambda T, a, b: a @ b, arr((3, 4)), arr((4, 2), "int64"),
                phrase="expected m1 and m2 to have the same dtype")
    raises_like(device, lambda T, a, b: T.mv(a, b), arr((3, 4)), arr((3,)), phrase="size mismatch")
    raises_like(device, lambda T, a: a @ a, arr(()), phrase="both arguments to matmul need to be at least 1D")


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(4,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ijk->kj", [(2, 3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
])
def test_einsum(device, eq, shapes):
    cmp(device, lambda T, *xs: T.einsum(eq, *xs), *[arr(s) for s in shapes], atol=1e-5)
    if len(shapes) == 2:
        cmp(device, lambda T, a, b: T.einsum(eq, [a, b]), *[arr(s) for s in shapes], atol=1e-5)


def test_cat_stack(device):
    a, b, c = arr((2, 3)), arr((1, 3)), arr((2, 3))
    cmp(device, lambda T, a, b: T.cat([a, b]), a, b)
    cmp(device, lambda T, a, c: T.cat((a, c), dim=1), a, c)
    cmp(device, lambda T, a, c: T.cat([a, c], -1), a, c)
    cmp(device, lambda T, a, e: T.cat([a, e]), a, arr((0,)))  # legacy empty 1-d is skipped
    cmp(device, lambda T, a, i: T.cat([a, i]), a, arr((1, 3), "int64"))  # promotion
    cmp(device, lambda T, a, c: T.stack([a, c]), a, c)
    cmp(device, lambda T, a, c: T.stack([a, c], dim=2), a, c)
    cmp(device, lambda T, a, c: T.stack((a, c), -1), a, c)
    cmp(device, lambda T, a, c: (T.hstack([a, c]), T.vstack([a, c]), T.dstack([a, c])), a, c)
    cmp(device, lambda T, s, t: T.stack([s, t]), arr(()), arr(()))
    raises_like(device, lambda T, a, b: T.cat([a, b], 1), a, b,
                phrase="Sizes of tensors must match except in dimension 1. Expected size 2 but got size 1 for tensor "
                       "number 1 in the list")
    raises_like(device, lambda T, a, b: T.stack([a, b]), a, b, phrase="stack expects each tensor to be equal size")
    raises_like(device, lambda T: T.cat([]), phrase="expected a non-empty list of Tensors")
    raises_like(device, lambda T, a: T.cat([a, a], 2), a, phrase="Dimension out of range")


def test_sort_topk(device):
    a = arr((3, 6), "float32")
    a[0, 1] = a[0, 4]
    for dim in (0, 1, -1):
        cmp(device, lambda T, x: T.sort(x, dim=dim, stable=True), a)
        cmp(device, lambda T, x: x.sort(dim=dim, descending=True, stable=True), a)
        cmp(device, lambda T, x: T.argsort(x, dim=dim, stable=True), a)
    cmp(device, lambda T, x: x.sort(), arr((7,), "int64"))
    cmp(device, lambda T, x: x.sort(), np.array([3.0, np.nan, -1.0, np.inf, -np.inf], np.float32))
    cmp(device, lambda T, x: x.sort(descending=True), np.array([3.0, np.nan, -1.0, np.inf, -np.inf], np.float32))
    b = np.arange(18, dtype=np.float32)[np.random.RandomState(1).permutation(18)].reshape(3, 6)  # no ties
    for k in (1, 3):
        cmp(device, lambda T, x: T.topk(x, k), b)
        cmp(device, lambda T, x: x.topk(k, dim=0, largest=False), b)
    cmp(device, lambda T, x: x.topk(2), np.array([41, 7, 93, 12, 58], "int64"))
    w, t = cmp(device, lambda T, x: x.topk(2), b)
    assert type(w).__name__ == "topk" and w.values is w[0]
    cmp(device, lambda T, x: (x.kthvalue(2, 1), x.median(), x.median(1), x.msort()), b)
    raises_like(device, lambda T, x: x.topk(7), a, phrase="selected index k out of range")


def _stable_topk(T, x, k, dim, largest):
    """topk with webtorch's tie rule: equal values in index order (PyTorch's own stable sort)."""
    if T is wt:
        return x.topk(k, dim, largest)
    v, i = torch.sort(x, dim=dim, descending=largest, stable=True)
    return torch.return_types.topk((v.narrow(dim, 0, k), i.narrow(dim, 0, k)))


TIES = np.array([[1, 3, 3, 2, 3, 1, 1, 0, 3, 2, 2, 1, 0, 0, 3, 1, 2, 2, 0, 1],
                 [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5],
                 [0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9]], "float32")


@pytest.mark.parametrize("dt", ["float32", "int64"])
def test_sort_topk_ties(device, dt):
    """Equal values come in index order (lowest first) on every device, for topk (largest or
    not, any k) and for sort/argsort whether or not stable=True. PyTorch leaves that order
    unspecified: its CPU topk orders ties as std::nth_element/partial_sort leave them
    (torch.zeros(100).topk(5) gives indices [65, 68, 67, 66, 69]), and sort(stable=False)
    over more than 16 values is an unstable std::sort. So values are compared with
    torch.topk/torch.sort, and indices with PyTorch's stable sort."""
    x = TIES.astype(dt)
    nan = np.array([[2.0, np.nan, 2.0, -np.inf, np.nan, 2.0, np.inf, 2.0]], "float32")
    for arr_ in (x, x.T.copy()) + ((nan,) if dt == "float32" else ()):
        for dim in (0, 1):
            n = arr_.shape[dim]
            for k in sorted({min(k, n) for k in (1, 2, 3, n // 2, n)}):
                for largest in (True, False):
                    cmp(device, lambda T, t: T.topk(t, k, dim, largest).values, arr_)
                    cmp(device, lambda T, t: _stable_topk(T, t, k, dim, largest), arr_)
            for desc in (False, True):
                cmp(device, lambda T, t: T.sort(t, dim, descending=desc).values, arr_)
                cmp(device, lambda T, t: T.sort(t, dim=dim, descending=desc, stable=True), arr_)
                cmp(device, lambda T, t: t.argsort(dim, descending=desc) if T is wt else
                    t.argsort(dim=dim, descending=desc, stable=True), arr_)


def test_shape_building(device):
    a = arr((3, 4), "float32")
    for d in (-1, 0, 1, 2, -2):
        cmp(device, lambda T, x: (T.tril(x, d), T.triu(x, d), x.tril(d), x.triu(d)), a)
    cmp(device, lambda T, x: (x.tril_(), x)[1], a)
    cmp(device, lambda T, x: T.triu(x), arr((2, 3, 3), "int64"))
    cmp(device, lambda T, x: (T.flip(x, [0]), x.flip(1), x.flip((0, 1)), T.fliplr(x), T.flipud(x)), a)
    cmp(device, lambda T, x: (T.roll(x, 1), x.roll(-2, 1), x.roll((1, 2), (0, 1)), x.roll(5, 0)), a)
    cmp(device, lambda T, x: (x.repeat(2, 1), x.repeat(1, 2, 3), x.repeat(0, 1)), a)
    cmp(device, lambda T, x: (T.tile(x, (2,)), x.tile((2, 1, 2))), a)
    cmp(device, lambda T, x: (x.repeat_interleave(2), x.repeat_interleave(2, dim=1)), a)
    cmp(device, lambda T, x: x.flip(0), arr((4,), "bool"))
    raises_like(device, lambda T, x: x.repeat(2), a, phrase="Number of dimensions of repeat dims can not be smaller "
                                                           "than number of dimensions of tensor")


def test_softmax(device):
    for dim in (0, 1, -1):
        cmp(device, lambda T, x: (T.softmax(x, dim), x.softmax(dim), T.log_softmax(x, dim), x.log_softmax(dim)), X)
    big = np.array([[1000.0, 0.0, -1000.0], [1.0, 1.0, 1.0]], np.float32)
    cmp(device, lambda T, x: (x.softmax(-1), x.log_softmax(-1)), big)
    cmp(device, lambda T, x: x.softmax(0, dtype=T.float32), arr((3,), "float32"))
    cmp(device, lambda T, x: x.softmax(0), arr((), "float32"))
    raises_like(device, lambda T, x: x.softmax(0), arr((3,), "int64"), phrase="not implemented for 'Long'")


@pytest.mark.parametrize("dt", ["float16", "float64"])
def test_reductions_other_float_dtypes(device, dt):
    skip_unsupported(device, dt)
    tol = {"rtol": 2e-3, "atol": 2e-3} if dt == "float16" else {}
    a = arr((4, 5), dt, -1, 1)
    cmp(device, lambda T, x: (x.sum(), x.mean(1), x.amax(0), x.argmax(1), x.cumsum(1), x.softmax(-1)), a, **tol)
    cmp(device, lambda T, x, y: x @ y, a, arr((5, 3), dt, -1, 1), **tol)


def test_value_selecting_ops_are_their_own_nodes_with_contiguous_results(device):
    """topk / kthvalue / median / mode over a dim are nodes of their own (PyTorch's names), and every
    (values, indices) or scan result along a non-last dim is laid out contiguously, as PyTorch's."""
    import torch
    for m, dev in ((torch, "cpu"), (wt, device)):
        x = m.arange(24.0, device=dev).reshape(2, 3, 4).flip(0).requires_grad_()
        rs = [m.topk(x, 2, 0), m.kthvalue(x, 1, 0), m.median(x, 0), m.mode(x, 0), m.sort(x, 0), m.cummax(x, 0)]
        names = [type(r[0].grad_fn).__name__ for r in rs] + [type(m.cumprod(x, 0).grad_fn).__name__]
        contiguous = [t.is_contiguous() for r in rs for t in r] + [m.cumprod(x, 0).is_contiguous()]
        if m is torch:
            want = names, contiguous
        else:
            assert (names, contiguous) == want
