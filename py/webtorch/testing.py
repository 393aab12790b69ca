"""torch.testing as PyTorch's: assert_close (torch/testing/_comparison.py: tensors, Python scalars, None and
booleans, sequences and mappings compared pairwise; default tolerances by dtype; its messages: mismatched
elements, greatest absolute and relative difference with their indices, the failing item's path) and make_tensor
(torch/testing/_creation.py: the same draws, so on cpu PyTorch's values under one seed)."""
import cmath
import collections.abc
import math
import warnings

from . import _dtype, finfo, iinfo
from ._layout import strided
from ._tensor import Tensor
from .ops import _creation
from .ops.complex_ops import view_as_real

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

_TOLERANCES = {_dtype.float16: (1e-3, 1e-5), _dtype.bfloat16: (1.6e-2, 1e-5), _dtype.float32: (1.3e-6, 1e-5),
               _dtype.float64: (1e-7, 1e-7), _dtype.complex64: (1.3e-6, 1e-5), _dtype.complex128: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.complex128}


class _Mismatch(Exception):
    def __init__(self, kind, msg):
        super().__init__(msg)
        self.kind = kind


def _tolerances(*dtypes, rtol, atol, table=_TOLERANCES):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _diff_line(kind, diff, idx, tol, equality):
    line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return line + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += _diff_line("absolute", abs_diff, abs_idx, atol, equality)
    msg += _diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
                         rtol)


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, mod = divmod(flat, size)
        index.append(mod)
    return tuple(reversed(index))


def _tensor_msg(actual, expected, matches, rtol, atol):
    n = matches.numel()
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        a, e = a.to(_dtype.int64), e.to(_dtype.int64)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    max_abs, abs_idx = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_rel, rel_idx = rel_diff.max(0)
    return _mismatch_msg("Tensor-likes", extra, max_abs.item(), _unravel(int(abs_idx), matches.shape), atol,
                         max_rel.item(), _unravel(int(rel_idx), matches.shape), rtol)


def _check_attributes(actual, expected, check_device, check_dtype, check_stride):
    checks = [("shape", True), ("device", check_device), ("dtype", check_dtype), ("layout", True),
              ("stride()", check_stride and actual.layout == expected.layout)]
    for attr, on in checks:
        a, e = getattr(actual, attr.strip("()")), getattr(expected, attr.strip("()"))
        a, e = (a(), e()) if callable(a) else (a, e)
        if on and a != e:
            raise _Mismatch(AssertionError, f"The values for attribute '{attr}' do not match: {a} != {e}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    _check_attributes(actual, expected, check_device, check_dtype, check_stride)
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = _dtype.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.layout != strided:
        actual, expected = actual.to_dense(), expected.to_dense()
    actual, expected = actual.detach(), expected.detach()
    if actual.dtype == _dtype.bool_:
        matches = actual == expected
    else:
        matches = actual.isclose(expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        raise _Mismatch(AssertionError, _scalar_msg(actual.item(), expected.item(), rtol, atol))
    raise _Mismatch(AssertionError, _tensor_msg(actual, expected, matches, rtol, atol))


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    dtypes = [_NUMBER_DTYPES[complex if isinstance(v, complex) else float if isinstance(v, float) else int]
              for v in (actual, expected)]
    rtol, atol = _tolerances(*dtypes, rtol=rtol, atol=atol)
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _is_number(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, bool)


def _compare_leaves(actual, expected, opts):
    if actual is None or expected is None:
        if not (actual is None and expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
    elif isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"])
    elif isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _compare_tensors(actual, expected, **opts)
    else:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_name(actual)} "
                                   f"and {_type_name(expected)}.")


def _type_name(x):
    """A type as PyTorch prints it (webtorch's Tensor is torch.Tensor to the script)."""
    return "<class 'torch.Tensor'>" if type(x) is Tensor else str(type(x))


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, opts, path=()):
    """Walk sequences and mappings together; a mismatch reports the path of the failing item."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, opts, path + (i,))
    elif isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {missing}\n"
                                            f"Additional keys in the actual mapping: {extra}")
        for k in sorted(expected):
            _compare(actual[k], expected[k], opts, path + (k,))
    else:
        try:
            _compare_leaves(actual, expected, opts)
        except _Mismatch as m:
            if path and m.kind is AssertionError:
                raise _Mismatch(m.kind, f"{m}\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in path)}") \
                    from None
            raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError (with PyTorch's message, or `msg`: a string, or a callable given the message)
    unless `actual` and `expected` are close."""
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                check_stride=check_stride)
    try:
        _compare(actual, expected, opts)
    except _Mismatch as m:
        text = str(m)
        if m.kind is AssertionError and msg is not None:
            text = msg(text) if callable(msg) else msg
        raise m.kind(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """PyTorch's deprecated form: numbers and lists become tensors, its own default tolerances, dtypes not checked."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _creation.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _creation.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=None, atol=None, table={
            _dtype.float16: (1e-3, 1e-3), _dtype.float32: (1e-4, 1e-5), _dtype.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


_INTEGRAL = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64, _dtype.uint16, _dtype.uint32,
             _dtype.uint64)
_FLOATING_OR_COMPLEX = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64, _dtype.complex32,
                        _dtype.complex64, _dtype.complex128)


def _low_high(low, high, dtype, lowest, highest, default_low, default_high):
    """PyTorch's modify_low_high: defaults, its errors and warning, clamped to the dtype, ceiled for integers."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING_OR_COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
                      "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype == _dtype.bool_ or dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def _draw(shape, dtype, device, low, high):
    if dtype == _dtype.bool_:
        low, high = _low_high(low, high, dtype, 0, 2, 0, 2)
        return _creation.randint(low, high, shape, device=device, dtype=dtype)
    if dtype in _INTEGRAL:
        info = iinfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max + (dtype != _dtype.int64), -9, 10)
        return _creation.randint(low, high, shape, device=device, dtype=dtype)
    if dtype in _FLOATING_OR_COMPLEX:
        info = finfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max, -9, 9)
        result = _creation.empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if dtype.is_complex else result
        if high - low >= finfo(target.dtype).max:  # uniform_ needs high - low within the dtype
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
        return result
    raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                    " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with values uniformly drawn from [low, high), as PyTorch's."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and (dtype == _dtype.bool_ or dtype in _INTEGRAL):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    result = _draw(shape, dtype, device, low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype == _dtype.bool_ or dtype in _INTEGRAL else finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX:
        result.requires_grad = requires_grad
    return result
