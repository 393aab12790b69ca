"""torch.special: the special-function namespace. Its ops are the element-wise ops declared once in
ops/pointwise.py, under PyTorch's special names (`expit` is sigmoid)."""
from .ops.pointwise import (i0, sigmoid as expit, exp2, expm1, log1p, erf, erfc, erfinv, logit,  # noqa: F401
                            sinc, special_i0e as i0e, special_i1 as i1, special_i1e as i1e, xlogy)
