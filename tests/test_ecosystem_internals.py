"""The PyTorch internals Hugging Face transformers touches (tests/test_transformers.py), each against PyTorch:
dtype objects no backend stores (float8, sub-byte, bits, quantized) with finfo/iinfo and promotion
errors, the meta device, torch.library custom ops, nn.attention, autograd.graph.save_on_cpu, pytree's node
functions, UntypedStorage and Tensor.view(dtype), data_ptr as a memory address."""
import ctypes

import numpy as np
import pytest
import torch

import webtorch
import webtorch.nn.attention as wattn
import webtorch.nn.attention.flex_attention as wflex
import webtorch.utils._pytree as wpytree


def _outcome(f):
    try:
        return repr(f())
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return f"{type(e).__name__}: {e}"


UNSTORED = [n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype) and not hasattr(torch.Tensor, n)
            and getattr(torch, n) not in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
                                          torch.complex32, torch.complex64, torch.complex128)]


def _info(m, d):
    f = _outcome(lambda: (lambda i: (i.max, i.min, i.eps, i.tiny, i.bits, i.resolution, i.dtype))(m.finfo(d)))
    i = _outcome(lambda: (lambda i: (i.max, i.min, i.bits, i.dtype))(m.iinfo(d)))
    return f, i


@pytest.mark.parametrize("name", sorted(set(UNSTORED) | {"bit"}))
def test_unstored_dtype_objects(name):
    t, w = getattr(torch, name), getattr(webtorch, name)
    assert repr(w) == repr(t) and w.itemsize == t.itemsize
    assert (w.is_floating_point, w.is_complex) == (t.is_floating_point, t.is_complex)
    assert _outcome(lambda: w.is_signed) == _outcome(lambda: t.is_signed)
    assert _outcome(lambda: w.to_complex()) == _outcome(lambda: t.to_complex()).replace("torch.", "torch.")
    f, i = _info(torch, t)
    if "qint" not in name and "quint" not in name:  # PyTorch: iinfo of a quantized dtype is a NotImplementedError
        assert _info(webtorch, w) == (f, i)
    for other in ("float32", "int64", "bool", "uint8", "uint16", "complex64"):
        want = _outcome(lambda o=other: torch.promote_types(t, getattr(torch, o)))
        got = _outcome(lambda o=other: webtorch.promote_types(w, getattr(webtorch, o)))
        if "INTERNAL ASSERT" in want:  # c10's assert for int1-int7 / float4: a RuntimeError here too
            assert got.startswith("RuntimeError: Promotion is not supported"), got
        else:
            assert got == want


@pytest.mark.parametrize("name", ["float32", "int8", "int64", "uint8", "bool", "float16"])
def test_finfo_iinfo_reject_the_other_kind(name):
    assert _info(webtorch, getattr(webtorch, name)) == _info(torch, getattr(torch, name))


def test_unstored_dtype_tensors_raise():
    for d in (webtorch.float8_e4m3fn, webtorch.uint4):
        with pytest.raises(TypeError, match="not supported"):
            webtorch.zeros(2, dtype=d)


def test_meta_device():
    x = webtorch.randn(2, 3, device="meta")
    y = (x @ x.T + 1).sum(0)
    assert y.shape == (2,) and y.is_meta and y.device == webtorch.device("meta") and x.data_ptr() == 0
    assert repr(y) == repr(torch.randn(2, 2, device="meta").sum(0))
    assert repr(webtorch.empty(0, dtype=webtorch.int32, device="meta")) == \
        repr(torch.empty(0, dtype=torch.int32, device="meta"))
    with webtorch.device("meta"):
        lin = webtorch.nn.Linear(3, 4)
    assert lin.weight.is_meta and lin.weight.shape == (4, 3)
    for f in (lambda m, t: t.cpu(), lambda m, t: t.sum().item(), lambda m, t: t.tolist()):
        assert _outcome(lambda f=f: f(webtorch, x)) == _outcome(lambda f=f: f(torch, torch.randn(2, 3, device="meta")))
    assert webtorch.empty_like(x, device="cpu").shape == (2, 3)


