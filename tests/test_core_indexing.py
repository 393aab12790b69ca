"""Core tensor library vs PyTorch: indexing (basic and advanced), __setitem__, gather/scatter,
index_select, masked_fill, where, take_along_dim."""
import numpy as np
import pytest
import torch

from core_util import wt, cmp, raises_like, arr

X = arr((4, 5, 3), "float32")
MASK = np.array([True, False, True, True, False])


def _idx(T, spec):
    """Index specs may hold lists/arrays meant as index tensors: build them with library T."""
    out = []
    for s in spec:
        if isinstance(s, np.ndarray):
            out.append(T.tensor(s.tolist(), dtype=T.bool if s.dtype == bool else T.int64))
        else:
            out.append(s)
    return tuple(out)


GET = [
    (1,), (-1,), (slice(1, 3),), (slice(None, None, 2),), (slice(-3, None),), (slice(None, None, -1),) if False else
    (slice(3, 0, -1),) if False else (slice(1, None, 3),),
    (1, 2), (1, 2, 0), (-1, -2, -3), (slice(None), 1), (Ellipsis, 1), (1, Ellipsis), (None,), (None, 1, None),
    (slice(None), None, 2), (Ellipsis, None), (slice(1, 4, 2), slice(None, None, 2), 0), (slice(10, 20),),
    (slice(2, 2),), (slice(-100, 100),),
    # advanced
    (np.array([0, 2, 3]),), (np.array([[0, 1], [3, 3]]),), (np.array([-1, 0]),), (slice(None), np.array([4, 0, 1])),
    (np.array([0, 1]), np.array([2, 3])), (np.array([0, 1]), slice(None), np.array([2, 0])),
    (slice(None), np.array([0, 1]), np.array([2, 0])), (np.array([[0], [1]]), np.array([1, 2, 3])),
    (1, np.array([0, 4])), (Ellipsis, np.array([0, 2])), (None, np.array([1, 2])),
    (np.array([True, False, True, False]),), (slice(None), MASK), (slice(None), MASK, 1),
    (arr((4, 5), "bool"),), (arr((4, 5, 3), "bool"),), (np.array([1, 0, 1, 0], dtype=bool), 2),
    (np.array([], dtype=np.int64),), (np.array([0, 2]), 1, np.array([1, 2])),
]


@pytest.mark.parametrize("spec", GET, ids=[str(i) for i in range(len(GET))])
def test_getitem(device, spec):
    strides = not any(isinstance(s, np.ndarray) for s in spec)
    cmp(device, lambda T, x: x[_idx(T, spec)], X, strides=strides)


def test_getitem_python_lists_and_scalars(device):
    cmp(device, lambda T, x: x[[0, 2]], X)
    cmp(device, lambda T, x: x[[0, 2], [1, 1]], X)
    cmp(device, lambda T, x: x[[True, False, True, True]], X)
    cmp(device, lambda T, x: x[T.tensor(2)], X)
    cmp(device, lambda T, x: x[1][2][0], X)
    cmp(device, lambda T, x: x[x > 0], X)
    cmp(device, lambda T, x: x[x[:, :, 0] > 0], X)
    cmp(device, lambda T, x: x[..., 0][x[..., 1] < 0], X)
    s = arr((), "float32")
    cmp(device, lambda T, x: x[None], s)
    cmp(device, lambda T, x: x[...], s)
    cmp(device, lambda T, x: x[()], s)
    cmp(device, lambda T, x: x[T.tensor(True)], s)
    cmp(device, lambda T, x: x[T.tensor(False)], s)
    for dt in ("int64", "bool", "uint8", "int32"):
        cmp(device, lambda T, x: x[1:, ::2], arr((3, 4), dt))
        cmp(device, lambda T, x: x[[2, 0]], arr((3, 4), dt))


