"""The op table (a small OpInfo, as PyTorch's `op_db`): one row per element-wise op and reduction,
the one place its test facts live. It feeds

  test_core_pointwise.py   unary and binary ops: function, method, in-place, dtypes, broadcasting
  test_core_reductions.py  reductions over every dim form, keepdim, 0-d inputs
  _autograd_cases.py       the differentiable rows' gradient cases (test_autograd_ops.py on every
                           device, test_autograd_gradcheck.py in float64)
  test_backend_cpu.py      the torch oracle of each backend kernel with an op's name

Fields:
  name     torch.<name> / webtorch.<name>, and the method Tensor.<name>
  kind     'unary', 'binary' or 'reduction'
  domain   each input's value range: any, pos, unit, gt1, prob, nonzero (RANGES)
  dtypes   the dtypes its forward is compared in, on every device
  grad     differentiable: gradient cases in _autograd_cases.py
  inplace  Tensor.<name>_ is compared too
  ints     (unary) integer inputs are compared too (a float op promotes them)
  dims     (reduction) the dim arguments it is sampled with (None: no dim argument)
  zero_d   (reduction) a 0-d input is compared too
  tol      extra {"rtol", "atol"} on webgpu (WGSL's transcendental functions)
  scalar_other  (binary) `other` may be a Python number (torch.maximum(t, 2) is a TypeError)

The reference is PyTorch itself: tests run the same code with T = torch and T = webtorch (`ref`
gives the torch function of a row, for the backend tests). No numpy or torch import here: the
table is read by the no-numpy child process too (tests/test_no_numpy.py).
"""
from collections import namedtuple

OpInfo = namedtuple("OpInfo", "name kind domain dtypes grad inplace ints dims zero_d tol scalar_other")

FLOATS = ("float32", "float64")
NUMERIC = ("float32", "int64", "int32", "float64", "uint8")
ALL = NUMERIC + ("bool",)
# value ranges per domain: for gradients (kept from kinks) and, wider, for forward comparisons
RANGES = {"any": (-2.0, 2.0), "pos": (0.5, 2.0), "unit": (-0.9, 0.9), "gt1": (1.2, 3.0), "prob": (0.05, 0.95),
          "nonzero": (0.5, 2.0)}
FORWARD_RANGES = {"any": (-3, 3), "pos": (0.1, 4), "unit": (-0.9, 0.9), "gt1": (1.1, 4), "prob": (0.05, 0.95),
                  "nonzero": (0.5, 2)}
INT_RANGES = {"any": (-4, 5), "pos": (0, 3), "nonzero": (1, 5)}  # integer inputs: [lo, hi)
DIMS = (None, 0, 1, -1, (0, 2), (-1, -2), ())
_WGSL = {"rtol": 1e-3, "atol": 1e-4}


def U(name, domain="any", grad=True, inplace=True, ints=True, tol=None):
    return OpInfo(name, "unary", (domain,), FLOATS, grad, inplace, ints, None, True, tol or {}, False)


def Bi(name, domain=("any", "any"), dtypes=NUMERIC, grad=False, inplace=True, scalar_other=True):
    return OpInfo(name, "binary", domain, dtypes, grad, inplace, True, None, True, {}, scalar_other)


def R(name, dims=DIMS, grad=True, zero_d=True):
    return OpInfo(name, "reduction", ("any",), FLOATS, grad, False, True, dims, zero_d, {}, False)


_NO_EMPTY = tuple(d for d in DIMS if d != ())

