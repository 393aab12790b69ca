"""The table of differentiable ops checked by tests/test_autograd_ops.py (gradients equal
PyTorch's on every device) and tests/test_autograd_gradcheck.py (finite differences, float64).
The element-wise ops and reductions come from the op table (tests/_op_table.py, its `grad` rows);
the cases below add what a row does not say (alpha, broadcasting forms, views, layers, ...).

A case is (name, fn, args). `fn(T, *tensors)` is written once against the torch API and run
with T = torch and T = webtorch. Each arg is a spec:

  F(*shape, kind=...)  a float input that requires grad; kind picks the value range
                       (_op_table.RANGES): any (-2, 2), pos (0.5, 2), unit (-0.9, 0.9), ...
  I(list)              a constant int64 tensor (indices)
  B(list)              a constant bool tensor (masks)

Values are drawn per case from a seeded generator, so inputs are identical for both libraries
and across runs. Distinct random values keep ops away from ties and kinks (max, sort, abs, ...).
"""
import zlib
from collections import namedtuple

from _op_table import BINARY, RANGES, REDUCTIONS, UNARY

Case = namedtuple("Case", "name fn args")


def F(*shape, kind="any"):
    return ("f", tuple(shape), kind)


def I(values):  # noqa: E743
    return ("i", values)


def B(values):
    return ("b", values)




def case_arrays(case):
    """numpy float64 arrays for the F specs (in order), drawn from a per-case seed."""
    import numpy as np  # here, so the table itself imports without numpy (tests/test_no_numpy.py)
    rng = np.random.RandomState(zlib.crc32(case.name.encode()))
    out = []
    for spec in case.args:
        if spec[0] == "f":
            lo, hi = RANGES[spec[2]]
            a = rng.uniform(lo, hi, size=spec[1])
            if spec[2] == "any":  # keep away from 0 and from integers (abs, floor, round kinks)
                a = np.where(np.abs(a - np.round(a)) < 0.05, a + 0.1, a)
            out.append(a)
    return out


def build(T, case, device, dtype, requires_grad=True):
    """The case's inputs as T tensors: (all args, the float inputs that require grad)."""
    arrays = iter(case_arrays(case))
    args, leaves = [], []
    for spec in case.args:
        if spec[0] == "f":
            a = next(arrays)
            t = T.tensor(a.tolist(), dtype=dtype, device=device)
            if requires_grad:
                t.requires_grad_(True)
            leaves.append(t)
            args.append(t)
        elif spec[0] == "i":
            args.append(T.tensor(spec[1], dtype=T.int64, device=device))
        else:
            args.append(T.tensor(spec[1], dtype=T.bool, device=device))
    return args, leaves


def float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if hasattr(o, "dtype") and o.dtype.is_floating_point]


def _c(name, fn, *args):
    return Case(name, fn, list(args))


# ---- pointwise -------------------------------------------------------------------------------
# the op table's differentiable element-wise ops, each on inputs from its domain
UNARY_KINDS = {op.name: op.domain[0] for op in UNARY if op.grad}

CASES = []
for _op, _kind in UNARY_KINDS.items():
    CASES.append(_c(_op, (lambda op: lambda T, x: getattr(T, op)(x))(_op), F(2, 3, kind=_kind)))
CASES += [
    _c("abs_method", lambda T, x: x.abs().exp(), F(5)),
    _c("unary_0d", lambda T, x: x.sin(), F()),
    _c("logit_eps", lambda T, x: T.logit(x, eps=0.2), F(2, 3, kind="unit")),
]

for _op in BINARY:
    if _op.grad:
        _f = (lambda name: lambda T, a, b: getattr(T, name)(a, b))(_op.name)
        CASES.append(_c(_op.name, _f, F(2, 3, kind=_op.domain[0]), F(2, 3, kind=_op.domain[1])))
        CASES.append(_c(_op.name + "_bcast", _f, F(2, 3, kind=_op.domain[0]), F(3, kind=_op.domain[1])))
