"""torch.onnx: `export` writes a webtorch model as an ONNX model (opset 17+) with a small protobuf encoder
(neither onnx nor torch is needed) and returns an ONNXProgram, as PyTorch 2.13's default (dynamo=True) does.

The model is traced by webtorch.fx with `leaf` = "has an ONNX mapping here" (`_onnx_ops._OPS`): nn.functional's
linear, conv2d, batch_norm, layer_norm, scaled_dot_product_attention... are single nodes, and ops
without a mapping decompose into the ops they are written in; an op that maps to nothing and does
not decompose raises an error naming it. Parameters and buffers become initializers named by their
state_dict keys; dynamic_axes become symbolic dims (see webtorch.export). torch.onnx.ops.symbolic calls
become their custom-domain operators.
"""
import abc
import inspect
import warnings

from .. import fx
from .._onnx_ops import _convert, _exportable
from .._onnx_proto import OnnxExporterError, _Builder, _f_bytes, _f_int, _value_info
from ..export import Dim, ExportedProgram, _export
from ..nn import Module
from ..version import webtorch as _webtorch_version
from . import errors, ops
from ._input_observer import InputObserver
from ._onnx_program import ONNXProgram, _Model

__all__ = ["errors", "ops", "export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram", "ExportableModule",
           "InputObserver"]

_state = {"exporting": False}


class TrainingMode:
    EVAL, PRESERVE, TRAINING = 0, 1, 2


def is_in_onnx_export():
    return _state["exporting"]


class ExportableModule(Module, abc.ABC):
    """A module that knows how to export itself: example_arguments() (and optionally dynamic_shapes(),
    input_names(), output_names()); `to_onnx()` or torch.onnx.export(module) export it."""

    @abc.abstractmethod
    def example_arguments(self):
        """(args tuple, kwargs dict or None) to trace forward with."""
        raise NotImplementedError

    def dynamic_shapes(self):
        return None

    def input_names(self):
        return None

    def output_names(self):
        return None

    def to_onnx(self, **kwargs):
        """torch.onnx.export(self, **kwargs): an ONNXProgram."""
        return export(self, **kwargs)


# ---- export ------------------------------------------------------------------------------------------
def export(model, args=(), f=None, kwargs=None, export_params=True, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamic_axes=None, keep_initializers_as_inputs=False,
           dynamic_shapes=None, training=TrainingMode.EVAL, do_constant_folding=True, dynamo=True,
           external_data=False, **unused):
    """torch.onnx.export: `model` (a module, an ExportedProgram or an ExportableModule) traced on `args` as
    an ONNXProgram, also written to f (a path or a binary file) when given. opset_version: 17 to 21 (default
    18). dynamo=False (PyTorch's TorchScript exporter) writes the same file and returns None."""
    opset = 18 if opset_version is None else int(opset_version)
    if not 17 <= opset <= 21:
        raise ValueError(f"torch.onnx.export: opset_version {opset} is not supported (webtorch writes 17 to 21)")
    if not dynamo and dynamic_shapes:
        raise ValueError("The exporter only supports dynamic shapes through parameter dynamic_axes when dynamo=False.")
    if isinstance(model, ExportableModule):
        if not args and kwargs is None:
            args, kwargs = model.example_arguments()
        dynamic_shapes = model.dynamic_shapes() if dynamic_shapes is None else dynamic_shapes
        input_names, output_names = input_names or model.input_names(), output_names or model.output_names()
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]
    _state["exporting"] = True
    try:
        ep = _exported(model, args, kwargs or {}, input_names, dynamic_axes, dynamic_shapes, training)
        program = ONNXProgram(_to_onnx(ep, opset, list(input_names or []), list(output_names or []),
                                       dynamic_axes or {}), ep)
    finally:
        _state["exporting"] = False
    if f is not None:
        program.save(f, include_initializers=export_params, keep_initializers_as_inputs=keep_initializers_as_inputs)
    if not dynamo:
        warnings.warn("You are using the legacy TorchScript-based ONNX export. Starting in PyTorch 2.9, the new "
                      "torch.export-based ONNX exporter has become the default.", DeprecationWarning, stacklevel=2)
        return None
    return program


