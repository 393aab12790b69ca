"""torch.layout and torch.memory_format: the named constants that say how a tensor's elements are stored
(torch.strided, torch.sparse_coo, the compressed sparse_csr, sparse_csc, sparse_bsr, sparse_bsc) and how a dense
tensor's are ordered (torch.contiguous_format, preserve_format, channels_last, channels_last_3d).

webtorch's dense tensors are laid out row-major whatever the memory_format asked for; the arguments are taken (and
ignored) as PyTorch takes them."""


class _Named:
    """A named constant: printed as torch.<name>, pickled by its name."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


class layout(_Named):
    __slots__ = ()


class memory_format(_Named):
    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")  # torch.nested's jagged layout

contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def _by_name(name):
    return globals()[name]
