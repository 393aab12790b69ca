"""Names PyTorch has for what webtorch's ops already compute: in-place forms (`addmm_`, `cumsum_`,
`arccos_`, ...), aliases (`greater_`, `negative_`, `fix_`, `unsafe_split`, ...) and thin
compositions (`ravel`, `hsplit`, `dist`, `diagflat`, `addr`, `renorm`, `put`, `gcd`, `frexp`, ...)."""
import builtins
import math
import struct

from .. import _dtype
from . import _creation, indexing, linalg, reduction  # noqa: F401 (declared first: aliased below)
from ._common import check_tensor, name_of, wrap_dim
from .pointwise import _inplace, where
from .reduction import return_types
from .registry import FUNCTIONS, METHODS, register, register_method
from .views import broadcast_tensors

int64, bool_ = _dtype.int64, _dtype.bool_

# ---- in-place forms and aliases -------------------------------------------------------------------
for _n in ("addbmm", "addmm", "addmv", "baddbmm", "cumsum", "cumprod", "index_copy", "index_fill", "masked_scatter"):
    register_method(_inplace(FUNCTIONS[_n]), _n + "_")
register(METHODS["addmv_"], "addmv_")  # torch.addmv_ is a function too
for _n in ("square", "deg2rad", "rad2deg", "nan_to_num"):
    register(_inplace(FUNCTIONS[_n]), _n + "_")
register_method(_inplace(FUNCTIONS["sgn"]), "sgn_")
for _alias, _n in (("arccos_", "acos_"), ("arcsin_", "asin_"), ("arctan_", "atan_"), ("arccosh_", "acosh_"),
                   ("arcsinh_", "asinh_"), ("arctanh_", "atanh_"), ("negative_", "neg_"), ("fix_", "trunc_")):
    register(METHODS[_n], _alias)
for _alias, _n in (("arctan2_", "atan2_"), ("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                   ("less_equal_", "le_"), ("not_equal_", "ne_"), ("absolute_", "abs_")):
    register_method(METHODS[_n], _alias)
register(METHODS["xlogy_"], "xlogy_", method=False)
register(lambda input: input.detach(), "detach", method=False)
register(lambda input: input.detach_(), "detach_", method=False)
register(lambda input: input.is_inference(), "is_inference", method=False)


def _float_power_(self, exponent):
    if self.dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {name_of(self.dtype)} but the operation's "
                           "result requires dtype Double")
    return self.pow_(exponent)


register_method(_float_power_, "float_power_")

# ---- splits -------------------------------------------------------------------------------------------
register(lambda input, split_sizes, dim=0: input.split(list(split_sizes), dim), "split_with_sizes",
         "unsafe_split_with_sizes")
register(FUNCTIONS["split"], "unsafe_split")
register(FUNCTIONS["chunk"], "unsafe_chunk")


def _dir_split(name, dim, min_dim):
    def split(input, indices_or_sections):
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        if not isinstance(indices_or_sections, (int, list, tuple)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                            f"{type(indices_or_sections).__name__})")
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int) and (indices_or_sections == 0
                                                     or input.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return input.tensor_split(indices_or_sections, d)
    split.__name__ = name
    return split


for _name, _dim, _min in (("hsplit", 1, 1), ("vsplit", 0, 2), ("dsplit", 2, 3)):
    register(_dir_split(_name, _dim, _min), _name)


# ---- small compositions ----------------------------------------------------------------------------
@register
def ravel(input):
    return input.reshape(-1)


@register
def dist(input, other, p=2):
    return (input - other).norm(p)


@register
def diagflat(input, offset=0):
    return input.reshape(-1).diag(offset)


@register
def isposinf(input):
    return input == math.inf if input.dtype.is_floating_point else input.new_zeros(input.shape, dtype=bool_)


@register
def isneginf(input):
    return input == -math.inf if input.dtype.is_floating_point else input.new_zeros(input.shape, dtype=bool_)


@register
def isreal(input):
    if input.is_complex():
        return input.imag == 0
    return input.new_ones(input.shape, dtype=bool_)


@register
def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if not input.numel() else 'more than one value'}"
                           " is ambiguous")
    return bool(input.item() != 0)


@register
def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


@register
def is_signed(input):
    return input.dtype not in (_dtype.uint8, bool_)


@register
def get_device(input):
    return -1 if input.device.type == "cpu" else (input.device.index or 0)


@register
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    outer = vec1.unsqueeze(1) * vec2.unsqueeze(0)
    if outer.dtype is bool_:
        return (input & bool(beta) if beta else input.new_zeros(())) | (outer & bool(alpha))
    outer = outer if alpha == 1 else outer * alpha
    if beta == 0:  # input is not read (its NaNs do not propagate)
        return outer.to(_dtype.result_type(input, outer))
    return (input if beta == 1 else input * beta) + outer


register_method(_inplace(addr), "addr_")


@register
def renorm(input, p, dim, maxnorm):
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    d = wrap_dim(dim, input.dim())
    norms = input.norm(p, [k for k in builtins.range(input.dim()) if k != d], keepdim=True)
    return input * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


register_method(_inplace(renorm), "renorm_")


@register
def put(input, index, source, accumulate=False):
    n = input.numel()
    if index.numel() and not bool(((index >= -n) & (index < n)).all()):
        bad = index[(index < -n) | (index >= n)].reshape(-1)[0].item()
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat = input.reshape(-1)
    return flat.index_put((index.reshape(-1) % builtins.max(n, 1),), source.reshape(-1), accumulate).reshape(
        input.shape)


register_method(_inplace(put), "put_")


