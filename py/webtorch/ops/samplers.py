"""The samplers torch.distributions draws from, as PyTorch's: torch._standard_gamma (Marsaglia and Tsang's
rejection, with its reparameterized gradient torch._standard_gamma_grad), torch._sample_dirichlet,
torch._dirichlet_grad, torch.poisson (Hormann's transformed rejection from rate 10, Knuth's product of uniforms
below) and torch.binomial (BTRS from count * p = 10, inversion by geometric jumps below).

They run as tensor ops on the tensor's own device and generator: a rejection step draws for every element at once,
keeps the accepted draws and draws again only while some element is still rejected (a count loop likewise), so a
webgpu tensor's samples are GPU work with one small read per round. The generator's stream differs from PyTorch's:
the draws follow PyTorch's distributions, not its numbers."""
from .. import _dtype
from ..autograd.grad_mode import no_grad
from . import _prims
from ._common import formula_node, name_of, recording
from ._creation import rand, randn
from .pointwise import where
from .reduction import sum as _sum
from .registry import register


def _until_accepted(propose):
    """The first accepted candidate of each element: `propose()` gives (candidates, accepted) for all elements."""
    out, pending = None, None
    while True:
        cand, ok = propose()
        if out is None:
            out, pending = cand, ~ok
        else:
            out, pending = where(pending & ok, cand, out), pending & ~ok
        if not bool(pending.any()):
            return out


def _uniform(like, generator):
    return rand(like.shape, dtype=like.dtype, device=like.device, generator=generator)


def _gamma_kernel(alpha, generator=None):
    """Marsaglia and Tsang (2000) for alpha >= 1; alpha < 1 draws Gamma(alpha + 1) * U ** (1 / alpha). Each sample is
    at least the dtype's smallest normal number (PyTorch's clamp), which is also the sample of an alpha <= 0 or NaN."""
    with no_grad():
        a = alpha.detach()
        valid = a > 0
        boost = a < 1
        a1 = where(valid, where(boost, a + 1, a), 2.0)
        d = a1 - 1.0 / 3.0
        c = 1 / (9 * d).sqrt()

        def propose():
            x = randn(a.shape, dtype=a.dtype, device=a.device, generator=generator)
            y = 1 + c * x
            v = y * y * y
            u = 1 - _uniform(a, generator)
            xx = x * x
            ok = (y > 0) & ((u < 1 - 0.0331 * xx * xx) | (u.log() < 0.5 * xx + d * (1 - v + v.log())))
            return d * v, ok

        g = _until_accepted(propose)
        scale = where(boost, (1 - _uniform(a, generator)).pow(1 / a), 1.0)
        return where(valid, g * scale, 0.0).clamp(min=_tiny(a.dtype))


def _tiny(dt):
    return 2.2250738585072014e-308 if dt is _dtype.float64 else 1.1754943508222875e-38


StandardGamma = formula_node("StandardGammaBackward0", _gamma_kernel, ("x", "generator"))


def _check_dtype(x, name, half=False):
    """PyTorch's CPU kernels: float32 and float64 (poisson: float16 and bfloat16 too)."""
    if not (x.dtype.is_floating_point and (half or x.dtype in (_dtype.float32, _dtype.float64))):
        raise NotImplementedError(f"\"{name}\" not implemented for '{name_of(x.dtype)}'")


@register(method=False)
def _standard_gamma(input, generator=None):
    _check_dtype(input, "gamma_cpu")
    return StandardGamma.apply(input, generator) if recording(input) else _gamma_kernel(input, generator)


def _digamma(x):
    return x.digamma()


def _poly(x, coefs):
    r = 0.0
    for c in reversed(coefs):
        r = r * x + c
    return r


_RATIONAL_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
                (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
                 -0.00058392623),
                (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
                 0.00085092367, -1.5247877e-07))


def _gamma_grad_small_x(alpha, x):
    """x < 0.8: -(d/dalpha cdf) / pdf from the Taylor series of the regularized lower incomplete gamma."""
    numer, denom = 1.0, alpha
    series1, series2 = 1 / denom, 1 / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x.pow(alpha)
    pdf = x.pow(alpha - 1) * (-x).exp()
    cdf_alpha = (x.log() - _digamma(alpha)) * (pow_x_alpha * series1) - pow_x_alpha * series2
    r = -cdf_alpha / pdf
    return where(r.isnan(), 0.0, r)


def _gamma_grad_large_alpha(alpha, x):
    """alpha > 8: Rice's saddle point expansion (a polynomial near x = alpha)."""
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    poly = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = (8 * alpha).sqrt()
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * (x / alpha).log()).pow(-1.5)
    term23 = where(x < alpha, term2 - term3, term2 + term3)
    term1 = (x / alpha).log() * term23 - (2 / alpha).sqrt() * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return where(near, poly, -stirling * (x * term1) / denom)


