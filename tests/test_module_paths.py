"""PyTorch's submodule import paths (issue #22): programs import names from torch.nn.modules.conv,
torch.nn.modules.utils, torch.utils.data._utils.collate, torch.optim.adamw, ... not only from the top-level
namespaces. Each path below exists in webtorch with the names PyTorch defines there, the classes are the ones
webtorch exposes at the top level, and the helpers behave as PyTorch's."""
import collections
import importlib
import warnings

import pytest
import torch

import webtorch as wt

# module path -> names PyTorch defines there that programs import (each checked against PyTorch too)
PATHS = {
    "nn.modules.utils": ["_single", "_pair", "_triple", "_quadruple", "_ntuple", "_reverse_repeat_tuple",
                         "_list_with_default", "consume_prefix_in_state_dict_if_present"],
    "nn.modules.batchnorm": ["_NormBase", "_BatchNorm", "_LazyNormBase", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                             "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"],
    "nn.modules.instancenorm": ["_InstanceNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
                                "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"],
    "nn.modules.conv": ["_ConvNd", "_ConvTransposeNd", "_ConvTransposeMixin", "_LazyConvXdMixin", "Conv1d", "Conv2d",
                        "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d",
                        "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"],
    "nn.modules.linear": ["Identity", "Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"],
    "nn.modules.lazy": ["LazyModuleMixin"],
    "nn.modules.padding": ["_ReflectionPadNd", "_ReplicationPadNd", "_CircularPadNd", "_ConstantPadNd",
                           "ReflectionPad2d", "ReplicationPad1d", "CircularPad3d", "ZeroPad2d"],
    "nn.modules.rnn": ["apply_permutation", "_apply_permutation", "RNNBase", "LSTM"],
    "nn._reduction": ["get_enum", "legacy_get_string", "legacy_get_enum"],
    "nn.common_types": ["_size_1_t", "_size_2_t", "_size_3_t", "_size_any_t", "_ratio_2_t", "_maybe_indices_t"],
    "nn.init": ["_no_grad_uniform_", "_no_grad_normal_", "_no_grad_trunc_normal_", "_no_grad_fill_",
                "_no_grad_zero_"],
    "nn.functional": ["_in_projection", "_in_projection_packed", "_canonical_mask", "_none_or_dtype",
                      "_mha_shape_check", "_verify_batch_size", "_verify_spatial_size", "_threshold",
                      "_unpool_output_size"],
    "nn.utils.clip_grad": ["_get_total_norm", "_clip_grads_with_norm_", "clip_grad_norm_"],
    "nn.utils.rnn": ["bind", "PackedSequence", "pad_sequence"],
    "utils.data._utils.collate": ["collate", "default_collate", "default_convert", "default_collate_fn_map",
                                  "collate_tensor_fn", "collate_float_fn", "collate_int_fn", "collate_str_fn",
                                  "collate_numpy_array_fn", "collate_numpy_scalar_fn", "default_collate_err_msg_format",
                                  "np_str_obj_array_pattern"],
    "utils.data.backward_compatibility": ["worker_init_fn"],
    "optim.adam": ["Adam"],
    "optim.adamw": ["AdamW"],
    "optim.radam": ["RAdam"],
    "optim.nadam": ["NAdam"],
    "optim._adafactor": ["Adafactor"],
    "optim._muon": ["Muon"],
    "optim._functional": ["adam", "adamw", "sgd", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "asgd",
                          "rprop"],
    "optim.optimizer": ["register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"],
    "nn.modules.module": ["register_module_full_backward_hook", "register_module_full_backward_pre_hook",
                          "register_module_backward_hook", "register_module_buffer_registration_hook",
                          "register_module_module_registration_hook", "register_module_parameter_registration_hook",
                          "_WrappedHook", "_has_any_global_hook"],
    "autograd.variable": ["Variable", "VariableMeta"],
    "nn.parallel": ["DistributedDataParallelCPU"],
    "nn.utils.spectral_norm": ["SpectralNormStateDictHook", "SpectralNormLoadStateDictPreHook"],
    "utils.data.dataloader": ["_DatasetKind", "_BaseDataLoaderIter", "_SingleProcessDataLoaderIter",
                              "_MultiProcessingDataLoaderIter"],
    "autograd.graph": ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook",
                       "allow_mutation_on_saved_tensors", "set_override_stale_capture_stream",
                       "set_warn_on_accumulate_grad_stream_mismatch"],
    "autograd.grad_mode": ["set_multithreading_enabled", "enforce_grad_layout_policy"],
    "autograd.function": ["InplaceFunction", "FunctionMeta"],
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_path_has_pytorchs_names(path):
    tmod = importlib.import_module("torch." + path)
    wmod = importlib.import_module("webtorch." + path)
    for name in PATHS[path]:
        assert hasattr(tmod, name), f"torch.{path}.{name} (the test's list is wrong)"
        assert hasattr(wmod, name), f"webtorch.{path}.{name} missing"


