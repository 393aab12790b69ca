"""Issue #22: torch.utils, torch.utils.hooks, torch.library, torch.sparse, torch.utils.cpp_extension,
torch.utils.model_zoo and torch.utils.tensorboard names, against PyTorch 2.13."""
import warnings

import pytest
import torch

import webtorch as wt


def test_swap_tensors_and_set_module():
    for T in (torch, wt):
        a, b = T.ones(2), T.zeros(3, requires_grad=True)
        ida = id(a)
        T.utils.swap_tensors(a, b)
        assert id(a) == ida and a.tolist() == [0.0] * 3 and a.requires_grad and b.tolist() == [1.0, 1.0]

        def f():
            pass
        T.utils.set_module(f, "somewhere")
        assert f.__module__ == "somewhere"
        with pytest.raises(TypeError, match="The mod argument should be a string"):
            T.utils.set_module(f, 3)


def test_hooks_and_throughput_benchmark():
    for T in (torch, wt):
        x = T.ones(2, requires_grad=True)
        x.register_hook(lambda g: g)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.utils.hooks.warn_if_has_hooks(x)
        assert len(w) == 1 and "will not be serialized" in str(w[0].message)
        y = T.ones(2, requires_grad=True)
        y.register_hook(T.utils.hooks.unserializable_hook(lambda g: g))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.utils.hooks.warn_if_has_hooks(y)
        assert not w
    tb = wt.utils.ThroughputBenchmark(lambda x: x * 2)
    with pytest.raises(RuntimeError, match="add_input"):
        tb.benchmark(num_iters=1)
    tb.add_input(wt.ones(3))
    assert tb.run_once(wt.ones(1)).tolist() == [2.0]
    stats = tb.benchmark(num_warmup_iters=1, num_iters=4)
    assert stats.num_iters == 4 and stats.latency_avg_ms > 0 and stats.iters_per_second > 0
    assert str(stats).splitlines()[1] == "Total number of iterations: 4"
    for t_us in (0.5, 1500.0, 2.5e6):
        assert wt.utils.throughput_benchmark.format_time(time_us=t_us) == \
            torch.utils.throughput_benchmark.format_time(time_us=t_us)
    for T in (torch, wt):
        w = T.utils.backcompat.broadcast_warning
        assert w.enabled is False
        w.enabled = True
        assert w.enabled is True and T.utils.backcompat.keepdim_warning.enabled is False
        w.enabled = False


def test_library_autocast_dispatch_and_triton():
    results = {}
    for T in (torch, wt):
        ns = "mods22_" + T.__name__

        @T.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: T.Tensor) -> T.Tensor:
            return x * 2

        T.library.register_autocast(f"{ns}::scale", "cpu", T.bfloat16)
        with T.autocast("cpu"):
            inside = scale(T.ones(2))
        results[T.__name__] = (str(inside.dtype), str(scale(T.ones(2)).dtype))
        with pytest.raises(NotImplementedError, match="fallthrough_kernel\\(\\) should never be called."):
            T.library.fallthrough_kernel()
    assert results["webtorch"] == results["torch"] == ("torch.bfloat16", "torch.float32")

    @wt.library.triton_op("mods22::add_one", mutates_args=())
    def add_one(x: wt.Tensor) -> wt.Tensor:
        return x + 1
    assert add_one(wt.zeros(2)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Triton"):
        wt.library.wrap_triton(lambda: None)

    class Tagged(wt.Tensor):
        pass
    wt.library.register_torch_dispatch("mods22::add_one", Tagged, lambda cls, op, types, args, kw: "rule")
    assert add_one(wt.zeros(1)).tolist() == [1.0] and add_one(wt.zeros(1).as_subclass(Tagged)) == "rule"


def test_sparse_gradcheck():
    x = [[0.0, 1.5], [2.0, 3.0]]
    for T in (torch, wt):
        gc = T.sparse.as_sparse_gradcheck(T.autograd.gradcheck)
        s = T.tensor(x, dtype=T.float64).to_sparse().requires_grad_(True)
        assert gc(lambda s, T=T: T.sparse.mm(s, T.ones(2, 3, dtype=T.float64)), s)
        assert gc(lambda s: s * 2, s)


def test_cpp_extension_model_zoo_tensorboard():
    with pytest.raises(RuntimeError, match="no C\\+\\+ runtime"):
        wt.utils.cpp_extension.load("ext", ["ext.cpp"])
    with pytest.raises(RuntimeError, match="custom_op"):
        wt.utils.cpp_extension.CppExtension("ext", ["ext.cpp"])
    assert wt.utils.model_zoo.load_url is wt.hub.load_state_dict_from_url
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        for mod in ("torch.utils.tensorboard", "webtorch.utils.tensorboard"):
            with pytest.raises(ModuleNotFoundError, match="No module named 'tensorboard'"):
                __import__(mod)


def test_weak_id_key_dictionary():
    for T in (torch, wt):
        a, b = T.ones(2), T.ones(2)  # equal values, distinct keys
        d = T.utils.weak.WeakIdKeyDictionary()
        d[a], d[b] = "a", "b"
        assert len(d) == 2 and d[a] == "a" and b in d and T.ones(2) not in d
        del b
        assert len(d) == 1 and list(d.values()) == ["a"]
        r = T.utils.weak.TensorWeakRef(a)
        assert r() is a
        del a
        assert r() is None and len(d) == 0
