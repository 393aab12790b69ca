"""Core tensor library vs PyTorch: views (shapes, strides, storage offsets), writes through views."""
import numpy as np
import pytest
import torch

from core_util import wt, cmp, raises_like, arr, check_same

X = arr((2, 3, 4), "float32")


def V(device, fn, *args):
    """A view op: same values, shape, dtype, strides and storage offset as torch."""
    return cmp(device, fn, *args, strides=True)


@pytest.mark.parametrize("case", [
    lambda T, x: x.view(6, 4), lambda T, x: x.view(-1), lambda T, x: x.view(2, -1, 2), lambda T, x: x.view((4, 6)),
    lambda T, x: x.reshape(4, 3, 2), lambda T, x: T.reshape(x, (-1, 4)), lambda T, x: x.view_as(T.ones(24)),
    lambda T, x: x.permute(2, 0, 1), lambda T, x: T.permute(x, (1, 2, 0)), lambda T, x: x.permute(-1, -2, -3),
    lambda T, x: x.transpose(0, 2), lambda T, x: x.transpose(-1, 1), lambda T, x: T.transpose(x, 0, 1),
    lambda T, x: x[0].t(), lambda T, x: x[0].T, lambda T, x: x.mT, lambda T, x: x.permute(2, 1, 0),
    lambda T, x: x[:, :1].expand(2, 5, 4), lambda T, x: x[:, :1].expand(-1, 3, -1), lambda T, x: x[0, 0].expand(2, 2, 4),
    lambda T, x: x[:, :1].squeeze(), lambda T, x: x[:, :1].squeeze(1), lambda T, x: x.squeeze(0),
    lambda T, x: x[:, :1].squeeze(-2), lambda T, x: x.unsqueeze(0), lambda T, x: x.unsqueeze(-1),
    lambda T, x: x.unsqueeze(2), lambda T, x: x.flatten(), lambda T, x: x.flatten(1), lambda T, x: x.flatten(0, 1),
    lambda T, x: T.flatten(x, -2, -1), lambda T, x: x.unflatten(2, (2, 2)), lambda T, x: x.unflatten(-1, (-1, 2)),
    lambda T, x: x.narrow(1, 1, 2), lambda T, x: T.narrow(x, -1, 0, 3), lambda T, x: x.select(1, 2),
    lambda T, x: x.select(-1, -1), lambda T, x: x.unbind(1), lambda T, x: T.unbind(x), lambda T, x: x.split(2, 2),
    lambda T, x: x.split([1, 2], 1), lambda T, x: T.split(x, 3, -1), lambda T, x: x.chunk(2, 2),
    lambda T, x: x.chunk(3, 1), lambda T, x: T.chunk(x, 4, -1), lambda T, x: x.contiguous(),
    lambda T, x: x[:, ::2], lambda T, x: x[1:, 1:, 1::2], lambda T, x: x.diagonal(0, 1, 2),
    lambda T, x: x.as_strided((2, 2), (1, 3), 1), lambda T, x: x.swapaxes(0, 1), lambda T, x: x.movedim(0, -1),
    lambda T, x: x.expand_as(T.ones(2, 2, 3, 4)), lambda T, x: x.t() if x.dim() < 3 else x[0].t().t(),
])
def test_views_match_torch_strides(device, case):
    V(device, case, X)


def test_view_of_transposed(device):
    y = X.transpose((2, 0, 1)).copy()  # a contiguous array
    V(device, lambda T, x: x.transpose(0, 1).contiguous().view(-1), y)
    V(device, lambda T, x: x.transpose(0, 1).reshape(-1), y)  # a copy
    V(device, lambda T, x: x.transpose(0, 1).flatten(1), y)
    V(device, lambda T, x: x.permute(1, 0, 2).contiguous(), y)
    V(device, lambda T, x: x[:, 1:].reshape(-1, 4), X)
    V(device, lambda T, x: x.unsqueeze(1).expand(2, 3, 3, 4).reshape(2, 9, 4), X)


def test_view_metadata(device):
    for fn in (lambda T, x: x, lambda T, x: x.transpose(0, 1), lambda T, x: x[:, 1:, ::2], lambda T, x: x[:, :1],
               lambda T, x: x.expand(3, 2, 3, 4), lambda T, x: x[0, 0, 0], lambda T, x: x[:, 0:0]):
        w, t = cmp(device, fn, X, strides=True)
        assert w.is_contiguous() == t.is_contiguous()
        assert w.stride() == t.stride() and w.storage_offset() == t.storage_offset()
        assert w.size() == t.size() and tuple(w.shape) == tuple(t.shape) and w.dim() == t.dim()
        assert w.numel() == t.numel() and w.ndim == t.ndim
        assert repr(w.shape) == repr(t.shape)
        for d in range(-t.dim(), t.dim()):
            assert w.size(d) == t.size(d) and w.stride(d) == t.stride(d)