# classes a program reaches by a submodule path are the very classes webtorch exposes at the top level
SAME = [("nn.modules.conv", "nn", "LazyConv2d"), ("nn.modules.conv", "nn", "Conv2d"),
        ("nn.modules.conv", "nn", "LazyConvTranspose3d"), ("nn.modules.linear", "nn", "LazyLinear"),
        ("nn.modules.batchnorm", "nn", "LazyBatchNorm1d"), ("nn.modules.batchnorm", "nn", "BatchNorm2d"),
        ("nn.modules.instancenorm", "nn", "InstanceNorm2d"), ("nn.modules.instancenorm", "nn", "LazyInstanceNorm3d"),
        ("nn.modules.padding", "nn", "ReflectionPad2d"), ("optim.adamw", "optim", "AdamW"),
        ("optim.radam", "optim", "RAdam"), ("optim._adafactor", "optim", "Adafactor"), ("optim._muon", "optim", "Muon"),
        ("utils.data._utils.collate", "utils.data", "default_collate"),
        ("utils.data._utils.collate", "utils.data", "default_convert")]


@pytest.mark.parametrize("path,top,name", SAME)
def test_same_object_as_top_level(path, top, name):
    obj = getattr(importlib.import_module("webtorch." + path), name)
    assert obj is getattr(importlib.import_module("webtorch." + top), name)
    tobj = getattr(importlib.import_module("torch." + path), name)
    assert tobj is getattr(importlib.import_module("torch." + top), name)
    if isinstance(obj, type) and tobj.__module__.startswith("torch.nn.modules"):
        assert obj.__module__ == "webtorch" + tobj.__module__[len("torch"):]


@pytest.mark.parametrize("path,name,base", [
    ("nn.modules.instancenorm", "InstanceNorm2d", "_InstanceNorm"),
    ("nn.modules.batchnorm", "BatchNorm1d", "_BatchNorm"),
    ("nn.modules.padding", "ReflectionPad1d", "_ReflectionPadNd"),
    ("nn.modules.padding", "CircularPad2d", "_CircularPadNd"),
    ("nn.modules.padding", "ReplicationPad3d", "_ReplicationPadNd"),
    ("nn.modules.conv", "LazyConv1d", "_LazyConvXdMixin"),
    ("nn.modules.batchnorm", "LazyBatchNorm2d", "_LazyNormBase")])
def test_private_bases(path, name, base):
    """isinstance(m, _InstanceNorm) and the like, as programs test them."""
    for lib in (torch, wt):
        mod = importlib.import_module(lib.__name__ + "." + path)
        assert issubclass(getattr(mod, name), getattr(mod, base))