def test_getitem_errors(device):
    raises_like(device, lambda T, x: x[4], X, phrase="index 4 is out of bounds for dimension 0 with size 4")
    raises_like(device, lambda T, x: x[0, 5], X, phrase="index 5 is out of bounds for dimension 1 with size 5")
    raises_like(device, lambda T, x: x[-5], X, phrase="index -5 is out of bounds for dimension 0 with size 4")
    raises_like(device, lambda T, x: x[T.tensor([0, 4])], X, phrase="index 4 is out of bounds for dimension 0 "
                                                                     "with size 4")
    raises_like(device, lambda T, x: x[0, 0, 0, 0], X, phrase="too many indices for tensor of dimension 3")
    raises_like(device, lambda T, x: x[T.tensor([True, False])], X, phrase="The shape of the mask [2] at index 0 "
                                                                           "does not match")
    cmp(device, lambda T, x: x[..., ...], X)  # PyTorch allows a second '...' (it stands for no dims)
    cmp(device, lambda T, x: x[..., 0, ...], X)
    raises_like(device, lambda T, x: x[T.tensor([0.0])], X,
                phrase="tensors used as indices must be long, int, byte or bool tensors")
    raises_like(device, lambda T, x: x[::-1], X, phrase="step must be greater than zero")
    for bad in (1.5, (0, 2.5), object()):  # PyTorch's IndexError names the entry's type
        raises_like(device, lambda T, x: x[bad], X, phrase="only integers, slices (`:`), ellipsis (`...`), None and "
                    "long or byte Variables are valid indices")
    raises_like(device, lambda T, x: x["a"], X, phrase="invalid data type 'str'")


SET = [
    ((1,), 5.0), ((slice(None), 2), 0.0), ((Ellipsis, 1), -1.0), ((slice(1, 3), slice(None, None, 2)), 7.0),
    ((np.array([0, 3]),), 2.0), ((np.array([0, 3]), np.array([1, 4])), 9.0), ((slice(None), MASK), 4.0),
    ((np.array([True, False, True, False]), 1), 3.0), ((None, 0), 1.0), ((np.array([1, 1, 1]),), 8.0),
    ((0, slice(None), np.array([2, 0])), 6.0),
]


@pytest.mark.parametrize("case", SET, ids=[str(i) for i in range(len(SET))])
def test_setitem_scalar(device, case):
    spec, v = case

    def fn(T, x):
        x[_idx(T, spec)] = v
        return x
    cmp(device, fn, X)


@pytest.mark.parametrize("case", SET[:9], ids=[str(i) for i in range(9)])
def test_setitem_tensor_values(device, case):
    spec, _ = case

    def fn(T, x, y):
        target = x[_idx(T, spec)]
        src = y.reshape(-1)[:target.numel()].reshape(target.shape)
        x[_idx(T, spec)] = src
        return x
    cmp(device, fn, X, arr((60,), "float32"))


def test_setitem_broadcast_dtype_and_mask(device):
    def f1(T, x, y):
        x[:, 1] = y  # broadcast a row
        return x
    cmp(device, f1, X, arr((3,), "float32"))

    def f2(T, x):
        x[x < 0] = 0
        return x
    cmp(device, f2, X)

    def f3(T, x):
        x[1:3] = T.tensor([1, 2, 3])  # int values into a float tensor
        return x
    cmp(device, f3, X)

    def f4(T, x):
        x[0] = 2.7  # float into int: truncates
        x[[1, 2], 0] = x.new_tensor([5, 6])
        return x
    cmp(device, f4, arr((3, 2), "int64"))

    def f4_bad(T, x):
        x[[1, 2], 0] = x.new_tensor([5, 6], dtype=T.int32)
    raises_like(device, f4_bad, arr((3, 2), "int64"), phrase="Index put requires the source and destination dtypes "
                                                              "match, got Long for the destination and Int")

    def f5(T, x):
        x[T.tensor([True, False, True])] = True
        return x
    cmp(device, f5, arr((3,), "bool"))

    def f6(T, x):
        x[...] = 1
        x[()] = 3 if x.dim() == 0 else 1
        return x
    cmp(device, f6, arr((), "float32"))


