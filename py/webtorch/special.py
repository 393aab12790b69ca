"""torch.special: the special-function namespace. Its ops are the element-wise ops declared once in
ops/pointwise.py, under PyTorch's special names (`expit` is sigmoid; `special_<name>`, declared for
torch.special only, is `<name>` here)."""
from .ops import pointwise as _pointwise
from .ops.pointwise import (i0, sigmoid as expit, exp2, expm1, log1p, erf, erfc, erfinv, logit,  # noqa: F401
                            sinc)

globals().update({n[8:]: f for n, f in vars(_pointwise).items() if n.startswith("special_")})
