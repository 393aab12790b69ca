"""torch.distributions against PyTorch's: every distribution's log_prob, cdf/icdf, entropy, moments, support and
shapes at fixed parameters; gradients of log_prob and of the reparameterized samplers' formulas; every transform's
forward, inverse and log-abs-det-Jacobian; the whole KL table; validate_args errors; sample statistics of every
sampler with a fixed seed (webtorch's generator is not PyTorch's: the draws are compared by their moments).
cpu runs everything, cpu-pure and webgpu a compact sample (lavapipe is slow)."""
import math

import pytest
import torch
import torch.distributions as TD

import webtorch as wt
import webtorch.distributions as WD


@pytest.fixture(autouse=True)
def _validate_args_by_default():
    """Both libraries validate by default (Python's __debug__); torch._dynamo switches PyTorch's default off for
    the whole process once any test compiles, so each test here pins it and puts it back."""
    before = TD.Distribution._validate_args
    TD.Distribution.set_default_validate_args(True)
    yield
    TD.Distribution.set_default_validate_args(before)


# (distribution, its parameters, a value in its support); the batch is (2,) where it can be
CASES = [
    ("Bernoulli", dict(probs=[0.3, 0.8]), [1., 0.]),
    ("Bernoulli", dict(logits=[-0.3, 1.2]), [1., 0.]),
    ("Beta", dict(concentration1=[1.5, 2.0], concentration0=[0.7, 3.0]), [0.3, 0.6]),
    ("Binomial", dict(total_count=[5., 8.], probs=[0.3, 0.6]), [2., 5.]),
    ("Categorical", dict(probs=[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]), [2., 0.]),
    ("Categorical", dict(logits=[[0.2, -0.3, 0.5], [0.6, 0.1, 1.3]]), [1., 2.]),
    ("Cauchy", dict(loc=[0.0, 1.0], scale=[1.0, 2.5]), [0.3, -1.2]),
    ("Chi2", dict(df=[2.5, 4.0]), [1.3, 2.2]),
    ("ContinuousBernoulli", dict(probs=[0.3, 0.8]), [0.4, 0.9]),
    ("Dirichlet", dict(concentration=[[1.5, 2.0, 0.7], [3., 1., 2.]]), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    ("Exponential", dict(rate=[0.5, 2.0]), [0.3, 1.7]),
    ("FisherSnedecor", dict(df1=[3.0, 5.0], df2=[6.0, 9.0]), [0.7, 1.5]),
    ("Gamma", dict(concentration=[1.5, 3.0], rate=[0.5, 2.0]), [0.8, 1.9]),
    ("GeneralizedPareto", dict(loc=[0.0, 1.0], scale=[1.0, 2.0], concentration=[0.2, -0.1]), [0.5, 2.0]),
    ("Geometric", dict(probs=[0.3, 0.6]), [2., 0.]),
    ("Gumbel", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), [0.5, -0.3]),
    ("HalfCauchy", dict(scale=[1.0, 2.0]), [0.5, 1.3]),
    ("HalfNormal", dict(scale=[1.0, 2.0]), [0.5, 1.3]),
    ("InverseGamma", dict(concentration=[2.5, 3.5], rate=[1.0, 2.0]), [0.5, 1.3]),
    ("Kumaraswamy", dict(concentration1=[1.5, 2.0], concentration0=[2.0, 3.0]), [0.3, 0.7]),
    ("Laplace", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), [0.5, -0.3]),
    ("LogNormal", dict(loc=[0.0, 1.0], scale=[1.0, 0.5]), [0.5, 2.3]),
    ("LogisticNormal", dict(loc=[[0.0, 1.0]], scale=[[1.0, 0.5]]), [[0.2, 0.3, 0.5]]),
    ("Multinomial", dict(total_count=6, probs=[[0.2, 0.3, 0.5]]), [[1., 2., 3.]]),
    ("NegativeBinomial", dict(total_count=[5., 8.], probs=[0.3, 0.6]), [2., 5.]),
    ("Normal", dict(loc=[0.0, 1.0], scale=[1.0, 2.0]), [0.5, -0.3]),
    ("OneHotCategorical", dict(probs=[[0.2, 0.3, 0.5]]), [[0., 1., 0.]]),
    ("OneHotCategoricalStraightThrough", dict(logits=[[0.2, -0.3, 0.5]]), [[0., 0., 1.]]),
    ("Pareto", dict(scale=[1.0, 2.0], alpha=[3.0, 4.0]), [1.5, 2.3]),
    ("Poisson", dict(rate=[1.5, 4.0]), [2., 5.]),
    ("RelaxedBernoulli", dict(temperature=[0.5], probs=[0.3, 0.8]), [0.4, 0.9]),
    ("RelaxedOneHotCategorical", dict(temperature=[0.5], probs=[[0.2, 0.3, 0.5]]), [[0.2, 0.3, 0.5]]),
    ("StudentT", dict(df=[3.0, 5.0], loc=[0.0, 1.0], scale=[1.0, 2.0]), [0.5, -0.3]),
    ("Uniform", dict(low=[0.0, 1.0], high=[1.0, 3.0]), [0.5, 2.3]),
    ("VonMises", dict(loc=[0.0, 1.0], concentration=[1.0, 5.0]), [0.5, -0.3]),
    ("Weibull", dict(scale=[1.0, 2.0], concentration=[1.5, 0.7]), [0.5, 2.3]),
    ("MultivariateNormal", dict(loc=[[0.0, 1.0]], covariance_matrix=[[[2.0, 0.3], [0.3, 1.0]]]), [[0.5, -0.3]]),
    ("MultivariateNormal", dict(loc=[[0.0, 1.0]], scale_tril=[[[2.0, 0.], [0.3, 1.0]]]), [[0.5, -0.3]]),
    ("MultivariateNormal", dict(loc=[[0.0, 1.0]], precision_matrix=[[[2.0, 0.3], [0.3, 1.0]]]), [[0.5, -0.3]]),
    ("LowRankMultivariateNormal", dict(loc=[[0.0, 1.0]], cov_factor=[[[1.0], [0.5]]], cov_diag=[[1.0, 2.0]]),
     [[0.5, -0.3]]),
    ("Wishart", dict(df=[3.0], covariance_matrix=[[[2.0, 0.3], [0.3, 1.0]]]), [[[1.0, 0.2], [0.2, 0.8]]]),
    ("LKJCholesky", dict(dim=3, concentration=[1.5]), [[[1., 0, 0], [0.6, 0.8, 0], [0.0, 0.6, 0.8]]]),
]
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]
ON_EVERY_DEVICE = {"Normal-loc-scale", "Categorical-logits", "Gamma-concentration-rate",
                   "Beta-concentration1-concentration0", "MultivariateNormal-loc-scale_tril", "Bernoulli-probs"}
