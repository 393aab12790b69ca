"""Storages against PyTorch: Tensor.storage() (TypedStorage, its deprecation warning), the legacy
torch.FloatStorage-style classes, element writes seen through every view, set_ in all its forms,
resize_ growing a shared storage in place, new, share_memory_/is_shared, pin_memory, the deprecated
resize/resize_as, torch.from_file, set_default_tensor_type, and torch._C's zip record reader/writer."""
import warnings

import pytest
import torch

import webtorch as wt
from webtorch import _typed_storage

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated", "ignore:non-inplace resize")


def _pair(fn, *, device="cpu"):
    """fn(torch, device) on both libraries: the same values (or the same exception type and message)."""
    try:
        want = fn(torch, "cpu")
    except Exception as e:  # noqa: BLE001 - compared with webtorch's below
        with pytest.raises(type(e)) as got:
            fn(wt, device)
        assert str(got.value).split("\n")[0] == str(e).split("\n")[0]
        return None
    have = fn(wt, device)
    assert type(have).__name__ == type(want).__name__ or isinstance(want, torch.Tensor)
    if isinstance(want, torch.Tensor):
        assert have.tolist() == want.tolist() and tuple(have.shape) == tuple(want.shape)
        assert have.stride() == want.stride() and have.storage_offset() == want.storage_offset()
    else:
        assert have == want
    return have


def test_typed_storage_views_and_legacy_classes(device):
    for T in (torch, wt):
        t = T.arange(6.0, device=device if T is wt else "cpu").reshape(2, 3)
        v = t[1]
        s = t.storage()
        assert (len(s), s.size(), s.nbytes(), s.element_size(), s.dtype) == (6, 6, 24, 4, T.float32)
        s[4] = 40.0
        s[0:2] = 7
        assert v.tolist() == [3.0, 40.0, 5.0] and t[0].tolist() == [7.0, 7.0, 2.0]
        assert s.tolist() == [7.0, 7.0, 2.0, 3.0, 40.0, 5.0] and s[-1] == 5.0 and list(s) == s.tolist()
        assert s.type() == "torch.FloatStorage" and s.pickle_storage_type() == "FloatStorage"
        assert t.storage_type() is T.FloatStorage and T.is_storage(s) and T.is_storage(t.untyped_storage())
        assert not T.is_storage(t) and s.long().dtype is T.int64 and s.float() is not s
        assert isinstance(T.arange(3, device=t.device).storage(), T.LongStorage) is (t.device.type == "cpu")
        assert not isinstance(s, T.LongStorage) and s.fill_(1.5).tolist() == [1.5] * 6 and t.sum().item() == 9.0
        with pytest.raises(IndexError, match="index 6 out of range for storage of size 6"):
            s[6]
        with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
            s[1:2]
        assert not s.is_shared() and s.share_memory_() is s and s.is_shared() and t.is_shared()
    for name in ("Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte", "Bool",
                 "ComplexFloat", "ComplexDouble"):
        ts, ws = getattr(torch, name + "Storage")([1, 0]), getattr(wt, name + "Storage")([1, 0])
        assert repr(ws) == repr(ts) and ws.dtype == getattr(wt, str(ts.dtype)[6:])
        assert getattr(wt, name + "Storage").dtype is ws.dtype
    assert repr(wt.TypedStorage(0)) == repr(torch.TypedStorage(0))
    assert repr(wt.TypedStorage([1, 2], dtype=wt.int64)) == repr(torch.TypedStorage([1, 2], dtype=torch.int64))
    for args, kw in (((2, 3), {}), ((3,), {"dtype": torch.int64}), ((wt.ones(2),), {})):
        with pytest.raises(TypeError, match="FloatStorage'>.__new__ received an invalid combination"):
            wt.FloatStorage(*args, **kw)


def test_storage_warns_once():
    _typed_storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        wt.ones(2).storage()
        wt.ones(2).storage()
    assert [str(x.message)[:26] for x in w] == ["TypedStorage is deprecated"]