def _exported(model, args, kwargs, input_names, dynamic_axes, dynamic_shapes, training):
    """The model traced with ONNX's leaves (an ExportedProgram traced again through its graph)."""
    if isinstance(model, ExportedProgram):
        return model._retrace(_exportable)
    was_training = getattr(model, "training", False)
    if hasattr(model, "train") and training != TrainingMode.PRESERVE:
        model.train(training == TrainingMode.TRAINING)
    try:
        flat = fx.flatten_inputs(args, kwargs)
        shapes = dynamic_shapes or _axes_to_shapes(dynamic_axes, list(input_names or []), flat, model, args)
        return _export(model, args, kwargs, shapes, leaf=_exportable)
    finally:
        if hasattr(model, "train"):
            model.train(was_training)


def _axes_to_shapes(dynamic_axes, input_names, flat, model, args):
    """dynamic_axes ({input name: {dim: name} or [dims]}) as export's dynamic_shapes (a tuple per arg)."""
    if not dynamic_axes:
        return None
    fwd = list(inspect.signature(getattr(model, "forward", model)).parameters)
    spec = [None] * len(args)
    for name, axes in dynamic_axes.items():
        if name in input_names:
            i = input_names.index(name)
        elif name in fwd[:len(args)]:
            i = fwd.index(name)
        else:
            continue  # an output's dynamic axes follow from the inputs'
        if i >= len(args):
            continue
        axes = axes if isinstance(axes, dict) else {d: f"{name}_dynamic_axes_{k + 1}" for k, d in enumerate(axes)}
        spec[i] = {d: Dim(n) for d, n in axes.items()}
    return tuple(spec)


def _to_onnx(ep, opset, input_names, output_names, dynamic_axes):
    graph = ep.graph
    inputs = ep._inputs
    user = [n for n in graph.nodes if n.op == "placeholder" and inputs[n.name][0] == "input"]
    names = {}
    for i, n in enumerate(user):
        names[n.name] = input_names[i] if i < len(input_names) else n.name
    dims = {s: (names[user[k].name], d) for s, (k, d) in ep._dims.items()}
    b = _Builder(opset, dims)
    used = {m.name for n in graph.nodes for m in n.all_input_nodes}
    graph_inputs = []
    for n in graph.nodes:
        if n.op == "placeholder":
            kind, target = inputs[n.name]
            if kind == "input":
                b.values[n.name] = names[n.name]
                m = n.meta["val"]
                graph_inputs.append(_value_info(names[n.name], m.dtype.name, m.shape))
            elif n.name in used:
                b.values[n.name] = b.init(target, ep._tensors[target])
        elif n.op == "get_attr":
            b.values[n.name] = b.init(n.name, graph.constants[n.target])
        elif n.op == "call_function":
            b.values[n.name] = _convert(b, n)
    out = graph.nodes[-1].args[0]
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    graph_outputs = []
    for i, o in enumerate(outs):
        if not isinstance(o, fx.Node):
            raise OnnxExporterError(f"torch.onnx.export: output {i} is not a tensor ({type(o).__name__})")
        name = output_names[i] if i < len(output_names) else (o.name if o.op == "call_function" else f"output_{i}")
        b.nodes.append(_f_bytes(1, b.values[o.name]) + _f_bytes(2, name) + _f_bytes(3, f"output_{i}")
                       + _f_bytes(4, "Identity"))
        m = o.meta["val"]
        shape = list(m.shape)
        for d, label in (dynamic_axes.get(name) or {}).items() if isinstance(dynamic_axes.get(name), dict) else ():
            shape[d] = label
        graph_outputs.append(_value_info(name, m.dtype.name, shape))
    opset_ids = _f_bytes(8, _f_bytes(1, "") + _f_int(2, opset)) + b"".join(
        _f_bytes(8, _f_bytes(1, d) + _f_int(2, v)) for d, v in b.domains.items())
    head = _f_int(1, 8) + _f_bytes(2, "webtorch") + _f_bytes(3, _webtorch_version)
    return _Model(head, b.nodes, b.inits, b.weights, graph_inputs, graph_outputs, opset_ids)