NEEDS_GAMMAINC = ("Gamma", "Chi2", "InverseGamma")  # their cdf: torch.special.gammainc (igamma, branch special)
PROPERTIES = ("mean", "mode", "variance", "stddev", "batch_shape", "event_shape")
METHODS = ("log_prob", "cdf", "icdf", "entropy", "perplexity", "enumerate_support")


def _t(x):
    return torch.tensor(x, dtype=torch.float32) if isinstance(x, list) else x


def _w(x, device):
    return wt.tensor(x, dtype=wt.float32, device=device) if isinstance(x, list) else x


def _make(lib, mod, name, params, device=None):
    conv = _t if lib is torch else (lambda v: _w(v, device))
    return getattr(mod, name)(**{k: conv(v) for k, v in params.items()})


def _call(d, what, value, conv):
    if what in ("log_prob", "cdf"):
        return getattr(d, what)(conv(value))
    if what == "icdf":
        return d.icdf(d.cdf(conv(value)))
    if what in ("entropy", "perplexity", "enumerate_support"):
        return getattr(d, what)()
    return getattr(d, what)


def _close(w, t, rtol=2e-4, atol=2e-5):
    if t is None:  # no gradient in PyTorch: none here
        assert w is None
        return
    if isinstance(t, torch.Size):
        assert tuple(w) == tuple(t)
        return
    got = torch.tensor(w.tolist(), dtype=torch.float64)
    assert got.shape == t.shape, (got.shape, t.shape)
    torch.testing.assert_close(got, t.double(), rtol=rtol, atol=atol, equal_nan=True)