def test_view_errors(device):
    raises_like(device, lambda T, x: x.view(5, 5), X, phrase="shape '[5, 5]' is invalid for input of size 24")
    raises_like(device, lambda T, x: x.transpose(0, 1).view(-1), X, phrase="view size is not compatible")
    raises_like(device, lambda T, x: x.view(-1, -1), X, phrase="only one dimension can be inferred")
    raises_like(device, lambda T, x: x.permute(0, 1), X, phrase="number of dimensions in the tensor input does "
                                                                "not match")
    raises_like(device, lambda T, x: x.permute(0, 1, 1), X, phrase="duplicate dims are not allowed")
    raises_like(device, lambda T, x: x.transpose(0, 3), X, phrase="Dimension out of range (expected to be in range "
                                                                  "of [-3, 2], but got 3)")
    raises_like(device, lambda T, x: x.expand(3, 3, 4), X, phrase="The expanded size of the tensor (3) must match "
                                                                 "the existing size (2)")
    raises_like(device, lambda T, x: x.squeeze(3), X, phrase="Dimension out of range")
    raises_like(device, lambda T, x: x.unsqueeze(4), X, phrase="Dimension out of range (expected to be in range "
                                                              "of [-4, 3], but got 4)")
    raises_like(device, lambda T, x: x.narrow(1, 2, 5), X, phrase="exceeds dimension size")
    raises_like(device, lambda T, x: x.select(1, 3), X, phrase="index 3 out of range for tensor of size")
    raises_like(device, lambda T, x: x.split([1, 1], 1), X, phrase="split_with_sizes expects split_sizes to sum "
                                                                   "exactly to 3")
    raises_like(device, lambda T, x: x.unflatten(2, (3, 2)), X, phrase="unflatten")
    raises_like(device, lambda T, x: x.t(), X, phrase="expects a tensor with <= 2 dimensions, but self is 3D")
    raises_like(device, lambda T, x: x.flatten(2, 1), X, phrase="flatten() has invalid args")


def test_zero_dim_views(device):
    s = arr((), "float32")
    V(device, lambda T, x: x.view(1, 1), s)
    V(device, lambda T, x: x.reshape(-1), s)
    V(device, lambda T, x: x.unsqueeze(0), s)
    V(device, lambda T, x: x.squeeze(), s)
    V(device, lambda T, x: x.flatten(), s)
    V(device, lambda T, x: x.expand(3, 2), s)
    V(device, lambda T, x: x.t(), s)
    V(device, lambda T, x: x.squeeze(0), s)
    V(device, lambda T, x: x.view(()), arr((1,), "float32"))


def test_empty_views(device):
    e = arr((0, 3), "float32")
    V(device, lambda T, x: x.view(3, 0), e)
    V(device, lambda T, x: x.reshape(3, 0, 1), e)
    raises_like(device, lambda T, x: x.reshape(-1, 0), e, phrase="cannot reshape tensor of 0 elements")
    V(device, lambda T, x: x.t(), e)
    V(device, lambda T, x: x.unsqueeze(1), e)
    V(device, lambda T, x: x.split(1, 1), e)
    V(device, lambda T, x: x.chunk(2, 1), e)


# ---- writes through views ---------------------------------------------------------------------
def _same_writes(device, write, x=None):
    """Do `write(T, base)` (which writes through views of base) in both libraries; compare bases."""
    x = X if x is None else x
    cmp(device, lambda T, b: (write(T, b), b)[1], x)


@pytest.mark.parametrize("write", [
    lambda T, b: b[0].add_(1),
    lambda T, b: b[:, 1].mul_(2),
    lambda T, b: b.transpose(0, 2)[1].zero_(),
    lambda T, b: b.view(6, 4)[2:4].fill_(7),
    lambda T, b: b.select(2, 1).sub_(b.select(2, 0)),
    lambda T, b: b[..., ::2].copy_(T.ones(2, 3, 2)),
    lambda T, b: b.narrow(1, 1, 2).clamp_(min=0),
    lambda T, b: b.unsqueeze(0)[0, 1].neg_(),
    lambda T, b: b.permute(2, 0, 1)[3].exp_(),
    lambda T, b: b.flatten()[5:9].div_(2),
    lambda T, b: b.unbind(1)[2].pow_(2),
    lambda T, b: b.split(2, 2)[1].abs_(),
    lambda T, b: b.chunk(2, 0)[1].t_() if False else b.chunk(2, 0)[1].sigmoid_(),
    lambda T, b: b.diagonal(0, 1, 2).fill_(-1),
    lambda T, b: b[1, 1:, ::3].copy_(T.tensor([[5.0, 6.0], [7.0, 8.0]])),
])
def test_write_through_view_seen_by_base(device, write):
    _same_writes(device, write)


def test_base_write_seen_by_views(device):
    def fn(T, b):
        v1, v2, v3 = b[1], b.transpose(0, 1), b.view(-1)[3:10]
        v4 = b.expand(2, 2, 3, 4)
        b.add_(10)
        b[0, 0, 0] = -5
        return v1, v2, v3, v4
    cmp(device, fn, X)

    def chain(T, b):
        v = b[:, 1:]
        w = v.transpose(1, 2)[0]
        w.mul_(3)
        v[1].fill_(2)
        return b, v, w
    cmp(device, chain, X)


