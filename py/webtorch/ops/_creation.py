"""Tensor creation, conversion between dtypes/devices, and random sampling."""
import functools
import math
import struct
import warnings
from array import array
from fractions import Fraction

from .. import _dtype
from .._device import CPU, as_device, backend_for, device as _devcls
from .._geometry import contiguous_strides, numel as _numel
from .._legacy import type_target
from .._tensor import Storage, Tensor
from ..autograd.grad_mode import no_grad as _no_grad
from ..autograd.graph import _type_str
from ..overrides import mode_aware, torch_function
from ..storage import UntypedStorage
from . import _cpu_random, _prims
from ._common import (
    INT_RANGE,
    check_leaf_inplace,
    check_wide_uint,
    fill_value as _fill_value,
    formula_node,
    inplace_result,
    name_of,
    recording,
    write_out,
)
from .views import _sizes

bool_, int64, uint8 = _dtype.bool_, _dtype.int64, _dtype.uint8


def _np_dtype_name(a):
    return {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
            "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
            "complex64": "complex64", "complex128": "complex128", "uint16": "uint16", "uint32": "uint32",
            "uint64": "uint64"}.get(str(a.dtype))


def _is_numpy(x):
    return type(x).__module__ == "numpy" and hasattr(x, "dtype")


def _infer(data):
    """(shape, flat list, inferred dtype) of nested Python sequences of numbers."""
    if isinstance(data, (bool, int, float, complex)):
        return (), [data], _kind_dtype([data])
    if isinstance(data, Tensor):
        return tuple(data.shape), data.reshape(-1).tolist() if data.dim() else [data.item()], data.dtype
    if _is_numpy(data):
        return tuple(data.shape), data.reshape(-1).tolist(), _dtype.BY_NAME[_np_dtype_name(data)]
    if not isinstance(data, (list, tuple)):
        if not (hasattr(data, "__len__") and hasattr(data, "__getitem__")):
            return (), [_float_of(data)], _dtype.get_default_dtype()
        data = list(data)
    shape, level = _nested_shape(data)
    if level is None:
        return shape, [], _dtype.get_default_dtype()
    kinds = set(map(type, level))
    if kinds.issubset(_NUMBERS):    # plain Python numbers (the common case, checked at C speed): the leaves as they are
        return shape, level, _kinds_dtype(kinds)
    flat = []
    for v in level:
        if isinstance(v, Tensor) or _is_numpy(v):
            v = v.item()
        if not isinstance(v, (bool, int, float, complex)):
            raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
        flat.append(v)
    return shape, flat, _kind_dtype(flat)


def _float_of(data):
    try:
        return float(data)
    except (TypeError, ValueError):
        raise TypeError(f"Could not infer dtype of {type(data).__name__}") from None


def _nested_shape(data):
    """(shape, the leaves in row-major order) of nested sequences; the leaves are None when a dimension is 0."""
    shape, level = [], [data]
    while True:
        n, nxt, seqs = _unnest(level, len(shape))
        if seqs == 0:
            return tuple(shape), level
        if seqs != len(level):
            raise TypeError("not a sequence")
        shape.append(n)
        level = nxt
        if n == 0:
            return tuple(shape), None


def _unnest(level, dim):
    """(the common length of the sequences in level (dimension dim), their items in order, how many there are);
    tensors and numpy arrays of one or more dimensions count as sequences."""
    if _NUMBER_SET.issuperset(map(type, level)):   # the leaves, plain Python numbers: no sequence here
        return None, [], 0
    n, nxt, seqs = None, [], 0
    for item in level:
        if isinstance(item, Tensor) and item.dim() > 0:
            item = item.tolist()
        if _is_numpy(item) and item.ndim > 0:
            item = item.tolist()
        if isinstance(item, (list, tuple)):
            seqs += 1
            if n is None:
                n = len(item)
            elif len(item) != n:
                raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(item)})")
            nxt.extend(item)
        elif seqs:
            raise TypeError("not a sequence")
    return n, nxt, seqs