def _cases_on(device):
    return [c for c, i in zip(CASES, IDS) if device == "cpu" or i in ON_EVERY_DEVICE]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_quantity_matches_pytorch_cpu(case):
    _check_case(case, "cpu")


def test_a_compact_sample_matches_on_every_device(device):
    if device == "cpu":
        pytest.skip("the cpu test above runs every case")
    for case in [c for c, i in zip(CASES, IDS) if i in ON_EVERY_DEVICE]:
        _check_case(case, device)


def _check_case(case, device):
    name, params, value = case
    td, wd = _make(torch, TD, name, params), _make(wt, WD, name, params, device)
    assert wd.has_rsample == td.has_rsample and wd.has_enumerate_support == td.has_enumerate_support
    assert repr(wd.support) == repr(td.support)
    for what in PROPERTIES + METHODS:
        if what in ("cdf", "icdf") and name in NEEDS_GAMMAINC and not hasattr(wt.special, "gammainc"):
            continue
        try:
            t = _call(td, what, value, _t)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                _call(wd, what, value, lambda v: _w(v, device))
            continue
        _close(_call(wd, what, value, lambda v: _w(v, device)), t)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in ("LKJCholesky", "Wishart")],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] not in ("LKJCholesky", "Wishart")])
def test_log_prob_gradients_match_pytorch(case):
    """d log_prob(value) / d parameters, and d / d value where the distribution is continuous."""
    name, params, value = case
    tp = {k: _t(v).requires_grad_() if isinstance(v, list) else v for k, v in params.items()}
    wp = {k: _w(v, "cpu").requires_grad_() if isinstance(v, list) else v for k, v in params.items()}
    td, wd = getattr(TD, name)(**tp), getattr(WD, name)(**wp)
    continuous = td.has_rsample
    tv, wv = _t(value).requires_grad_(continuous), _w(value, "cpu").requires_grad_(continuous)
    td.log_prob(tv).sum().backward()
    wd.log_prob(wv).sum().backward()
    for k in tp:
        if isinstance(params[k], list):
            _close(wp[k].grad, tp[k].grad, rtol=1e-3, atol=1e-4)
    if continuous:
        _close(wv.grad, tv.grad, rtol=1e-3, atol=1e-4)