CASES += [
    _c("add_alpha", lambda T, a, b: T.add(a, b, alpha=2.5), F(2, 3), F(2, 3)),
    _c("sub_alpha", lambda T, a, b: T.sub(a, b, alpha=-1.5), F(2, 3), F(1, 3)),
    _c("add_scalar", lambda T, a: a + 3.0, F(2, 3)),
    _c("rsub_scalar", lambda T, a: 3.0 - a, F(2, 3)),
    _c("rmul_scalar", lambda T, a: 2.5 * a, F(2, 3)),
    _c("rdiv_scalar", lambda T, a: 2.0 / a, F(2, 3, kind="pos")),
    _c("div_scalar", lambda T, a: a / 4.0, F(2, 3)),
    _c("pow_scalar", lambda T, a: a ** 3, F(2, 3)),
    _c("pow_scalar_frac", lambda T, a: a ** 2.5, F(2, 3, kind="pos")),
    _c("pow_scalar_neg", lambda T, a: a ** -1.5, F(2, 3, kind="pos")),
    _c("pow_scalar_zero", lambda T, a: a ** 0, F(2, 3)),
    _c("pow_tensor", lambda T, a, b: T.pow(a, b), F(2, 3, kind="pos"), F(2, 3)),
    _c("pow_tensor_bcast", lambda T, a, b: a ** b, F(2, 3, kind="pos"), F(3)),
    _c("pow_scalar_base", lambda T, b: 2.0 ** b, F(2, 3)),
    _c("pow_method", lambda T, a: a.pow(2), F(4)),
    _c("where", lambda T, c, a, b: T.where(c, a, b), B([[True, False, True], [False, False, True]]),
       F(2, 3), F(2, 3)),
    _c("where_bcast", lambda T, c, a, b: T.where(c, a, b), B([[True, False, True], [False, False, True]]),
       F(3), F(2, 1)),
    _c("where_scalar", lambda T, c, a: T.where(c, a, 0.5), B([True, False, True, False]), F(4)),
    _c("clamp", lambda T, x: T.clamp(x, -0.5, 0.7), F(3, 4)),
    _c("clamp_min", lambda T, x: T.clamp(x, min=0.1), F(3, 4)),
    _c("clamp_max", lambda T, x: x.clamp(max=0.3), F(3, 4)),
    _c("clamp_tensor", lambda T, x, lo, hi: T.clamp(x, lo, hi), F(2, 3), F(3, kind="unit"), F(2, 1, kind="gt1")),
    _c("lerp", lambda T, a, b: T.lerp(a, b, 0.3), F(2, 3), F(2, 3)),
    _c("lerp_tensor", lambda T, a, b, w: T.lerp(a, b, w), F(2, 3), F(2, 3), F(3, kind="unit")),
    _c("addcmul", lambda T, a, b, c: T.addcmul(a, b, c, value=0.5), F(2, 3), F(2, 3), F(3)),
    _c("addcdiv", lambda T, a, b, c: T.addcdiv(a, b, c, value=2), F(2, 3), F(2, 3), F(3, kind="pos")),
    _c("xlogy", lambda T, a, b: T.xlogy(a, b), F(2, 3), F(2, 3, kind="pos")),
]