@register_method
def fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    h, w = self.shape[0], self.shape[1]
    if self.dim() == 2:
        steps = (h * w + w) // (w + 1) if wrap and h > w else builtins.min(h, w)
        flat = _creation.arange(steps, device=self.device) * (w + 1)
        idx = (flat // w, flat % w)
    else:
        k = _creation.arange(h, device=self.device)
        idx = (k,) * self.dim()
    return self.index_put_(idx, _creation.tensor(fill_value, dtype=self.dtype, device=self.device))


@register
def resize_as_(input, the_template, *, memory_format=None):
    return input.resize_(the_template.shape)


@register(method=False)
def fill(input, value):
    return input.clone().fill_(value)


# ---- integer and float bits ----------------------------------------------------------------------------
def _check_int(name, *ts):
    for t in ts:
        if t.dtype.is_floating_point or t.dtype is bool_:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{name_of(t.dtype)}'")


@register
def gcd(input, other):
    check_tensor("gcd", input)
    check_tensor("gcd", other, "other", 2)
    _check_int("gcd", input, other)
    a, b = broadcast_tensors(input.abs(), other.abs())
    while bool((b != 0).any()):  # Euclid, every element at once (at most ~92 rounds for int64)
        a, b = where(b != 0, b, a), where(b != 0, a.remainder(where(b != 0, b, 1)), 0)
    return a.to(_dtype.result_type(input, other))


@register
def lcm(input, other):
    check_tensor("lcm", input)
    check_tensor("lcm", other, "other", 2)
    _check_int("lcm", input, other)
    g = gcd(input, other)
    return where(g == 0, 0, (input // where(g == 0, 1, g) * other).abs()).to(g.dtype)


register(_inplace(gcd), "gcd_")
register(_inplace(lcm), "lcm_")


def _scaled(a, e):
    """a * 2^-e exactly, in two power-of-two steps (2^-e alone overflows for a subnormal a)."""
    h = e // 2
    return a * (-h.to(a.dtype)).exp2() * (h - e).to(a.dtype).exp2()


@register
def frexp(input):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    finite = input.isfinite() & (input != 0)
    a = where(finite, input.abs(), 1.0)
    e = a.log2().floor().to(_dtype.int32) + 1
    m = _scaled(a, e)
    e = e + (m >= 1).to(_dtype.int32) - (m < 0.5).to(_dtype.int32)  # log2's rounding near a power of two
    m = _scaled(a, e)
    return return_types.frexp(where(finite, m * input.sign(), input), where(finite, e, 0))



register_method(lambda self, other: self.reciprocal() * other, "__rdiv__")


# ---- factories -------------------------------------------------------------------------------------
def _storage_numel(size, stride):
    return 0 if 0 in tuple(size) else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))


@register(method=False)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    base = _creation.empty(_storage_numel(size, stride), dtype=dtype, device=device)
    out = base.as_strided(tuple(size), tuple(stride)).detach()
    out._base = None   # a base of its own, as PyTorch's (its views write into it)
    return out.requires_grad_(requires_grad)


@register_method
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


@register(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    order = list(physical_layout)
    if len(order) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    for k in order:
        if not -len(size) <= k < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be in range of [{-len(size)}, {len(size) - 1}], "
                               f"but got {k})")
    order = [k % len(size) for k in order]
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    phys = _creation.empty([size[k] for k in order], dtype=dtype, device=device, requires_grad=requires_grad)
    return phys.permute([order.index(k) for k in builtins.range(len(size))])


@register(method=False)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    return _creation.tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


_STRUCT = {"float32": "f", "float64": "d", "float16": "e", "int64": "q", "int32": "i", "int16": "h", "int8": "b",
           "uint8": "B", "bool": "?"}


@register(method=False)
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A tensor of the buffer's bytes read as `dtype` (a copy: PyTorch's shares the buffer's memory)."""
    raw = memoryview(buffer).cast("B")
    size = dtype.itemsize
    if len(raw) == 0 or count == 0:
        raise ValueError(f"both buffer length ({len(raw)}) and count ({count}) must not be 0")
    if count < 0:
        if (len(raw) - offset) % size:
            raise ValueError(f"buffer length ({len(raw) - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (len(raw) - offset) // size
    elif offset + count * size > len(raw):
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({len(raw)} bytes)")
    if dtype.name not in _STRUCT:
        raise TypeError(f"frombuffer: {dtype} is not supported")
    values = struct.unpack(f"<{count}{_STRUCT[dtype.name]}", raw[offset:offset + count * size])
    return _creation.tensor(list(values), dtype=dtype, requires_grad=requires_grad).reshape(count)


# ---- flags of tensors and the symbolic-shape helpers on plain numbers -----------------------------------------
register(lambda input: False, "is_distributed")


@register_method
def is_set_to(self, tensor):
    return (self._storage is tensor._storage and self.storage_offset() == tensor.storage_offset()
            and tuple(self.shape) == tuple(tensor.shape) and tuple(self.stride()) == tuple(tensor.stride()))


@register_method
def dim_order(self, *, ambiguity_check=False):
    return tuple(sorted(builtins.range(self.dim()), key=lambda d: -self.stride()[d]))


register_method(reduction.multinomial, "multinomial")


def _callback_fill(name, self, fn, *others):
    """self's elements replaced by fn(element, *others' elements), in Python, on the cpu (PyTorch's too)."""
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    cols = [self.reshape(-1).tolist()] + [o.expand(self.shape).reshape(-1).tolist() for o in others]
    values = [fn(*vs) for vs in zip(*cols)]
    return self.copy_(_creation.tensor(values, dtype=self.dtype).reshape(self.shape))


register_method(lambda self, callable: _callback_fill("apply_", self, callable), "apply_")
register_method(lambda self, tensor, callable: _callback_fill("map_", self, callable, tensor), "map_")
register_method(lambda self, x, y, callable: _callback_fill("map2_", self, callable, x, y), "map2_")
