"""torch.testing: assert_close (PyTorch's default tolerances and failure messages), make_tensor, assert_allclose.

Comparisons run on the host in the inputs' promoted dtype (integers as the default float), whatever their device.
"""
import math
import warnings
from collections.abc import Mapping, Sequence

from .. import _dtype, finfo, iinfo
from .._tensor import Size, Tensor
from ..ops._creation import empty, randint, tensor as _tensor

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]

_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


class FileCheck:
    """TorchScript's IR pattern checker: webtorch has no TorchScript IR to check."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("torch.testing.FileCheck checks TorchScript IR, which webtorch does not have")


def _tolerances(*dtypes, rtol, atol):
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(message, msg, path):
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    raise AssertionError(message)


def _check_attributes(actual, expected, check_device, check_dtype, check_layout, check_stride, msg, path):
    checks = [("shape", True), ("device", check_device), ("dtype", check_dtype), ("layout", check_layout)]
    for attr, on in checks:
        a, e = getattr(actual, attr), getattr(expected, attr)
        if on and a != e:
            _fail(f"The values for attribute '{attr}' do not match: {a} != {e}.", msg, path)
    if check_stride and actual.stride() != expected.stride():
        _fail(f"The values for attribute 'stride()' do not match: {actual.stride()} != {expected.stride()}.", msg,
              path)


def _index(flat, shape):
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return tuple(reversed(idx))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, msg, path):
    common = _dtype.promote_types(actual.dtype, expected.dtype)
    if not (common.is_floating_point or common.is_complex):
        common = _dtype.get_default_dtype()  # integers and bools compare as floats, as PyTorch's
    a, e = (t.detach().cpu().to(common) for t in (actual, expected))
    if a.numel() == 0:
        return
    diff = (a - e).abs()
    close = (diff <= atol + rtol * e.abs()) | (a == e)
    if equal_nan:
        close = close | (a.isnan() & e.isnan())
    if bool(close.all()):
        return
    mismatched = int((~close).sum())
    total = a.numel()
    rel = diff / e.abs()
    diff, rel = diff.masked_fill(close, 0.0).flatten(), rel.masked_fill(close, 0.0).flatten()
    ia, ir = _worst(diff), _worst(rel)
    shape = tuple(actual.shape)
    equal = rtol == 0 and atol == 0
    head = f"Tensor-likes are not {'equal' if equal else 'close'}!\n\n"
    body = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})\n"
    for what, values, i, tol in (("absolute", diff, ia, atol), ("relative", rel, ir, rtol)):
        v = values[i].item()
        if not (actual.dtype.is_floating_point or actual.dtype.is_complex) and what == "absolute":
            v = int(v)
        body += f"Greatest {what} difference: {v} at index {_index(i, shape) if shape else ()}"
        body += "" if equal else f" (up to {tol} allowed)"
        body += "\n"
    _fail(head + body.rstrip("\n"), msg, path)


def _worst(values):
    """The flat index of the largest value, NaN first (as PyTorch reports it)."""
    nan = values.isnan()
    return int(nan.int().argmax()) if bool(nan.any()) else int(values.argmax())


def _compare_numbers(actual, expected, rtol, atol, equal_nan, msg, path):
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    rel = diff / abs(expected) if expected != 0 else math.inf
    if rtol == 0 and atol == 0:
        _fail(f"Scalars are not equal!\n\nExpected {expected} but got {actual}.\nAbsolute difference: {diff}\n"
              f"Relative difference: {rel}", msg, path)
    _fail(f"Scalars are not close!\n\nExpected {expected} but got {actual}.\nAbsolute difference: {diff} (up to "
          f"{atol} allowed)\nRelative difference: {rel} (up to {rtol} allowed)", msg, path)


def _pair(actual, expected, path, kw):
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        if not kw["allow_subclasses"] and type(actual) is not type(expected):
            raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                            f"{type(expected)}.")
        _check_attributes(actual, expected, kw["check_device"], kw["check_dtype"], kw["check_layout"],
                          kw["check_stride"], kw["msg"], path)
        rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=kw["rtol"], atol=kw["atol"])
        return _compare_tensors(actual, expected, rtol, atol, kw["equal_nan"], kw["msg"], path)
    numbers = (bool, int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        if kw["check_dtype"] and type(actual) is not type(expected):
            _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", kw["msg"], path)
        kinds = [_dtype.float64 if isinstance(x, float) else _dtype.complex128 if isinstance(x, complex)
                 else _dtype.int64 for x in (actual, expected)]
        rtol, atol = _tolerances(*kinds, rtol=kw["rtol"], atol=kw["atol"])
        return _compare_numbers(actual, expected, rtol, atol, kw["equal_nan"], kw["msg"], path)
    if actual is None and expected is None:
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(set(expected) - set(actual))}\nExtra keys in the actual mapping: "
                  f"{sorted(set(actual) - set(expected))}", kw["msg"], path)
        for k in expected:
            _pair(actual[k], expected[k], path + [k], kw)
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", kw["msg"], path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _pair(a, e, path + [i], kw)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True,
                 check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts |actual - expected| <= atol + rtol * |expected| elementwise (tensors, numbers, and sequences or
    mappings of them), with PyTorch's per-dtype default tolerances; raises AssertionError with PyTorch's message."""
    _pair(actual, expected, [], dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                     check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                                     check_stride=check_stride, msg=msg))


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: assert_close with the expected converted to actual's dtype and device."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _PRECISIONS.get(actual.dtype.name, (0.0, 0.0)) if actual.dtype is expected.dtype else (
            max(_PRECISIONS.get(d.name, (0.0, 0.0))[0] for d in (actual.dtype, expected.dtype)),
            max(_PRECISIONS.get(d.name, (0.0, 0.0))[1] for d in (actual.dtype, expected.dtype)))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def _low_high(low, high, dtype, lo_inc, hi_exc, default_low, default_high):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lo_inc or low >= hi_exc:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lo_inc}, {hi_exc})")
    low, high = min(max(low, lo_inc), hi_exc), min(max(high, lo_inc), hi_exc)
    return (math.ceil(low), math.ceil(high)) if not (dtype.is_floating_point or dtype.is_complex) else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A random tensor of shape, dtype and device: integers uniform in [low, high) (default [-9, 10)), floating
    and complex parts uniform in [low, high) (default [-9, 9)), bools 0/1."""
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Size)):
        shape = tuple(shape[0])
    shape = tuple(shape)
    if noncontiguous and shape:
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is _dtype.bool_:
        low, high = _low_high(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif not (dtype.is_floating_point or dtype.is_complex):
        info = iinfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max + (dtype is not _dtype.int64), -9, 10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        info = finfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max, -9, 9)
        if dtype.is_complex:
            part = _dtype.float64 if dtype is _dtype.complex128 else _dtype.float32
            re, im = (empty(shape, device=device, dtype=part).uniform_(low, high) for _ in range(2))
            result = (re + 1j * im).to(dtype)
        else:
            result = empty(shape, device=device, dtype=dtype).uniform_(low, high)
    if noncontiguous and shape:
        result = result[..., 1::2]
    if exclude_zero:
        tiny = 1 if not (dtype.is_floating_point or dtype.is_complex) else finfo(dtype).tiny
        result.masked_fill_(result == 0, tiny)
    if dtype.is_floating_point or dtype.is_complex:
        result.requires_grad_(requires_grad)
    return result