# ---- reductions --------------------------------------------------------------------------------
CASES += [
    _c("sum", lambda T, x: x.sum(), F(2, 3)),
    _c("sum_dim", lambda T, x: x.sum(1), F(2, 3, 2)),
    _c("sum_dims_keepdim", lambda T, x: x.sum((0, 2), keepdim=True), F(2, 3, 2)),
    _c("nansum", lambda T, x: T.nansum(x, 0), F(2, 3)),
    _c("mean", lambda T, x: x.mean(), F(2, 3)),
    _c("mean_dim", lambda T, x: x.mean(-1, keepdim=True), F(2, 3)),
    _c("prod", lambda T, x: x.prod(), F(2, 3)),
    _c("prod_dim", lambda T, x: x.prod(1), F(2, 3)),
    _c("max", lambda T, x: x.max(), F(2, 3)),
    _c("max_dim", lambda T, x: x.max(1), F(2, 3)),
    _c("max_dim_keepdim", lambda T, x: T.max(x, 0, keepdim=True)[0], F(3, 2)),
    _c("min", lambda T, x: x.min(), F(2, 3)),
    _c("min_dim", lambda T, x: x.min(0), F(2, 3)),
    _c("amax", lambda T, x: x.amax(1), F(2, 3)),
    _c("amin", lambda T, x: T.amin(x, (0, 1)), F(2, 3)),
    _c("std", lambda T, x: x.std(), F(2, 3)),
    _c("std_dim", lambda T, x: x.std(1, keepdim=True), F(2, 3)),
    _c("var", lambda T, x: x.var(), F(2, 3)),
    _c("var_dim_corr0", lambda T, x: T.var(x, 0, correction=0), F(3, 2)),
    _c("std_mean", lambda T, x: T.std_mean(x, 1), F(2, 3)),
    _c("var_mean", lambda T, x: T.var_mean(x, 1), F(2, 3)),
    _c("norm", lambda T, x: x.norm(), F(2, 3)),
    _c("norm_dim", lambda T, x: x.norm(dim=1), F(2, 3)),
    _c("norm_p1", lambda T, x: x.norm(p=1), F(2, 3)),
    _c("norm_p3_dim", lambda T, x: T.norm(x, p=3, dim=0), F(2, 3)),
    _c("norm_inf", lambda T, x: x.norm(p=float("inf")), F(2, 3)),
    _c("logsumexp", lambda T, x: T.logsumexp(x, 1), F(2, 3)),
    _c("logsumexp_keepdim", lambda T, x: x.logsumexp((0, 1), keepdim=True), F(2, 3)),
    _c("cumsum", lambda T, x: x.cumsum(1), F(2, 4)),
    _c("cumsum_dim0", lambda T, x: T.cumsum(x, 0), F(3, 2)),
    _c("cumprod", lambda T, x: x.cumprod(1), F(2, 4)),
    _c("cumprod_dim0", lambda T, x: T.cumprod(x, 0), F(3, 2)),
    _c("cummax", lambda T, x: T.cummax(x, 1), F(2, 4)),
    _c("cummin", lambda T, x: T.cummin(x, 0), F(3, 2)),
    _c("logcumsumexp", lambda T, x: T.logcumsumexp(x, 1), F(2, 4)),
    _c("softmax", lambda T, x: T.softmax(x, 1), F(2, 4)),
    _c("softmax_dim0", lambda T, x: x.softmax(0), F(3, 2)),
    _c("log_softmax", lambda T, x: T.log_softmax(x, -1), F(2, 4)),
    _c("log_softmax_dim0", lambda T, x: x.log_softmax(0), F(3, 2)),
    _c("median", lambda T, x: x.median(), F(2, 3)),
    _c("median_dim", lambda T, x: x.median(1), F(2, 3)),
    _c("kthvalue", lambda T, x: T.kthvalue(x, 2, 1), F(2, 4)),
    _c("sort", lambda T, x: T.sort(x, 1), F(2, 4)),
    _c("sort_desc_dim0", lambda T, x: x.sort(0, descending=True), F(3, 2)),
    _c("topk", lambda T, x: T.topk(x, 2, 1), F(2, 4)),
    _c("topk_smallest_dim0", lambda T, x: x.topk(2, 0, largest=False), F(3, 2)),
]

for _op in REDUCTIONS:  # the op table's reductions: over one dim, keeping it
    if _op.grad:
        CASES.append(_c(_op.name + "_dim1_keepdim",
                        (lambda name: lambda T, x: getattr(T, name)(x, dim=1, keepdim=True))(_op.name), F(2, 3, 2)))

