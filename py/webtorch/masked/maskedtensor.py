"""MaskedTensor (PyTorch's torch.masked prototype): a tensor's data and a bool mask of the elements that are
specified. Element-wise ops keep the mask (two MaskedTensors must have the same mask); the reductions of
`_ops.py` reduce the data over the specified elements and the mask with any(). Not a Tensor subclass here: a
`__torch_function__` object, so `torch.f(mt)` and `mt.f()` both reach it."""
from .. import _dtype
from .._tensor import Tensor
from ..ops.registry import FUNCTIONS
from . import _ops

_REDUCTIONS = {"sum", "prod", "amax", "amin", "mean", "argmax", "argmin", "logsumexp", "var", "std", "norm"}


def _str(data, mask):
    """PyTorch's layout: numbers as {:8.4f}, masked-out ones as --, rows nested in brackets."""
    if data.dim() == 1:
        items = [f"{v:8.4f}" if isinstance(v, float) else str(v) for v in data.tolist()]
        width = max([8 if not m else len(s) for s, m in zip(items, mask.tolist())] or [0])
        return "[" + ", ".join(s if m else "--".rjust(width) for s, m in zip(items, mask.tolist())) + "]"
    rows = ["\n".join("  " + line for line in _str(d, m).split("\n")) for d, m in zip(data, mask)]
    return "[\n" + ",\n".join(rows) + "\n]"


class MaskedTensor:
    _is_masked_tensor = True

    def __init__(self, data, mask, requires_grad=False):
        if not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if tuple(data.shape) != tuple(mask.shape):
            raise ValueError("data.size() must equal mask.size()")
        if mask.dtype is not _dtype.bool_:
            raise TypeError("mask must have dtype bool.")
        self._masked_data, self._masked_mask = data, mask
        if requires_grad:
            data.requires_grad_()

    def get_data(self):
        return self._masked_data

    def get_mask(self):
        return self._masked_mask

    def to_tensor(self, value):
        return self._masked_data.masked_fill(~self._masked_mask, value)

    def is_sparse_coo(self):
        return False

    shape = property(lambda self: self._masked_data.shape)
    dtype = property(lambda self: self._masked_data.dtype)
    device = property(lambda self: self._masked_data.device)
    ndim = property(lambda self: self._masked_data.ndim)
    requires_grad = property(lambda self: self._masked_data.requires_grad)
    grad = property(lambda self: None if self._masked_data.grad is None else
                    MaskedTensor(self._masked_data.grad, self._masked_mask))

    def dim(self):
        return self._masked_data.dim()

    def size(self, dim=None):
        return self._masked_data.size() if dim is None else self._masked_data.size(dim)

    def __repr__(self):
        if self.dim() == 0:
            v, m = self._masked_data.item(), self._masked_mask.item()
            s = (f"{v:8.4f}" if isinstance(v, float) else str(v)) if m else "--"
            return f"MaskedTensor({s}, {m})"
        body = "\n".join("  " + line for line in _str(self._masked_data, self._masked_mask).split("\n"))
        return "MaskedTensor(\n" + body + "\n)"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.__name__
        if name in _REDUCTIONS:
            return _reduce(name, *args, **kwargs)
        if name in ("softmax", "log_softmax", "softmin", "cumsum", "cumprod"):
            mt = args[0]
            return MaskedTensor(getattr(_ops, name)(mt, *args[1:], **kwargs), mt.get_mask())
        mask = None
        plain = []
        for a in args:
            if isinstance(a, MaskedTensor):
                if mask is not None and not bool((mask == a.get_mask()).all()):
                    raise ValueError("Input masks must match. If you need support for this, please open an issue on "
                                     "Github.")
                mask = a.get_mask() if mask is None else mask
                a = a.get_data()
            plain.append(a)
        r = func(*plain, **kwargs)
        return MaskedTensor(r, mask) if isinstance(r, Tensor) and tuple(r.shape) == tuple(mask.shape) else r

    def __getattr__(self, name):  # the method forms: mt.sin(), mt.sum(1), mt.add(other)
        fn = FUNCTIONS.get(name)
        if fn is None or name.startswith("_"):
            raise AttributeError(f"'MaskedTensor' object has no attribute '{name}'")
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    def __getitem__(self, index):
        return MaskedTensor(self._masked_data[index], self._masked_mask[index])


def _reduce(name, input, dim=None, *args, keepdim=False, **kwargs):
    mask = input.get_mask()
    data = getattr(_ops, name)(input.get_data(), dim, *args, keepdim=keepdim, mask=mask, **kwargs)
    dims = _ops._canonical_dim(dim, mask.dim())
    return MaskedTensor(data, mask.any(dims, keepdim=keepdim) if dims else mask)


def _operator(op, reflected=False):
    fn = FUNCTIONS[op]
    return (lambda self, other: fn(other, self)) if reflected else (lambda self, other: fn(self, other))


for _n, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("pow", "pow")):
    setattr(MaskedTensor, f"__{_n}__", _operator(_op))
    setattr(MaskedTensor, f"__r{_n}__", _operator(_op, True))
for _n, _op in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge")):
    setattr(MaskedTensor, f"__{_n}__", _operator(_op))
MaskedTensor.__neg__ = lambda self: FUNCTIONS["neg"](self)
MaskedTensor.__abs__ = lambda self: FUNCTIONS["abs"](self)
MaskedTensor.__hash__ = object.__hash__


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor of a copy of data (a leaf: requires_grad as given)."""
    if not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    return MaskedTensor(data.detach().clone(), mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor of data itself (differentiable through it)."""
    return MaskedTensor(data, mask)


def is_masked_tensor(obj):
    return isinstance(obj, MaskedTensor)
