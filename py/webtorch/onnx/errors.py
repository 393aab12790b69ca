"""torch.onnx.errors: the ONNX exporter's exceptions and warning, as PyTorch's."""
from .._onnx_proto import OnnxExporterError

__all__ = ["OnnxExporterWarning", "SymbolicValueError", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings in the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator is unsupported by the exporter."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. Support for "
                   f"this operator was added in version {supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If you are trying to export "
                   "a custom operator, make sure you registered it with the right domain and version.")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """Errors around TorchScript values and nodes (PyTorch's TorchScript exporter; webtorch has none)."""

    def __init__(self, msg, value):
        super().__init__(f"{msg}  [Caused by the value '{value}']")


OnnxExporterWarning.__module__ = UnsupportedOperatorError.__module__ = SymbolicValueError.__module__ = \
    "webtorch.onnx.errors"