# ---- views, shapes ------------------------------------------------------------------------------
CASES += [
    _c("view", lambda T, x: x.view(3, 2), F(2, 3)),
    _c("reshape_noncontig", lambda T, x: x.t().reshape(-1), F(2, 3)),
    _c("permute", lambda T, x: x.permute(2, 0, 1), F(2, 3, 2)),
    _c("transpose", lambda T, x: x.transpose(0, 2), F(2, 3, 2)),
    _c("t", lambda T, x: x.t(), F(2, 3)),
    _c("mT", lambda T, x: x.mT, F(2, 2, 3)),
    _c("expand", lambda T, x: x.expand(2, 3, 4), F(3, 1)),
    _c("expand_as_bcast", lambda T, x, y: x.expand_as(y) * y, F(1, 3), F(2, 3)),
    _c("squeeze", lambda T, x: x.squeeze(1), F(2, 1, 3)),
    _c("unsqueeze", lambda T, x: x.unsqueeze(-1), F(2, 3)),
    _c("flatten", lambda T, x: x.flatten(1), F(2, 2, 3)),
    _c("unflatten", lambda T, x: x.unflatten(1, (2, 2)), F(3, 4)),
    _c("narrow", lambda T, x: x.narrow(1, 1, 2), F(2, 4)),
    _c("select", lambda T, x: x.select(0, 1), F(3, 2)),
    _c("diagonal", lambda T, x: x.diagonal(1), F(3, 4)),
    _c("movedim", lambda T, x: T.movedim(x, 0, -1), F(2, 3, 2)),
    _c("as_strided", lambda T, x: x.as_strided((2, 2), (1, 2)), F(2, 3)),
    _c("unbind", lambda T, x: x.unbind(1), F(2, 3)),
    _c("split", lambda T, x: x.split(2, 1), F(2, 5)),
    _c("split_sizes", lambda T, x: T.split(x, [1, 3], 1), F(2, 4)),
    _c("chunk", lambda T, x: x.chunk(3, 0), F(5, 2)),
    _c("tensor_split", lambda T, x: T.tensor_split(x, 3, 1), F(2, 5)),
    _c("cat", lambda T, a, b: T.cat([a, b], 1), F(2, 3), F(2, 2)),
    _c("cat_dim0", lambda T, a, b, c: T.cat((a, b, c)), F(1, 3), F(2, 3), F(1, 3)),
    _c("stack", lambda T, a, b: T.stack([a, b], 1), F(2, 3), F(2, 3)),
    _c("hstack", lambda T, a, b: T.hstack([a, b]), F(2, 3), F(2, 1)),
    _c("vstack", lambda T, a, b: T.vstack([a, b]), F(3), F(2, 3)),
    _c("flip", lambda T, x: x.flip(1), F(2, 3)),
    _c("flip_dims", lambda T, x: T.flip(x, (0, 2)), F(2, 3, 2)),
    _c("roll", lambda T, x: x.roll(1, 1), F(2, 3)),
    _c("roll_dims", lambda T, x: T.roll(x, (1, -1), (0, 1)), F(2, 3)),
    _c("roll_flat", lambda T, x: T.roll(x, 2), F(2, 3)),
    _c("repeat", lambda T, x: x.repeat(2, 3), F(2, 2)),
    _c("repeat_newdim", lambda T, x: x.repeat(2, 1, 2), F(2, 3)),
    _c("tile", lambda T, x: T.tile(x, (2,)), F(2, 3)),
    _c("repeat_interleave", lambda T, x: x.repeat_interleave(2, dim=1), F(2, 3)),
    _c("tril", lambda T, x: x.tril(), F(3, 3)),
    _c("tril_k", lambda T, x: T.tril(x, -1), F(3, 4)),
    _c("triu", lambda T, x: x.triu(1), F(3, 4)),
    _c("triu_batched", lambda T, x: T.triu(x), F(2, 3, 3)),
    _c("clone", lambda T, x: x.clone() * 1.0, F(2, 3)),
    _c("contiguous", lambda T, x: x.t().contiguous(), F(2, 3)),
]