def test_rsample_is_reparameterized_as_pytorch():
    """The same standard draws give the same samples and gradients: loc-scale families through their noise, Gamma and
    Dirichlet through PyTorch's implicit-reparameterization gradients (_standard_gamma_grad, _dirichlet_grad)."""
    wt.manual_seed(0)
    loc, scale = wt.tensor([0.5, -1.0], requires_grad=True), wt.tensor([2.0, 0.5], requires_grad=True)
    x = WD.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    assert loc.grad.tolist() == [3.0, 3.0]
    eps = (x.detach() - loc.detach()) / scale.detach()
    _close(scale.grad, torch.tensor(eps.sum(0).tolist()))
    alpha = torch.tensor([0.3, 0.7, 1.5, 4.0, 12.0, 30.0]).repeat(4)
    xs = torch.tensor([0.05, 0.5, 0.7, 1.2, 3.0, 9.0, 10.5, 31.0] * 3)
    _close(wt._standard_gamma_grad(_w(alpha.tolist(), "cpu"), _w(xs.tolist(), "cpu")),
           torch._standard_gamma_grad(alpha, xs), rtol=1e-3, atol=1e-5)
    xd = torch.tensor([0.05, 0.3, 0.5, 0.8, 0.97, 0.4])
    ad = torch.tensor([0.5, 2.0, 7.0, 9.0, 1.5, 3.0])
    td = torch.tensor([1.0, 3.0, 20.0, 10.0, 2.0, 4.5])
    _close(wt._dirichlet_grad(*(_w(v.tolist(), "cpu") for v in (xd, ad, td))), torch._dirichlet_grad(xd, ad, td),
           rtol=1e-3, atol=1e-5)
    a = wt.tensor([1.5, 3.0], requires_grad=True)
    g = WD.Gamma(a, 1.0).rsample()
    g.sum().backward()
    _close(a.grad, torch._standard_gamma_grad(torch.tensor([1.5, 3.0]), torch.tensor(g.tolist())), rtol=1e-3)
    assert g.grad_fn is not None and WD.Dirichlet(a).rsample().grad_fn is not None


TRANSFORMS = [
    ("AbsTransform", (), [[-1.5, 0.3]]),
    ("AffineTransform", (0.5, 2.0), [[-1.5, 0.3]]),
    ("ExpTransform", (), [[-1.5, 0.3]]),
    ("PowerTransform", (2.5,), [[1.5, 0.3]]),
    ("SigmoidTransform", (), [[-1.5, 0.3]]),
    ("SoftplusTransform", (), [[-1.5, 0.3]]),
    ("TanhTransform", (), [[-1.5, 0.3]]),
    ("SoftmaxTransform", (), [[-1.5, 0.3, 0.9]]),
    ("StickBreakingTransform", (), [[-1.5, 0.3, 0.9]]),
    ("LowerCholeskyTransform", (), [[[1.5, 0.3], [0.2, -0.4]]]),
    ("PositiveDefiniteTransform", (), [[[1.5, 0.3], [0.2, -0.4]]]),
    ("CorrCholeskyTransform", (), [[-0.5, 0.3, 0.9]]),
    ("ReshapeTransform", ((2, 2), (4,)), [[[1.5, 0.3], [0.2, -0.4]]]),
]


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transforms_match_pytorch(case):
    name, args, x = case
    tt, wt_ = getattr(TD.transforms, name)(*args), getattr(WD.transforms, name)(*args)
    tx, wx = _t(x), _w(x, "cpu")
    ty, wy = tt(tx), wt_(wx)
    _close(wy, ty)
    _close(wt_.inv(wy), tt.inv(ty), rtol=1e-3, atol=1e-4)
    try:
        tj = tt.log_abs_det_jacobian(tx, ty)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            wt_.log_abs_det_jacobian(wx, wy)
        return
    _close(wt_.log_abs_det_jacobian(wx, wy), tj, rtol=1e-3, atol=1e-4)
    assert (wt_.bijective, wt_.sign if name in ("AffineTransform", "ExpTransform") else 1) == \
        (tt.bijective, tt.sign if name in ("AffineTransform", "ExpTransform") else 1)


