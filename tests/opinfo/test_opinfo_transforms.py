"""PyTorch's OpInfo samples through torch.func's transforms, as PyTorch's test_vmap / test_ops_fwd_gradients do:
for a set of registry ops (each op family's batching rule), the first samples of each

    vmap   the sample's float tensors stacked with a scaled copy (a batch of 2) and vmapped equal PyTorch's
           per-sample loop;
    jvp    forward-mode AD (autograd.forward_ad's tangents) equals PyTorch's reverse-mode Jacobian-vector
           product (autograd.functional.jvp, the double-backward trick) along the same random tangents;
    jac    torch.func.jacrev (the op's backward formula vmapped over the identity of its output's elements) and
           jacfwd (jvp vmapped over the identity of its inputs' elements) equal PyTorch's Jacobian
           (autograd.functional.jacobian, one backward per output element);

on cpu and webgpu. Kept CI-cheap: the first SAMPLES samples per op, one or two ops per rule."""
import pytest
import torch

import opinfo_harness as H
from core_util import wt
from webtorch._functorch.vmap import tree_flatten, tree_unflatten

SAMPLES = 2
# one or two ops per batching rule: element-wise, dim-taking (reductions, scans, softmax, index ops), shape,
# joins/splits, matrix products, nn (linear, layer_norm)
OPS = ["add", "mul", "exp", "where", "pow", "sum", "amax", "var", "max.reduction_with_dim", "softmax", "cumsum",
       "matmul", "bmm", "nn.functional.linear", "transpose", "reshape", "unsqueeze", "expand", "cat", "stack",
       "split", "index_select", "gather", "nn.functional.layer_norm"]
KINDS = ("vmap", "jvp", "jac")
JAC_MAX = 128   # the Jacobian checks' inputs: at most this many elements (jacfwd's identity has as many rows)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _structure(s):
    return tree_flatten([s.input, list(s.args), dict(s.kwargs)])


def _is_float(x):
    return isinstance(x, torch.Tensor) and x.dtype.is_floating_point


def _call(fn, leaves, spec):
    inp, args, kwargs = tree_unflatten(list(leaves), spec)
    return fn(inp, *args, **kwargs)


