"""grouped_mm (Mixture-of-Experts' per-group matmuls) and the float8 scaled matmuls, as PyTorch's cpu runs them.

grouped_mm is one matmul per group of webtorch's own (so every device runs it and autograd differentiates it);
the group boundaries `offs` are read to the host to slice the operands. Rows (or columns) past offs[-1] are
zeros here, where PyTorch leaves them uninitialized. scaled_mm / scaled_grouped_mm take float8 operands, which
webtorch has no kernels for: they raise PyTorch's errors for the operands webtorch can hold."""
import enum

from ... import _dtype
from ...ops import shape as _sh
from ...ops._common import name_of

_GROUPED_DTYPES = (_dtype.float32, _dtype.bfloat16, _dtype.float16)


class _ScalingType(enum.Enum):
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class _SwizzleType(enum.Enum):
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType, SwizzleType = _ScalingType, _SwizzleType  # PyTorch's public names of its private enums


def _check_strides(mat):
    """PyTorch's grouped-GEMM layout rule: row- or column-major in the last two dims, the other stride a multiple
    of 16 bytes."""
    (rows, cols), (s_rows, s_cols) = mat.shape[-2:], mat.stride()[-2:]
    align = 16 // mat.dtype.itemsize
    if s_rows == 1 and s_cols >= max(1, rows):
        lead = s_cols
    elif s_cols == 1 and s_rows >= max(1, cols):
        lead = s_rows
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(mat.stride())} for strides and {list(mat.shape)} for "
                           "sizes")
    if lead % align:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _check_grouped(mat_a, mat_b, offs, bias, out_dtype):
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in _GROUPED_DTYPES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {name_of(m.dtype)}")
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if (mat_a.dim() == 3 or mat_b.dim() == 3) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_strides(mat_a)
    _check_strides(mat_b)
    if (offs is not None) != (mat_a.dim() == 2 or mat_b.dim() == 2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype is not _dtype.int32:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_a.dim() == 3 and mat_b.dim() == 3 and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")


def _groups(offs):
    ends = offs.tolist()
    return list(zip([0] + ends[:-1], ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Per group g: (2-D a, 3-D b) a[rows of g] @ b[g]; (3-D a, 2-D b) a[g] @ b[:, cols of g]; (2-D, 2-D)
    a[:, ks of g] @ b[ks of g] stacked; (3-D, 3-D) a[g] @ b[g]."""
    _check_grouped(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return mat_a.matmul(mat_b)
    groups = _groups(offs)
    if mat_a.dim() == 2 and mat_b.dim() == 2:
        return _sh.stack([mat_a[:, s:e].matmul(mat_b[s:e]) for s, e in groups])
    if mat_a.dim() == 2:
        n, end = mat_a.shape[0], groups[-1][1] if groups else 0
        parts = [mat_a[s:e].matmul(mat_b[g]) for g, (s, e) in enumerate(groups)]
        return _sh.cat(parts + [mat_a.new_zeros((n - end, mat_b.shape[-1]))])
    n, end = mat_b.shape[1], groups[-1][1] if groups else 0
    parts = [mat_a[g].matmul(mat_b[:, s:e]) for g, (s, e) in enumerate(groups)]
    return _sh.cat(parts + [mat_a.new_zeros((mat_a.shape[1], n - end))], 1)


def _no_float8(mat_a, mat_b, scale_a, scale_b):
    def size(s):
        return list(s.shape) if hasattr(s, "shape") else [len(s)]
    m, n = mat_a.shape[0], mat_b.shape[-1]
    return ValueError(
        "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, scales should be float "
        f"and singletons.\n- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be "
        f"({m}, 1) and scale_b should be (1, {n}), and both should be contiguous.\nGot mat_a.dtype()="
        f"{name_of(mat_a.dtype)}, scale_a.dtype()={name_of(scale_a.dtype)}, scale_a.size()={size(scale_a)}, "
        f"scale_a.stride()={list(scale_a.stride())}, mat_b.dtype()={name_of(mat_b.dtype)}, scale_b.dtype()="
        f"{name_of(scale_b.dtype)}, scale_b.size()={size(scale_b)} and scale_b.stride()={list(scale_b.stride())}")


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
              bias=None, output_dtype=_dtype.bfloat16, contraction_dim=(), use_fast_accum=False):
    """float8 x float8 -> output_dtype with per-tensor / per-row scales: webtorch has no float8 kernels."""
    raise _no_float8(mat_a, mat_b, scale_a[0] if isinstance(scale_a, list) else scale_a,
                     scale_b[0] if isinstance(scale_b, list) else scale_b)


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
                      swizzle_b=None, bias=None, offs=None, output_dtype=_dtype.bfloat16, contraction_dim=(),
                      use_fast_accum=False):
    """grouped_mm on float8 operands with scales: as PyTorch's cpu, which has no kernel for it."""
    raise NotImplementedError(f"Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the "
                              f"'{mat_a.device.type.upper()}' backend.")