def test_composed_transforms_and_transformed_distribution():
    parts = lambda M: [M.AffineTransform(0.3, 2.0), M.ExpTransform(), M.PowerTransform(0.5)]  # noqa: E731
    for T in ("ComposeTransform",):
        tt, wt_ = getattr(TD.transforms, T)(parts(TD.transforms)), getattr(WD.transforms, T)(parts(WD.transforms))
        _close(wt_(_w([0.1, 0.2], "cpu")), tt(_t([0.1, 0.2])))
        _close(wt_.log_abs_det_jacobian(_w([0.1, 0.2], "cpu"), wt_(_w([0.1, 0.2], "cpu"))),
               tt.log_abs_det_jacobian(_t([0.1, 0.2]), tt(_t([0.1, 0.2]))))
    tcat, wcat = (M.CatTransform([M.ExpTransform(), M.AffineTransform(1.0, 3.0)], 0, [1, 1])
                  for M in (TD.transforms, WD.transforms))
    _close(wcat(_w([0.5, 0.25], "cpu")), tcat(_t([0.5, 0.25])))
    tst = TD.transforms.StackTransform([TD.transforms.ExpTransform(), TD.transforms.SigmoidTransform()], 0)
    wst = WD.transforms.StackTransform([WD.transforms.ExpTransform(), WD.transforms.SigmoidTransform()], 0)
    _close(wst.log_abs_det_jacobian(_w([0.5, 0.25], "cpu"), wst(_w([0.5, 0.25], "cpu"))),
           tst.log_abs_det_jacobian(_t([0.5, 0.25]), tst(_t([0.5, 0.25]))))
    tcdf = TD.transforms.CumulativeDistributionTransform(TD.Normal(0.0, 2.0))
    wcdf = WD.transforms.CumulativeDistributionTransform(WD.Normal(0.0, 2.0))
    _close(wcdf.log_abs_det_jacobian(_w([0.5], "cpu"), wcdf(_w([0.5], "cpu"))),
           tcdf.log_abs_det_jacobian(_t([0.5]), tcdf(_t([0.5]))))
    tind = TD.transforms.IndependentTransform(TD.transforms.ExpTransform(), 1)
    wind = WD.transforms.IndependentTransform(WD.transforms.ExpTransform(), 1)
    _close(wind.log_abs_det_jacobian(_w([0.5, 1.0], "cpu"), None), tind.log_abs_det_jacobian(_t([0.5, 1.0]), None))
    td = TD.TransformedDistribution(TD.Normal(0.0, 1.0), parts(TD.transforms))
    wd = WD.TransformedDistribution(WD.Normal(0.0, 1.0), parts(WD.transforms))
    _close(wd.log_prob(_w([1.2, 2.0], "cpu")), td.log_prob(_t([1.2, 2.0])))
    for name in ("positive", "simplex", "lower_cholesky", "real", "unit_interval", "corr_cholesky", "positive_definite",
                 "greater_than", "interval"):
        tc, wc = getattr(TD.constraints, name), getattr(WD.constraints, name)
        tc, wc = (tc(0.5), wc(0.5)) if name == "greater_than" else (tc(0.0, 2.0), wc(0.0, 2.0)) \
            if name == "interval" else (tc, wc)
        for registry in ("biject_to", "transform_to"):
            try:
                expected = type(getattr(TD, registry)(tc)).__name__
            except NotImplementedError:
                with pytest.raises(NotImplementedError):
                    getattr(WD, registry)(wc)
                continue
            assert type(getattr(WD, registry)(wc)).__name__ == expected


def _instances(lib, mod, dev=None):
    out = {}
    for name, params, _ in CASES:
        out.setdefault(name, _make(lib, mod, name, params, dev))
    return out


