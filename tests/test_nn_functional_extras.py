"""nn.functional's names of issue #22 against PyTorch: grouped_mm (forward, gradient, errors), scaled_mm /
scaled_grouped_mm's errors on non-float8 operands, ScalingType / SwizzleType, assert_int_or_pair,
boolean_dispatch, the torch-function helpers and the documentation dicts."""
import pytest
import torch
import torch.nn.functional as TF

import webtorch as wt
import webtorch.nn.functional as WF


def _wt(t, device, requires_grad=False):
    return wt.tensor(t.tolist(), dtype=getattr(wt, str(t.dtype).split(".")[1]), device=device,
                     requires_grad=requires_grad)


def _close(a, b, atol=1e-5):
    assert tuple(a.shape) == tuple(b.shape)
    assert torch.allclose(torch.tensor(a.tolist(), dtype=b.dtype), b, atol=atol), (a, b)


_I32 = torch.int32
_GROUPED = [  # (mat_a shape, mat_b shape (made column-major when 3-D), offs)
    ((6, 8), (3, 4, 8), [2, 4, 6]),
    ((2, 4, 8), (8, 12), [4, 12]),
    ((4, 12), (12, 4), [4, 12]),
    ((2, 4, 8), (2, 4, 8), None),
]


@pytest.mark.parametrize("case", range(len(_GROUPED)))
def test_grouped_mm(device, case):
    torch.manual_seed(case)
    sa, sb, offs = _GROUPED[case]
    a = torch.randn(sa, requires_grad=True)
    b = torch.randn(sb).transpose(-2, -1) if len(sb) == 3 else torch.randn(sb)
    b.requires_grad_()
    o = None if offs is None else torch.tensor(offs, dtype=_I32)
    aw, bw = _wt(a, device, True), _wt(b, device, True)
    if len(sb) == 3:
        bw = _wt(b.detach().transpose(-2, -1).contiguous(), device, True)
    bt = bw.transpose(-2, -1) if len(sb) == 3 else bw
    r = TF.grouped_mm(a, b, offs=o)
    y = WF.grouped_mm(aw, bt, offs=None if o is None else _wt(o, device))
    _close(y, r)
    g = torch.randn(r.shape)
    (r * g).sum().backward()
    (y * _wt(g, device)).sum().backward()
    _close(aw.grad, a.grad, 1e-4)
    _close(bw.grad.transpose(-2, -1) if len(sb) == 3 else bw.grad, b.grad, 1e-4)


_ERRORS = ["grouped_mm(a, b, offs=offs.long())", "grouped_mm(a, b)", "grouped_mm(a.double(), b.double(), offs=offs)",
           "grouped_mm(a, b, offs=offs, bias=T.ones(8))", "grouped_mm(a, b, offs=offs, out_dtype=T.float64)",
           "grouped_mm(T.randn(2, 4, 8), T.randn(3, 8, 4))", "grouped_mm(T.randn(8), T.randn(3, 8, 4))",
           "grouped_mm(T.randn(2, 4, 8), T.randn(2, 4, 4))", "grouped_mm(a, b, offs=offs.reshape(2, 1))",
           "grouped_mm(T.randn(3, 10), T.randn(10, 4), offs=offs)", "grouped_mm(T.randn(5, 8), T.randn(8, 5)[:, ::2]"
           ".expand(2, 8, 3), offs=offs)",
           "scaled_mm(a, b[0], T.tensor(1.0), F.ScalingType.TensorWise, T.tensor(1.0), F.ScalingType.TensorWise)",
           "scaled_grouped_mm(a, b, T.tensor(1.0), F.ScalingType.TensorWise, T.tensor(1.0), "
           "F.ScalingType.TensorWise, offs=offs)"]


@pytest.mark.parametrize("call", _ERRORS)
def test_grouped_mm_errors(call):
    out = []
    for T, F in ((torch, TF), (wt, WF)):
        env = {"T": T, "F": F, "a": T.randn(5, 8), "b": T.randn(2, 8, 8).transpose(-2, -1),
               "offs": T.tensor([2, 4], dtype=T.int32)}
        with pytest.raises(Exception) as e:
            eval("F." + call, env)
        out.append((e.type.__name__, str(e.value).split(" This could")[0]))
    assert out[0] == out[1]


def test_enums_and_helpers():
    for name in ("ScalingType", "SwizzleType"):
        assert [(m.name, m.value) for m in getattr(WF, name)] == \
            [(k, v.value) for k, v in getattr(TF, name).__members__.items()]
    assert repr(WF.ScalingType.RowWise) == repr(TF.ScalingType.RowWise)
    for F in (TF, WF):
        F.assert_int_or_pair(3, "k", "{} bad")
        F.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            F.assert_int_or_pair((1, 2, 3), "k", "{} bad")

        def yes(x, flag=False):
            """doc"""
            return "yes"

        def no(x, flag=False):
            return "no"
        fn = F.boolean_dispatch("flag", 1, False, yes, no, "m", "pick")
        assert [fn(0), fn(0, True), fn(0, flag=True), fn.__name__, fn.__doc__] == ["no", "yes", "yes", "pick", "doc"]
    for name in ("reproducibility_notes", "sparse_support_notes", "tf32_notes"):
        assert getattr(WF, name) == getattr(TF, name)

    class S(wt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "intercepted"
    s = wt.ones(1).as_subclass(S)
    assert WF.has_torch_function((s,)) and WF.has_torch_function_unary(s) and WF.has_torch_function_variadic(1, s)
    assert WF.handle_torch_function(WF.relu, (s,), s) == "intercepted"
