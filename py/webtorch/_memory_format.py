"""torch.memory_format: the type of torch.contiguous_format, preserve_format, channels_last, channels_last_3d.

webtorch's tensors are laid out row-major whatever the memory_format asked for; the arguments are taken (and
ignored) as PyTorch takes them."""


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def _by_name(name):
    return globals()[name]
