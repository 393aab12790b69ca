"""torch.export.dynamic_shapes: Dim, and the builders of a `dynamic_shapes` spec (ShapesCollection,
AdditionalInputs), as PyTorch's: a spec is a dict by forward's argument names (or a tuple by position)
whose entries mirror the inputs' structure, a tensor's entry a dict {dim: Dim} or a tuple of Dims."""
import dataclasses
import inspect

from .._tensor import Tensor

__all__ = ["Constraint", "Dim", "dims", "ShapesCollection", "AdditionalInputs"]


class Dim:
    """A dynamic dimension (torch.export.Dim): Dim("batch"), Dim("batch", min=2, max=64)."""
    AUTO = DYNAMIC = None  # set below
    STATIC = None

    def __init__(self, name, *, min=None, max=None):
        self.__name__ = name
        self.min, self.max = min, max

    def __repr__(self):
        return f"Dim({self.__name__!r})"


Dim.AUTO = Dim("AUTO")
Dim.DYNAMIC = Dim("DYNAMIC")
Dim.STATIC = "STATIC"


def dims(*names, min=None, max=None):
    """torch.export.dims("a", "b"): one Dim per name, all with the same range."""
    return tuple(Dim(name, min=min, max=max) for name in names)


@dataclasses.dataclass
class _Constraint:
    """A constraint on one input tensor dimension (the tensor's id, the dim, the Dim's name and range)."""
    t_id: int
    dim: int
    name: str
    min: int = 0
    max: int = None


Constraint = _Constraint


def _dim_name(size):
    """The dim's name when a shape entry is exactly one dynamic dim (a Sym `batch`), else None."""
    coefs = getattr(size, "coefs", None)
    if coefs and size.const == 0 and len(coefs) == 1:
        (names, c), = coefs.items()
        return names[0] if c == 1 and len(names) == 1 else None
    return None


def _combine_args(m, args, kwargs=None):
    """forward's arguments by name, in signature order (PyTorch's _combine_args)."""
    fwd = getattr(m, "forward", m)
    try:
        sig = inspect.signature(fwd)
    except (TypeError, ValueError):
        return {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs or {})
    return dict(sig.bind(*args, **(kwargs or {})).arguments)


def _map_structure(fn, value, *others):
    """fn on each leaf of value (tensors and non-containers), walking tuples, lists and dicts with `others`."""
    if type(value) in (tuple, list):
        if any(type(o) is not type(value) or len(o) != len(value) for o in others):
            raise ValueError(f"The following inputs were found to have differing structures: {(value,) + others}.")
        return type(value)(_map_structure(fn, *vs) for vs in zip(value, *others))
    if type(value) is dict:
        if any(type(o) is not dict or o.keys() != value.keys() for o in others):
            raise ValueError(f"The following inputs were found to have differing structures: {(value,) + others}.")
        return {k: _map_structure(fn, value[k], *(o[k] for o in others)) for k in value}
    return fn(value, *others)


class ShapesCollection:
    """Builder for dynamic_shapes: assign a shape spec to each input tensor (`sc[x] = (dim, 4)`), and
    `sc.dynamic_shapes(m, args, kwargs)` lays them out as the inputs are structured."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        if not isinstance(t, Tensor):
            raise AssertionError(f"Cannot assign shape to non-tensor or non-_IntWrapper type {type(t)}")
        if id(t) in self._shapes:
            if shape != self._shapes[id(t)]:
                raise AssertionError(f"Shapes assigned to input do not match: expected {self._shapes[id(t)]}, "
                                     f"got {shape}")
        else:
            self._shapes[id(t)] = shape

    def __getitem__(self, t):
        return self._shapes.setdefault(id(t), {})

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None):
        """The dynamic_shapes spec for these args and kwargs (a dict by forward's argument names)."""
        found = set()

        def find_shape(t):
            if id(t) in self._shapes:
                found.add(id(t))
                return self._shapes[id(t)]
            return None
        spec = _map_structure(find_shape, _combine_args(m, args, kwargs))
        if any(k not in found for k in self._shapes):
            raise ValueError("Some tensors that were assigned shapes were not found in args. Maybe such tensors were "
                             "copied when passing them as args? Maybe such tensors are contained in classes that were "
                             "not registered with pytree?")
        return spec


class AdditionalInputs:
    """Infers dynamic_shapes from more example inputs: a dim whose size differs from the export example's in
    any of them is Dim.DYNAMIC, the others static (None)."""

    def __init__(self):
        self._examples = []

    def add(self, args, kwargs=None):
        """Additional input args (a tuple) and kwargs (a dict or None)."""
        if type(args) is not tuple:
            raise AssertionError(f"Representative args {args} must be a tuple")
        if kwargs is not None and type(kwargs) is not dict:
            raise AssertionError(f"Representative kwargs {kwargs} must be None or a dict")
        self._examples.append((args, kwargs))

    def dynamic_shapes(self, m, args, kwargs=None):
        """The dynamic_shapes spec merging the shapes of args/kwargs and of every additional input."""
        combined = [_combine_args(m, a, kw) for a, kw in [(args, kwargs), *self._examples]]
        return _map_structure(_mark_dynamism, *combined)

    def verify(self, ep):
        """Checks that the exported program accepts each additional input (raises if not)."""
        epm = ep.module()
        for args, kwargs in self._examples:
            epm(*args, **(kwargs or {}))


def _mark_dynamism(v, *others):
    if not all(type(v) is type(o) for o in others):
        raise ValueError(f"The following inputs were found to have differing types, so they cannot be marked as "
                         f"dynamic: {(v,) + others}.")
    if isinstance(v, Tensor):
        if any(o.dim() != v.dim() for o in others):
            raise ValueError(f"The following inputs were found to have differing ranks: {(v,) + others}.")
        return tuple(None if all(o.shape[d] == n for o in others) else Dim.DYNAMIC for d, n in enumerate(v.shape))
    if isinstance(v, int) and not isinstance(v, bool):
        return None if all(o == v for o in others) else Dim.DYNAMIC
    if not all(o == v for o in others):
        raise ValueError(f"The following inputs were found to have differing values, but they cannot be marked as "
                         f"dynamic: {(v,) + others}.")
    return None
