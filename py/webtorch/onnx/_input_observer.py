"""torch.onnx.InputObserver: watch a model's calls (`with observer(model): model(x1); model(x2)`), then infer
the export arguments (`infer_arguments()`) and dynamic shapes (`infer_dynamic_shapes()`: a dim whose size
differs between the calls is Dim.DYNAMIC), and check an exported ONNXProgram against the recorded outputs
(`check_discrepancies`). Arguments are tensors, Python constants, None and tuples/lists/dicts of them."""
import contextlib
import inspect
import time

from .. import fx
from .._tensor import Tensor
from ..export.dynamic_shapes import Dim, _map_structure
from ..ops._creation import zeros


def _clone(v):
    return fx.map_aggregate(v, lambda x: x.detach().clone() if isinstance(x, Tensor) else x)


def _n_tensors(call):
    return len(fx.flatten_inputs((), call))


def _dims(*values):
    """{dim: Dim.DYNAMIC} for the dims whose size differs between the calls (a tensor), else None."""
    if not all(isinstance(v, Tensor) for v in values):
        return None
    v0 = values[0]
    return {d: Dim.DYNAMIC for d in range(v0.dim()) if any(v.dim() != v0.dim() or v.shape[d] != v0.shape[d]
                                                           for v in values)}


class InputObserver:
    """Steals a method (forward) to collect the inputs and outputs of its calls."""

    def __init__(self, value_if_missing=None):
        self.info = None  # {"signature", "calls": [(args by name, positional count)], "outputs", "latencies"}
        self.value_if_missing = value_if_missing or {}

    def num_obs(self):
        """The number of stored sets of inputs."""
        return 0 if not self.info else len(self.info["calls"])

    @contextlib.contextmanager
    def __call__(self, model, store_n_calls=3, method_name="forward"):
        if not hasattr(model, method_name):
            raise ValueError(f"Model type {model} does not have a method {method_name!r}.")
        captured = getattr(model, method_name)
        sig = inspect.signature(captured)
        if self.info is None:
            self.info = {"signature": sig, "calls": [], "outputs": [], "latencies": []}
        limit = store_n_calls + len(self.info["calls"])
        info = self.info

        def method(*args, **kwargs):
            store = len(info["calls"]) < limit
            if store:
                info["calls"].append((_clone(dict(sig.bind(*args, **kwargs).arguments)), len(args)))
            begin = time.perf_counter()
            out = captured(*args, **kwargs)
            if store:
                info["outputs"].append(_clone(out))
                info["latencies"].append(time.perf_counter() - begin)
            return out
        method.__signature__ = sig
        had = method_name in vars(model)
        setattr(model, method_name, method)
        try:
            yield self
        finally:
            if had:
                setattr(model, method_name, captured)
            else:
                delattr(model, method_name)

    def _check_captured(self):
        if not self.info or not self.info["calls"]:
            raise RuntimeError("No inputs were captured.")

    def _by_name(self):
        """Whether the calls pass arguments by keyword (then specs and arguments are dicts by name)."""
        return any(len(call) > n for call, n in self.info["calls"])

    def _names(self):
        names = []
        for call, _ in self.info["calls"]:
            names += [k for k in call if k not in names]
        order = list(self.info["signature"].parameters)
        return sorted(names, key=order.index)

    def infer_dynamic_shapes(self, set_batch_dimension_for=None):
        """dynamic_shapes for export: a tuple by position, or a dict by name when the calls used keywords."""
        self._check_captured()
        calls = [c for c, _ in self.info["calls"]]
        constants = [{k: v for k, v in c.items() if not fx.flatten_inputs((), {k: v})} for c in calls]
        if any(c != constants[0] for c in constants):
            raise RuntimeError(f"Two calls were made with different constant values, {constants[1]} != "
                               f"{constants[0]}")
        spec = {}
        for i, name in enumerate(self._names()):
            values = [c[name] for c in calls if name in c]
            s = _map_structure(_dims, *values)
            if isinstance(s, dict) and (set_batch_dimension_for is True or name in (set_batch_dimension_for or ())
                                        or i in (set_batch_dimension_for or ())) and values[0].dim():
                s = {0: Dim.DYNAMIC, **s}
            spec[name] = s
        return spec if self._by_name() else tuple(spec.values())

    def infer_arguments(self, index_or_args_or_kwargs=None, flat=False, as_args_kwargs=False):
        """The arguments to export with: the stored call with the most tensors (or the one at an index), the
        arguments other calls had and this one lacks taken from value_if_missing."""
        self._check_captured()
        if isinstance(index_or_args_or_kwargs, (tuple, dict)):
            given = index_or_args_or_kwargs
            call = dict(zip(self._names(), given)) if isinstance(given, tuple) else dict(given)
            n_pos = len(given) if isinstance(given, tuple) else 0
        else:
            i = index_or_args_or_kwargs
            if i is None:
                i = max(range(self.num_obs()), key=lambda k: (_n_tensors(self.info["calls"][k][0]), -k))
            call, n_pos = self.info["calls"][i]
        call = dict(call)
        for name in self._names():
            if call.get(name) is None and name in self.value_if_missing:
                call[name] = self.value_if_missing[name]
            elif call.get(name) is None:
                call.update(self._empty(name))
        if flat:
            return fx.flatten_inputs((), call)
        names = list(call)
        args, kwargs = tuple(call[k] for k in names[:n_pos]), {k: call[k] for k in names[n_pos:]}
        if as_args_kwargs:
            return args, kwargs
        return dict(call) if self._by_name() else args

    def _empty(self, name):
        """{name: an empty tensor} standing for a tensor argument other calls passed and this one did not (its
        dims that change between calls of size 0), or {} when no call passed a tensor there."""
        seen = [c[name] for c, _ in self.info["calls"] if isinstance(c.get(name), Tensor)]
        if not seen:
            return {}
        dyn = _dims(*seen)
        t = seen[0]
        return {name: zeros([0 if d in dyn else n for d, n in enumerate(t.shape)], dtype=t.dtype, device=t.device)}

    def check_discrepancies(self, onnx_program, atol=1e-4, rtol=0.1, progress_bar=False, initializer=None,
                            skip_none=True):
        """Runs onnx_program on every stored input and compares with the stored outputs: one dict per call
        (SUCCESS, abs, rel, index...)."""
        self._check_captured()
        onnx_program.initialize_inference_session(initializer)
        data = []
        for (call, n_pos), outputs, latency in zip(self.info["calls"], self.info["outputs"], self.info["latencies"]):
            names = list(call)
            args, kwargs = [call[k] for k in names[:n_pos]], {k: call[k] for k in names[n_pos:]}
            begin = time.perf_counter()
            try:
                got, error = onnx_program(*args, **kwargs), None
            except Exception as e:  # reported in the summary, as PyTorch's
                got, error = None, str(e)
            duration = time.perf_counter() - begin
            want = fx.flatten_inputs((outputs,), {})
            if error:
                diff = {"error": error, "SUCCESS": False}
            elif len(want) != len(got):
                diff = {"SUCCESS": False, "error": "not the same number of outputs"}
            else:
                diff = _compare(want, got, atol, rtol)
            diff.update(index=len(data), duration_torch=latency, ort_duration=duration, n_inputs=_n_tensors(call),
                        n_none=sum(v is None for v in call.values()), n_empty=0)
            data.append(diff)
        onnx_program.release()
        return data


def _compare(want, got, atol, rtol):
    err_abs = err_rel = 0.0
    for w, g in zip(want, got):
        if tuple(w.shape) != tuple(g.shape):
            return {"SUCCESS": False, "error": "not the same shape"}
        if w.dtype != g.dtype:
            return {"SUCCESS": False, "error": "not the same type"}
        w = w.cpu()
        err_abs = max(err_abs, (w - g).abs().max().item() if w.numel() else 0.0)
        err_rel = max(err_rel, ((w - g).abs() / (w.abs() + rtol)).max().item() if w.numel() else 0.0)
    return {"SUCCESS": err_abs <= atol and err_rel <= rtol, "abs": err_abs, "rel": err_rel}
