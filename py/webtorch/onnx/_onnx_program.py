"""torch.onnx.ONNXProgram: what torch.onnx.export returns.

webtorch writes the ONNX model itself (a small protobuf encoder, no onnx package): ONNXProgram.model holds
the serialized ModelProto's parts (PyTorch's holds an onnx_ir Model). Running it (`program(*inputs)`) needs
onnxruntime and `model_proto` needs onnx, as in PyTorch; saving needs neither."""
import textwrap
import warnings

from .. import fx
from .._onnx_proto import _f_bytes, _value_info, tensor_bytes
from ..ops._creation import tensor as _tensor
from .errors import OnnxExporterWarning


class _Model:
    """An ONNX ModelProto in parts: header (fields before the graph), graph parts, opset ids."""

    def __init__(self, head, nodes, inits, weights, inputs, outputs, tail):
        self.head, self.nodes, self.inits, self.weights = head, nodes, inits, weights
        self.inputs, self.outputs, self.tail = inputs, outputs, tail

    def serialize(self, include_initializers=True, keep_initializers_as_inputs=False):
        inits = [(name, t) for name, t in self.inits if include_initializers or name not in self.weights]
        inputs = list(self.inputs)
        if keep_initializers_as_inputs:
            inputs += [_value_info(name, dt, shape) for name, (dt, shape) in self.weights.items()]
        g = (b"".join(_f_bytes(1, n) for n in self.nodes) + _f_bytes(2, "main_graph")
             + b"".join(_f_bytes(5, t) for _, t in inits) + b"".join(_f_bytes(11, v) for v in inputs)
             + b"".join(_f_bytes(12, v) for v in self.outputs))
        return self.head + _f_bytes(7, g) + self.tail

    def __str__(self):
        return (f"<ONNX model: {len(self.nodes)} nodes, {len(self.inits)} initializers, {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs>")


class ONNXProgram:
    """An exported ONNX model: save it, read its ModelProto, or run it with onnxruntime on webtorch tensors."""

    def __init__(self, model, exported_program):
        self.model = model
        self.exported_program = exported_program
        self._inference_session = None

    def __repr__(self):
        return (f"ONNXProgram(\n    model=\n{textwrap.indent(str(self.model), ' ' * 8)}\n    ,\n    exported_program=\n"
                f"{textwrap.indent(str(self.exported_program), ' ' * 8)}\n)\n")

    def _bytes(self):
        return self.model.serialize()

    @property
    def model_proto(self):
        """The onnx.ModelProto (needs the onnx package)."""
        import onnx
        return onnx.load_from_string(self._bytes())

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False, external_data=None):
        """Write the model to destination (a path or a binary file); the weights are inside the file."""
        if external_data:
            raise NotImplementedError("ONNXProgram.save: external_data=True is not supported by webtorch's writer "
                                      "(the weights are written inside the model file)")
        data = self.model.serialize(include_initializers, keep_initializers_as_inputs)
        if hasattr(destination, "write"):
            destination.write(data)
        else:
            with open(destination, "wb") as fh:
                fh.write(data)

    def apply_weights(self, state_dict):
        """Replace the initializers named in state_dict by its tensors (a warning for names the model lacks)."""
        for name, t in state_dict.items():
            if name not in self.model.weights:
                warnings.warn(f"Weight '{name}' not found in the model. Skipped applying.", OnnxExporterWarning,
                              stacklevel=2)
                continue
            if (t.dtype.name, tuple(t.shape)) != self.model.weights[name]:
                raise ValueError(f"apply_weights: '{name}' is {t.dtype.name}{list(t.shape)}, the model's initializer "
                                 f"is {self.model.weights[name][0]}{list(self.model.weights[name][1])}")
            self.model.inits = [(n, tensor_bytes(n, t) if n == name else b) for n, b in self.model.inits]
        self.release()

    def optimize(self):
        """Kept for PyTorch's API: webtorch's writer emits the graph as recorded (nothing to fold here)."""

    def initialize_inference_session(self, initializer=None):
        """Start the onnxruntime session __call__ uses (initializer: bytes -> InferenceSession)."""
        if initializer is None:
            import onnxruntime as ort
            self._inference_session = ort.InferenceSession(self._bytes(), providers=["CPUExecutionProvider"])
        else:
            self._inference_session = initializer(self._bytes())

    def release(self):
        """Release the inference session."""
        self._inference_session = None

    def __call__(self, *args, **kwargs):
        """Run the model in onnxruntime on the tensors among args/kwargs (as the exported module takes them);
        the outputs as CPU tensors."""
        if self._inference_session is None:
            self.initialize_inference_session()
        sess = self._inference_session
        flat = fx.flatten_inputs(args, kwargs)
        feed = {i.name: t.detach().cpu().numpy() for i, t in zip(sess.get_inputs(), flat)}
        return tuple(_tensor(o) for o in sess.run(None, feed))

    def call_reference(self, *args, **kwargs):
        """Run the model with onnx's reference evaluator."""
        import onnx.reference
        model = self.model_proto
        flat = fx.flatten_inputs(args, kwargs)
        feed = {i.name: t.detach().cpu().numpy() for i, t in zip(model.graph.input, flat)}
        return tuple(_tensor(o) for o in onnx.reference.ReferenceEvaluator(model).run(None, feed))
