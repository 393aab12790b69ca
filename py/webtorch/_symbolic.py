"""torch.sym_* on plain Python numbers: PyTorch's symbolic-shape helpers (torch.compile's SymInt and
SymFloat) act as the builtins do when given ints and floats, which is all webtorch's shapes are."""
import builtins
import math


def sym_int(a):
    return int(a)


def sym_float(a):
    return float(a)


def sym_max(a, b):
    return builtins.max(a, b)


def sym_min(a, b):
    return builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return builtins.sum(args)
