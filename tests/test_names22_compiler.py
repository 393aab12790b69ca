"""Issue #22: torch.compiler's remaining names against PyTorch 2.13 (CPU): the default backend, is_exporting,
nested_compile_region, the cache and guard-collective switches, wrap_numpy and the guard_filter_fn helpers."""
from types import SimpleNamespace

import pytest
import torch

import webtorch as wt


def test_default_backend_reaches_compile():
    assert wt.compiler.get_default_backend() == torch.compiler.get_default_backend() == "inductor"
    try:
        wt.compiler.set_default_backend("eager")
        assert wt.compiler.get_default_backend() == "eager"
        assert wt.compile(lambda x: x * 2 + 1)(wt.ones(3)).tolist() == [3.0] * 3
        wt.compiler.set_default_backend("no-such-backend")
        with pytest.raises(Exception, match="no-such-backend"):
            wt.compile(lambda x: x)
    finally:
        wt.compiler.set_default_backend(None)
    assert wt.compiler.get_default_backend() == "inductor"
    with pytest.raises(TypeError, match="backend must be a string or callable"):
        wt.compiler.set_default_backend(3)
    assert wt.compiler.compile(lambda x: x.sin())(wt.zeros(2)).tolist() == [0.0, 0.0]


def test_is_exporting():
    class M(wt.nn.Module):
        def forward(self, x):
            return x + int(wt.compiler.is_exporting())

    assert not wt.compiler.is_exporting() and not torch.compiler.is_exporting()
    assert M()(wt.zeros(1)).tolist() == [0.0]
    assert wt.export.export(M(), (wt.zeros(1),)).module()(wt.zeros(1)).tolist() == [1.0]
    assert not wt.compiler.is_exporting()


def test_nested_compile_region_and_switches():
    region = wt.compiler.nested_compile_region(lambda x: x.cos())
    x = wt.tensor([0.0, 1.0])
    assert region(x).tolist() == x.cos().tolist()
    assert wt.compiler.nested_compile_region(max_reuse_entries=3)(lambda x: x + 1)(x).tolist() == [1.0, 2.0]
    assert wt.compile(lambda x: region(x) * 2)(x).tolist() == (x.cos() * 2).tolist()
    with pytest.raises(RuntimeError, match="experimental feature"):
        wt.compiler.nested_compile_region(lambda x: x, options=object())
    assert wt.compiler.save_cache_artifacts() is torch.compiler.save_cache_artifacts() is None
    assert wt.compiler.load_cache_artifacts(b"") is None
    with pytest.raises(NotImplementedError):
        wt.compiler.load_compiled_function(None)
    assert wt.compiler.set_enable_guard_collectives(True) is torch.compiler.set_enable_guard_collectives(True) is False
    assert wt.compiler.set_enable_guard_collectives(False) is torch.compiler.set_enable_guard_collectives(False)


def test_wrap_numpy():
    np = pytest.importorskip("numpy")
    fn = wt.compiler.wrap_numpy(lambda a, b: (np.add(a, b) * 2, np.sum(a)))
    out, total = fn(wt.ones(2), wt.tensor([1.0, 2.0]))
    assert isinstance(out, wt.Tensor) and out.tolist() == [4.0, 6.0] and float(total) == 2.0


def _entry(guard_type, is_global, value=None, builtin=False, module=False):
    source = SimpleNamespace(is_unspecialized_builtin_nn_module=lambda: builtin,
                             is_unspecialized_nn_module=lambda: module)
    return SimpleNamespace(guard_type=guard_type, is_global=is_global, value=value,
                           orig_guard=SimpleNamespace(source=source))


@pytest.mark.parametrize("name", ["skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
                                  "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe",
                                  "skip_all_guards_unsafe", "keep_portable_guards_unsafe"])
def test_guard_filters(name):
    def entries(param):
        return [_entry("TENSOR_MATCH", False, param), _entry("TENSOR_MATCH", True, 1), _entry("SHAPE_ENV", True),
                _entry("ID_MATCH", False, builtin=True, module=True), _entry("GLOBAL_STATE", False, module=True)]

    ours = getattr(wt.compiler, name)(entries(wt.nn.Parameter(wt.ones(1))))
    assert ours == getattr(torch.compiler, name)(entries(torch.nn.Parameter(torch.ones(1))))
    if name == "keep_tensor_guards_unsafe":
        assert (wt.compiler.keep_tensor_guards_unsafe(entries(wt.nn.Parameter(wt.ones(1))), keep_parameters=True)
                == torch.compiler.keep_tensor_guards_unsafe(entries(torch.nn.Parameter(torch.ones(1))), True))


def test_export_small_names():
    a, b = wt.export.dims("a", "b", min=2)
    ta, tb = torch.export.dims("a", "b", min=2)
    assert (a.__name__, b.__name__, a.min, b.min) == (ta.__name__, tb.__name__, ta.min, tb.min)
    assert b.max == wt.export.Dim("b").max  # webtorch's Dim: max None where PyTorch's is int_oo
    sig = wt.export.ExportBackwardSignature({"g": "w"}, {}, "loss")
    tsig = torch.export.ExportBackwardSignature({"g": "w"}, {}, "loss")
    assert (sig.gradients_to_parameters, sig.loss_output) == (tsig.gradients_to_parameters, tsig.loss_output)
    entry, tentry = wt.export.ModuleCallEntry("layer"), torch.export.ModuleCallEntry("layer")
    assert (entry.fqn, entry.signature) == (tentry.fqn, tentry.signature)
    call = wt.export.ModuleCallSignature([], [], None, None)
    assert call.forward_arg_names is torch.export.ModuleCallSignature([], [], None, None).forward_arg_names
