"""torch.special: the special-function namespace. Its ops are the element-wise ops declared once in
ops/pointwise.py, under PyTorch's special names (`expit` is sigmoid; `special_<name>`, declared for
torch.special only, is `<name>` here)."""
from .ops import pointwise as _pointwise
from .ops.pointwise import (  # noqa: F401
    digamma,
    digamma as psi,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    i0,
    igamma as gammainc,
    igammac as gammaincc,
    lgamma as gammaln,
    log1p,
    logit,
    sigmoid as expit,  # noqa: F401
    sinc,
    xlogy,
)
from .ops.special import mvlgamma as multigammaln, polygamma  # noqa: F401

globals().update({n[8:]: f for n, f in vars(_pointwise).items() if n.startswith("special_")})