def test_lazy_becomes_its_class():
    m = wt.nn.modules.conv.LazyConv2d(4, 3)
    m(wt.randn(1, 2, 5, 5))
    assert type(m) is wt.nn.modules.conv.Conv2d and m.weight.shape == (4, 2, 3, 3)
    n = wt.nn.modules.instancenorm.LazyInstanceNorm1d(affine=True)
    n(wt.randn(2, 3, 4))
    assert type(n) is wt.nn.InstanceNorm1d and n.weight.shape == (3,)


@pytest.mark.parametrize("fn,arg", [("_single", 3), ("_pair", 3), ("_pair", (1, 2)), ("_triple", [1, 2, 3]),
                                    ("_quadruple", 0), ("_pair", "ab")])
def test_ntuple(fn, arg):
    t, w = torch.nn.modules.utils, wt.nn.modules.utils
    assert getattr(w, fn)(arg) == getattr(t, fn)(arg)
    assert getattr(w, fn).__name__ == getattr(t, fn).__name__


def test_module_utils_helpers():
    t, w = torch.nn.modules.utils, wt.nn.modules.utils
    assert w._reverse_repeat_tuple((1, 2, 3), 2) == t._reverse_repeat_tuple((1, 2, 3), 2)
    assert w._ntuple(3, "x")(5) == t._ntuple(3, "x")(5)
    assert w._list_with_default([None, 4], [2, 3, 5, 6]) == t._list_with_default([None, 4], [2, 3, 5, 6])
    assert w._list_with_default(7, [1]) == 7
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        w._list_with_default([1, 2], [1, 2])

    def state(lib):
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("d", 3)])
        sd._metadata = collections.OrderedDict([("", {}), ("module", {}), ("module.b", {}), ("d", {})])
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd.items()), list(sd._metadata)
    assert state(wt) == state(torch)


@pytest.mark.parametrize("args", [("none",), ("mean",), ("sum",), ("elementwise_mean",), ("bogus",)])
def test_reduction_get_enum(args):
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = lib.nn._reduction.get_enum(*args)
            except ValueError as e:
                r = ("ValueError", str(e))
        return r, [str(x.message) for x in w]
    assert run(wt) == run(torch)


@pytest.mark.parametrize("size_average,reduce", [(None, None), (True, False), (False, True), (False, None)])
def test_reduction_legacy(size_average, reduce):
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = (lib.nn._reduction.legacy_get_string(size_average, reduce),
                 lib.nn._reduction.legacy_get_enum(size_average, reduce, emit_warning=False))
        return r, [(x.category, str(x.message)) for x in w]
    assert run(wt) == run(torch)


def _collated(lib, batch, **kw):
    """collate's result as plain Python (tensors as (dtype name, values))."""
    def plain(x):
        if isinstance(x, lib.Tensor):
            return (str(x.dtype).split(".")[-1], x.tolist())
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x).__name__, [plain(v) for v in x]
        return x
    return plain(lib.utils.data._utils.collate.collate(batch, **kw))


class _Point:
    def __init__(self, x):
        self.x = x


def test_collate_fn_map():
    """collate with a custom map, and default_collate_fn_map extended in place (PyTorch's documented recipe)."""
    def batch(lib):
        return [{"a": lib.tensor([1.0, 2.0]), "b": (1, 2.5, "s"), "p": _Point(i)} for i in range(3)]

    def point_fn(batch, *, collate_fn_map=None):
        return [p.x for p in batch]
    for lib in (torch, wt):
        c = lib.utils.data._utils.collate
        assert c.default_collate_fn_map[int] is c.collate_int_fn
    results = []
    for lib in (torch, wt):
        c = lib.utils.data._utils.collate
        custom = {**c.default_collate_fn_map, _Point: point_fn}
        results.append(_collated(lib, batch(lib), collate_fn_map=custom))
        c.default_collate_fn_map[_Point] = point_fn
        try:
            results.append(_collated(lib, batch(lib), collate_fn_map=c.default_collate_fn_map))
            assert lib.utils.data.default_collate(batch(lib))["p"] == [0, 1, 2]
        finally:
            del c.default_collate_fn_map[_Point]
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            lib.utils.data.default_collate(batch(lib))
    assert results[:2] == results[2:]