def test_setitem_errors(device):
    def bad_shape(T, x, y):
        x[0] = y
    raises_like(device, bad_shape, X, arr((4,), "float32"), phrase="The expanded size of the tensor (3) must match the existing size (4)")

    def oob(T, x):
        x[T.tensor([0, 9])] = 1.0
    raises_like(device, oob, X, phrase="out of bounds")


# ---- gather / scatter / index_select / masked_fill / where / take_along_dim ---------------------
G = arr((3, 4), "float32")


def test_gather(device):
    for dim, idx in ((0, arr((2, 4), "int64", 0, 3)), (1, arr((3, 2), "int64", 0, 4)), (-1, arr((2, 3), "int64", 0, 4)),
                     (1, arr((3, 0), "int64", 0, 4))):
        cmp(device, lambda T, x, i: T.gather(x, dim, i), G, idx)
        cmp(device, lambda T, x, i: x.gather(dim, i), G, idx)
    raises_like(device, lambda T, x, i: x.gather(1, i), G, np.array([[4]]), phrase="out of bounds")
    raises_like(device, lambda T, x, i: x.gather(1, i), G, np.array([[0.0]], dtype=np.float32),
                phrase="gather(): Expected dtype int32/int64 for index")
    raises_like(device, lambda T, x, i: x.gather(2, i), G, np.array([[0]]), phrase="Dimension out of range")


def test_scatter_and_scatter_add(device):
    src = arr((3, 4), "float32")
    idx0 = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    idx1 = np.array([[3, 0], [1, 2], [0, 3]])
    cmp(device, lambda T, x, i, s: x.scatter(0, i, s), G, idx0, src)
    cmp(device, lambda T, x, i, s: T.scatter(x, 1, i, s), G, idx1, src)
    cmp(device, lambda T, x, i: x.scatter(1, i, 2.5), G, idx1)
    cmp(device, lambda T, x, i, s: x.scatter_add(0, i, s), G, idx0, src)
    cmp(device, lambda T, x, i, s: T.scatter_add(x, 1, i, s), G, np.array([[0, 0], [1, 1], [3, 3]]), src)
    cmp(device, lambda T, x, i, s: (x.scatter_(1, i, s), x)[1], G, idx1, src)
    cmp(device, lambda T, x, i, s: (x.scatter_add_(0, i, s), x)[1], G, idx0, src)
    cmp(device, lambda T, x, i, s: x.scatter_add(0, i, s), arr((4,), "int64"), np.array([0, 0, 3, 0]),
        arr((4,), "int64"))
    raises_like(device, lambda T, x, i, s: x.scatter(0, i, s), G, np.array([[5]]), src,
                phrase="index 5 is out of bounds for dimension 0 with size 3")


def test_index_select(device):
    for dim, idx in ((0, [2, 0, 2]), (1, [3, 1]), (-1, []), (0, [1])):
        cmp(device, lambda T, x: x.index_select(dim, T.tensor(idx, dtype=T.int64, device=x.device)), G)
        cmp(device, lambda T, x: T.index_select(x, dim, T.tensor(idx, dtype=T.int32, device=x.device)), G)
    raises_like(device, lambda T, x: x.index_select(0, T.tensor([3], device=x.device)), G, phrase="out of range")
    raises_like(device, lambda T, x: x.index_select(0, T.tensor([[0]], device=x.device)), G,
                phrase="Index is supposed to be a vector")


def test_gather_from_broadcast_scalar(device):
    """A 0-d tensor expanded (all strides 0) and then gathered: the offsets are a constant fill,
    made on the tensor's device (webgpu once got a host array here)."""
    m = arr((4, 5), "bool")
    cmp(device, lambda T, x, m: T.masked_select(x, m), np.array(2.5, dtype=np.float32), m)
    cmp(device, lambda T, x: x.expand(3, 2)[T.tensor([0, 2], device=x.device)], np.array(1.5, dtype=np.float32))