def _gamma_grad_rational(alpha, x):
    """Otherwise: a bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u, v = (x / alpha).log(), alpha.log()
    coef = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_RATIONAL_UV)]
    return (_poly(v, coef[:4]) / _poly(v, coef[4:])).exp()


@register  # a Tensor method too: StandardGammaBackward0's formula calls it
def _standard_gamma_grad(self, output):
    """d sample / d alpha of a standard Gamma(alpha) sample `output`: -(d/dalpha cdf(x; alpha)) / pdf(x; alpha), by
    PyTorch's three approximations."""
    with no_grad():
        alpha, x = self.detach(), output.detach()
        safe_x = where(x < 0.8, 1.0, x)
        big = where(alpha > 8, alpha, 9.0)
        return where(x < 0.8, _gamma_grad_small_x(alpha, where(x < 0.8, x, 0.5)),
                     where(alpha > 8, _gamma_grad_large_alpha(big, safe_x), _gamma_grad_rational(alpha, safe_x)))


def _dirichlet_kernel(alpha, generator=None):
    with no_grad():
        g = _gamma_kernel(alpha, generator)
        top = 1 - (2.0 ** -53 if g.dtype is _dtype.float64 else 2.0 ** -24)  # the float just below 1
        return (g / _sum(g, -1, keepdim=True)).clamp(min=_tiny(g.dtype), max=top)


SampleDirichlet = formula_node("NotImplemented(_sample_dirichlet)", _dirichlet_kernel, ("x", "generator"))


@register(method=False)
def _sample_dirichlet(input, generator=None):
    _check_dtype(input, "dirichlet")
    return SampleDirichlet.apply(input, generator) if recording(input) else _dirichlet_kernel(input, generator)


_BETA_MID_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))))


def _beta_grad_alpha_small(x, alpha, beta):
    """x near 0: a Taylor expansion of the Beta cdf's alpha-derivative."""
    factor = _digamma(alpha) - _digamma(alpha + beta) - x.log()
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    r = x * (1 - x).pow(-beta) * series
    return where(r.isnan(), 0.0, r)


def _beta_grad_beta_small(x, alpha, beta):
    """x near 0: a Taylor expansion of the Beta cdf's beta-derivative."""
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    r = -(1 - x).pow(1 - beta) * series
    return where(r.isnan(), 0.0, r)


def _beta_grad_alpha_mid(x, alpha, beta):
    """alpha and beta both large: Rice's saddle point expansion (a polynomial near the mean)."""
    total = alpha + beta
    mean = alpha / total
    std = (alpha * beta / (total + 1)).sqrt() / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    bb = beta * beta
    poly = 47 * x * bb * bb + alpha * ((43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
        3 * (59 + 180 * beta - 90 * x) * bb + alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
            8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / (2 * alpha * beta / total).sqrt()
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * bb)
             / ((2 * alpha / beta).sqrt() * total.pow(1.5) * axbx * axbx))
    term2 = 0.5 * (alpha / (total * x)).log()
    term3 = (8 * alpha * beta / total).sqrt() / axbx
    term4 = (beta * (beta / (total * (1 - x))).log() + alpha * (alpha / (total * x)).log()).pow(-1.5)
    away = stirling * prefactor * (term1 + term2 * (term3 + where(x < mean, term4, -term4)))
    return where(near, at_mean, away)


def _beta_grad_rational(x, alpha, total):
    """Otherwise: a rational correction to an analytic approximation."""
    u = x.log()
    a = alpha.log() - u
    b = total.log() - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            p = p + ua * _poly(b, _BETA_MID_C[0][i][j])
            q = q + ua * _poly(b, _BETA_MID_C[1][i][j])
    return p / q * (x * (_digamma(total) - _digamma(alpha)) / (total - alpha))


@register(method=False)
def _dirichlet_grad(x, alpha, total):
    """-(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1 - x) for x ~ Beta(alpha, total - alpha): the Dirichlet's
    reparameterized gradient written with Betas, by PyTorch's four approximations."""
    with no_grad():
        shape = _prims.broadcast_shapes(x.shape, alpha.shape, total.shape)
        x, alpha, total = (t.detach().broadcast_to(shape) for t in (x, alpha, total))
        beta = total - alpha
        boundary = total * x * (1 - x)
        near_0 = (x <= 0.5) & (boundary < 2.5)
        near_1 = (x >= 0.5) & (boundary < 0.75)
        mid = (alpha > 6) & (beta > 6)
        return where(near_0, _beta_grad_alpha_small(x, alpha, beta),
                     where(near_1, -_beta_grad_beta_small(1 - x, beta, alpha),
                           where(mid, _beta_grad_alpha_mid(x, alpha, beta), _beta_grad_rational(x, alpha, total))))