def test_the_kl_table_matches_pytorch():
    """Every (p, q) pair PyTorch registers, with one instance of each type; a pair PyTorch refuses (inf, an error)
    is refused alike."""
    ti, wi = _instances(torch, TD), _instances(wt, WD, "cpu")
    ti.update(Independent=TD.Independent(ti["Normal"], 1), TransformedDistribution=TD.LogNormal(0.0, 1.0),
              ExponentialFamily=ti["Normal"])
    wi.update(Independent=WD.Independent(wi["Normal"], 1), TransformedDistribution=WD.LogNormal(0.0, 1.0),
              ExponentialFamily=wi["Normal"])
    pairs = sorted((p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY)
    assert pairs == sorted((p.__name__, q.__name__) for p, q in WD.kl._KL_REGISTRY)
    checked = 0
    for pn, qn in pairs:
        if pn not in ti or qn not in ti:
            continue
        try:
            t = TD.kl_divergence(ti[pn], ti[qn])
        except (NotImplementedError, RuntimeError, ValueError) as e:
            with pytest.raises(type(e)):
                WD.kl_divergence(wi[pn], wi[qn])
            continue
        _close(WD.kl_divergence(wi[pn], wi[qn]), t, rtol=1e-3, atol=1e-4)
        checked += 1
    assert checked > 60


def test_validate_args_errors_are_pytorchs():
    cases = [("Normal", dict(loc=[0.0], scale=[-1.0])), ("Bernoulli", dict(probs=[1.5])),
             ("Categorical", dict(probs=[[0.5, -0.1]])), ("Gamma", dict(concentration=[0.0], rate=[1.0])),
             ("Uniform", dict(low=[1.0], high=[0.0]))]
    for name, params in cases:
        with pytest.raises(ValueError) as te:
            _make(torch, TD, name, params)
        with pytest.raises(ValueError) as we:
            _make(wt, WD, name, params, "cpu")
        assert str(we.value).split("found invalid values")[0] == str(te.value).split("found invalid values")[0]
    with pytest.raises(ValueError) as te:
        TD.Normal(0.0, 1.0).log_prob(torch.tensor([float("nan")]))
    with pytest.raises(ValueError) as we:
        WD.Normal(0.0, 1.0).log_prob(wt.tensor([float("nan")]))
    assert str(we.value).split("found invalid")[0] == str(te.value).split("found invalid")[0]
    WD.Distribution.set_default_validate_args(False)
    try:
        WD.Normal(0.0, -1.0)  # no check
    finally:
        WD.Distribution.set_default_validate_args(True)
    assert WD.Normal(0.0, 1.0).expand((3,)).batch_shape == torch.Size([3])


# sample statistics: the mean within 5 standard errors and the variance within 15% over n draws (a fixed seed)
SAMPLED = [("Normal", dict(loc=[0.5], scale=[2.0])), ("Gamma", dict(concentration=[0.4], rate=[2.0])),
           ("Gamma", dict(concentration=[3.0], rate=[0.5])), ("Beta", dict(concentration1=[0.5], concentration0=[2.0])),
           ("Poisson", dict(rate=[3.0])), ("Poisson", dict(rate=[40.0])),
           ("Binomial", dict(total_count=[8.0], probs=[0.3])), ("Binomial", dict(total_count=[60.0], probs=[0.7])),
           ("Dirichlet", dict(concentration=[[0.7, 2.0, 3.0]])), ("Categorical", dict(probs=[[0.2, 0.3, 0.5]])),
           ("Geometric", dict(probs=[0.3])), ("Exponential", dict(rate=[2.0])), ("StudentT", dict(df=[6.0])),
           ("Laplace", dict(loc=[0.5], scale=[2.0])), ("VonMises", dict(loc=[0.5], concentration=[2.0])),
           ("NegativeBinomial", dict(total_count=[5.0], probs=[0.4])), ("Chi2", dict(df=[3.0])),
           ("MultivariateNormal", dict(loc=[[0.0, 1.0]], covariance_matrix=[[[2.0, 0.3], [0.3, 1.0]]]))]


def _moments_ok(x, mean, var, n):
    assert x.shape[0] == n
    m, v = torch.tensor(x.mean(0).tolist()), torch.tensor(x.var(0).tolist())
    se = (v / n).sqrt() if var is None else (var / n).sqrt()
    assert ((m - mean).abs() <= 5 * se + 1e-6).all(), (m, mean)
    if var is not None:
        assert ((v - var).abs() <= 0.15 * var + 1e-6).all(), (v, var)


@pytest.mark.parametrize("case", SAMPLED, ids=[c[0] for c in SAMPLED])
def test_sample_statistics(case):
    name, params = case
    wt.manual_seed(0)
    td, wd = _make(torch, TD, name, params), _make(wt, WD, name, params, "cpu")
    n = 2000 if name == "Categorical" else 10000  # torch.multinomial draws one sample per step
    x = wd.sample((n,))
    assert tuple(x.shape) == (n,) + tuple(td.batch_shape + td.event_shape)
    assert bool(td.support.check(torch.tensor(x.tolist())).all())
    if name == "VonMises":  # a circular variable: E cos(x - loc) is 1 - its (circular) variance
        _moments_ok((x - 0.5).cos(), 1 - td.variance, None, n)
    elif name == "Categorical":
        _moments_ok(wt.nn.functional.one_hot(x.long(), 3).float(), td.probs, td.probs * (1 - td.probs), n)
    else:
        _moments_ok(x, td.mean, td.variance, n)


def test_samplers_on_every_device(device):
    wt.manual_seed(1)
    n = 2000
    alpha = wt.tensor([0.5, 4.0], device=device).expand(n, 2)
    g = wt._standard_gamma(alpha)
    _moments_ok(g, torch.tensor([0.5, 4.0]), torch.tensor([0.5, 4.0]), n)
    p = wt.poisson(wt.tensor([2.0, 30.0], device=device).expand(n, 2))
    _moments_ok(p, torch.tensor([2.0, 30.0]), torch.tensor([2.0, 30.0]), n)
    b = wt.binomial(wt.tensor([6.0, 50.0], device=device).expand(n, 2), wt.tensor([0.4, 0.6], device=device))
    _moments_ok(b, torch.tensor([2.4, 30.0]), torch.tensor([1.44, 12.0]), n)
    d = wt._sample_dirichlet(wt.tensor([1.0, 2.0, 3.0], device=device).expand(n, 3))
    _moments_ok(d, torch.tensor([1, 2, 3.0]) / 6, torch.tensor([5, 8, 9.0]) / 252, n)
    assert d.device.type == alpha.device.type
    x = wt.empty(n, device=device)
    _moments_ok(x.log_normal_(0.0, 0.5).unsqueeze(1), torch.tensor([math.exp(0.125)]),
                torch.tensor([(math.exp(0.25) - 1) * math.exp(0.25)]), n)
    _moments_ok(x.geometric_(0.25).unsqueeze(1), torch.tensor([4.0]), torch.tensor([12.0]), n)
    assert abs(float(x.cauchy_(1.0, 2.0).median()) - 1.0) < 0.15


def test_sampler_errors_and_nodes_are_pytorchs():
    for f in (lambda m: m.zeros(3).cauchy_(0, -1), lambda m: m.zeros(3).log_normal_(1, 0),
              lambda m: m.zeros(3).geometric_(1.5), lambda m: m.poisson(-m.ones(3)),
              lambda m: m._standard_gamma(m.ones(2, dtype=m.float16)), lambda m: m._sample_dirichlet(m.ones(2).long()),
              lambda m: m.binomial(m.ones(2), m.ones(2, dtype=m.float64))):
        with pytest.raises((RuntimeError, NotImplementedError)) as te:
            f(torch)
        with pytest.raises(te.type) as we:
            f(wt)
        assert str(we.value) == str(te.value)
    assert wt._standard_gamma(wt.tensor([-2.0, 0.0, float("nan")])).tolist() == \
        torch._standard_gamma(torch.tensor([-2.0, 0.0, float("nan")])).tolist()
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        wt.binomial(wt.tensor([5]), wt.tensor([0.5]))
    a = wt.tensor([1.5], requires_grad=True)
    assert wt._standard_gamma(a).grad_fn.name() == "StandardGammaBackward0"
    assert wt.poisson(a).grad_fn.name() == "PoissonBackward0"
    wt.poisson(a).sum().backward()
    assert a.grad.tolist() == [0.0]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "Wishart"],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] != "Wishart"])