def test_collate_without_map_and_errors():
    for lib in (torch, wt):
        c = lib.utils.data._utils.collate
        with pytest.raises(TypeError, match="found <class 'int'>"):
            c.collate([1, 2])
        with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
            c.default_collate([[1, 2], [3]])
    assert _collated(wt, [[1, 2], [3, 4]], collate_fn_map={int: lambda b, **k: sum(b)}) == \
        _collated(torch, [[1, 2], [3, 4]], collate_fn_map={int: lambda b, **k: sum(b)})


def test_backward_compatibility_worker_init_fn():
    for lib in (torch, wt):
        with pytest.warns(FutureWarning, match="backward_compatibility.worker_init_fn"):
            assert lib.utils.data.backward_compatibility.worker_init_fn(0) is None


def test_in_projection(device):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(2, 5, 7)
    ws = [torch.randn(4, 4, requires_grad=True), torch.randn(4, 6, requires_grad=True),
          torch.randn(4, 7, requires_grad=True)]
    bs = [torch.randn(4, requires_grad=True) for _ in range(3)]
    wq, wk, wv = (wt.tensor(t.tolist(), device=device) for t in (q, k, v))
    wws = [wt.tensor(t.tolist(), device=device, requires_grad=True) for t in ws]
    wbs = [wt.tensor(t.tolist(), device=device, requires_grad=True) for t in bs]
    out = torch.nn.functional._in_projection(q, k, v, *ws, *bs)
    wout = wt.nn.functional._in_projection(wq, wk, wv, *wws, *wbs)
    sum(o.sum() for o in out).backward()
    sum(o.sum() for o in wout).backward()
    for a, b in zip(wout + tuple(wws), out + tuple(ws)):
        assert torch.allclose(torch.tensor(a.tolist()), b, atol=1e-5)
    for a, b in zip(wws, ws):
        assert torch.allclose(torch.tensor(a.grad.tolist()), b.grad, atol=1e-5)
    for lib, args in ((torch, (q, k, v, ws[1], ws[1], ws[2])), (wt, (wq, wk, wv, wws[1], wws[1], wws[2]))):
        with pytest.raises(AssertionError, match=r"expecting query weights shape of \(4, 4\), but got"):
            lib.nn.functional._in_projection(*args)


@pytest.mark.parametrize("fn,size", [("_verify_batch_size", [1, 3]), ("_verify_batch_size", [1, 3, 1, 1]),
                                     ("_verify_batch_size", [2, 3]), ("_verify_spatial_size", [2, 3, 1]),
                                     ("_verify_spatial_size", [2, 3, 2])])
def test_verify_sizes(fn, size):
    def run(lib):
        try:
            return getattr(lib.nn.functional, fn)(lib.Size(size))
        except ValueError as e:
            return str(e)
    assert run(wt) == run(torch)


def test_instance_norm_one_spatial_element():
    for lib in (torch, wt):
        with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
            lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 1))


@pytest.mark.parametrize("name,args", [("_no_grad_uniform_", (-1.0, 2.0)), ("_no_grad_normal_", (0.5, 2.0)),
                                       ("_no_grad_trunc_normal_", (0.0, 1.0, -1.0, 1.0)), ("_no_grad_fill_", (3.0,)),
                                       ("_no_grad_zero_", ())])
def test_init_no_grad(name, args):
    """PyTorch's private initializers: in place, outside autograd, PyTorch's numbers from its seed on cpu."""
    out = []
    for lib in (torch, wt):
        lib.manual_seed(3)
        p = lib.nn.Parameter(lib.empty(4, 5))
        r = getattr(lib.nn.init, name)(p, *args)
        assert r is p and p.grad_fn is None
        out.append(p.tolist())
    assert torch.allclose(torch.tensor(out[1]), torch.tensor(out[0]))


