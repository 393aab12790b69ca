"""ATen functions PyTorch keeps at top level for TorchScript and weight_norm, composed of webtorch's ops (their
gradients and devices are those ops'): norm_except_dim, frobenius_norm, nuclear_norm, native_norm,
view_as_real_copy / view_as_complex_copy, conj_physical_, slice_inverse."""
import warnings

from ._common import check_leaf_inplace, name_of, write_out
from ._linalg_ops import matrix_norm
from .complex_ops import conj_physical, view_as_complex, view_as_real
from .reduction import norm
from .registry import register


def _deprecated(name, instead):
    warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a future "
                  f"PyTorch release. Please use `{instead}` instead", UserWarning, stacklevel=4)


@register(method=False)
def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 (ATen's name)
    """The pow-norm over every dim but dim, kept as size-1 dims (weight_norm's g); dim=-1: over all dims."""
    if dim == -1:
        return v.norm(pow)
    if dim != 0:
        return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)
    return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view((v.shape[0],) + (1,) * (v.dim() - 1))


@register(method=False)
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    _deprecated("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{name_of(input.dtype)} instead.")
    return write_out(norm(input, 2, dim if dim else None, keepdim), out, input)


@register(method=False)
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, keepdim=False) over the last two dims, or nuclear_norm(input, dim, keepdim)."""
    _deprecated("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    if dim is not None and len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    return write_out(matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim), out, input)


@register(method=False)
def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """A sparse tensor's norm in PyTorch, which has no dense kernel for it: on a dense tensor it raises as there."""
    raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                              f"'{input.device.type.upper()}' backend. 'aten::native_norm' is only available for "
                              "sparse tensors (use torch.linalg.vector_norm).")


@register(method=False)
def view_as_real_copy(input, *, out=None):
    return write_out(view_as_real(input).clone(), out, input)


@register(method=False)
def view_as_complex_copy(input, *, out=None):
    return write_out(view_as_complex(input).clone(), out, input)


@register
def conj_physical_(input):
    """In place: a complex tensor conjugated; a real one left as it is (after the in-place checks)."""
    check_leaf_inplace(input)
    return input.copy_(conj_physical(input)) if input.dtype.is_complex else input


@register
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of slicing src: input (the slice) viewed with src's geometry, through input's storage."""
    return input.as_strided(src.shape, src.stride(), src.storage_offset())