def _tensors_out(out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not all(isinstance(o, (torch.Tensor, wt.Tensor)) for o in outs):
        raise H.Unsupported("a non-Tensor output")
    return outs


def _check_vmap(o, fn, s, device):
    leaves, spec = _structure(s)
    batched = [_is_float(x) for x in leaves]
    if not any(batched):
        raise H.Unsupported("no float tensor to batch")
    stacks = [torch.stack([x.detach(), x.detach() * 0.5]) if b else x for x, b in zip(leaves, batched)]
    expected = [_tensors_out(_call(o.op, [st[i] if b else st for st, b in zip(stacks, batched)], spec))
                for i in range(2)]
    expected = [torch.stack([e[k] for e in expected]) for k in range(len(expected[0]))]
    memo = {}
    w_leaves = [H.to_wt(x, device, memo) for x in stacks]
    dims = tuple(0 if b else None for b in batched)
    got = wt.func.vmap(lambda *xs: tuple(_tensors_out(_call(fn, xs, spec))), in_dims=dims)(*w_leaves)
    H.compare(list(got), expected, device, path="vmap")


def _check_jvp(o, fn, s, device):
    leaves, spec = _structure(s)
    pos = [i for i, x in enumerate(leaves) if _is_float(x)]
    if not pos or not o.supports_forward_ad:
        raise H.Unsupported("no forward AD")
    gen = torch.Generator().manual_seed(H._COT_SEED)
    tangents = [torch.randn(leaves[i].shape, generator=gen, dtype=leaves[i].dtype) for i in pos]

    def torch_fn(*xs):
        full = list(leaves)
        for i, x in zip(pos, xs):
            full[i] = x
        return tuple(t for t in _tensors_out(_call(o.op, full, spec)) if t.dtype.is_floating_point)
    outs = _tensors_out(o.op(s.input, *s.args, **s.kwargs))
    keep = [k for k, t in enumerate(outs) if t.dtype.is_floating_point]
    if not keep:
        raise H.Unsupported("no float output")
    _, expected = torch.autograd.functional.jvp(torch_fn, tuple(leaves[i].detach() for i in pos), tuple(tangents))
    fw = wt.autograd.forward_ad
    memo = {}
    w_leaves = [H.to_wt(x, device, memo) for x in leaves]
    with fw.dual_level():
        for i, t in zip(pos, tangents):
            w_leaves[i] = fw.make_dual(w_leaves[i].detach(), H.to_wt(t, device, {}))
        w_outs = _tensors_out(_call(fn, w_leaves, spec))
        got = [fw.unpack_dual(w_outs[k]).tangent for k in keep]
    got = [g if g is not None else wt.zeros(tuple(w_outs[k].shape), device=device) for g, k in zip(got, keep)]
    H.compare(got, list(expected), device, path="jvp", atol_min=H.GRAD_ATOL)


def _check_jac(o, fn, s, device):
    leaves, spec = _structure(s)
    pos = [i for i, x in enumerate(leaves) if _is_float(x)]
    if not pos or not o.supports_autograd:
        raise H.Unsupported("no autograd")
    if sum(leaves[i].numel() for i in pos) > JAC_MAX:
        raise H.Unsupported(f"more than {JAC_MAX} input elements (CI-cheap)")

    def with_inputs(call, lib_leaves):
        def f(*xs):
            full = list(lib_leaves)
            for i, x in zip(pos, xs):
                full[i] = x
            return tuple(t for t in _tensors_out(_call(call, full, spec)) if t.dtype.is_floating_point)
        return f
    outs = _tensors_out(o.op(s.input, *s.args, **s.kwargs))
    if not any(t.dtype.is_floating_point for t in outs):
        raise H.Unsupported("no float output")
    try:
        expected = torch.autograd.functional.jacobian(with_inputs(o.op, leaves),
                                                      tuple(leaves[i].detach() for i in pos))
    except RuntimeError as e:   # PyTorch's loop stacks no rows for an empty output
        raise H.Unsupported(f"PyTorch's jacobian raised: {e}") from e
    expected = [e for per_out in expected for e in per_out]
    memo = {}
    w_leaves = [H.to_wt(x, device, memo) for x in leaves]
    f = with_inputs(fn, w_leaves)
    primals = [w_leaves[i].detach() for i in pos]
    nums = tuple(range(len(pos)))
    for name in ("jacrev", "jacfwd"):
        got = getattr(wt.func, name)(f, argnums=nums)(*primals)
        H.compare([g for per_out in got for g in per_out], expected, device, path=name, atol_min=H.GRAD_ATOL)


_CHECKS = {"vmap": _check_vmap, "jvp": _check_jvp, "jac": _check_jac}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("device", ["cpu", "webgpu"], indirect=True)
@pytest.mark.parametrize("op", OPS)
def test_transform(op, device, kind, request):
    dev = request.node.callspec.params["device"]
    o, fn = H.op_db()[op], H.resolve(op)
    assert fn is not None, f"{op}: webtorch lacks it"
    ran, failures = 0, []
    for i, s in enumerate(H.samples(op, False)[:SAMPLES]):
        try:
            _CHECKS[kind](o, fn, s, dev)
            ran += 1
        except H.Unsupported:
            continue
        except AssertionError as e:
            failures.append(f"#{i}: {str(e).splitlines()[0][:200]}")
        except Exception as e:  # webtorch raised where PyTorch did not
            failures.append(f"#{i}: raised {type(e).__name__}: {str(e)[:200]}")
    assert not failures, f"{op} {dev} {kind}: " + "; ".join(failures)
