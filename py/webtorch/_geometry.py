"""Strided geometry helpers shared by the front end and every backend (no dependencies).

A geometry is (shape, strides, offset), in elements. Contiguous means row-major with PyTorch's
conventions: a size-1 dimension's stride does not matter, and an empty tensor is contiguous.
"""


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def contiguous_strides(shape):
    """Row-major strides as PyTorch gives them: a size-0 or size-1 dimension counts as size 1."""
    if len(shape) == 1:
        return (1,)
    strides = []
    acc = 1
    for s in reversed(tuple(shape)):  # tuple(): a Size's Python __getitem__ would serve reversed()
        strides.append(acc)
        acc *= s if s > 1 else 1
    return tuple(reversed(strides))


def is_contiguous(shape, strides):
    expected = 1
    for s, st in zip(reversed(shape), reversed(strides)):
        if s != 1 and st != expected:
            return 0 in shape
        expected *= s
    return True
