"""What the backend and IEEE tests iterate, derived from the element-wise records
(`webtorch/backends/elementwise.py`): a record added there is tested with no list to edit."""
import torch

from webtorch.backends.elementwise import RECORDS

# PyTorch's function of each kernel where its name is not PyTorch's
_TORCH = {"copy": torch.clone, "lshift": torch.bitwise_left_shift, "rshift": torch.bitwise_right_shift,
          "div": lambda a, b: torch.div(a, b) if a.is_floating_point() else torch.div(a, b, rounding_mode="trunc"),
          "trigamma": lambda x: torch.polygamma(1, x)}


def torch_oracle(name):
    """PyTorch's function computing the kernel `name` (torch.special's for `special_<name>`)."""
    if name in _TORCH:
        return _TORCH[name]
    if name.startswith("special_"):
        return getattr(torch.special, name[8:])
    return getattr(torch, name)


def kernels(arity, kind, lowering):
    """The names of the records of an arity taking compute kind `kind` ('f', 'i', 'u', 'b') with a lowering
    ('np', 'py', 'wgsl')."""
    return [n for n, r in RECORDS.items() if r.arity == arity and kind in r.kinds and getattr(r, lowering)]


FLOAT_ONLY = {n for n, r in RECORDS.items() if r.kinds == "f"}
INT_ONLY = {n for n, r in RECORDS.items() if "f" not in r.kinds}
BOOL_OK = {n for n, r in RECORDS.items() if "b" in r.kinds}
BOOL_OUT = {n for n, r in RECORDS.items() if r.out == "bool"}
INT_DIV = {n for n, r in RECORDS.items() if r.zero_div}
TOLERANT = {n for n, r in RECORDS.items() if r.tol is not None}  # transcendental: a few ulps apart
UNIT = {n for n, r in RECORDS.items() if -1 <= r.domain[0] and r.domain[1] <= 1}  # inputs in [-1, 1]
HALF_NATIVE = {n for n, r in RECORDS.items() if "float16" in (r.np or {})}  # float16 computed as float16