# ---- indexing -----------------------------------------------------------------------------------
IDX = [[0, 2, 1, 2], [1, 0, 0, 1]]
CASES += [
    _c("getitem_int", lambda T, x: x[1], F(3, 4)),
    _c("getitem_neg_int", lambda T, x: x[-1, 2], F(3, 4)),
    _c("getitem_slice", lambda T, x: x[1:, ::2], F(3, 4)),
    _c("getitem_slice_step", lambda T, x: x[0:3:2, 1:3], F(3, 4)),
    _c("getitem_none_ellipsis", lambda T, x: x[None, ..., 1], F(2, 3, 2)),
    _c("getitem_adv", lambda T, x, i: x[i], F(4, 3), I([0, 2, 2, 3])),
    _c("getitem_adv_2d", lambda T, x, i, j: x[i, j], F(3, 4), I([0, 2, 1]), I([3, 3, 0])),
    _c("getitem_adv_slice", lambda T, x, i: x[:, i], F(3, 4), I([[0, 1], [3, 1]])),
    _c("getitem_list", lambda T, x: x[[0, 2, 0]], F(3, 2)),
    _c("getitem_bool", lambda T, x, m: x[m], F(2, 3), B([[True, False, True], [False, True, True]])),
    _c("getitem_bool_rows", lambda T, x, m: x[m], F(3, 2), B([True, False, True])),
    _c("gather", lambda T, x, i: T.gather(x, 1, i), F(2, 3), I(IDX)),
    _c("gather_dim0", lambda T, x, i: x.gather(0, i), F(3, 4), I([[0, 2, 1, 2], [1, 0, 0, 1]])),
    _c("scatter", lambda T, x, i, s: T.scatter(x, 1, i, s), F(2, 5), I([[0, 2, 4], [1, 3, 0]]), F(2, 3)),
    _c("scatter_value", lambda T, x, i: x.scatter(0, i, 1.5), F(3, 2), I([[2, 0]])),
    _c("scatter_add", lambda T, x, i, s: T.scatter_add(x, 1, i, s), F(2, 3), I(IDX), F(2, 4)),
    _c("index_select", lambda T, x, i: T.index_select(x, 0, i), F(3, 2), I([2, 0, 2])),
    _c("index_select_dim1", lambda T, x, i: x.index_select(1, i), F(2, 3), I([1, 1])),
    _c("masked_fill", lambda T, x, m: x.masked_fill(m, 0.5), F(2, 3), B([[True, False, True], [False, False, True]])),
    _c("masked_fill_bcast", lambda T, x, m: T.masked_fill(x, m, -1.0), F(2, 3), B([False, True, True])),
    _c("take_along_dim", lambda T, x, i: T.take_along_dim(x, i, 1), F(2, 3), I(IDX)),
    _c("take_along_dim_flat", lambda T, x, i: T.take_along_dim(x, i), F(2, 3), I([5, 0, 0, 3])),
    _c("take", lambda T, x, i: T.take(x, i), F(2, 3), I([[5, 0], [0, 3]])),
    _c("index_add", lambda T, x, i, s: x.index_add(0, i, s), F(3, 2), I([2, 0, 2]), F(3, 2)),
    _c("index_copy", lambda T, x, i, s: x.index_copy(1, i, s), F(2, 4), I([3, 0]), F(2, 2)),
    _c("index_fill", lambda T, x, i: x.index_fill(1, i, -2.0), F(2, 4), I([3, 0])),
    _c("masked_select", lambda T, x, m: x.masked_select(m), F(2, 3), B([[True, False, True], [False, False, True]])),
    _c("masked_scatter", lambda T, x, m, s: x.masked_scatter(m, s), F(2, 3),
       B([[True, False, True], [False, False, True]]), F(2, 3)),
    _c("index_put_accumulate", lambda T, x, i, v: x.index_put((i,), v, accumulate=True), F(4), I([1, 3, 1]), F(3)),
]

