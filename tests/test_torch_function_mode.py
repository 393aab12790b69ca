"""torch.overrides.TorchFunctionMode against PyTorch: the calls a mode sees (functions, Tensor methods,
nn.functional, factories), the mode stack's order, a mode changing results, NotImplemented, modes with subclasses."""
import pytest
import torch
from torch.overrides import TorchFunctionMode as TorchMode

import webtorch as wt
from webtorch.overrides import TorchFunctionMode as WtMode


def _program(T):
    x = T.zeros(2, 3) + 1
    y = T.mul(x, 2).sum(1)
    z = T.nn.functional.relu(y - 7)
    w = T.matmul(T.ones(2, 3), T.full((3, 2), 0.5))
    return T.tensor([1.0, 2.0]) * z + w.exp().mean()


def _logging(Mode):
    class Logging(Mode):
        def __init__(self, tag, seen):
            super().__init__()
            self.tag, self.seen = tag, seen

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(f"{self.tag}:{func.__name__}")
            return func(*args, **(kwargs or {}))
    return Logging


def test_a_mode_sees_every_call_once_in_pytorchs_order():
    runs = []
    for T, Mode in ((torch, TorchMode), (wt, WtMode)):
        seen = []
        with _logging(Mode)("m", seen):
            out = _program(T)
        runs.append((seen, out.tolist()))
    assert runs[0] == runs[1]
    assert runs[0][0][:3] == ["m:zeros", "m:add", "m:mul"]


def test_modes_stack_innermost_first_and_pop_while_handling():
    runs = []
    for T, Mode, overrides in ((torch, TorchMode, torch.overrides), (wt, WtMode, wt.overrides)):
        seen, Logging = [], _logging(Mode)
        x = T.ones(2)
        with Logging("outer", seen) as outer, Logging("inner", seen) as inner:
            assert overrides._get_current_function_mode_stack() == [outer, inner]
            x.neg()
        assert overrides._get_current_function_mode_stack() == []
        runs.append(seen)
    assert runs[0] == runs[1] == ["inner:neg", "outer:neg"]


def test_a_mode_changes_results_and_factory_defaults():
    def mode(T, Mode):
        class SubForAdd(Mode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if func in (T.zeros, T.ones, T.arange):
                    kwargs.setdefault("dtype", T.float64)
                if func is T.add:
                    func = T.sub
                return func(*args, **kwargs)
        return SubForAdd()
    runs = []
    for T, Mode in ((torch, TorchMode), (wt, WtMode)):
        with mode(T, Mode):
            a = T.ones(3)
            b = T.arange(3)
            c = T.add(a, b)
        runs.append([str(a.dtype), str(b.dtype), str(c.dtype), c.tolist()])
    assert runs[0] == runs[1] == ["torch.float64"] * 3 + [[1.0, 0.0, -1.0]]


def test_not_implemented_raises_pytorchs_type_error():
    for T, Mode in ((torch, TorchMode), (wt, WtMode)):
        class Refuses(Mode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        x = T.ones(1)
        with pytest.raises(TypeError, match=r"^Multiple dispatch failed for 'torch.neg'; all __torch_function__ "
                                            r"handlers returned NotImplemented:\n\n  - mode object"):
            with Refuses():
                T.neg(x)


def test_mode_before_subclass():
    runs = []
    for T, Mode in ((torch, TorchMode), (wt, WtMode)):
        class Sub(T.Tensor):
            seen = []

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                cls.seen.append(f"sub:{func.__name__}")
                return super().__torch_function__(func, types, args, kwargs)
        seen = Sub.seen
        x = T.ones(2).as_subclass(Sub)
        with _logging(Mode)("mode", seen):
            T.neg(x)
        runs.append(seen)
    assert runs[0] == runs[1] == ["mode:neg", "sub:neg"]


def test_user_functions_made_overridable_as_pytorchs():
    """has_torch_function / handle_torch_function (PyTorch's signature) and wrap_torch_function: a subclass and a
    mode see the user's function, then the ops inside it."""
    runs = []
    for T, Mode in ((torch, TorchMode), (wt, WtMode)):
        o = T.overrides

        def scaled_mul(a, b):
            if o.has_torch_function((a, b)):
                return o.handle_torch_function(scaled_mul, (a, b), a, b)
            return a * b + 1

        @o.wrap_torch_function(lambda a, scale=2.0: (a,))
        def scaled(a, scale=2.0):
            return a * scale

        seen = []
        with _logging(Mode)("m", seen):
            r = scaled_mul(T.tensor([3.0]), T.tensor([4.0]))
            s = scaled(T.tensor([1.0]), scale=3.0)
        runs.append((seen, r.tolist(), s.tolist(), o.has_torch_function((T.ones(1),))))
    assert runs[0] == runs[1]
    assert runs[0][0] == ["m:tensor", "m:tensor", "m:scaled_mul", "m:tensor", "m:scaled"]


def test_redispatch_and_the_function_tables():
    """redispatch_function as in PyTorch's docstring (the user function, then the ops inside it, logged once each);
    factories are ignored functions, torch.add is overridable, its testing override returns -1."""
    runs = []
    for T in (torch, wt):
        seen = []

        class Logging(T.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return T.overrides.redispatch_function(func, types, args, kwargs)

        def scaled_mul(a, b):
            if T.overrides.has_torch_function((a, b)):
                return T.overrides.handle_torch_function(scaled_mul, (a, b), a, b)
            return a * b + 1
        x, y = (T.tensor([v]).as_subclass(Logging) for v in (3.0, 4.0))
        r = scaled_mul(x, y)
        ov = T.overrides.get_overridable_functions()
        runs.append((seen, r.tolist(), type(r) is T.Tensor, T.zeros in T.overrides.get_ignored_functions(),
                     T.add in ov[T], T.overrides.get_testing_overrides()[T.add](1, 2)))
    assert runs[0] == runs[1] == (["scaled_mul", "mul"], [13.0], True, True, True, -1)