def test_in_place_errors(device):
    raises_like(device, lambda T, x, y: x[:1].add_(y), X, X,
                phrase="output with shape [1, 3, 4] doesn't match the broadcast shape [2, 3, 4]")
    raises_like(device, lambda T, x: x.add_(1.5), arr((3,), "int64"), phrase="result type Float can't be cast to "
                                                                            "the desired output type Long")


def test_contiguous_copies(device):
    w, t = cmp(device, lambda T, x: x.transpose(0, 1).contiguous(), X, strides=True)
    assert w.is_contiguous()
    wb = wt.tensor(X).to(device)
    c = wb.transpose(0, 1).contiguous()
    c.zero_()
    check_same(wb, torch.from_numpy(X))  # the copy does not alias the base
    assert wb.contiguous() is wb


def test_meshgrid(device):
    """torch.meshgrid (met in a real program building 3-D coordinates): expanded views, "ij"
    and "xy", list or varargs, 0-d inputs, gradients, PyTorch's warning and errors."""
    a, b, c = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0, 5.0], np.float32), np.array(7.0, np.float32)
    for ix in ("ij", "xy"):
        cmp(device, lambda T, x, y, z: T.meshgrid(x, y, z, indexing=ix), a, b, c)  # (a size-1 dim: any stride)
        cmp(device, lambda T, x, y: T.meshgrid([x, y], indexing=ix), a, b, strides=True)
        cmp(device, lambda T, x: T.meshgrid(x, indexing=ix), a)
    for lib, dev in ((torch, "cpu"), (wt, device)):
        x = lib.tensor(a, requires_grad=True) if lib is torch else wt.tensor(a, device=dev, requires_grad=True)
        y = lib.tensor(b, requires_grad=True) if lib is torch else wt.tensor(b, device=dev, requires_grad=True)
        gx, gy = lib.meshgrid(x, y, indexing="xy")
        (gx * gy * gx).sum().backward()
        if lib is torch:
            want = (x.grad.tolist(), y.grad.tolist())
    assert (x.grad.tolist(), y.grad.tolist()) == want
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        assert wt.meshgrid(wt.ones(2, device=device))[0].shape == (2,)
    raises_like(device, lambda T, x: T.meshgrid(x, x, indexing="yx"), a, phrase='indexing must be one of "xy" or "ij"')
    raises_like(device, lambda T, x: T.meshgrid(x, indexing="ij"), np.ones((2, 2), np.float32),
                phrase="Expected 0D or 1D tensor in the tensor list")
    raises_like(device, lambda T, x: T.meshgrid(x, x.long(), indexing="ij"), a,
                phrase="meshgrid expects all tensors to have the same dtype")
    raises_like(device, lambda T: T.meshgrid([], indexing="ij"), phrase="meshgrid expects a non-empty TensorList")


def test_tensor_unfold(device):
    """Tensor.unfold: sliding windows as a view (overlapping, disjoint, empty, 0-d), gradients that
    add overlapping windows up, and PyTorch's errors."""
    x = arr((3, 7), "float32")
    for d, size, step in ((1, 3, 2), (1, 2, 1), (0, 3, 1), (-1, 7, 3), (1, 0, 1), (0, 1, 5)):
        V(device, lambda T, t: t.unfold(d, size, step), x)
    V(device, lambda T, t: t.unfold(0, 2, 2).unfold(1, 3, 3), arr((4, 6), "float32"))
    cmp(device, lambda T, t: t.unfold(0, 1, 1), np.array(5.0, np.float32))
    cmp(device, lambda T, t: t.t().unfold(0, 4, 1), x)
    for lib, dev in ((torch, "cpu"), (wt, device)):
        t = lib.tensor(x, requires_grad=True) if lib is torch else wt.tensor(x, device=dev, requires_grad=True)
        w = t.unfold(1, 3, 1)
        (w * w * lib.arange(3.0, device=None if lib is torch else dev)).sum().backward()
        if lib is torch:
            want = t.grad.numpy()
    np.testing.assert_allclose(np.array(t.grad.cpu().tolist()), want, rtol=1e-5)
    raises_like(device, lambda T, t: t.unfold(1, 8, 1), x, phrase="maximum size for tensor at dimension 1 is 7")
    raises_like(device, lambda T, t: t.unfold(1, 2, 0), x, phrase="step is 0 but must be > 0")
    raises_like(device, lambda T, t: t.unfold(1, -1, 1), x, phrase="size is -1 but must be >= 0")
    raises_like(device, lambda T, t: t.unfold(2, 1, 1), x, phrase="Dimension out of range")


def test_tensor_unfold_gradcheck():
    t = wt.tensor(arr((2, 6), "float64"), requires_grad=True)
    assert wt.autograd.gradcheck(lambda a: a.unfold(1, 3, 2) * a.unfold(1, 3, 2), (t,))
    assert wt.autograd.gradcheck(lambda a: a.unfold(1, 4, 1).sum(-1), (t,))