def test_samples_have_pytorchs_shapes_dtypes_and_support(case):
    """sample / rsample with a sample_shape, and on an expanded distribution: PyTorch's shapes and dtypes, values in
    the support."""
    name, params, _ = case
    td, wd = _make(torch, TD, name, params), _make(wt, WD, name, params, "cpu")
    ts, ws = td.sample((2,)), wd.sample((2,))
    assert (tuple(ws.shape), ws.dtype.name) == (tuple(ts.shape), str(ts.dtype).split(".")[1])
    assert bool(td.support.check(torch.tensor(ws.tolist())).all())
    if td.has_rsample:
        assert tuple(wd.rsample((3,)).shape) == tuple(td.rsample((3,)).shape)
    te, we = td.expand((3,) + tuple(td.batch_shape)), wd.expand((3,) + tuple(wd.batch_shape))
    assert tuple(we.sample().shape) == tuple(te.sample().shape) and we.batch_shape == te.batch_shape


def test_mixture_same_family_matches_pytorch():
    def mixture(lib, mod, conv):
        return mod.MixtureSameFamily(mod.Categorical(conv([0.3, 0.7])), mod.Normal(conv([-1.0, 2.0]), conv([0.5, 1.0])))
    td, wd = mixture(torch, TD, _t), mixture(wt, WD, lambda v: _w(v, "cpu"))
    for what in ("log_prob", "cdf", "mean", "variance"):
        _close(_call(wd, what, [0.3, -1.2], lambda v: _w(v, "cpu")), _call(td, what, [0.3, -1.2], _t))
    assert tuple(wd.sample((5,)).shape) == (5,)