def test_masked_fill(device):
    m = arr((3, 4), "bool")
    cmp(device, lambda T, x, m: x.masked_fill(m, -1.0), G, m)
    cmp(device, lambda T, x, m: T.masked_fill(x, m, 2), G, m[0])  # broadcast mask
    cmp(device, lambda T, x, m: x.masked_fill(m, T.tensor(5.0, device=x.device)), G, m)
    cmp(device, lambda T, x, m: (x.masked_fill_(m, 0.5), x)[1], G, m)
    cmp(device, lambda T, x, m: x.masked_fill(m, 3), arr((3, 4), "int64"), m)
    raises_like(device, lambda T, x, m: x.masked_fill(m, 1.0), G, arr((3, 4), "int64"),
                phrase="masked_fill_ only supports boolean masks")
    raises_like(device, lambda T, x, m: x.masked_fill(m, T.ones(2)), G, m,
                phrase="only supports a 0-dimensional value tensor")


def test_where(device):
    c = arr((3, 4), "bool")
    cmp(device, lambda T, c, a, b: T.where(c, a, b), c, G, arr((3, 4), "float32"))
    cmp(device, lambda T, c, a, b: T.where(c, a, b), c, G, arr((4,), "float32"))  # broadcast
    cmp(device, lambda T, c, a: T.where(c, a, 0.0), c, G)
    cmp(device, lambda T, c, a: T.where(c, 1, a), c, arr((3, 4), "int64"))
    cmp(device, lambda T, c, a, b: T.where(c, a, b), c, arr((3, 4), "int64"), G)  # promotion
    cmp(device, lambda T, c, a, b: a.where(c, b), c, G, arr((1, 4), "float32"))
    cmp(device, lambda T, c: T.where(c), c)
    cmp(device, lambda T, c: T.where(c, 1.0, 0.0), c)
    raises_like(device, lambda T, c, a: T.where(c, a, a), arr((3, 4), "float32"), G,
                phrase="where expected condition to be a boolean tensor")
    raises_like(device, lambda T, c, a, b: T.where(c, a, b), c, G, arr((3,), "float32"),
                phrase="must match the size of tensor")


def test_take_along_dim(device):
    idx = arr((3, 2), "int64", 0, 4)
    cmp(device, lambda T, x, i: T.take_along_dim(x, i, 1), G, idx)
    cmp(device, lambda T, x, i: T.take_along_dim(x, i, dim=0), G, arr((2, 4), "int64", 0, 3))
    cmp(device, lambda T, x, i: T.take_along_dim(x, i), G, np.array([0, 11, 5]))
    cmp(device, lambda T, x, i: x.take_along_dim(i, -1), G, arr((1, 3), "int64", 0, 4))  # broadcast
    cmp(device, lambda T, x: T.take_along_dim(x, x.argmax(1, keepdim=True), 1), G)
    cmp(device, lambda T, x, i: T.take(x, i), G, np.array([[0, 11], [4, -1]]))


def test_index_put_and_friends(device):
    v = arr((2,), "float32")
    cmp(device, lambda T, x, v: x.index_put((T.tensor([0, 2], device=x.device), T.tensor([1, 3], device=x.device)), v), G, v)
    cmp(device, lambda T, x, v: x.index_put((T.tensor([0, 0], device=x.device), T.tensor([1, 1], device=x.device)), v, accumulate=True), G, v)
    cmp(device, lambda T, x: x.index_add(0, T.tensor([0, 2, 0], device=x.device), x.new_ones(3, 4)), G)
    cmp(device, lambda T, x: x.index_fill(1, T.tensor([0, 3], device=x.device), -2.0), G)
    cmp(device, lambda T, x: x.index_copy(0, T.tensor([2, 0], device=x.device), x.new_zeros(2, 4)), G)
    cmp(device, lambda T, x, m: x.masked_select(m), G, arr((3, 4), "bool"))
    cmp(device, lambda T, x: x.nonzero(), arr((3, 4), "int64", 0, 2))
    cmp(device, lambda T, x: x.nonzero(as_tuple=True), arr((3, 4), "int64", 0, 2))
    cmp(device, lambda T, x: T.count_nonzero(x), arr((3, 4), "int64", 0, 2))
    cmp(device, lambda T, x: T.argwhere(x), arr((3, 4), "bool"))
