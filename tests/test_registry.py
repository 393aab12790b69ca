"""The op registry (webtorch/ops/registry.py): Tensor's methods and webtorch's functions come from it,
every one routed through __torch_function__, and webtorch's namespace holds public API only."""
import types

import torch

import webtorch as wt
from webtorch.ops import registry


def test_every_method_is_bound_from_the_registry_and_routed():
    assert len(registry.METHODS) > 300
    for name, f in registry.METHODS.items():
        assert getattr(wt.Tensor, name) is f, name
        assert hasattr(f, "_impl"), f"Tensor.{name} bypasses __torch_function__"
    for name, f in registry.FUNCTIONS.items():
        assert getattr(wt, name) is f, name
        assert hasattr(f, "_impl"), f"webtorch.{name} bypasses __torch_function__"


class Logged(wt.Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs)


def test_methods_that_used_to_bypass_torch_function_reach_it():
    x = wt.tensor([0.25, 0.5]).as_subclass(Logged)
    Logged.seen.clear()
    outs = [x.square(), x.hypot(x), x.sgn(), x.logit(), x.float(), x.nansum(), x.view_as(x), x.double()]
    assert Logged.seen == ["square", "hypot", "sgn", "logit", "float", "nansum", "view_as", "double"]
    assert all(type(o) is Logged for o in outs)  # the default __torch_function__ keeps the subclass, as torch's


def test_namespace_is_public_api():
    # webtorch's own modules (webtorch.webgpu, webtorch.examples) aside, every public name is one PyTorch has
    assert [n for n in dir(wt) if not n.startswith("_") and not hasattr(torch, n)
            and not isinstance(getattr(wt, n), types.ModuleType)] == []
    for name in ("math", "UNARY", "recording", "pointwise", "bind_methods", "lshift", "isnan_", "sign_", "registry"):
        assert not hasattr(wt, name), f"webtorch.{name} is not PyTorch API"
    for name in ("logit", "logit_", "exp_", "bitwise_left_shift", "true_divide", "arctan2", "clip_", "fix"):
        assert hasattr(wt, name) and hasattr(torch, name), name


def test_elementwise_declarations_name_pytorchs_nodes():
    x = wt.tensor([0.3, 0.6], requires_grad=True)
    for name, decl in registry.ELEMENTWISE.items():
        if decl.node is None:
            continue
        shown = decl.node.split("(")[0]  # NotImplemented(op): PyTorch's node of an op without a derivative
        assert shown.endswith(("Backward0", "Backward1")) or shown == "NotImplemented", name
        f = getattr(wt.special, name[8:]) if name.startswith("special_") else \
            getattr(wt, name if name in registry.FUNCTIONS else "bitwise_" + name)
        out = f(x) if decl.kind == "unary" else f(x, x)
        assert out.grad_fn.name() == shown, name
