"""PackedSequence and the padding/packing helpers (as torch/nn/utils/rnn.py).

A PackedSequence holds the time steps of a batch of sequences sorted by decreasing length,
step after step: `data` is (sum(lengths), *), `batch_sizes[t]` the number of sequences still
running at step t (a cpu int64 tensor). Packing and unpacking are one gather each (index_select
of rows), so their backward is one scatter-add, whatever the number of steps.
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import _dtype
from ..._tensor import Tensor
from ...ops import _creation, shape as _shape
from .. import functional as F

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    return None if optional is None else fn(optional)


def _converter(name, dtype):
    """PackedSequence's method ``name`` (double, float, ...): ``to(dtype=dtype)``."""
    def convert(self):
        return self.to(dtype=dtype)
    convert.__name__, convert.__qualname__ = name, f"PackedSequence.{name}"
    return convert


class PackedSequence(PackedSequence_):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    double = _converter("double", _dtype.float64)
    float = _converter("float", _dtype.float32)
    half = _converter("half", _dtype.float16)
    long = _converter("long", _dtype.int64)
    int = _converter("int", _dtype.int32)
    byte = _converter("byte", _dtype.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = _creation.empty_like(permutation)
    output.scatter_(0, permutation, _creation.arange(0, permutation.numel(), device=permutation.device))
    return output


def _packed_rows(batch_sizes, T, B):
    """Row t*B + b of a (T, B, *) tensor for each packed element, in packed order."""
    return [t * B + b for t, n in enumerate(batch_sizes) for b in range(n)]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    if not isinstance(lengths, Tensor):
        lengths = _creation.as_tensor(lengths, dtype=_dtype.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=_dtype.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = lengths.sort(descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    lens = [int(v) for v in lengths.tolist()]
    T, B = input.shape[0], input.shape[1]
    if len(lens) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={B})")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lens[0] > T:
        raise RuntimeError(f"Expected all lengths to be at most the sequence length {T}, but got {lens[0]}")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    rows = _creation.tensor(_packed_rows(batch_sizes, T, B), dtype=_dtype.int64, device=input.device)
    data = input.reshape((T * B,) + tuple(input.shape[2:])).index_select(0, rows)
    bs = _creation.tensor(batch_sizes, dtype=_dtype.int64, device="cpu")  # on cpu whatever the default device
    return PackedSequence(data, bs, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    batch_sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    T, B = max_seq_length, batch_sizes[0]
    # every (t, b) reads its packed row, or the padding row appended at the end
    where = [len(data)] * (T * B)
    for k, r in enumerate(_packed_rows(batch_sizes, T, B)):
        where[r] = k
    pad_row = _creation.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    idx = _creation.tensor(where, dtype=_dtype.int64, device=data.device)
    padded = _shape.cat([data, pad_row]).index_select(0, idx).reshape((T, B) + tuple(data.shape[1:]))
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = _creation.tensor([sum(1 for n in batch_sizes if n > b) for b in range(B)], dtype=_dtype.int64,
                               device="cpu")
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        return padded.index_select(0 if batch_first else 1, unsorted_indices), lengths[unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    n = max(s.shape[0] for s in sequences)
    trail = 2 * (sequences[0].dim() - 1)
    padded = [F.pad(s, (0,) * trail + ((n - s.shape[0], 0) if padding_side == "left" else (0, n - s.shape[0])),
                    value=padding_value) for s in sequences]
    return _shape.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths.tolist())]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = _creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