# ---- linear algebra ---------------------------------------------------------------------------
LINALG = [
    _c("matmul", lambda T, a, b: a @ b, F(2, 3), F(3, 4)),
    _c("matmul_1d_1d", lambda T, a, b: T.matmul(a, b), F(3), F(3)),
    _c("matmul_2d_1d", lambda T, a, b: T.matmul(a, b), F(2, 3), F(3)),
    _c("matmul_1d_2d", lambda T, a, b: T.matmul(a, b), F(3), F(3, 2)),
    _c("matmul_batched_bcast", lambda T, a, b: T.matmul(a, b), F(2, 1, 2, 3), F(3, 3, 2)),
    _c("matmul_3d_1d", lambda T, a, b: a @ b, F(2, 2, 3), F(3)),
    _c("mm", lambda T, a, b: T.mm(a, b), F(3, 2), F(2, 4)),
    _c("mm_transposed", lambda T, a, b: T.mm(a.t(), b), F(2, 3), F(2, 4)),
    _c("bmm", lambda T, a, b: T.bmm(a, b), F(2, 2, 3), F(2, 3, 2)),
    _c("mv", lambda T, a, b: T.mv(a, b), F(2, 3), F(3)),
    _c("dot", lambda T, a, b: T.dot(a, b), F(4), F(4)),
    _c("outer", lambda T, a, b: T.outer(a, b), F(3), F(2)),
    _c("inner", lambda T, a, b: T.inner(a, b), F(2, 3), F(4, 3)),
    _c("addmm", lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0), F(2, 4), F(2, 3), F(3, 4)),
    _c("addmv", lambda T, c, a, b: T.addmv(c, a, b), F(2), F(2, 3), F(3)),
    _c("baddbmm", lambda T, c, a, b: T.baddbmm(c, a, b), F(2, 2, 2), F(2, 2, 3), F(2, 3, 2)),
    _c("tensordot", lambda T, a, b: T.tensordot(a, b, dims=([1, 2], [0, 1])), F(2, 3, 2), F(3, 2, 2)),
    _c("trace", lambda T, a: T.trace(a), F(3, 3)),
    _c("diag_1d", lambda T, a: T.diag(a, 1), F(3)),
    _c("diag_2d", lambda T, a: T.diag(a), F(3, 3)),
    _c("cross", lambda T, a, b: T.cross(a, b, dim=1), F(2, 3), F(2, 3)),
    _c("einsum_mm", lambda T, a, b: T.einsum("ij,jk->ik", a, b), F(2, 3), F(3, 4)),
    _c("einsum_batch", lambda T, a, b: T.einsum("bij,bjk->bik", a, b), F(2, 2, 3), F(2, 3, 2)),
    _c("einsum_trace_diag", lambda T, a: T.einsum("ii->i", a), F(3, 3)),
    _c("einsum_outer_sum", lambda T, a, b: T.einsum("i,j", a, b), F(3), F(2)),
    _c("einsum_ellipsis", lambda T, a, b: T.einsum("...ij,...j->...i", a, b), F(2, 2, 3), F(2, 3)),
    _c("einsum_three", lambda T, a, b, c: T.einsum("ij,jk,k->i", a, b, c), F(2, 3), F(3, 2), F(2)),
]
CASES += LINALG

# ---- nn.functional: layers PyTorch records as one node (AddmmBackward0, ConvolutionBackward0, ...)
def _fn(T):
    return T.nn.functional


def _w3(T, x):  # constant class weights
    return T.tensor([1.0, 2.0, 0.5], dtype=x.dtype, device=x.device)


