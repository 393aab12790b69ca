"""Helpers shared by the families of torch.nn.functional."""
from ... import _dtype
from ...ops import indexing as _ix
from ...ops._creation import arange as _arange, tensor as _tensor

int64 = _dtype.int64


# ---- helpers ---------------------------------------------------------------------------------
def _ntuple(n, name="value"):
    def parse(x):
        if isinstance(x, (list, tuple)):
            if len(x) == 1 and n > 1:
                return tuple(x) * n
            return tuple(int(v) for v in x)
        return (int(x),) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _iota(n, device):
    return _arange(n, dtype=int64, device=device)


def _idx(values, device):
    return _tensor(list(values), dtype=int64, device=device)


def _gather_dim(x, d, idx):
    """x.index_select(d, idx) for indices known to be in range (no host round trip)."""
    nd = x.dim()
    coords = [None] * nd
    coords[d] = idx.reshape((idx.numel(),) + (1,) * (nd - d - 1))
    shape = list(x.shape)
    shape[d] = idx.numel()
    return _ix.take_offsets(x, coords, tuple(shape), node=_ix.IndexSelect)


def _batchify(input, spatial, name):
    """(input with a batch dim, whether it was unbatched)."""
    if input.dim() == spatial + 1:
        return input.unsqueeze(0), True
    if input.dim() != spatial + 2:
        raise RuntimeError(f"{name}: Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input, but got "
                           f"input of size: {list(input.shape)}")
    return input, False


def _shape_str(s):
    return "[" + ", ".join(str(v) for v in s) + "]"

