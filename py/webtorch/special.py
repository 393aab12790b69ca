"""torch.special: the special-function namespace. Its ops are the element-wise ops declared once in
ops/pointwise.py, under PyTorch's special names (`expit` is sigmoid; `special_<name>`, declared for
torch.special only, is `<name>` here)."""
from .ops import pointwise as _pointwise, special as _special
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
    round,  # noqa: F401
    sigmoid as expit,  # noqa: F401
    sinc,
    xlogy,
)
from .ops.reduction import log_softmax, logsumexp, softmax  # noqa: F401
from .ops.special import mvlgamma as multigammaln, polygamma  # noqa: F401

globals().update({n[8:]: f for m in (_pointwise, _special) for n, f in vars(m).items() if n.startswith("special_")})