def test_reparameterized_gradients_in_expectation(device):
    """d E[x] / d parameter from rsample's gradients: Gamma(a, 2) 1/2, Dirichlet's first mean a0 / sum a, Beta(b, 3)
    3 / (b + 3)^2, on the device (the implicit gradients run there as tensor ops)."""
    wt.manual_seed(0)
    n = 1000
    a = wt.tensor([0.5, 3.0], device=device, requires_grad=True)
    WD.Gamma(a, 2.0).rsample((n,)).mean(0).sum().backward()
    _close(a.grad, torch.tensor([0.5, 0.5]), rtol=0.05)
    c = wt.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    WD.Dirichlet(c).rsample((n,))[:, 0].mean().backward()
    _close(c.grad, torch.tensor([5.0, -1.0, -1.0]) / 36, rtol=0.06)
    b = wt.tensor([2.0], device=device, requires_grad=True)
    WD.Beta(b, 3.0).rsample((n,)).mean().backward()
    _close(b.grad, torch.tensor([0.12]), rtol=0.05)


def _state(dist):
    """A distribution's attributes: each tensor's shape, each wrapped distribution's type and shapes."""
    def describe(v):
        if hasattr(v, "batch_shape"):
            return type(v).__name__, tuple(v.batch_shape), tuple(v.event_shape)
        if hasattr(v, "shape"):
            return tuple(v.shape)
        return v if isinstance(v, (int, float, bool, str)) else type(v).__name__
    return {k: describe(v) for k, v in vars(dist).items()}


@pytest.mark.parametrize("lazy_computed", [False, True])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expand_keeps_pytorchs_state(case, lazy_computed):
    """expand() holds PyTorch's attributes, each expanded (a lazy probs/logits/matrix only once computed)."""
    name, params, _ = case
    td, wd = _make(torch, TD, name, params), _make(wt, WD, name, params, "cpu")
    for dist in (td, wd) if lazy_computed else ():
        for lazy in ("probs", "logits", "covariance_matrix", "precision_matrix", "scale_tril"):
            getattr(dist, lazy, None)
    batch_shape = (3,) + tuple(td.batch_shape)
    assert _state(wd.expand(batch_shape)) == _state(td.expand(batch_shape))