def _kind_dtype(flat):
    """the dtype PyTorch infers for these numbers"""
    return _kinds_dtype({next(k for k in _NUMBERS if isinstance(v, k)) for v in flat})


_NUMBERS = (bool, int, float, complex)     # bool first: a bool is an int too
_NUMBER_SET = frozenset(_NUMBERS)


def _kinds_dtype(kinds):
    """the dtype PyTorch infers for numbers of these exact types (of _NUMBERS)"""
    if complex in kinds:
        return _dtype.get_default_dtype().to_complex()
    if float in kinds:
        return _dtype.get_default_dtype()
    return int64 if int in kinds else bool_


def _resolve_dtype(d):
    if d is None:
        return None
    if isinstance(d, _dtype.dtype):
        return d
    if d is float:
        return _dtype.get_default_dtype()
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str):
        n = d.replace("torch.", "")
        return _dtype.BY_NAME.get(n) or _dtype.ALIASES[n]
    raise TypeError(f"dtype must be a torch.dtype, got {type(d).__name__}")


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _factory(fn, resized=None):
    """A factory with PyTorch's out=: the result takes out's dtype (a different `dtype` is an error)
    and device, and is written to out (resized silently, or with the warning `resized`)."""
    if isinstance(fn, str):
        return functools.partial(_factory, resized=fn)

    @mode_aware
    @functools.wraps(fn)
    def factory(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        dt = _resolve_dtype(kwargs.get("dtype"))
        if dt is not None and dt is not out.dtype:
            raise RuntimeError(f"dtype {name_of(dt)} does not match dtype of out parameter ({name_of(out.dtype)})")
        device = kwargs.get("device")
        return write_out(fn(*args, **{**kwargs, "dtype": out.dtype,
                                      "device": out.device if device is None else device}), out, resized=resized)
    return factory


def _convert_numbers(flat, dt):
    """the Python numbers `flat` ready for dtype dt as PyTorch converts them, or PyTorch's error"""
    kinds = set(map(type, flat))
    plain = kinds.issubset(_NUMBER_SET)     # plain Python numbers: the checks below by their types, at C speed

    def holds(kind):
        return kind in kinds if plain else any(isinstance(v, kind) for v in flat)
    if dt.kind in "if" and holds(complex):  # PyTorch converts a Python complex to complex and bool dtypes only
        raise TypeError("'complex' object cannot be interpreted as an integer" if dt.kind == "i" else
                        "must be real number, not complex")
    if dt.kind == "i":
        lo, hi = INT_RANGE[dt.name]
        if not (plain and kinds <= {bool, int} and flat and lo <= min(flat) and max(flat) <= hi):
            for v in flat:
                if not lo <= v <= hi:  # a float NaN too
                    if dt.name == "int64" and not isinstance(v, float):
                        raise ValueError("Overflow when unpacking long long")
                    raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
        if holds(float):
            flat = [int(v) for v in flat]
    elif dt is _dtype.float16:  # PyTorch converts a Python float to float16 through float32 (rounded twice)
        flat = array("f", flat).tolist()
    if dt.kind == "b" and holds(complex):
        flat = [bool(v) for v in flat]
    return flat


@mode_aware
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dtype = _resolve_dtype(dtype)
    dev = as_device(device) if device is not None else (data.device if isinstance(data, Tensor) else as_device(None))
    if isinstance(data, Tensor):
        t = data.detach().to(dev, dtype or data.dtype).clone()
        return _finish(t, requires_grad)
    if _is_numpy(data):
        name = _np_dtype_name(data)
        if name is None:
            raise TypeError(f"can't convert np.ndarray of type {data.dtype}. The only supported types are: "
                            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")
        dt = dtype or _dtype.BY_NAME[name]
        src = _dtype.BY_NAME[name]
        import numpy as np
        flat = np.ascontiguousarray(data).reshape(-1)
        if dt is not src:
            flat = flat.astype(_dtype.NP_NAMES[dt.name] if dt.name in _dtype.NP_NAMES else "float32")
        return _finish(_prims.from_flat(flat, tuple(data.shape), dt, dev), requires_grad)
    shape, flat, dt = _infer(data)
    dt = dtype or dt
    flat = _convert_numbers(flat, dt)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return _finish(_prims.from_flat(flat, shape, dt, dev), requires_grad)


@mode_aware
def as_tensor(data, dtype=None, device=None):
    dtype = _resolve_dtype(dtype)
    if isinstance(data, UntypedStorage):  # its bytes read as dtype, sharing memory
        b = data._bytes
        return (b if dtype in (None, _dtype.uint8) else b.view(dtype)).to(device if device is not None else b.device)
    if isinstance(data, Tensor):
        return data.to(device if device is not None else data.device, dtype or data.dtype)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A cpu tensor sharing memory with a C-contiguous `ndarray` (as PyTorch) when the CPU
    backend keeps numpy buffers; a copy otherwise (the pure-Python backend, other layouts)."""
    if not _is_numpy(ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    name = _np_dtype_name(ndarray)
    be = backend_for(CPU)
    if name is not None and be.numpy_buffers and ndarray.flags.c_contiguous and ndarray.dtype.isnative:
        shape = tuple(ndarray.shape)
        storage = Storage(ndarray.reshape(-1), _dtype.BY_NAME[name], CPU, ndarray.size, be)
        return Tensor._make(storage, shape, contiguous_strides(shape), 0)
    return tensor(ndarray)


def _creation_args(size, dtype, device):
    shape = _sizes(size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape, _resolve_dtype(dtype) or _dtype.get_default_dtype(), as_device(device)


def _size_arg(fn, args, size):
    """The shape given positionally (`zeros(2, 3)`, `zeros((2, 3))`) or as `size=` (`zeros(size=(2, 3))`)."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    return (size,)


@_factory
def empty(*args, size=None, dtype=None, device=None, requires_grad=False, memory_format=None, pin_memory=False,
          layout=None):
    shape, dt, dev = _creation_args(_size_arg("empty", args, size), dtype, device)
    return _finish(_prims.empty(shape, dt, dev), requires_grad)


@_factory
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = bool_ if isinstance(fill_value, bool) else int64 if isinstance(fill_value, int) else \
            _dtype.get_default_dtype().to_complex() if isinstance(fill_value, complex) else None
    shape, dt, dev = _creation_args(size if isinstance(size, (list, tuple)) else (size,), dtype, device)
    t = _prims.empty(shape, dt, dev)
    fill_value = _fill_value(fill_value, dt, t.numel())
    if t.numel():
        t._backend.ewise("copy", t._strided(), [_prims._operand(fill_value, shape, dev, dt.name)], dt.name)
    return _finish(t, requires_grad)


@_factory
def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None):
    shape, dt, dev = _creation_args(_size_arg("zeros", args, size), dtype, device)
    return full(shape, False if dt is bool_ else 0, dtype=dt, device=dev, requires_grad=requires_grad)


@_factory
def ones(*args, size=None, dtype=None, device=None, requires_grad=False, layout=None):
    shape, dt, dev = _creation_args(_size_arg("ones", args, size), dtype, device)
    return full(shape, True if dt is bool_ else 1, dtype=dt, device=dev, requires_grad=requires_grad)


def _like(input, dtype, device):
    return (_resolve_dtype(dtype) or input.dtype), (as_device(device) if device is not None else input.device)


@torch_function  # a batched or dual input (torch.func) sees the call
def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _finish(_prims.empty(input.shape, dt, dev), requires_grad)


@torch_function  # a batched or dual input (torch.func) sees the call
def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return zeros(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


@torch_function  # a batched or dual input (torch.func) sees the call
def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return ones(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


@torch_function  # a batched or dual input (torch.func) sees the call
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


@_factory("The number of elements in the out tensor of shape {out_shape} is {out_numel} which does not match the "
          "computed number of elements {numel}. Note that this may occur as a result of rounding error. The out tensor "
          "will be resized to a tensor of shape ({numel},).")
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = int64 if all(isinstance(v, int) for v in vals) else _dtype.get_default_dtype()
    dt = _resolve_dtype(dtype)
    check_wide_uint("arange", dt)
    if not dt.is_floating_point:  # PyTorch computes an integer range in its dtype: the arguments truncated
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    if dt.is_floating_point and dt.itemsize == 2 and not (float(start).is_integer() and float(step).is_integer()):
        return _finish(_prims.from_flat(_arange_halves(start, step, n, dt), (n,), dt, as_device(device)), requires_grad)
    return _finish(_prims.arange(n, start, step, dt, as_device(device)), requires_grad)


def _arange_halves(start, step, n, dt):
    """PyTorch's CPU arange kernel for float16 / bfloat16 (a fractional start or step): start + step * i in float
    (fused multiply-adds), written in pairs of 32-byte vectors, each its first value rounded to dt and going on by
    + k * step in float, the tail element by element."""
    acc, r = _rounder(_dtype.float32), _rounder(dt)
    start, step = acc(start), acc(step)
    w = _VECTOR_BYTES // dt.itemsize
    vals, i = [], 0
    while i + 2 * w <= n:
        for b in (i, i + w):
            base = r(_fma(step, acc(b), start, acc))
            vals += [base] + [r(_fma(float(k), step, base, acc)) for k in range(1, w)]
        i += 2 * w
    return vals + [r(_fma(step, acc(j), start, acc)) for j in range(i, n)]


def range_(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    return arange(start, end + step * 0.5 if step > 0 else end + step * 0.5, step,
                  dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def _rounder(dt):
    """v -> v as floating dtype dt holds it: an operation's result rounded as C++ rounds it (c10's float16 and
    bfloat16 compute in float32, then round), inf past the range."""
    if dt.itemsize == 8:
        return float
    if dt.itemsize == 2:
        return lambda v: _prims._half(v, dt.name)

    def f32(v):
        try:
            return struct.unpack("<f", struct.pack("<f", v))[0]
        except OverflowError:
            return math.copysign(math.inf, v)
    return f32


_VECTOR_BYTES = 32  # ATen's CPU Vectorized<T> width (its AVX2 and default builds)


def _fma(a, b, c, r):
    """a * b + c rounded once by r (C's fma: the compiler fuses PyTorch's float32 / float64 kernels on its AVX2
    build): the exact value as d + v (d its double; Dekker's product, Knuth's sums), and where d lands on a
    midpoint of r's neighbours, v's sign decides (in Fractions where the error terms do not sum exactly)."""
    p, e = _cpu_random._two_product(a, b)
    s, t = _cpu_random._two_sum(p, c)
    w, u = _cpu_random._two_sum(t, e)
    d, v = _cpu_random._two_sum(s, w)
    if not math.isfinite(e + v):
        return r(a * b + c)
    if u:
        x = Fraction(a) * Fraction(b) + Fraction(c)
        d = float(x)
        v = x - Fraction(d)
    f = r(d)
    other = 2 * d - f
    if f != d and v and r(other) == other:
        return f if (v > 0) == (f > d) else other
    return f


def _linspace_floats(start, end, steps, dt):
    """PyTorch's CPU linspace kernel, every operation rounded to dt as there (an integer operand converted to dt
    first): step = (end - start) / (steps - 1); the first half start + step * i, the rest end - step * (steps - 1 - i),
    fused multiply-adds in float32 and float64, c10's operators (each rounded) in float16 and bfloat16."""
    r = _rounder(dt)
    start, end = r(start), r(end)
    step = r(r(end - start) / r(steps - 1))
    half = steps // 2
    if dt.itemsize == 2:
        return [r(start + r(step * r(i))) if i < half else r(end - r(step * r(steps - 1 - i))) for i in range(steps)]
    return [_fma(step, r(i), start, r) if i < half else _fma(-step, r(steps - 1 - i), end, r) for i in range(steps)]


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


@_factory
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    start, end = _scalar(start), _scalar(end)
    if steps == 1:
        vals = [start]
    elif dt.is_floating_point:
        vals = _linspace_floats(start, end, steps, dt)
    else:
        step = (end - start) / (steps - 1)
        half = steps // 2
        # PyTorch fills from both ends for symmetry
        vals = [start + step * i if i < half else end - step * (steps - 1 - i) for i in range(steps)]
    if dt.kind == "i":
        vals = [int(v) for v in vals]
    return _finish(_prims.from_flat(vals, (steps,), dt, as_device(device)), requires_grad)


def _pow(base, x):
    """C's pow: inf past the range, NaN for a negative base's fractional power."""
    try:
        return math.pow(base, x)
    except OverflowError:
        return math.inf if base > 0 or x % 2 == 0 else -math.inf
    except ValueError:
        return math.nan


@mode_aware
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    dt = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if dt.is_floating_point and not isinstance(start, Tensor) and not isinstance(end, Tensor) and steps > 1:
        # PyTorch's CPU kernel (not fused there): start, end and end - start in dt, exponents and pow in double
        r = _rounder(dt)
        start, end = r(start), r(end)
        step = r(end - start) / (steps - 1)
        half = steps // 2
        vals = [r(_pow(base, start + step * i if i < half else end - step * (steps - i - 1))) for i in range(steps)]
        return _finish(_prims.from_flat(vals, (steps,), dt, as_device(device)), requires_grad)
    exponents = linspace(start, end, steps, dtype=_dtype.float64 if dt is _dtype.float64 else _dtype.float32,
                         device=device)
    return _finish(exponents.__rpow__(base).to(dt), requires_grad)


@_factory
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    dev = as_device(device)
    r = arange(n, device=dev).unsqueeze(1)
    c = arange(m, device=dev).unsqueeze(0)
    return _finish((r == c).to(dt), requires_grad)


# ---- random ---------------------------------------------------------------------------------
def _standard(name, args, size, generator, dtype, device, requires_grad, kind, check):
    """rand / randn: draws of `kind` ("uniform" / "normal"), PyTorch's stream on the cpu."""
    shape, dt, dev = _creation_args(_size_arg(name, args, size), dtype, device)
    if dt.is_complex and dev.type == "cpu":  # PyTorch's uniform_ / normal_ of view_as_real (normal: variance 1/2)
        t = empty(shape, dtype=dt)
        return _finish((t.uniform_ if kind == "uniform" else t.normal_)(generator=generator), requires_grad)
    _check_float_random(dt, check)
    if dev.type == "cpu":
        draw = _cpu_random.uniform if kind == "uniform" else _cpu_random.normal
        return _finish(_cpu_random.shaped(draw(_gen(generator), _numel(shape), dt), shape), requires_grad)
    return _finish(_prims.random(shape, kind, dt, dev, generator), requires_grad)


@_factory
def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, layout=None):
    return _standard("rand", args, size, generator, dtype, device, requires_grad, "uniform", "check_uniform_bounds")


@_factory
def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, layout=None):
    return _standard("randn", args, size, generator, dtype, device, requires_grad, "normal", "normal_kernel_cpu")


_gen = _cpu_random.generator


def _check_float_random(dt, kernel):
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name_of(dt)}'")


@mode_aware
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional argument: 'size'")
    _check_random_range(low, high)
    dt = _resolve_dtype(dtype) or int64
    dev = as_device(device)
    if dev.type == "cpu":
        shape = _sizes(size)
        return _cpu_random.shaped(_cpu_random.random_from_to(_gen(generator), _numel(shape), dt, low, high), shape)
    # floor(low + u * (high - low)) with u uniform in [0, 1); float32 holds every integer of a
    # range up to 2**24 exactly, wider ranges use float64 where the device has it
    ft = _dtype.float64 if high - low > (1 << 24) and dev.type == "cpu" else _dtype.float32
    u = _prims.random(_sizes(size), "uniform", ft, dev, generator)
    v = _prims.ewise("add", [_prims.ewise("mul", [u, high - low], ft, ft), low], ft, ft)
    v = _prims.ewise("minimum", [_prims.ewise("floor", [v], ft, ft), high - 1], ft, ft)
    return _prims.ewise("copy", [v], dt, dt)


def _check_random_range(low, high):
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")


@mode_aware
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _resolve_dtype(dtype) or int64
    if n < 0:
        raise RuntimeError(f"randperm is only implemented for positive n, got {n}")
    if as_device(device).type == "cpu":
        return _cpu_random.randperm(_gen(generator), n).to(dt)
    u = _prims.random((n,), "uniform", _dtype.float32, as_device(device), generator)
    return _prims.sort(u, 0, False, True)[1].to(dt)


@torch_function  # a batched or dual input (torch.func) sees the call
def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    dt, dev = _like(input, dtype, device)
    return rand(input.shape, dtype=dt, device=dev, requires_grad=requires_grad, generator=generator)


@torch_function  # a batched or dual input (torch.func) sees the call
def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    dt, dev = _like(input, dtype, device)
    return randn(input.shape, dtype=dt, device=dev, requires_grad=requires_grad, generator=generator)


@torch_function  # a batched or dual input (torch.func) sees the call
def randint_like(input, low=0, high=None, *, dtype=None, device=None):
    dt, dev = _like(input, dtype, device)
    return randint(low, high, input.shape, dtype=dt, device=dev)


@mode_aware
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        node = _NORMAL[(isinstance(mean, Tensor), isinstance(std, Tensor))]
        return node.apply(mean, std, generator) if recording(mean, std) else _normal_values(mean, std, generator)
    return empty(size, dtype=dtype, device=device).normal_(mean, std, generator=generator)


def _normal_values(mean, std, generator):
    """PyTorch's composition: normal_(0, std) + mean for a tensor mean and a float std, normal_(0, 1) * std + mean
    for a tensor std (on the broadcast shape of both tensors)."""
    with _no_grad():
        if not isinstance(std, Tensor):
            return empty_like(mean).normal_(0.0, std, generator=generator).add_(mean)
        ref = mean if isinstance(mean, Tensor) else std
        shape = _prims.broadcast_shapes(mean.shape, std.shape) if isinstance(mean, Tensor) else std.shape
        return empty(shape, dtype=ref.dtype, device=ref.device).normal_(generator=generator).mul_(std).add_(mean)


# PyTorch's nodes of normal(Tensor, float), normal(float, Tensor), normal(Tensor, Tensor): zero gradients
_NORMAL = {(True, False): formula_node("NormalBackward1", _normal_values, ("mean", "std", "generator")),
           (False, True): formula_node("NormalBackward2", _normal_values, ("mean", "std", "generator")),
           (True, True): formula_node("NormalBackward3", _normal_values, ("mean", "std", "generator"))}


def _given(x, values):  # the kernel of a node over values computed without x's history
    return values


_GIVEN = {n: formula_node(n, _given, ("x", "values")) for n in (
    "BernoulliBackward0", "NotImplemented(bernoulli)", "BernoulliBackward1", "BernoulliBackward2", "UniformBackward0",
    "NormalBackward0", "ExponentialBackward0", "RandomBackward0", "RandomBackward1", "RandomBackward2",
    "Unique2Backward0", "CauchyBackward0", "LogNormalBackward0", "GeometricBackward0")}


def result_of(x, node, values):
    """`values` (random draws, unique's: computed without a graph) as the result of op `node` on
    x: where x requires grad, the result does too, with PyTorch's node (a zero gradient, or a
    backward that raises)."""
    return _GIVEN[node].apply(x, values) if recording(x) else values


def _fill(self, node, values):
    """An in-place random fill: PyTorch's leaf error; where self has history, its old values get
    zero gradient through `node` (never the old history kept with new values)."""
    check_leaf_inplace(self)
    if recording(self):
        return inplace_result(self, _GIVEN[node].apply(self, values))
    return _prims.copy_into(self, values)


@torch_function  # a batched or dual input (torch.func) sees the call
def bernoulli(input, p=None, *, generator=None, out=None):
    prob = input.detach() if p is None else p
    if input.device.type == "cpu":
        values = (_cpu_random.bernoulli_tensor(_gen(generator), prob.contiguous()) if p is None else
                  _cpu_random.shaped(_cpu_random.bernoulli_scalar(_gen(generator), input.numel(), p), input.shape))
    else:
        values = rand(input.shape, dtype=input.dtype, device=input.device, generator=generator) < prob
    values = values.to(input.dtype if out is None else out.dtype)
    return write_out(result_of(input, "BernoulliBackward0" if p is None else "NotImplemented(bernoulli)", values), out)



# in-place random fills (Tensor methods)
def _cpu_fill(self, node, generator, draw):
    """A random fill on the cpu device: `draw(generator, n, order)` (n values of PyTorch's CPU
    kernel, `order` the permutation of self's dims PyTorch's TensorIterator visits: memory order)
    laid out in that order and cast to self's dtype."""
    stride = self.stride()
    order = sorted(range(self.dim()), key=lambda d: -stride[d])
    with _no_grad():
        values = draw(_gen(generator), self.numel(), order).reshape([self.shape[d] for d in order])
        values = values.permute(_prims._inverse_perm(order)).to(self.dtype)
    return _fill(self, node, values)


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    if self.dtype.is_complex and self.device.type == "cpu":
        Tensor._view_as_real(self).uniform_(a, b, generator=generator)
        return self
    if self.device.type == "cpu":
        return _cpu_fill(self, "UniformBackward0", generator,
                         lambda g, n, _: _cpu_random.uniform(g, n, self.dtype, a, b))
    with _no_grad():
        u = _prims.random(self.shape, "uniform", self.dtype, self.device, generator)
        if (a, b) != (0.0, 1.0):
            u = _prims.ewise("add", [_prims.ewise("mul", [u, b - a], self.dtype, self.dtype), a], self.dtype,
                             self.dtype)
    return _fill(self, "UniformBackward0", u)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self.dtype.is_complex and self.device.type == "cpu":
        Tensor._view_as_real(self).normal_(mean, std / math.sqrt(2), generator=generator)
        return self
    if self.device.type == "cpu":
        return _cpu_fill(self, "NormalBackward0", generator, lambda g, n, _: _cpu_random.normal(
            g, n, self.dtype, mean, std, self.is_contiguous()))
    with _no_grad():
        z = _prims.random(self.shape, "normal", self.dtype, self.device, generator)
        if (mean, std) != (0.0, 1.0):
            z = _prims.ewise("add", [_prims.ewise("mul", [z, std], self.dtype, self.dtype), mean], self.dtype,
                             self.dtype)
    return _fill(self, "NormalBackward0", z)


def bernoulli_(self, p=0.5, *, generator=None):
    if self.device.type == "cpu":
        if isinstance(p, Tensor):
            p_ = p.to(self.device).expand(self.shape)
            return _cpu_fill(self, "BernoulliBackward1", generator,
                             lambda g, n, order: _cpu_random.bernoulli_tensor(g, p_.permute(order).contiguous()))
        return _cpu_fill(self, "BernoulliBackward2", generator,
                         lambda g, n, _: _cpu_random.bernoulli_scalar(g, n, p))
    with _no_grad():
        u = _prims.random(self.shape, "uniform", _dtype.float32, self.device, generator)
        b = _prims.ewise("lt", [u, p], _dtype.float32, bool_).to(self.dtype)
    return _fill(self, "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2", b)


def random_(self, from_=0, to=None, *, generator=None):
    node = "RandomBackward0" if to is not None else "RandomBackward1" if from_ else "RandomBackward2"
    if self.device.type == "cpu":
        if to is None and not from_:
            return _cpu_fill(self, node, generator, lambda g, n, _: _cpu_random.random_bits(g, n, self.dtype))
        low, high = (0, from_) if to is None else (from_, to)
        _check_random_range(low, high)
        return _cpu_fill(self, node, generator,
                         lambda g, n, _: _cpu_random.random_from_to(g, n, self.dtype, low, high))
    with _no_grad():
        r = randint(from_, to, self.shape, device=self.device, dtype=self.dtype, generator=generator)
    return _fill(self, node, r)


def _drawn(self, node, generator, cpu_draw, kind, dtype, transform):
    """self filled in place (no history but `node`): on the cpu PyTorch's stream `cpu_draw(generator, n, order)`,
    elsewhere transform(standard draws of `kind` in dtype) from the device's Philox stream."""
    if self.device.type == "cpu":
        return _cpu_fill(self, node, generator, cpu_draw)
    with _no_grad():
        v = transform(_prims.random(self.shape, kind, dtype, self.device, generator))
    return _fill(self, node, v.to(self.dtype))


def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _drawn(self, "ExponentialBackward0", generator, lambda g, n, _: _cpu_random.exponential(g, n, lambd),
                  "uniform", self.dtype, lambda u: (-(1 - u).log()) / lambd)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _drawn(self, "CauchyBackward0", generator, lambda g, n, _: _cpu_random.cauchy(g, n, median, sigma),
                  "uniform", self.dtype, lambda u: median + sigma * ((u - 0.5) * math.pi).tan())


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _drawn(self, "LogNormalBackward0", generator, lambda g, n, _: _cpu_random.log_normal(g, n, mean, std),
                  "normal", self.dtype, lambda z: (z * std + mean).exp())


def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _drawn(self, "GeometricBackward0", generator, lambda g, n, _: _cpu_random.geometric(g, n, p),
                  "uniform", _dtype.float32, lambda u: ((1 - u).log() / math.log1p(-p)).ceil())


# ---- dtype / device conversion --------------------------------------------------------------------
def _convert(x, dev, dt):
    if dev != x.device:
        x = _prims.to_device(x, dev)
        if dt is x.dtype:
            return x
    if dt is not x.dtype:
        return _prims.ewise("copy", [x], dt, dt, shape=x.shape)
    return x


ToCopy = formula_node("ToCopyBackward0", _convert, ("x", "device", "dtype"))


def _parse_to(args, kwargs):
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, (str, _devcls)):
            dev = a
        elif a is float or a is int or a is bool:
            dt = _resolve_dtype(a)
        elif isinstance(a, bool):
            pass
        elif a is None:
            pass
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return (as_device(dev) if dev is not None else None), _resolve_dtype(dt), copy


@torch_function
def to(self, *args, **kwargs):
    dev, dt, copy = _parse_to(args, kwargs)
    dev = dev or self.device
    dt = dt or self.dtype
    if dev == self.device and dt is self.dtype:
        return self.clone() if copy else self
    if dev.type == "webgpu" and dt is _dtype.float64:
        raise TypeError("float64 is not supported on webgpu; use float32 (or keep float64 tensors on cpu)")
    if self.dtype.kind == "c" and dt.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
    if recording(self) and dt.kind in "fc":
        return ToCopy.apply(self, dev, dt)
    return _convert(self, dev, dt)


def cpu(self):
    return to(self, "cpu")


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """PyTorch's AssertionError without CUDA; under the cuda alias, to the WebGPU device."""
    return to(self, "cuda" if device is None else _cuda_device(device))


def _cuda_device(device):
    return f"cuda:{device}" if isinstance(device, int) else device


def webgpu(self):
    return to(self, "webgpu")


def _caster(dt):
    def f(self, memory_format=None):
        return to(self, dt)
    return f


float_ = _caster(_dtype.float32)
double = _caster(_dtype.float64)
half = _caster(_dtype.float16)
int_ = _caster(_dtype.int32)
long = _caster(_dtype.int64)
short = _caster(_dtype.int16)
bool_m = _caster(bool_)
byte = _caster(uint8)
char = _caster(_dtype.int8)
bfloat16 = _caster(_dtype.bfloat16)


def type_(self, dtype=None, non_blocking=False):
    if dtype is None:
        return _type_str(self)
    dt, dev = type_target(dtype)
    return to(self, dt) if dev is None else to(self, dev, dt)


def type_as(self, other):
    return to(self, other.dtype)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False):
    return zeros(*_size_arg("new_zeros", args, size), dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)


def new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False):
    return ones(*_size_arg("new_ones", args, size), dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False):
    return empty(*_size_arg("new_empty", args, size), dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)