SET_CASES = [
    lambda T, d: T.zeros(3, device=d).set_(),
    lambda T, d: T.zeros(3, device=d).set_(T.arange(6.0, device=d)[1:].view(5, 1)),
    lambda T, d: T.zeros(3, device=d).set_(T.arange(6.0, device=d), 1, (2, 2)),
    lambda T, d: T.zeros(3, device=d).set_(T.arange(6.0, device=d).storage()),
    lambda T, d: T.zeros(3, device=d).set_(T.arange(6.0, device=d).storage(), 1, (2,), (2,)),
    lambda T, d: T.zeros(3, device=d).set_(source=T.arange(6.0, device=d).untyped_storage(), storage_offset=2,
                                           size=(2, 2), stride=(1, 2)),
    lambda T, d: T.zeros(3, device=d).set_(T.arange(6.0, device=d).storage(), 1),
    lambda T, d: T.zeros(3, device=d).set_(T.ones(2, dtype=T.int64, device=d)),
    lambda T, d: T.zeros(3, dtype=T.int64, device=d).set_(T.arange(6.0, device=d).storage()),
    lambda T, d: T.zeros(3, requires_grad=True, device=d).set_(T.ones(2, device=d)),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_set_(case, device):
    _pair(SET_CASES[case], device=device)


def test_set_grows_and_resize_keeps_elements(device):
    for T in (torch, wt):
        x = T.arange(4.0, device=device if T is wt else "cpu")
        v = x.view(2, 2)
        x.resize_(7)
        assert x[:4].tolist() == [0.0, 1.0, 2.0, 3.0] and len(x.storage()) == 7
        x[1], x[6] = 10.0, 6.0
        assert v.tolist() == [[0.0, 10.0], [2.0, 3.0]]
        y = T.zeros(0, device=x.device).set_(x.storage(), 6, (2, 2))  # past the end: the storage grows to 10
        assert len(x.storage()) == 10 and y[0, 0].item() == 6.0
        s = x.storage()
        s.resize_(3)
        assert s.tolist() == [0.0, 10.0, 2.0]


NEW_CASES = [
    lambda T, d: T.zeros(3, device=d).new(),
    lambda T, d: T.zeros(3, dtype=T.int64, device=d).new([1, 2]),
    lambda T, d: T.zeros(3, device=d).new((2, 3)),
    lambda T, d: T.zeros(3, device=d).new(2, 3).shape,
    lambda T, d: T.zeros(3, device=d).new(T.Size([4])).shape,
    lambda T, d: T.zeros(3, device=d).new(T.ones(2, device=d)),
    lambda T, d: T.zeros(3, device=d).new(T.arange(3.0, device=d).storage()),
    lambda T, d: T.arange(4.0, device=d).resize(2, 2),
    lambda T, d: T.arange(4.0, device=d).resize_as(T.zeros(4, 1)),
    lambda T, d: T.arange(4.0, device=d).resize(3),
]


@pytest.mark.parametrize("case", range(len(NEW_CASES)))
def test_new_and_resize(case, device):
    _pair(NEW_CASES[case], device=device)


def test_resize_gradient_and_memory_flags():
    for T in (torch, wt):
        x = T.arange(4.0, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 2)
        (y * T.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        assert x.grad.tolist() == [1.0, 2.0, 3.0, 4.0]
        t = T.ones(2)
        assert t.share_memory_() is t and t.is_shared() and not T.ones(2).is_shared()
        assert t.const_data_ptr() == t.data_ptr() and not t.is_pinned()
    if wt.accelerator.is_available():  # PyTorch here has no accelerator: its RuntimeError
        p = wt.ones(2).pin_memory()
        assert p.is_pinned() and p.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        torch.ones(2).pin_memory()


def test_from_file_and_default_tensor_type(tmp_path):
    f = tmp_path / "raw.bin"
    f.write_bytes(bytes(range(16)))
    for kw in ({"size": 4, "dtype": torch.int32}, {"size": 2}, {"size": 16, "dtype": torch.uint8}, {"size": 20}):
        _pair(lambda T, d, kw=kw: T.from_file(str(f), shared=False, **{k: getattr(T, str(v)[6:]) if k == "dtype"
                                                                        else v for k, v in kw.items()}))
    _pair(lambda T, d: T.FloatStorage.from_file(str(f), False, 4).tolist())
    with pytest.warns(UserWarning, match="set_default_tensor_type"):
        warnings.simplefilter("always")
        _typed_storage._warned_default_type.clear()
        wt.set_default_tensor_type(wt.DoubleTensor)
    try:
        assert wt.get_default_dtype() is wt.float64 and wt.tensor([1.0]).dtype is wt.float64
        wt.set_default_tensor_type("torch.FloatTensor")
        assert wt.get_default_dtype() is wt.float32
        for bad in (wt.float64, wt.LongTensor):
            with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
                wt.set_default_tensor_type(bad)
    finally:
        wt.set_default_dtype(wt.float32)


def test_file_records_both_ways(tmp_path):
    for W, R in ((wt, torch), (torch, wt), (wt, wt)):
        path = str(tmp_path / f"{W.__name__}{R.__name__}.zip")
        w = W.PyTorchFileWriter(path)
        w.write_record("a", b"hello", 5)
        w.write_record("t/0", W.arange(3.0), 12) if W is wt else w.write_record("t/0", b"\0" * 12, 12)
        with pytest.raises(RuntimeError, match="Tried to serialize file twice: a"):
            w.write_record("a", b"x", 1)
        assert w.get_all_written_records() == {"a", "t/0"} and w.archive_name() == f"{W.__name__}{R.__name__}"
        w.write_end_of_file()
        r = R.PyTorchFileReader(path)
        assert r.get_all_records() == ["a", "t/0", "version", "byteorder", ".data/serialization_id"]
        assert r.get_record("a") == b"hello" and r.has_record("a") and not r.has_record("b")
        assert r.get_record_offset("a") % 64 == 0 and len(r.get_record("t/0")) == 12
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file zz: file not found"):
            r.get_record("zz")
    wt.save({"x": wt.arange(3.0)}, str(tmp_path / "s.pt"))
    r = wt.PyTorchFileReader(str(tmp_path / "s.pt"))
    st = r.get_storage_from_record("data/0", 3, wt.float32)
    assert st.shape == (0,) and wt.tensor([]).set_(st.untyped_storage()).tolist() == [0.0, 1.0, 2.0]
    for T in (torch, wt):
        with pytest.raises(TypeError, match="No constructor defined"):
            T.SerializationStorageContext()
        d = T.DeserializationStorageContext()
        d.add_storage("0", T.arange(3.0))
        assert d.has_storage("0") and not d.has_storage("1") and d.get_storage("0", T.float32).shape == (0,)
        assert T.tensor([]).set_(d.get_storage("0", T.float32).untyped_storage()).tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(RuntimeError, match="hasStorage.name. INTERNAL ASSERT FAILED"):
            d.get_storage("1", T.float32)
        with pytest.raises(RuntimeError, match="hasStorage.name. INTERNAL ASSERT FAILED"):
            d.add_storage("0", T.ones(1))
