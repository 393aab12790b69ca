"""torch.onnx.export's output format: a small protobuf encoder for ONNX's messages (ModelProto's fields by
number), and the graph builder the op mappings (_onnx_ops.py) write nodes and initializers through."""
import struct

from . import fx

try:
    import numpy as _np
except ImportError:  # pragma: no cover - Pyodide without numpy
    _np = None


class OnnxExporterError(RuntimeError):
    pass
OnnxExporterError.__module__ = "webtorch.onnx"  # where users name it (as torch.onnx.OnnxExporterError)


# ---- protobuf ----------------------------------------------------------------------------------------
def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _f_int(field, v):
    return _varint(field << 3) + _varint(int(v))


def _f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return _varint(field << 3 | 2) + _varint(len(b)) + b


def _f_float(field, v):
    return _varint(field << 3 | 5) + struct.pack("<f", v)


# TensorProto.DataType
_ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "bool": 9, "float16": 10,
         "float64": 11, "bfloat16": 16}
_NP = {"float32": "<f4", "uint8": "u1", "int8": "i1", "int16": "<i2", "int32": "<i4", "int64": "<i8", "bool": "?",
       "float16": "<f2", "float64": "<f8"}
_STRUCT = {"float32": "f", "uint8": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "bool": "?",
           "float64": "d", "float16": "e"}


def _raw(values, dtype):
    """Little-endian bytes of a flat list of values."""
    return struct.pack("<%d%s" % (len(values), _STRUCT[dtype]), *values)


def _tensor_proto(name, dims, dtype, raw):
    return (b"".join(_f_int(1, d) for d in dims) + _f_int(2, _ELEM[dtype]) + _f_bytes(8, name)
            + _f_bytes(9, raw))


def tensor_bytes(name, t):
    """A TensorProto holding tensor t."""
    t = t.detach().cpu().contiguous()
    dt = t.dtype.name
    if dt == "bfloat16":
        raise OnnxExporterError("torch.onnx.export: bfloat16 initializers are not supported; convert the model "
                                "to float32 first")
    if _np is None:  # Pyodide offline
        raw = _raw(t.reshape(-1).tolist(), dt)
    else:
        raw = t.numpy().astype(_NP[dt]).tobytes()
    return _tensor_proto(name, t.shape, dt, raw)


def _attr(name, v):
    a = _f_bytes(1, name)
    if isinstance(v, bool) or isinstance(v, int):
        return a + _f_int(3, int(v)) + _f_int(20, 2)
    if isinstance(v, float):
        return a + _f_float(2, v) + _f_int(20, 1)
    if isinstance(v, str):
        return a + _f_bytes(4, v) + _f_int(20, 3)
    if isinstance(v, bytes):  # a TensorProto
        return a + _f_bytes(5, v) + _f_int(20, 4)
    if all(isinstance(x, str) for x in v) and v:
        return a + b"".join(_f_bytes(9, x) for x in v) + _f_int(20, 8)
    if any(isinstance(x, float) for x in v):
        return a + b"".join(_f_float(7, float(x)) for x in v) + _f_int(20, 6)
    return a + b"".join(_f_int(8, int(x)) for x in v) + _f_int(20, 7)


def _value_info(name, dtype, shape):
    dims = b"".join(_f_bytes(1, _f_bytes(2, str(d)) if isinstance(d, (str, fx.Sym)) else _f_int(1, d))
                    for d in shape)
    tensor_type = _f_int(1, _ELEM[dtype]) + _f_bytes(2, dims)
    return _f_bytes(1, name) + _f_bytes(2, _f_bytes(1, tensor_type))