def test_clip_grad_private_halves():
    grads = []
    for lib in (torch, wt):
        lib.manual_seed(0)
        ps = [lib.nn.Parameter(lib.ones(3) * (i + 1)) for i in range(2)]
        for p in ps:
            p.grad = p.detach() * 2
        cg = lib.nn.utils.clip_grad
        total = cg._get_total_norm([p.grad for p in ps], 2.0)
        cg._clip_grads_with_norm_(ps, 1.0, total)
        grads.append([total.item()] + [p.grad.tolist() for p in ps])
    assert torch.allclose(torch.tensor(grads[1][0]), torch.tensor(grads[0][0]))
    assert torch.allclose(torch.tensor(grads[1][1:]), torch.tensor(grads[0][1:]))


def test_rnn_bind_and_apply_permutation():
    for lib in (torch, wt):
        assert lib.nn.utils.rnn.bind(None, abs) is None and lib.nn.utils.rnn.bind(-2, abs) == 2
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    perm = [2, 0, 1]
    out = []
    for lib in (torch, wt):
        with pytest.warns(FutureWarning, match="`apply_permutation` is deprecated"):
            out.append(lib.nn.modules.rnn.apply_permutation(lib.tensor(x), lib.tensor(perm)).tolist())
    assert out[0] == out[1]


def test_conv_transpose_mixin_deprecated():
    for lib in (torch, wt):
        class Up(lib.nn.modules.conv._ConvTransposeMixin):
            pass
        with pytest.warns(FutureWarning, match="_ConvTransposeMixin` is a deprecated internal class"):
            Up(2, 2, (3,), (1,), (0,), (1,), True, (0,), 1, True, "zeros")


# ---- global module hooks (torch.nn.modules.module) ----------------------------------------------------------
def _module_hooks_log(lib):
    mm = importlib.import_module(lib.__name__ + ".nn.modules.module")
    lib.manual_seed(0)
    log = []
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
    x = lib.randn(4, 3, requires_grad=True)
    hs = [mm.register_module_full_backward_pre_hook(
              lambda mod, go: log.append(("pre", type(mod).__name__, [tuple(g.shape) for g in go]))),
          mm.register_module_full_backward_hook(
              lambda mod, gi, go: log.append(("full", type(mod).__name__, [round(g.sum().item(), 4) for g in gi])))]
    m[1].register_full_backward_hook(lambda mod, gi, go: log.append(("own", type(mod).__name__)))
    m(x).sum().backward()
    for h in hs:
        h.remove()
    m(x).sum().backward()  # removed: only the module's own hook
    mm.register_module_full_backward_hook(lambda *a: None).remove()
    with pytest.raises(RuntimeError) as e:
        mm.register_module_backward_hook(lambda *a: None)
    log.append(str(e.value))
    return log


def test_global_full_backward_hooks():
    assert _module_hooks_log(wt) == _module_hooks_log(torch)


