"""The op registry: webtorch's public functions and Tensor's methods, each declared once.

`register(fn, *names)` makes `fn` `webtorch.<name>` and `Tensor.<name>` (self first) for each
name (default `fn.__name__`); `method=False` / `function=False` declare one form only. Whatever
enters the registry is routed through `__torch_function__` (once), so binding, routing and
`webtorch.__all__` have this one source:

    FUNCTIONS  public name -> callable   (webtorch.<name>; `ops.__all__` is its keys)
    METHODS    method name -> callable   (`bind(Tensor)` sets them)
    ELEMENTWISE element-wise op name -> Decl (kind, dtype rule, PyTorch node name, reference
               decomposition), filled by `ops/pointwise.py`'s `unary`/`binary` declarations

How to add an op: docs/adding_an_op.md.
"""
from collections import namedtuple

from ..overrides import torch_function

FUNCTIONS = {}
METHODS = {}
ELEMENTWISE = {}
CUSTOM_OPS = {}  # "namespace::name" -> torch.library.custom_op's op (torch.ops.namespace.name)
# kind 'unary' / 'binary'; rule: the dtype rule; node: PyTorch's autograd node name (None: not
# differentiable); ref: the reference decomposition (None: a backend primitive)
Decl = namedtuple("Decl", "kind rule node ref")


def routed(fn):
    """fn, routed through `__torch_function__` (overrides.torch_function) unless it already is."""
    return fn if hasattr(fn, "_impl") else torch_function(fn)


def register(fn=None, *names, function=True, method=True):
    """Declare fn public under `names` (default its __name__); usable as a decorator."""
    if fn is None:
        return lambda f: register(f, *names, function=function, method=method)
    f = routed(fn)
    if f is not fn and names:  # a new routing wrapper carries the public name (a lambda's, float_'s)
        f.__name__ = f.__qualname__ = names[0]
    for n in names or (fn.__name__,):
        if function:
            FUNCTIONS[n] = f
        if method:
            METHODS[n] = f
    return f


def register_method(fn, *names):
    """Declare fn a Tensor method only (`x.float()`, `x.view(...)`)."""
    return register(fn, *names, function=False)


def bind(Tensor):
    for n, f in METHODS.items():
        setattr(Tensor, n, f)
