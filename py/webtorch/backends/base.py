"""The primitive set every backend implements.

Every webtorch op lowers to these few primitives (the tinygrad idea): a backend implements
them and nothing else. The front end (`webtorch/ops/`, through `ops/_prims.py`) does shapes, dtypes, broadcasting,
type promotion, error messages and autograd; a backend only moves numbers.

Terms
-----
buf     a backend's flat buffer of `numel` elements of one dtype (numpy array, array.array,
        a GPU buffer handle, ...). Created by `empty`/`from_flat`, freed when unreferenced.
Strided (buf, shape, strides, offset, dtype): a strided window onto a buf, what as_strided
        makes of a storage (not a tensor "view", which is a Tensor sharing its base's storage;
        `Tensor._strided()` gives a tensor's window). Strides and offset count elements, not
        bytes. A stride may be 0 (broadcast). `dtype` is a webtorch dtype name: 'float32',
        'float64', 'float16', 'int32', 'int64', 'bool', 'uint8'.
scalar  a Python bool/int/float may stand wherever an input Strided may stand in `ewise`.

Writes always go to an `out` Strided (usually contiguous, but in-place ops write through
arbitrary strided views, e.g. `x[:, 1].add_(1)`). Outputs never alias inputs except
elementwise in-place ops where out and an input are the same Strided (safe elementwise).

Element-wise op names (`EWISE_OPS` below, from the records of `elementwise.py`): inputs are converted to `cdtype`,
the op is computed in `cdtype`, the result is converted to out.dtype (so do a backend's fast
paths). Comparisons and `signbit` produce bool (0/1). Integer semantics follow PyTorch:
floor_divide floors, fmod takes the sign of the dividend (the fast path remainder that of the
divisor), shifts are arithmetic. `round` rounds half to even. Float->int conversion truncates
toward zero.
"""
from collections import namedtuple

from .. import _dtype
from .._geometry import contiguous_strides, numel
from .elementwise import RECORDS, primitives, subscribe

Strided = namedtuple("Strided", "buf shape strides offset dtype")

# The element-wise primitives and fast paths are records (`elementwise.py`, one per kernel). Every other
# element-wise op is a reference decomposition into the primitives (`ops/pointwise.py`, `ref=`: sub, ne,
# ge, remainder, trunc, relu, sign, isnan, frac, sigmoid, gt, le, logical_and, ...), which a backend may
# still compute with a kernel of its own: its `fast_paths`, the records marked `fast`.
UNARY = primitives(1)
BINARY = primitives(2)
TERNARY = tuple(primitives(3))  # where(cond, a, b): cond is bool; a, b converted to cdtype
# the fast paths whose decomposition gives PyTorch's bits (decomposed ops that were primitives): numpy, pure
# Python and webgpu keep their one-kernel forms (one dispatch and host call instead of the decomposition's 2
# to 8); a new backend need not
KERNEL_FAST_PATHS = frozenset(n for n, r in RECORDS.items() if r.fast == "exact")
# primitive name -> arity; records defined at run time (`elementwise.define`) join it
EWISE_OPS = {n: r.arity for n, r in RECORDS.items() if not r.fast}


@subscribe
def _follow(record, defined):
    if not record.fast:
        if defined:
            EWISE_OPS[record.name] = record.arity
        else:
            del EWISE_OPS[record.name]


def fast_paths_of(lowering):
    """The names of the fast-path records with a `lowering` ('np', 'py' or 'wgsl'): a backend's `fast_paths`."""
    return frozenset(n for n, r in RECORDS.items() if r.fast and getattr(r, lowering))


REDUCE_OPS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all")
SCAN_OPS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")