def test_library_custom_op_and_ops_namespace():
    @webtorch.library.custom_op("wt_test::scale", mutates_args=())
    def scale(x: webtorch.Tensor, k: float) -> webtorch.Tensor:
        return x * k

    def setup_context(ctx, inputs, output):  # inputs: every argument, positionally (k given by keyword below)
        ctx.k = inputs[1]

    webtorch.library.register_autograd("wt_test::scale", lambda ctx, g: (g * ctx.k * 10, None),
                                       setup_context=setup_context)
    webtorch.library.register_fake("wt_test::scale", lambda x, k: webtorch.empty_like(x))
    x = webtorch.ones(3, requires_grad=True)
    y = webtorch.ops.wt_test.scale(x, k=2.0)
    y.sum().backward()
    assert y.tolist() == [2.0] * 3 and x.grad.tolist() == [20.0] * 3  # its own backward
    assert repr(scale) == "<CustomOpDef(wt_test::scale)>"
    with pytest.raises(AttributeError):
        _ = webtorch.ops.wt_test.missing
    with pytest.raises(AttributeError):  # a namespace no op was defined in (a misspelt op module)
        _ = webtorch.ops.no_such_namespace


def test_sdpa_kernel_records_the_backends():
    from webtorch.backends import cuda
    want = {k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
    assert {b.name: int(b) for b in wattn.SDPBackend} == want
    with wattn.sdpa_kernel(wattn.SDPBackend.MATH):
        assert cuda.math_sdp_enabled() and not cuda.flash_sdp_enabled()
        q = webtorch.randn(1, 2, 4, 8)
        out = webtorch.nn.functional.scaled_dot_product_attention(q, q, q)
    assert cuda.flash_sdp_enabled() and out.shape == (1, 2, 4, 8)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with wattn.sdpa_kernel("math"):
            pass


def test_flex_attention_masks():
    import torch.nn.attention.flex_attention as tflex

    def causal(b, h, q, kv):
        return q >= kv

    def window(b, h, q, kv):
        return q - kv < 2

    for w, t in ((causal, causal), (wflex.and_masks(causal, window), tflex.and_masks(causal, window)),
                 (wflex.or_masks(window, wflex.noop_mask), tflex.or_masks(window, tflex.noop_mask))):
        assert wflex.create_mask(w, 2, 1, 3, 4).tolist() == tflex.create_mask(t, 2, 1, 3, 4, "cpu").tolist()


def test_save_on_cpu():
    x = webtorch.randn(5, requires_grad=True)
    with webtorch.autograd.graph.save_on_cpu():
        y = (x * x).sum()
    y.backward()
    assert np.allclose(x.grad.tolist(), (2 * x).tolist())


def test_pytree_builtin_node_functions():
    from torch.utils import _pytree as tpytree
    d = {"a": 1, "b": [2, 3]}
    assert wpytree._dict_flatten(d) == tpytree._dict_flatten(d)
    assert [(k.key, v) for k, v in wpytree._dict_flatten_with_keys(d)[0]] == \
        [(k.key, v) for k, v in tpytree._dict_flatten_with_keys(d)[0]]
    assert wpytree._list_unflatten([1, 2], None) == tpytree._list_unflatten([1, 2], None)
    assert wpytree._tuple_flatten((1, 2)) == tpytree._tuple_flatten((1, 2))


def test_transform_getitem_to_index_mode():
    """The torch function mode transformers enters around flex_attention's mask functions: indexing by a 0-d
    tensor inside it gives PyTorch's values."""
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TMode

    from webtorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as WMode
    got = []
    for m, mode in ((torch, TMode), (webtorch, WMode)):
        x = m.arange(12.0).reshape(3, 4)
        with mode():
            got.append(x[m.tensor(1), m.tensor(2)].tolist())
    assert got[0] == got[1]


def test_untyped_storage_from_file_and_view_dtype(tmp_path):
    raw = np.float32([1.5, -2.0, 3.25, 7.0]).tobytes()
    (tmp_path / "f.bin").write_bytes(b"abcd" + raw)
    outs = []
    for m in (torch, webtorch):
        s = m.UntypedStorage.from_file(str(tmp_path / "f.bin"), shared=False, nbytes=20)
        b = m.asarray(s[4:20], dtype=m.uint8)
        v = b.view(dtype=m.float32).reshape([2, 2])
        v[0, 0] = 9.0  # a view: the storage's bytes change
        outs.append((len(s), s.untyped().nbytes(), v.tolist(), bytes(s[4:8].tolist())))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("src,dst,sl", [("uint8", "float32", slice(4, 12)), ("float32", "uint8", slice(None)),
                                        ("float32", "int32", slice(1, 3)), ("uint8", "float32", slice(1, 9)),
                                        ("uint8", "float32", slice(0, 6)), ("float32", "float32", slice(None))])
def test_view_dtype(src, dst, sl):
    data = list(range(16))
    t = torch.tensor(data, dtype=getattr(torch, src))[sl]
    w = webtorch.tensor(data, dtype=getattr(webtorch, src))[sl]
    want = _outcome(lambda: t.view(getattr(torch, dst)).tolist())
    assert _outcome(lambda: w.view(getattr(webtorch, dst)).tolist()) == want
    if not want.startswith("RuntimeError"):
        assert w.view(getattr(webtorch, dst)).stride() == t.view(getattr(torch, dst)).stride()
    assert _outcome(lambda: webtorch.tensor(1, dtype=webtorch.uint8).view(webtorch.float32)) == \
        _outcome(lambda: torch.tensor(1, dtype=torch.uint8).view(torch.float32))


def test_view_dtype_without_numpy_raises(webgpu):
    with pytest.raises(NotImplementedError, match="view\\(dtype\\)"):
        webtorch.zeros(4, dtype=webtorch.uint8, device="webgpu").view(webtorch.float32)


def test_data_ptr_is_the_memory_address():
    x = webtorch.arange(6.0)[2:]
    p = ctypes.cast(x.data_ptr(), ctypes.POINTER(ctypes.c_float))
    assert [p[i] for i in range(4)] == [2.0, 3.0, 4.0, 5.0]
    assert x.untyped_storage().nbytes() == 24


def test_new_factories_take_size_keyword():
    for name in ("new_zeros", "new_ones", "new_empty"):
        for kw in ({"size": ()}, {"size": (2, 3)}):
            assert getattr(webtorch.ones(2), name)(**kw).shape == getattr(torch.ones(2), name)(**kw).shape


def test_increment_version_and_disable_saved_tensors_hooks():
    outcomes = []
    for m in (torch, webtorch):
        x = m.ones(3, requires_grad=True)
        y = x.exp()
        m.autograd.graph.increment_version([y])
        outcomes.append(_outcome(lambda m=m, y=y: y.sum().backward()))
        with m.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
            outcomes.append(_outcome(lambda m=m: m.autograd.graph.save_on_cpu().__enter__()))
        with m.autograd.graph.save_on_cpu():
            pass
    assert outcomes[:2] == outcomes[2:] and outcomes[1] == "RuntimeError: hooks are off here"


def test_impl_abstract_is_register_fake_with_pytorchs_warning():
    op = webtorch.library.custom_op("wt_test::twice", lambda x: x * 2, mutates_args=())
    fake = lambda x: webtorch.empty_like(x)  # noqa: E731
    with pytest.warns(FutureWarning, match="renamed to `torch.library.register_fake`"):
        webtorch.library.impl_abstract("wt_test::twice", fake)
    assert op._fake is fake and op(webtorch.ones(2)).tolist() == [2.0, 2.0]


def test_modules_on_the_meta_device():
    outcomes = []
    for m in (torch, webtorch):
        sd = {k: v.clone() for k, v in m.nn.Linear(4, 2).state_dict().items()}
        with m.device("meta"):
            a, b = m.nn.Linear(4, 2), m.nn.Linear(4, 2)
        a.load_state_dict(sd, assign=True)
        b.to_empty(device="cpu").load_state_dict(sd)
        x = m.ones(1, 4)
        same = m.equal(a(x), b(x)) and m.equal(a(x), x @ sd["weight"].T + sd["bias"])
        outcomes.append((same, a.weight.device.type, _outcome(lambda m=m: m.nn.Linear(2, 2, device="meta").to("cpu"))))
    assert outcomes[0] == outcomes[1] and outcomes[0][0]
