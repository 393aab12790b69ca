"""Complex tensors' own ops: view_as_real / view_as_complex (views sharing memory), real / imag (views),
conj, angle, polar, complex. A complex buf is, to a backend, the interleaved real and imaginary parts
(`Backend.reinterpret`); element-wise math on complex values is the records' "c" forms."""
import math

from .. import _dtype
from .._tensor import Storage, Tensor
from ..autograd import grad_mode
from ..overrides import torch_function
from . import _prims
from ._common import composite_node, formula_node, name_of, recording
from .pointwise import atan2, where
from .registry import register, register_method
from .views import _as_view, _view_apply

_HALF_FLOAT_DOUBLE = (_dtype.float16, _dtype.float32, _dtype.float64)


def _reinterpret(x, dtype, shape, stride, offset):
    """A view of x's memory as `dtype` (a complex dtype and its parts' dtype): a Storage of its own over the same
    backend memory."""
    st = x._storage
    v = _as_view(x, shape, stride, offset)
    v._storage = Storage(st.backend.reinterpret(st.buf, dtype.name), dtype, st.device,
                         st.numel * st.dtype.itemsize // dtype.itemsize, st.backend)
    v._storage.version = st.version
    return v


def _as_real_kernel(x):
    return _reinterpret(x, x.dtype.to_real(), tuple(x._shape) + (2,), tuple(2 * s for s in x._stride) + (1,),
                        2 * x._offset)


def _as_complex_kernel(x):
    return _reinterpret(x, x.dtype.to_complex(), tuple(x._shape[:-1]), tuple(s // 2 for s in x._stride[:-1]),
                        x._offset // 2)


ViewAsReal = formula_node("ViewAsRealBackward0", _as_real_kernel, ("x",))
ViewAsComplex = formula_node("ViewAsComplexBackward0", _as_complex_kernel, ("x",))


@register(method=False)
@torch_function
def view_as_real(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _view_apply(ViewAsReal, input)


@register(method=False)
@torch_function
def view_as_complex(input):
    if input.dtype not in _HALF_FLOAT_DOUBLE:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {name_of(input.dtype)}")
    if not input._shape or input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_apply(ViewAsComplex, input)


Tensor._view_as_real, Tensor._view_as_complex = view_as_real, view_as_complex  # for autograd/derivatives.py


@register(method=False)
@torch_function
def real(input):
    """A view of the real parts (PyTorch's select of view_as_real); a real tensor itself."""
    return view_as_real(input).select(-1, 0) if input.dtype.is_complex else input


@register(method=False)
@torch_function
def imag(input):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def _set_part(part):
    def setter(self, value):
        part(self).copy_(value)
    return setter


def _to(dt):
    def cast(self, memory_format=None):
        return self.to(dt)
    return cast


for _name, _dt in (("cfloat", _dtype.complex64), ("cdouble", _dtype.complex128)):  # complex32 has no storage
    register_method(_to(_dt), _name)
Tensor.real = property(real, _set_part(real))
Tensor.imag = property(imag, _set_part(imag))


def _conj_kernel(x):
    with grad_mode.no_grad():
        out = x.clone()
        view_as_real(out).select(-1, 1).neg_()
    return out


Conj, ConjPhysical = (formula_node(n, _conj_kernel, ("x",)) for n in ("ConjBackward0", "ConjPhysicalBackward0"))


def _conj(node, x):
    if not x.dtype.is_complex:
        return x
    return node.apply(x) if recording(x) else _conj_kernel(x)


@register
@torch_function
def conj(input):
    """The conjugate: a copy (PyTorch's lazy conjugate bit is an optimization webtorch leaves out: is_conj() is
    False and resolve_conj() the tensor itself); a real tensor itself."""
    return _conj(Conj, input)


@register
@torch_function
def conj_physical(input):
    return _conj(ConjPhysical, input)


@register
@torch_function
def resolve_conj(input):
    return input


@register
@torch_function
def resolve_neg(input):
    return input


@register
@torch_function
def is_conj(input):
    return False


@register
@torch_function
def is_neg(input):
    return False


def _angle(x):
    return atan2(imag(x), real(x))


Angle = composite_node("AngleBackward0", _angle)


@register
@torch_function
def angle(input, *, out=None):
    """atan2(imag, real) of a complex tensor; of a real one pi below 0, 0 elsewhere, NaN kept (PyTorch's)."""
    if input.dtype.is_complex:
        r = Angle.apply(input) if recording(input) else _angle(input)
    else:
        x = input if input.dtype.is_floating_point else input.to(_dtype.get_default_dtype())
        r = where(x < 0, math.pi, where(x != x, x, 0.0)).to(x.dtype)
    return r if out is None else out.copy_(r)


def _check_parts(real, imag, out, names):
    for t, name, pos in ((real, names[0], 1), (imag, names[1], 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if out is not None and real.dtype in _HALF_FLOAT_DOUBLE and out.dtype is not real.dtype.to_complex():
        raise RuntimeError(f"Expected object of scalar type {name_of(real.dtype.to_complex())} but got scalar type "
                           f"{name_of(out.dtype)} for argument 'out'")
    if real.dtype not in _HALF_FLOAT_DOUBLE or imag.dtype not in _HALF_FLOAT_DOUBLE:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {name_of(real.dtype)} "
                           f"and {name_of(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {name_of(real.dtype)} but got scalar type "
                           f"{name_of(imag.dtype)} for second argument")


def _complex_kernel(re, im):
    shape = _prims.broadcast_shapes(re._shape, im._shape)
    out = _prims.empty(shape, re.dtype.to_complex(), re.device)
    with grad_mode.no_grad():
        parts = view_as_real(out)
        parts.select(-1, 0).copy_(re)
        parts.select(-1, 1).copy_(im)
    return out


Complex = formula_node("ComplexBackward0", _complex_kernel, ("real", "imag"))


@register(method=False)
@torch_function
def complex(real, imag, *, out=None):
    _check_parts(real, imag, out, ("real", "imag"))
    r = Complex.apply(real, imag) if recording(real, imag) else _complex_kernel(real, imag)
    return r if out is None else out.copy_(r)


@register(method=False)
@torch_function
def polar(abs, angle, *, out=None):
    _check_parts(abs, angle, out, ("abs", "angle"))
    r = complex(abs * angle.cos(), abs * angle.sin())
    return r if out is None else out.copy_(r)