def _non_full_log(lib):
    log = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        x = lib.randn(4, 3, requires_grad=True)
        h = m.register_backward_hook(lambda mod, gi, go: log.append(
            ("non-full", [None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
        m(x).sum().backward()
        h.remove()
        m(x).sum().backward()
        log.append([(v.category, str(v.message)) for v in w])
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_full_backward_hook(lambda *a: None)
    return log


def test_non_full_backward_hook():
    """Module.register_backward_hook (deprecated): on the output's grad_fn, its grad_inputs, PyTorch's warning."""
    assert _non_full_log(wt) == _non_full_log(torch)


def _registration_log(lib):
    mm = importlib.import_module(lib.__name__ + ".nn.modules.module")
    log = []
    hs = [mm.register_module_parameter_registration_hook(
              lambda mod, n, p: log.append(("param", type(mod).__name__, n))),
          mm.register_module_buffer_registration_hook(
              lambda mod, n, b: log.append(("buffer", type(mod).__name__, n)) or (None if b is None else b + 1)),
          mm.register_module_module_registration_hook(lambda mod, n, s: log.append(("module", type(mod).__name__, n)))]
    try:
        bn = lib.nn.BatchNorm1d(2)
        log.append(bn.running_var.tolist())
        seq = lib.nn.Sequential()
        seq.add_module("a", lib.nn.ReLU())
        seq.b = lib.nn.Identity()
        seq.register_buffer("c", None)
    finally:
        for h in hs:
            h.remove()
    lib.nn.Linear(1, 1)
    return log


def test_registration_hooks():
    assert _registration_log(wt) == _registration_log(torch)


# ---- global optimizer hooks (torch.optim.optimizer) ---------------------------------------------------------
def _optimizer_hooks_log(lib):
    om = importlib.import_module(lib.__name__ + ".optim.optimizer")
    log = []
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    opt = lib.optim.SGD([p], lr=0.5)
    opt.register_step_pre_hook(lambda o, a, k: log.append("own pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("own post"))
    hs = [om.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", type(o).__name__, len(a)))),
          om.register_optimizer_step_post_hook(lambda o, a, k: log.append(("global post", type(o).__name__)))]
    p.grad = lib.tensor([1.0, 1.0])
    opt.step()
    for h in hs:
        h.remove()
    opt.step()
    log.append(p.tolist())
    return log


def test_optimizer_global_step_hooks():
    assert _optimizer_hooks_log(wt) == _optimizer_hooks_log(torch)


# ---- torch.autograd.graph, grad_mode, function ----------------------------------------------------------------
def _multi_grad_log(lib):
    g = importlib.import_module(lib.__name__ + ".autograd.graph")
    log = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0], requires_grad=True)
    c = lib.tensor([5.0], requires_grad=True)
    h = g.register_multi_grad_hook((a, b, c), lambda gs: log.append(
        ("all", [None if x is None else x.tolist() for x in gs])))
    h2 = g.register_multi_grad_hook((a, b), lambda gr: log.append(("any", gr.tolist())), mode="any")
    (a * 2).sum().backward()
    (a.sum() * b * c).sum().backward()
    (a * 3).sum().add(b.sum()).backward()
    h.remove()
    h2.remove()
    a.sum().backward()
    x = a * 3
    e = g.get_gradient_edge(x)
    log.append((type(e.node).__name__, e.output_nr, type(g.get_gradient_edge(a).node).__name__))
    log.append([t.tolist() for t in lib.autograd.grad((x * 2).sum(), [e, a])])
    log.append([t.tolist() for t in lib.autograd.grad((x * 3).sum(), e)])
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge for a Tensor that does not"):
        g.get_gradient_edge(lib.ones(2))
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got bad"):
        g.register_multi_grad_hook((a,), print, mode="bad")
    return log


def test_multi_grad_hook_and_gradient_edge():
    assert _multi_grad_log(wt) == _multi_grad_log(torch)


def test_grad_mode_switches_and_inplace_function():
    for lib in (torch, wt):
        gm = importlib.import_module(lib.__name__ + ".autograd.grad_mode")
        assert gm.set_multithreading_enabled is lib.autograd.set_multithreading_enabled
        with gm.set_multithreading_enabled(False), gm.enforce_grad_layout_policy(False):
            x = lib.ones(2, requires_grad=True)
            (x * 2).sum().backward()
        fm = importlib.import_module(lib.__name__ + ".autograd.function")

        class Double(fm.InplaceFunction):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PyTorch's: a Function is not instantiated
            assert type(Double) is fm.FunctionMeta and Double(inplace=True).inplace
        x = lib.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


# ---- the functional optimizers (torch.optim.adam.adam, ...) ----------------------------------------------------
# name -> (state lists as (kind, ...) per parameter, hyperparameters); kinds: "z" zeros like p, "s" a 0-d step,
# "n" None, "f" a 0-d float (value), "e" an empty list, "c" a constant like p (value)
FUNCTIONAL = {
    "sgd": ([("n",)], dict(weight_decay=0.1, momentum=0.9, lr=0.1, dampening=0.0, nesterov=True, maximize=False)),
    "adam": ([("z",), ("z",), ("z",), ("s",)], dict(amsgrad=True, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.1,
                                                 eps=1e-8, maximize=False)),
    "adamw": ([("z",), ("z",), ("e",), ("s",)], dict(amsgrad=False, beta1=0.8, beta2=0.9, lr=0.05, weight_decay=0.1,
                                                  eps=1e-8, maximize=True)),
    "rmsprop": ([("z",), ("z",), ("z",), ("s",)], dict(lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.0, momentum=0.5,
                                                    centered=True)),
    "adagrad": ([("z",), ("s",)], dict(lr=0.1, weight_decay=0.0, lr_decay=0.01, eps=1e-10, maximize=False)),
    "adadelta": ([("z",), ("z",), ("s",)], dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.01, maximize=False)),
    "adamax": ([("z",), ("z",), ("s",)], dict(eps=1e-8, beta1=0.9, beta2=0.999, lr=0.02, weight_decay=0.0)),
    "nadam": ([("z",), ("z",), ("f", 1.0), ("s",)], dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0,
                                                      momentum_decay=4e-3, eps=1e-8)),
    "radam": ([("z",), ("z",), ("s",)], dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0, eps=1e-8)),
    "asgd": ([("z",), ("f", 1.0), ("f", 0.01), ("s",)], dict(lambd=1e-4, lr=0.01, t0=1e6, alpha=0.75,
                                                          weight_decay=0.0)),
    "rprop": ([("z",), ("c", 0.01), ("s",)], dict(step_size_min=1e-6, step_size_max=50, etaminus=0.5, etaplus=1.2)),
}


def _state(lib, kind, dev, capturable):
    on = dev if capturable else None  # PyTorch's 0-d states live on the cpu unless capturable
    if kind[0] == "z":
        return [lib.zeros(3, device=dev)]
    if kind[0] == "c":
        return [lib.full((3,), kind[-1], device=dev)]
    if kind[0] in "sf":
        return [lib.tensor(kind[-1] if kind[0] == "f" else 0.0, device=on)]
    return [None] if kind[0] == "n" else []


def _functional_run(lib, name, dev, capturable=False):
    kinds, hyper = FUNCTIONAL[name]
    p = lib.tensor([1.0, -2.0, 0.5], device=dev)
    states = [_state(lib, kind, dev, capturable) for kind in kinds]
    fn = getattr(importlib.import_module(lib.__name__ + ".optim." + name), name)
    extra = {"capturable": True} if capturable else {}
    for g in ([0.5, -1.0, 2.0], [0.1, 0.3, -0.2], [-0.4, 0.0, 1.0]):
        fn([p], [lib.tensor(g, device=dev)], *states, **extra, **hyper)
    return [p.tolist()] + [[None if t is None else t.tolist() for t in s] for s in states]


def _close(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return (a is None) == (b is None) and (a is None or abs(a - b) <= 1e-5 + 1e-5 * abs(b))


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_optimizers(name):
    assert _close(_functional_run(wt, name, "cpu"), _functional_run(torch, name, "cpu"))
    gathered = importlib.import_module("webtorch.optim._functional")
    assert getattr(gathered, name) is getattr(importlib.import_module("webtorch.optim." + name), name)


@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop"])
def test_functional_optimizers_on_devices(device, name):
    assert _close(_functional_run(wt, name, device), _functional_run(torch, name, "cpu"))


def test_functional_adam_capturable_and_class_step():
    """capturable: the step counts on the device, same numbers; and the functional form is the class's step."""
    assert _close(_functional_run(wt, "adam", "cpu", capturable=True), _functional_run(torch, "adam", "cpu"))
    p = wt.nn.Parameter(wt.tensor([1.0, -2.0, 0.5]))
    opt = wt.optim.Adam([p], lr=0.01, betas=(0.9, 0.99), weight_decay=0.1, amsgrad=True)
    for g in ([0.5, -1.0, 2.0], [0.1, 0.3, -0.2], [-0.4, 0.0, 1.0]):
        p.grad = wt.tensor(g)
        opt.step()
    assert p.tolist() == _functional_run(wt, "adam", "cpu")[0]


# ---- DataLoader's iterators, spectral_norm's state-dict hooks, DistributedDataParallelCPU ---------------------
def _loader_log(lib):
    dl_mod = importlib.import_module(lib.__name__ + ".utils.data.dataloader")
    lib.manual_seed(0)
    dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(10.0)), batch_size=3, shuffle=True)
    it = iter(dl)
    first = next(it)[0].tolist()
    rest = [b[0].tolist() for b in it]
    return (type(it).__name__, isinstance(it, dl_mod._BaseDataLoaderIter), len(it), it._num_yielded, first, rest,
            dl_mod._DatasetKind.Map, dl_mod._DatasetKind.Iterable, dl._dataset_kind,
            type(iter(lib.utils.data.DataLoader([1, 2], num_workers=1))).__name__)