OPS = [
    # ---- unary ---------------------------------------------------------------------------------
    U("neg"), U("abs"), U("sign"), U("exp"), U("exp2"), U("expm1"), U("log", "pos", ints=False),
    U("log2", "pos", ints=False), U("log10", "pos", ints=False), U("log1p", "pos"), U("sqrt", "pos"),
    U("rsqrt", "pos"), U("reciprocal", "pos"), U("sin"), U("cos"), U("tan", "unit"),
    U("asin", "unit", ints=False), U("acos", "unit", ints=False), U("atan"), U("sinh"), U("cosh"), U("tanh"),
    U("asinh"), U("acosh", "gt1", ints=False, tol=_WGSL), U("atanh", "unit", ints=False, tol=_WGSL),
    U("sigmoid"), U("erf"), U("erfc"), U("erfinv", "unit", ints=False, tol=_WGSL), U("floor"), U("ceil"),
    U("round"), U("trunc"), U("frac", ints=False), U("relu"), U("square", inplace=False),
    U("sgn", inplace=False), U("deg2rad", inplace=False), U("rad2deg", inplace=False),
    U("logit", "prob", ints=False), U("sinc"), U("i0"), U("positive", inplace=False),
    U("isnan", grad=False, inplace=False), U("isinf", grad=False, inplace=False),
    U("isfinite", grad=False, inplace=False), U("signbit", grad=False, inplace=False),
    U("logical_not", grad=False, inplace=False), U("nan_to_num", grad=False, inplace=False),
    # ---- binary --------------------------------------------------------------------------------
    Bi("add", grad=True), Bi("sub", grad=True), Bi("mul", grad=True),
    Bi("div", ("any", "nonzero"), grad=True), Bi("true_divide", ("any", "nonzero"), FLOATS),
    Bi("floor_divide", ("any", "nonzero")), Bi("remainder", ("any", "nonzero"), grad=True),
    Bi("fmod", ("any", "nonzero"), grad=True), Bi("pow", ("pos", "any"), FLOATS),
    Bi("maximum", grad=True, inplace=False, scalar_other=False), Bi("minimum", grad=True, inplace=False, scalar_other=False),
    Bi("fmax", dtypes=FLOATS, grad=True, inplace=False, scalar_other=False),
    Bi("fmin", dtypes=FLOATS, grad=True, inplace=False, scalar_other=False),
    Bi("atan2", dtypes=FLOATS, grad=True, scalar_other=False),
    Bi("hypot", dtypes=FLOATS, grad=True, scalar_other=False),
    Bi("nextafter", dtypes=FLOATS, grad=True, scalar_other=False),
    Bi("logaddexp", dtypes=FLOATS, grad=True, inplace=False, scalar_other=False),
    Bi("logaddexp2", dtypes=FLOATS, grad=True, inplace=False, scalar_other=False),
    Bi("copysign", grad=True), Bi("ldexp", grad=True, scalar_other=False),
    Bi("heaviside", grad=False, scalar_other=False),
    Bi("eq", dtypes=ALL), Bi("ne", dtypes=ALL), Bi("lt", dtypes=ALL), Bi("le", dtypes=ALL), Bi("gt", dtypes=ALL),
    Bi("ge", dtypes=ALL), Bi("logical_and", dtypes=ALL, scalar_other=False),
    Bi("logical_or", dtypes=ALL, scalar_other=False), Bi("logical_xor", dtypes=ALL, scalar_other=False), Bi("bitwise_and", dtypes=("int64", "int32", "uint8", "bool")),
    Bi("bitwise_or", dtypes=("int64", "int32", "uint8", "bool")),
    Bi("bitwise_xor", dtypes=("int64", "int32", "uint8", "bool")),
    # ---- reductions ----------------------------------------------------------------------------
    R("sum"), R("mean"), R("amax"), R("amin"), R("std", _NO_EMPTY, zero_d=False),
    R("var", _NO_EMPTY, zero_d=False), R("logsumexp", tuple(d for d in _NO_EMPTY if d is not None)),
    R("norm", _NO_EMPTY), R("prod", (None, 0, 1, -1)), R("nansum", _NO_EMPTY), R("nanmean", _NO_EMPTY),
]
BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "duplicate rows"
UNARY = [op for op in OPS if op.kind == "unary"]
BINARY = [op for op in OPS if op.kind == "binary"]
REDUCTIONS = [op for op in OPS if op.kind == "reduction"]


def ref(op):
    """The row's reference: PyTorch's function of that name."""
    import torch
    return getattr(torch, op.name)