NN = [
    _c("linear_2d", lambda T, x, w, b: _fn(T).linear(x, w, b), F(4, 3), F(5, 3), F(5)),
    _c("linear_2d_nobias", lambda T, x, w: _fn(T).linear(x, w), F(4, 3), F(5, 3)),
    _c("linear_3d", lambda T, x, w, b: _fn(T).linear(x, w, b), F(2, 4, 3), F(5, 3), F(5)),
    _c("linear_3d_nobias", lambda T, x, w: _fn(T).linear(x, w), F(2, 4, 3), F(5, 3)),
    _c("linear_1d", lambda T, x, w, b: _fn(T).linear(x, w, b), F(3), F(5, 3), F(5)),
    _c("linear_noncontig", lambda T, x, w, b: _fn(T).linear(x.transpose(0, 1), w, b), F(4, 2, 3), F(5, 3), F(5)),
    _c("matmul_3d_2d", lambda T, a, b: a @ b, F(2, 4, 3), F(3, 5)),
    _c("mse_loss", lambda T, x, y: _fn(T).mse_loss(x, y), F(4, 3), F(4, 3)),
    _c("mse_loss_sum", lambda T, x, y: _fn(T).mse_loss(x, y, reduction="sum"), F(4, 3), F(4, 3)),
    _c("mse_loss_none", lambda T, x, y: _fn(T).mse_loss(x, y, reduction="none"), F(4, 3), F(4, 3)),
    _c("nll_loss", lambda T, x, t: _fn(T).nll_loss(x, t), F(4, 3), I([0, 2, 1, 2])),
    _c("nll_loss_weight_ignore", lambda T, x, t: _fn(T).nll_loss(x, t, weight=_w3(T, x), ignore_index=1),
       F(4, 3), I([0, 2, 1, 2])),
    _c("nll_loss_2d", lambda T, x, t: _fn(T).nll_loss(x, t, reduction="sum"), F(2, 3, 2, 2),
       I([[[0, 1], [2, 2]], [[1, 0], [0, 2]]])),
    _c("nll_loss_1d", lambda T, x, t: _fn(T).nll_loss(x, t), F(3), I(2)),
    _c("cross_entropy", lambda T, x, t: _fn(T).cross_entropy(x, t), F(4, 3), I([0, 2, 1, 2])),
    _c("cross_entropy_weight_none", lambda T, x, t: _fn(T).cross_entropy(x, t, weight=_w3(T, x), reduction="none"),
       F(4, 3), I([0, 2, 1, 2])),
    _c("conv2d", lambda T, x, w, b: _fn(T).conv2d(x, w, b, padding=1), F(2, 3, 4, 4), F(2, 3, 3, 3), F(2)),
    _c("conv2d_nobias_stride", lambda T, x, w: _fn(T).conv2d(x, w, stride=2, dilation=1), F(1, 2, 5, 5),
       F(3, 2, 2, 2)),
    _c("conv2d_unbatched_groups", lambda T, x, w: _fn(T).conv2d(x, w, groups=2), F(4, 4, 4), F(2, 2, 3, 3)),
    _c("conv1d", lambda T, x, w, b: _fn(T).conv1d(x, w, b, padding=1), F(2, 3, 5), F(2, 3, 3), F(2)),
    _c("conv_transpose2d", lambda T, x, w, b: _fn(T).conv_transpose2d(x, w, b, stride=2), F(1, 2, 3, 3),
       F(2, 3, 2, 2), F(3)),
    _c("max_pool2d", lambda T, x: _fn(T).max_pool2d(x, 2), F(2, 2, 4, 4)),
    _c("max_pool2d_indices", lambda T, x: _fn(T).max_pool2d(x, 3, 2, 1, return_indices=True), F(1, 2, 5, 5)),
    _c("max_pool2d_unbatched", lambda T, x: _fn(T).max_pool2d(x, 2), F(2, 4, 4)),
    _c("avg_pool2d", lambda T, x: _fn(T).avg_pool2d(x, 2), F(2, 2, 4, 4)),
    _c("batch_norm_train", lambda T, x, w, b: _fn(T).batch_norm(x, None, None, w, b, training=True),
       F(3, 2, 2, 2), F(2), F(2)),
    _c("batch_norm_eval", lambda T, x, w, b: _fn(T).batch_norm(
        x, T.tensor([0.1, -0.2], dtype=x.dtype, device=x.device), T.tensor([1.5, 0.7], dtype=x.dtype, device=x.device),
        w, b, training=False), F(3, 2, 2), F(2), F(2)),
    _c("batch_norm_noaffine", lambda T, x: _fn(T).batch_norm(x, None, None, training=True), F(4, 3)),
    _c("layer_norm", lambda T, x, w, b: _fn(T).layer_norm(x, (3,), w, b), F(2, 4, 3), F(3), F(3)),
    _c("layer_norm_noaffine", lambda T, x: _fn(T).layer_norm(x, (2, 3)), F(4, 2, 3)),
    _c("group_norm", lambda T, x, w, b: _fn(T).group_norm(x, 2, w, b), F(2, 4, 3), F(4), F(4)),
    _c("embedding", lambda T, w, i: _fn(T).embedding(i, w), F(5, 3), I([[0, 4], [2, 4]])),
    _c("smooth_l1_loss", lambda T, x, y: _fn(T).smooth_l1_loss(x, y, beta=0.5), F(4, 3), F(4, 3)),
    _c("huber_loss", lambda T, x, y: _fn(T).huber_loss(x, y, reduction="sum", delta=0.7), F(4, 3), F(4, 3)),
    _c("binary_cross_entropy", lambda T, x, y: _fn(T).binary_cross_entropy(x.sigmoid(), y.sigmoid()), F(4, 3),
       F(4, 3)),
    _c("binary_cross_entropy_weight", lambda T, x, y: _fn(T).binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), weight=_w3(T, x), reduction="none"), F(4, 3), F(4, 3)),
    _c("bce_with_logits", lambda T, x, y: _fn(T).binary_cross_entropy_with_logits(x, y.sigmoid()), F(4, 3), F(4, 3)),
    _c("bce_with_logits_pos_weight", lambda T, x, y: _fn(T).binary_cross_entropy_with_logits(
        x, y.sigmoid(), weight=_w3(T, x), pos_weight=_w3(T, x) * 2), F(4, 3), F(4, 3)),
]
for _name, _call in [
    ("gelu", lambda F_, x: F_.gelu(x)), ("gelu_tanh", lambda F_, x: F_.gelu(x, approximate="tanh")),
    ("silu", lambda F_, x: F_.silu(x)), ("leaky_relu", lambda F_, x: F_.leaky_relu(x, 0.2)),
    ("elu", lambda F_, x: F_.elu(x, 0.7)), ("selu", lambda F_, x: F_.selu(x)), ("celu", lambda F_, x: F_.celu(x, 1.3)),
    ("softplus", lambda F_, x: F_.softplus(x)), ("softplus_beta", lambda F_, x: F_.softplus(x, 3.0, 2.5)),
    ("hardswish", lambda F_, x: F_.hardswish(x * 2.5)), ("hardsigmoid", lambda F_, x: F_.hardsigmoid(x * 2.5)),
    ("hardtanh", lambda F_, x: F_.hardtanh(x)), ("relu6", lambda F_, x: F_.relu6(x * 4)),
    ("mish", lambda F_, x: F_.mish(x)), ("logsigmoid", lambda F_, x: F_.logsigmoid(x)),
    ("threshold", lambda F_, x: F_.threshold(x, 0.1, 20.0)),
    ("leaky_relu_inplace", lambda F_, x: F_.leaky_relu(x * 1, 0.2, inplace=True)),
    ("elu_inplace", lambda F_, x: F_.elu(x * 1, inplace=True)),
    ("silu_inplace", lambda F_, x: F_.silu(x * 1, inplace=True)),
]:
    NN.append(_c(_name, (lambda f: lambda T, x: f(_fn(T), x))(_call), F(3, 5)))
