"""default_collate / default_convert: how a list of samples becomes a batch."""
import collections.abc

from ... import _dtype
from ..._tensor import Tensor
from ...ops import _creation, shape as _shape

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(x):
    return type(x).__module__ == "numpy"


def default_collate(batch):
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return _shape.stack(batch, 0)
    if _is_numpy(elem):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if elem.dtype.kind in "OSUa":
                raise TypeError(_ERR.format(elem.dtype))
            return default_collate([_creation.as_tensor(b) for b in batch])
        if getattr(elem, "shape", None) == ():  # numpy scalars
            return _creation.as_tensor(batch)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(elem, batch)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(elem, batch)
    raise TypeError(_ERR.format(elem_type))



def _collate_mapping(elem, batch):
    elem_type = type(elem)
    out = {key: default_collate([d[key] for d in batch]) for key in elem}
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = elem_type.__new__(elem_type)
            if elem_type is not dict:
                clone.__init__()
            clone.update(out)
            return clone
        return elem_type(out)
    except TypeError:
        return out


def _collate_sequence(elem, batch):
    it = iter(batch)
    n = len(next(it))
    if not all(len(e) == n for e in it):
        raise RuntimeError("each element in list of batch should be of equal size")
    transposed = list(zip(*batch))
    if isinstance(elem, tuple):
        return [default_collate(list(s)) for s in transposed]
    try:
        return type(elem)([default_collate(list(s)) for s in transposed])
    except TypeError:
        return [default_collate(list(s)) for s in transposed]

def default_convert(data):
    """What the loader does with samples when batching is off: numpy arrays become tensors."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data) and type(data).__name__ == "ndarray" and data.dtype.kind not in "OSUa":
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