def test_dataloader_iterators():
    assert _loader_log(wt) == _loader_log(torch)


def _spectral_norm_log(lib):
    lib.manual_seed(0)
    m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
    m(lib.randn(2, 3))
    sd = m.state_dict()
    old = {k: v.clone() for k, v in sd.items() if k != "weight_v"}  # a checkpoint from before weight_v
    old["weight"] = m.weight.detach().clone()
    m2 = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
    result = str(m2.load_state_dict(old))
    hooks = [type(h).__name__ for h in m._state_dict_hooks.values()]
    return list(sd), dict(sd._metadata), m2.weight_v.tolist(), result, hooks


def test_spectral_norm_state_dict_hooks():
    got, want = _spectral_norm_log(wt), _spectral_norm_log(torch)
    assert got[:2] == want[:2] and got[3:] == want[3:]
    assert torch.allclose(torch.tensor(got[2]), torch.tensor(want[2]), atol=1e-5)


def test_state_dict_post_hook():
    for lib in (torch, wt):
        m = lib.nn.Linear(2, 2)
        seen = []
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta, seen=seen: seen.append((prefix, sorted(sd))))
        m.state_dict(prefix="x.")
        assert seen == [("x.", ["x.bias", "x.weight"])]
        m.register_state_dict_post_hook(lambda *a: {})
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            m.state_dict()