CASES += NN

# composite expressions exercising accumulation of several paths into one leaf
CASES += [
    _c("reuse", lambda T, x: (x * x).sum(0) + x.exp().mean(0) - x[0], F(3, 2)),
    _c("chain", lambda T, x, w: T.tanh(x @ w).softmax(-1).log().sum(), F(2, 3), F(3, 2)),
]

# ops whose second derivatives gradgradcheck verifies (elementwise and matmul)
GRADGRAD = [n for n in UNARY_KINDS if n not in ("sign", "floor", "ceil", "round", "trunc", "frac", "relu",
                                                 "abs")] + \
    ["abs_method", "add", "sub_alpha", "mul", "div", "maximum", "atan2", "pow_scalar", "pow_scalar_frac",
     "pow_tensor", "pow_scalar_base", "where", "clamp", "hypot", "logaddexp", "xlogy", "matmul", "mm",
     "bmm", "mv", "dot", "matmul_batched_bcast", "softmax", "log_softmax", "logsumexp", "prod_dim", "cumprod",
     "norm", "std", "linear_2d", "linear_3d", "mse_loss", "conv2d", "conv_transpose2d", "max_pool2d",
     "batch_norm_train", "layer_norm", "group_norm", "gelu", "gelu_tanh", "silu", "elu", "selu", "celu", "softplus",
     "mish", "logsigmoid", "cross_entropy", "flip", "roll", "getitem_adv", "gather", "scatter_add", "index_select",
     "take_along_dim", "take", "index_copy", "index_put_accumulate"]

BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