# ---- graph building ----------------------------------------------------------------------------------
class _Builder:
    def __init__(self, opset, dims):
        self.opset, self.dims = opset, dims  # dims: sym -> (input value name, dim)
        self.nodes, self.inits, self.values = [], [], {}  # inits: (name, TensorProto bytes)
        self.weights = {}  # initializer name -> (dtype, shape) for the model's parameters and buffers
        self.domains = {}  # custom op domain -> opset version (torch.onnx.ops.symbolic)
        self._n = 0
        self._sym_cache = {}

    def fresh(self, base):
        self._n += 1
        return f"{base}__{self._n}"

    def op(self, op_type, inputs, n_out=1, name=None, **attrs):
        outs = [self.fresh(name or op_type) for _ in range(n_out)]
        body = (b"".join(_f_bytes(1, i) for i in inputs) + b"".join(_f_bytes(2, o) for o in outs)
                + _f_bytes(3, outs[0]) + _f_bytes(4, op_type)
                + b"".join(_f_bytes(5, _attr(k, v)) for k, v in attrs.items() if v is not None))
        self.nodes.append(body)
        return outs[0] if n_out == 1 else outs

    def init(self, name, t):
        """An initializer holding tensor t."""
        self.inits.append((name, tensor_bytes(name, t)))
        self.weights[name] = (t.dtype.name, tuple(t.shape))
        return name

    def custom(self, domain, version, op_type, inputs, n_out, attrs, metadata_props):
        """A node of op_type in a custom domain (ONNX's custom ops); its outputs' names."""
        self.domains[domain] = version if version is not None else self.domains.get(domain, 1)
        outs = [self.fresh(op_type) for _ in range(n_out)]
        props = b"".join(_f_bytes(9, _f_bytes(1, k) + _f_bytes(2, v)) for k, v in metadata_props.items())
        self.nodes.append(b"".join(_f_bytes(1, i) for i in inputs) + b"".join(_f_bytes(2, o) for o in outs)
                          + _f_bytes(3, outs[0]) + _f_bytes(4, op_type)
                          + b"".join(_f_bytes(5, _attr(k, v)) for k, v in attrs.items())
                          + (_f_bytes(7, domain) if domain else b"") + props)
        return outs

    def const(self, values, dtype, shape=None):
        """A constant (from a Python number or flat list) as an initializer."""
        flat = list(values) if isinstance(values, (list, tuple)) else [values]
        shape = (len(flat),) if shape is None and isinstance(values, (list, tuple)) else (shape or ())
        if dtype == "bool":
            flat = [bool(v) for v in flat]
        elif dtype.startswith("float"):
            flat = [float(v) for v in flat]
        else:
            flat = [int(v) for v in flat]
        name = self.fresh("const")
        self.inits.append((name, _tensor_proto(name, shape, dtype, _raw(flat, dtype))))
        return name

    def sym(self, s):
        """A 1-element int64 tensor holding the value of Sym s (computed from the inputs' shapes)."""
        if s not in self._sym_cache:
            terms = []
            for names, c in s.coefs.items():
                v = None
                for name in names:
                    src, d = self.dims[name]
                    g = self.op("Gather", [self.op("Shape", [src]), self.const([d], "int64")], axis=0)
                    v = g if v is None else self.op("Mul", [v, g])
                terms.append(v if c == 1 else self.op("Mul", [v, self.const([c], "int64")]))
            v = terms[0]
            for t in terms[1:]:
                v = self.op("Add", [v, t])
            self._sym_cache[s] = self.op("Add", [v, self.const([s.const], "int64")]) if s.const else v
        return self._sym_cache[s]

    def ints(self, values):
        """A 1-D int64 tensor of sizes, some of which may be Syms."""
        values = list(values)
        if not any(isinstance(v, fx.Sym) for v in values):
            return self.const(values, "int64")
        parts, run = [], []
        for v in values:
            if isinstance(v, fx.Sym):
                if run:
                    parts.append(self.const(run, "int64"))
                    run = []
                parts.append(self.sym(v))
            else:
                run.append(v)
        if run:
            parts.append(self.const(run, "int64"))
        return self.op("Concat", parts, axis=0)

    def reduce(self, op_type, x, axes, keepdims):
        """Reduce* across opsets: axes an input from opset 18 (ReduceSum: 13), an attribute before."""
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [x, self.const(list(axes), "int64")], keepdims=int(keepdims))
        return self.op(op_type, [x], axes=list(axes), keepdims=int(keepdims))
