"""Finite-difference gradient checks (float64 on cpu), as torch.autograd.gradcheck."""
import warnings

from .. import _late
from ..random import Generator
from ._api import grad as autograd_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _flat_outputs(fn, inputs):
    Tensor = _late.Tensor
    out = _as_tuple(fn(*inputs))
    return [o for o in out if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical_jacobian(fn, inputs, i, eps):
    """Columns d(out)/d(inputs[i][j]) by central differences. As in PyTorch, fn runs with
    grad mode as the caller has it and the perturbed input keeps requires_grad, so fn may
    itself differentiate (gradgradcheck)."""
    x = inputs[i]
    cols = []
    flat = x.detach().reshape(-1)
    base = flat.tolist()

    def at(j, v):
        vals = list(base)
        vals[j] = v
        xi = flat.new_tensor(vals).reshape(x.shape).requires_grad_(x.requires_grad)
        args = list(inputs)
        args[i] = xi
        return [o.detach().reshape(-1).tolist() for o in _flat_outputs(fn, args)]

    for j in range(len(base)):
        hi, lo = at(j, base[j] + eps), at(j, base[j] - eps)
        cols.append([[(a - b) / (2 * eps) for a, b in zip(up, down)] for up, down in zip(hi, lo)])
    return cols  # cols[j][out_k][m]


def _analytical_jacobian(fn, inputs, i):
    _creation = _late.creation
    outs = _flat_outputs(fn, inputs)
    x = inputs[i]
    rows = []  # rows[out_k][m] -> list over j
    for o in outs:
        flat_o = o.reshape(-1)
        r = []
        for m in range(flat_o.numel()):
            if not o.requires_grad:
                r.append([0.0] * x.numel())
                continue
            go = _creation.zeros_like(o).reshape(-1)
            go[m] = 1.0
            (g,) = autograd_grad([o], [x], [go.reshape(o.shape)], retain_graph=True, allow_unused=True)
            r.append([0.0] * x.numel() if g is None else g.reshape(-1).tolist())
        rows.append(r)
    return rows


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False, fast_mode=False,
              masked=None):
    Tensor = _late.Tensor
    inputs = _as_tuple(inputs)
    for k, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name != "float64":
            warnings.warn(f"Input #{k} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision floating point.",
                          stacklevel=1)
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        num = _numerical_jacobian(func, inputs, i, eps)
        ana = _analytical_jacobian(func, inputs, i)
        for k in range(len(ana)):
            for m in range(len(ana[k])):
                for j in range(len(num)):
                    a, n = ana[k][m][j], num[j][k][m]
                    if abs(a - n) > atol + rtol * abs(n):
                        msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                               f"numerical:{n}\nanalytical:{a}\n(at output element {m}, input element {j})")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **kwargs):
    """Checks second derivatives: gradcheck of the function x -> grad(func(x), x, v)."""
    _creation = _late.creation
    inputs = _as_tuple(inputs)
    outs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        gen = Generator().manual_seed(0)
        grad_outputs = tuple(_creation.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs)
    diff = [k for k, x in enumerate(inputs) if hasattr(x, "requires_grad") and x.requires_grad]

    def first(*xs):
        outs = _flat_outputs(func, xs)
        gs = autograd_grad(outs, [xs[k] for k in diff], list(grad_outputs), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else _creation.zeros_like(xs[k]) for g, k in zip(gs, diff))

    return gradcheck(first, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