class Backend:
    """Interface. `name` is the device type ('cpu' or 'webgpu')."""
    name = None
    # True when every buf is a 1-D numpy array of its dtype: then torch.from_numpy and
    # Tensor.numpy share memory with numpy arrays (as in PyTorch) through `as_ndarray`
    numpy_buffers = False
    # names of decomposed element-wise ops (not in EWISE_OPS) this backend's `ewise` computes with a
    # kernel of its own instead of their reference decomposition (same inputs, dtypes and results)
    fast_paths = frozenset()

    # ---- memory -----------------------------------------------------------------------
    def empty(self, numel, dtype):
        """A new buf of `numel` elements (contents undefined)."""
        raise NotImplementedError

    def from_flat(self, values, dtype):
        """A new buf holding `values` (a list of Python numbers, an array.array, or a numpy
        array when numpy is present), converted to dtype."""
        raise NotImplementedError

    def to_flat(self, view):
        """The view's elements in row-major order as a flat list of Python numbers
        (bool dtype -> bool, ints -> int, floats -> float). Waits for queued work."""
        raise NotImplementedError

    def to_numpy(self, view):
        """Like to_flat but a numpy array of the view's shape (only called when numpy is
        importable). Default goes through to_flat."""
        import numpy as np
        return np.array(self.to_flat(view), dtype=_dtype.NP_NAMES[view.dtype]).reshape(view.shape)

    def synchronize(self):
        pass

    def reinterpret(self, buf, dtype):
        """The same memory as a buf of `dtype`: a complex buf as its interleaved real and imaginary parts (a real
        buf of twice the elements) and back (view_as_real / view_as_complex)."""
        raise TypeError(f"complex tensors are not supported on the {self.name} backend yet")

    # ---- compute ----------------------------------------------------------------------
    def ewise(self, op, out, inputs, cdtype):
        """out[i] = op(*inputs[i]) for every index i of out.shape; each input is a Strided
        already broadcast to out.shape (stride 0 where broadcast) or a Python scalar."""
        raise NotImplementedError

    def ewise_new(self, op, shape, inputs, cdtype):
        """A new buf of shape's elements in cdtype, row-major, holding ewise(op, out, inputs, cdtype): the call
        of the element-wise hot path (`ops/_hotpath.py`), which a backend may make in fewer steps."""
        n = numel(shape)
        buf = self.empty(n, cdtype)
        if n:
            self.ewise(op, Strided(buf, shape, contiguous_strides(shape), 0, cdtype), inputs, cdtype)
        return buf

    def reduce(self, op, out, inp):
        """inp.shape == out.shape + inner; out[i] = op over all inner elements of inp[i].
        sum/prod accumulate in out.dtype (float16 inputs accumulate at least in float32).
        max/min propagate NaN. argmax/argmin: len(inner) == 1, first index of the extreme
        (NaN counts as the maximum/minimum, as in PyTorch), out.dtype int64. any/all: bool.
        An empty inner gives the identity (0, 1, True, False); max/min/arg* on empty inner
        never reach the backend (the front end raises)."""
        raise NotImplementedError

    def matmul(self, out, a, b):
        """out[B,M,N] = a[B,M,K] @ b[B,K,N]; a and b may be any strided views (batch stride
        0 for broadcast, transposed strides). Floating dtypes only (int via the same path is
        allowed to be slow)."""
        raise NotImplementedError

    def take(self, out, src_buf, src_dtype, idx):
        """out[i] = src_buf[idx[i]]: idx is an int64 Strided of out.shape holding flat element
        offsets into src_buf (already bounds-checked by the front end)."""
        raise NotImplementedError

    def put(self, dst_buf, dst_dtype, idx, values, accumulate):
        """dst_buf[idx[i]] = values[i] (or += when accumulate, summing duplicates);
        idx (int64) and values are Views of one shape (values may be a scalar)."""
        raise NotImplementedError

    def scan(self, op, out, inp, out_idx=None):
        """Inclusive scan along the last dim: out has inp's shape. cummax/cummin also write
        the index of the running extreme into out_idx (int64)."""
        raise NotImplementedError

    def sort(self, out_values, out_indices, inp, descending, stable):
        """Sort along the last dim; out_indices int64 positions in the original. NaN sorts
        as the largest value (as in PyTorch). Ties keep original order when stable."""
        raise NotImplementedError

    def arange(self, out, start, step):
        """out (contiguous 1-D) [i] = start + i * step, computed in out.dtype."""
        raise NotImplementedError

    def fft(self, out, inp, inverse):
        """out[..., k] = sum_j inp[..., j] * exp(-+2 pi i j k / n) along the last dim (n = its size; + when
        inverse, no 1/n): complex dtypes only; out contiguous, inp any strided view of out's shape."""
        raise TypeError(f"torch.fft is not supported on the {self.name} backend yet")

    def random(self, out, kind, seed, offset):
        """Fill the contiguous `out` with counter-based Philox4x32-10 randoms (see
        `webtorch/_philox.py` for the exact bit recipe, shared by every backend so that a
        seed gives the same numbers on every device). kind: 'uniform' in [0, 1) or
        'normal' (standard)."""
        raise NotImplementedError