def test_distributed_data_parallel_cpu():
    for lib in (torch, wt):
        assert issubclass(lib.nn.parallel.DistributedDataParallelCPU, lib.nn.parallel.DistributedDataParallel)
        with pytest.warns(FutureWarning, match="DistributedDataParallelCPU` is deprecated"):
            with pytest.raises(ValueError, match="Default process group has not been initialized"):
                lib.nn.parallel.DistributedDataParallelCPU(lib.nn.Linear(2, 2))


def _mutation_log(lib):
    g = lib.autograd.graph
    out = []
    with g.allow_mutation_on_saved_tensors():
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        y = (b * b).sum()
        b.mul_(2)  # modifies a tensor saved for backward: allowed, backward sees the saved value
        y.backward()
        out.append(a.grad.tolist())
        with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
            with g.allow_mutation_on_saved_tensors():
                pass
    b = a.clone()
    y = (b * b).sum()
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # outside it, PyTorch's error
        y.backward()
    return out


def test_allow_mutation_on_saved_tensors():
    assert _mutation_log(wt) == _mutation_log(torch)


def test_functional_private_aliases():
    out = []
    for lib in (torch, wt):
        F = lib.nn.functional
        out.append((F._threshold(lib.tensor([1.0, 3.0]), 2.0, -1.0).tolist(),
                    list(F._unpool_output_size(lib.ones(1, 1, 2, 3), [2, 2], [2, 2], [0, 1], None))))
    assert out[0] == out[1]