# Poisson: Hormann (1993)'s transformed rejection (PTRS) from rate 10, the product of uniforms below
def _poisson_ptrs(lam, generator):
    lam = where(lam >= 10, lam, 10.0)
    slam, loglam = lam.sqrt(), lam.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose():
        u = _uniform(lam, generator) - 0.5
        v = _uniform(lam, generator)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + lam + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        possible = (k >= 0) & ~((us < 0.013) & (v > us))
        exact = (v.log() + invalpha.log() - (a / (us * us) + b).log()) <= (-lam + k * loglam - (k + 1).lgamma())
        return k, quick | (possible & exact)

    return _until_accepted(propose)


def _poisson_knuth(lam, generator):
    enlam = (-where(lam < 10, lam, 0.0)).exp()
    count, prod = lam * 0, lam * 0 + 1
    while True:
        prod = prod * _uniform(lam, generator)
        more = prod > enlam
        if not bool(more.any()):
            return count
        count = count + more.to(lam.dtype)


def _poisson_kernel(rates, generator=None):
    with no_grad():
        lam = rates.detach()
        big = lam >= 10
        out = _poisson_knuth(lam, generator)
        if bool(big.any()):
            out = where(big, _poisson_ptrs(lam, generator), out)
        return where(lam.isnan(), lam, where(lam == 0, 0.0, out))


Poisson = formula_node("PoissonBackward0", _poisson_kernel, ("x", "generator"))


@register(method=False)
def poisson(input, generator=None):
    _check_dtype(input, "poisson_cpu", half=True)
    if bool((input < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Poisson.apply(input, generator) if recording(input) else _poisson_kernel(input, generator)


# Binomial: BTRS (Hormann 1993) where count * min(p, 1 - p) >= 10, inversion by geometric jumps below
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    kp1sq = (k + 1) * (k + 1)
    r = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    for i, v in enumerate(_STIRLING_TAIL):
        r = where(k == i, v, r)
    return r


def _btrs(n, p, generator):
    stddev = (n * p * (1 - p)).sqrt()
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = ((n + 1) * p).floor()

    def propose():
        u = _uniform(p, generator) - 0.5
        v = _uniform(p, generator)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + c).floor()
        possible = (k >= 0) & (k <= n)
        quick = (us >= 0.07) & (v <= v_r)
        lv = (v * alpha / (a / (us * us) + b)).log()
        bound = ((m + 0.5) * ((m + 1) / (r * (n - m + 1))).log() + (n + 1) * ((n - m + 1) / (n - k + 1)).log()
                 + (k + 0.5) * (r * (n - k + 1) / (k + 1)).log() + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        return k, possible & (quick | (lv <= bound))

    return _until_accepted(propose)


def _binomial_inversion(n, p, generator):
    logq = (-p).log1p()
    geom_sum, count, done = n * 0, n * 0, n < 0
    while True:
        geom_sum = geom_sum + (_uniform(p, generator).log() / logq).ceil()
        done = done | (geom_sum > n)
        if bool(done.all()):
            return count
        count = count + (~done).to(n.dtype)


def _binomial_kernel(count, prob, generator=None):
    with no_grad():
        n, p = (t.detach() for t in (count, prob))
        shape = _prims.broadcast_shapes(n.shape, p.shape)
        n, p = n.broadcast_to(shape), p.broadcast_to(shape)
        flip = p > 0.5
        q = where(flip, 1 - p, p)
        trivial = ~((n > 0) & (p > 0) & (p < 1))  # NaN too: never in a loop
        q = where(trivial, 0.5, q)
        m = where(trivial, 0.0, n)
        big = m * q >= 10
        out = _binomial_inversion(where(big, 0.0, m), where(big, 0.5, q), generator)
        if bool(big.any()):
            out = where(big, _btrs(where(big, m, 20.0), where(big, q, 0.5), generator), out)
        out = where(flip, n - out, out)
        out = where((n <= 0) | (p <= 0), 0.0, where(p >= 1, n, out))
        return where(p.isnan(), p, out)


Binomial = formula_node("BinomialBackward0", _binomial_kernel, ("count", "prob", "generator"))


@register(method=False)
def binomial(count, prob, generator=None):
    for which, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {which}, got: {name_of(t.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {name_of(prob.dtype)} but expected {name_of(count.dtype)}")
    _check_dtype(count, "binomial_cpu")
    if recording(count, prob):
        return Binomial.apply(count, prob, generator)
    return _binomial_kernel(count, prob, generator)

