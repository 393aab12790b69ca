"""torch.onnx.export: a webtorch model as an ONNX file (opset 17+), written by a small protobuf encoder
(neither onnx nor torch is needed).

The model is traced by webtorch.fx with `leaf` = "has an ONNX mapping here" (`_OPS`): nn.functional's
linear, conv2d, batch_norm, layer_norm, scaled_dot_product_attention... are single nodes, and ops
without a mapping decompose into the ops they are written in; an op that maps to nothing and does
not decompose raises an error naming it. Parameters and buffers become initializers named by their
state_dict keys; dynamic_axes become symbolic dims (see webtorch.export).
"""
import inspect
import math
import operator
import struct

from . import __version__, _dtype, fx
from .export import _export, Dim

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "TrainingMode"]

_state = {"exporting": False}


class OnnxExporterError(RuntimeError):
    pass


class TrainingMode:
    EVAL, PRESERVE, TRAINING = 0, 1, 2


def is_in_onnx_export():
    return _state["exporting"]


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
    if all(isinstance(x, float) for x in v) and v:
        return a + b"".join(_f_float(7, x) for x in v) + _f_int(20, 6)
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
        self.nodes, self.inits, self.values = [], [], {}
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
        t = t.detach().cpu().contiguous()
        dt = t.dtype.name
        if dt == "bfloat16":
            raise OnnxExporterError("torch.onnx.export: bfloat16 initializers are not supported; convert the model "
                                    "to float32 first")
        try:
            import numpy  # noqa: F401
        except ImportError:  # Pyodide offline
            raw = _raw(t.reshape(-1).tolist(), dt)
        else:
            raw = t.numpy().astype(_NP[dt]).tobytes()
        self.inits.append(_tensor_proto(name, t.shape, dt, raw))
        return name

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
        self.inits.append(_tensor_proto(name, shape, dtype, _raw(flat, dtype)))
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


def _meta(node):
    return node.meta["val"]


def _scalar_or(b, v, dtype):
    """The ONNX name for an argument that is a value name already or a Python number."""
    return v if isinstance(v, str) else b.const(v, dtype)


def _cast(b, name, src, dst):
    return name if src == dst else b.op("Cast", [name], to=_ELEM[dst])


def _binary(op_type, cmp=False):
    def conv(b, node, vals):
        x, y = vals[0], vals[1]
        a = node.args
        metas = [m for m in (a[0], a[1]) if isinstance(m, fx.Node)]
        if cmp:
            dts = [_meta(m).dtype for m in metas]
            floats = [d for d in dts if d.is_floating_point]
            ct = (floats[0] if floats else _dtype.get_default_dtype() if any(
                isinstance(v, float) for v in (x, y)) else dts[0]).name
        else:
            ct = _meta(node).dtype.name
        ins = []
        for v, arg in ((x, a[0]), (y, a[1])):
            ins.append(_cast(b, v, _meta(arg).dtype.name, ct) if isinstance(arg, fx.Node) else b.const(v, ct))
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            ins[1] = b.op("Mul", [ins[1], b.const(alpha, ct)])
        if op_type == "Rsub":
            return b.op("Sub", [ins[1], ins[0]])
        if op_type == "NotEqual":
            return b.op("Not", [b.op("Equal", ins)])
        return b.op(op_type, ins)
    return conv


def _unary(op_type, **attrs):
    return lambda b, node, vals: b.op(op_type, [vals[0]], **attrs)


class _Args:
    """A call's arguments by parameter name (signature defaults filled in), tensors as ONNX names."""

    def __init__(self, b, node):
        self.node = node
        self.by_name = {k: b.values[v.name] if isinstance(v, fx.Node) else v
                        for k, v in node.normalized_arguments().items()}

    def __getitem__(self, k):
        return self.by_name[k]

    def meta(self, k):
        v = self.node.normalized_arguments()[k]
        return _meta(v) if isinstance(v, fx.Node) else None


def _pairs(v, n):
    return list(v) * (n // len(v)) if isinstance(v, (list, tuple)) else [int(v)] * n


def _conv(b, node, vals):
    p = _Args(b, node)
    x, w = p["input"], p["weight"]
    k = list(_meta(node.normalized_arguments()["weight"]).shape[2:])
    n = len(k)
    dil = _pairs(p["dilation"], n)
    pad = p["padding"]
    if isinstance(pad, str):
        pads = [0] * 2 * n if pad == "valid" else None
        if pads is None:
            lo = [d * (kk - 1) // 2 for d, kk in zip(dil, k)]
            hi = [d * (kk - 1) - l for d, kk, l in zip(dil, k, lo)]
            pads = lo + hi
    else:
        pads = _pairs(pad, n) * 2
    ins = [x, w] + ([p["bias"]] if p["bias"] is not None else [])
    return b.op("Conv", ins, kernel_shape=k, strides=_pairs(p["stride"], n), pads=pads, dilations=dil,
                group=int(p["groups"]))


def _conv_transpose(b, node, vals):
    p = _Args(b, node)
    k = list(_meta(node.normalized_arguments()["weight"]).shape[2:])
    n = len(k)
    ins = [p["input"], p["weight"]] + ([p["bias"]] if p["bias"] is not None else [])
    return b.op("ConvTranspose", ins, kernel_shape=k, strides=_pairs(p["stride"], n),
                pads=_pairs(p["padding"], n) * 2, output_padding=_pairs(p["output_padding"], n),
                dilations=_pairs(p["dilation"], n), group=int(p["groups"]))


def _pool(kind):
    def conv(b, node, vals):
        p = _Args(b, node)
        n = 1 if _op_name(node.target).endswith("1d") else 2
        k = _pairs(p["kernel_size"], n)
        s = _pairs(p["stride"], n) if p["stride"] not in (None, [], ()) else k
        attrs = {"kernel_shape": k, "strides": s, "pads": _pairs(p["padding"], n) * 2,
                 "ceil_mode": int(p["ceil_mode"])}
        x = p["input"]
        unbatched = len(_meta(node).shape) == n + 1
        if unbatched:
            x = b.op("Unsqueeze", [x, b.const([0], "int64")])
        if kind == "max":
            if p["return_indices"]:
                raise OnnxExporterError("torch.onnx.export: max_pool with return_indices=True has no ONNX mapping "
                                        "here")
            y = b.op("MaxPool", [x], dilations=_pairs(p["dilation"], n), **attrs)
        else:
            if p.by_name.get("divisor_override"):
                raise OnnxExporterError("torch.onnx.export: avg_pool2d(divisor_override=...) has no ONNX mapping")
            y = b.op("AveragePool", [x], count_include_pad=int(p["count_include_pad"]), **attrs)
        return b.op("Squeeze", [y, b.const([0], "int64")]) if unbatched else y
    return conv


def _adaptive(kind):
    def conv(b, node, vals):
        if node.normalized_arguments().get("return_indices"):
            raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} with return_indices=True has no ONNX "
                                    "mapping here")
        inp = _meta(node.args[0]).shape
        out = _meta(node).shape
        x = vals[0]
        n = 1 if node.target.__name__.endswith("1d") else 2
        sp_in, sp_out = list(inp[-n:]), list(out[-n:])
        if all(o == 1 for o in sp_out):
            return b.op("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", [x])
        if any(isinstance(v, fx.Sym) for v in sp_in) or any(i % o for i, o in zip(sp_in, sp_out)):
            raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} to an output size that does not "
                                    "divide the input size has no ONNX mapping")
        k = [i // o for i, o in zip(sp_in, sp_out)]
        return b.op("AveragePool" if kind == "avg" else "MaxPool", [x], kernel_shape=k, strides=k)
    return conv


def _batch_norm(b, node, vals):
    p = _Args(b, node)
    if p["training"]:
        raise OnnxExporterError("torch.onnx.export: batch_norm in training mode; call model.eval() first (or leave "
                                "training=TrainingMode.EVAL)")
    C = _meta(node).shape[1]
    dt = _meta(node).dtype.name
    w = p["weight"] if p["weight"] is not None else b.const([1.0] * C, dt)
    bias = p["bias"] if p["bias"] is not None else b.const([0.0] * C, dt)
    return b.op("BatchNormalization", [p["input"], w, bias, p["running_mean"], p["running_var"]],
                epsilon=float(p["eps"]))


def _layer_norm(b, node, vals):
    p = _Args(b, node)
    ns = p["normalized_shape"]
    ns = list(ns) if isinstance(ns, (list, tuple)) else [int(ns)]
    dt = _meta(node).dtype.name
    n = 1
    for v in ns:
        n *= v
    w = p["weight"] if p["weight"] is not None else b.const([1.0] * n, dt, tuple(ns))
    ins = [p["input"], w] + ([p["bias"]] if p["bias"] is not None else [])
    return b.op("LayerNormalization", ins, axis=-len(ns), epsilon=float(p["eps"]))


def _group_norm(b, node, vals):
    p = _Args(b, node)
    G, dt = int(p["num_groups"]), _meta(node).dtype.name
    shape = _meta(node).shape
    x = b.op("Reshape", [p["input"], b.const([0, G, -1], "int64")])
    y = b.op("InstanceNormalization", [x, b.const([1.0] * G, dt), b.const([0.0] * G, dt)], epsilon=float(p["eps"]))
    y = b.op("Reshape", [y, b.op("Shape", [p["input"]])])
    per_channel = [1] * (len(shape) - 2)
    if p["weight"] is not None:
        y = b.op("Mul", [y, b.op("Reshape", [p["weight"], b.const([-1] + per_channel, "int64")])])
    if p["bias"] is not None:
        y = b.op("Add", [y, b.op("Reshape", [p["bias"], b.const([-1] + per_channel, "int64")])])
    return y


def _instance_norm(b, node, vals):
    p = _Args(b, node)
    C, dt = _meta(node).shape[1], _meta(node).dtype.name
    w = p["weight"] if p["weight"] is not None else b.const([1.0] * C, dt)
    bias = p["bias"] if p["bias"] is not None else b.const([0.0] * C, dt)
    if p["use_input_stats"]:
        return b.op("InstanceNormalization", [p["input"], w, bias], epsilon=float(p["eps"]))
    return b.op("BatchNormalization", [p["input"], w, bias, p["running_mean"], p["running_var"]],
                epsilon=float(p["eps"]))


def _dims(dim, n):
    """A reduction's dim argument (None, (), an int or a list) as non-negative axes."""
    if dim is None or dim == () or dim == []:
        return list(range(n))
    return [d % n for d in (dim if isinstance(dim, (list, tuple)) else [dim])]


def _var(b, node, vals):
    p = _Args(b, node)
    shape = _meta(node.args[0]).shape
    n = len(shape)
    dim = p["dim"]
    dims = _dims(dim, n)
    count = 1
    for d in dims:
        if isinstance(shape[d], fx.Sym):
            raise OnnxExporterError("torch.onnx.export: var over a dynamic dim has no ONNX mapping here")
        count *= shape[d]
    correction = p["correction"] if p["correction"] is not None else (0 if p["unbiased"] is False else 1)
    dt = _meta(node).dtype.name
    d = b.op("Sub", [vals[0], b.reduce("ReduceMean", vals[0], dims, True)])
    v = b.reduce("ReduceMean", b.op("Mul", [d, d]), dims, p["keepdim"])
    return v if correction == 0 else b.op("Mul", [v, b.const(count / max(count - correction, 0), dt)])


def _linear(b, node, vals):
    p = _Args(b, node)
    x, w, bias = p["input"], p["weight"], p["bias"]
    if len(_meta(node.args[0]).shape) == 2 and len(_meta(node.args[1]).shape) == 2:
        return b.op("Gemm", [x, w] + ([bias] if bias is not None else []), transB=1)
    y = b.op("MatMul", [x, b.op("Transpose", [w], perm=[1, 0])])
    return b.op("Add", [y, bias]) if bias is not None else y


def _addmm(b, node, vals):
    p = _Args(b, node)
    return b.op("Gemm", [p["mat1"], p["mat2"], p["input"]], alpha=float(p["alpha"]), beta=float(p["beta"]))


def _softmax(op_type):
    def conv(b, node, vals):
        p = _Args(b, node)
        x, dim = p["input"], p["dim"]
        if dim is None:
            raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} needs an explicit dim")
        if p["dtype"] is not None:
            x = b.op("Cast", [x], to=_ELEM[p["dtype"].name])
        return b.op(op_type, [x], axis=int(dim))
    return conv


def _gelu(b, node, vals):
    x, dt = vals[0], _meta(node).dtype.name
    c = (lambda v: b.const(v, dt))
    if node.normalized_arguments()["approximate"] == "tanh":
        inner = b.op("Mul", [b.op("Add", [x, b.op("Mul", [c(0.044715), b.op("Pow", [x, c(3.0)])])]),
                             c(math.sqrt(2.0 / math.pi))])
        return b.op("Mul", [b.op("Mul", [c(0.5), x]), b.op("Add", [c(1.0), b.op("Tanh", [inner])])])
    erf = b.op("Erf", [b.op("Mul", [x, c(1.0 / math.sqrt(2.0))])])
    return b.op("Mul", [b.op("Mul", [c(0.5), x]), b.op("Add", [c(1.0), erf])])


def _silu(b, node, vals):
    return b.op("Mul", [vals[0], b.op("Sigmoid", [vals[0]])])


def _hardtanh(b, node, vals):
    p, dt = _Args(b, node), _meta(node).dtype.name
    return b.op("Clip", [vals[0], b.const(p["min_val"], dt), b.const(p["max_val"], dt)])


def _clamp(b, node, vals):
    p, dt = _Args(b, node), _meta(node).dtype.name
    bound = (lambda v: "" if v is None else _scalar_or(b, v, dt))
    return b.op("Clip", [vals[0], bound(p["min"]), bound(p["max"])])


def _dropout(b, node, vals):
    p = _Args(b, node)
    if p["training"] and p["p"] > 0:
        raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} in training mode; call model.eval() "
                                "first")
    return b.op("Identity", [vals[0]])


def _identity(b, node, vals):
    return b.op("Identity", [vals[0]])


def _to_meta_dtype(b, node, vals):
    return _cast(b, vals[0], _meta(node.args[0]).dtype.name, _meta(node).dtype.name)


def _reshape_to_meta(b, node, vals):
    return b.op("Reshape", [vals[0], b.ints(_meta(node).shape)])


def _expand(b, node, vals):
    return b.op("Expand", [vals[0], b.ints(_meta(node).shape)])


def _permute(b, node, vals):
    dims = node.args[1:]
    dims = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) else list(dims or node.kwargs["dims"])
    n = len(dims)
    return b.op("Transpose", [vals[0]], perm=[d % n for d in dims])


def _transpose(b, node, vals):
    p = _Args(b, node)
    n = len(_meta(node).shape)
    perm = list(range(n))
    d0, d1 = p["dim0"] % n, p["dim1"] % n
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op("Transpose", [vals[0]], perm=perm)


def _t(b, node, vals):
    return b.op("Transpose", [vals[0]], perm=[1, 0]) if len(_meta(node).shape) == 2 else b.op("Identity", [vals[0]])


def _cat(b, node, vals):
    p = _Args(b, node)
    tensors = [b.values[t.name] for t in node.normalized_arguments()["tensors"]]
    return b.op("Concat", tensors, axis=int(p["dim"]) % len(_meta(node).shape))


def _split(b, node, vals):
    metas = _meta(node)
    dim = node.normalized_arguments()["dim"] % len(metas[0].shape)
    sizes = [m.shape[dim] for m in metas]
    if any(isinstance(s, fx.Sym) for s in sizes):
        raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} along a dynamic dim")
    return b.op("Split", [vals[0], b.const(sizes, "int64")], n_out=len(sizes), axis=dim) if len(sizes) > 1 \
        else [b.op("Identity", [vals[0]])]


def _getitem_tuple(b, node, vals):
    return b.values[node.args[0].name][node.args[1]]


def _getitem(b, node, vals):
    """Tensor indexing with ints, slices, None and Ellipsis (Slice / Gather / Unsqueeze)."""
    index = node.args[1]
    index = list(index) if isinstance(index, tuple) else [index]
    shape = list(_meta(node.args[0]).shape)
    if any(isinstance(i, (fx.Node, list)) for i in index):
        raise OnnxExporterError("torch.onnx.export: indexing with tensors or lists has no ONNX mapping here; "
                                "use index_select / gather")
    if Ellipsis in index:
        k = index.index(Ellipsis)
        fill = len(shape) - sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:k] + [slice(None)] * fill + index[k + 1:]
    x, d, new_axes, drop = vals[0], 0, [], []
    starts, ends, axes, steps = [], [], [], []
    for pos, i in enumerate(index):
        if i is None:
            new_axes.append(pos)
            continue
        if isinstance(i, slice):
            if (i.start, i.stop, i.step) != (None, None, None):
                starts.append(0 if i.start is None else i.start)
                ends.append(2 ** 63 - 1 if i.stop is None else i.stop)
                axes.append(d)
                steps.append(1 if i.step is None else i.step)
        else:
            drop.append(d)
            starts.append(i)
            ends.append(i + 1 if i != -1 else 2 ** 63 - 1)
            axes.append(d)
            steps.append(1)
        d += 1
    if axes:
        x = b.op("Slice", [x, b.ints(starts), b.ints(ends), b.const(axes, "int64"), b.const(steps, "int64")])
    if drop:
        x = b.op("Squeeze", [x, b.const(drop, "int64")])
    if new_axes:
        x = b.op("Unsqueeze", [x, b.const(new_axes, "int64")])
    return x if x != vals[0] else b.op("Identity", [x])


def _reduction(op_type):
    def conv(b, node, vals):
        p = _Args(b, node)
        n = len(_meta(node.args[0]).shape)
        dim = p["dim"]
        if op_type in ("ReduceMax", "ReduceMin") and dim is not None and dim != () and \
                node.target.__name__ in ("max", "min"):
            raise OnnxExporterError(f"torch.onnx.export: {node.target.__name__} over a dim (values and indices) "
                                    "has no ONNX mapping here; use amax/amin")
        dims = _dims(dim, n)
        x = vals[0]
        if p.by_name.get("dtype") is not None:
            x = b.op("Cast", [x], to=_ELEM[p["dtype"].name])
        return b.reduce(op_type, x, dims, p.by_name.get("keepdim", False))
    return conv


def _masked_fill(b, node, vals):
    dt = _meta(node).dtype.name
    value = vals[2] if isinstance(node.args[2], fx.Node) else b.const(node.args[2], dt)
    return b.op("Where", [vals[1], value, vals[0]])


def _where(b, node, vals):
    dt = _meta(node).dtype.name
    ins = [vals[0]]
    for v, arg in ((vals[1], node.args[1]), (vals[2], node.args[2])):
        ins.append(_cast(b, v, _meta(arg).dtype.name, dt) if isinstance(arg, fx.Node) else b.const(v, dt))
    return b.op("Where", ins)


def _embedding(b, node, vals):
    p = _Args(b, node)
    if p["max_norm"] is not None:
        raise OnnxExporterError("torch.onnx.export: embedding(max_norm=...) has no ONNX mapping")
    return b.op("Gather", [p["weight"], p["input"]], axis=0)


def _unsqueeze(b, node, vals):
    return b.op("Unsqueeze", [vals[0], b.const([node.normalized_arguments()["dim"] % len(_meta(node).shape)],
                                                  "int64")])


def _pad(b, node, vals):
    p = _Args(b, node)
    if p["mode"] != "constant":
        return b.op("Pad", [vals[0], b.const(_onnx_pads(p["pad"], len(_meta(node).shape)), "int64")],
                    mode={"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[p["mode"]])
    dt = _meta(node).dtype.name
    return b.op("Pad", [vals[0], b.const(_onnx_pads(p["pad"], len(_meta(node).shape)), "int64"),
                        b.const(p["value"] or 0, dt)], mode="constant")


def _onnx_pads(pad, n):
    lo, hi = [0] * n, [0] * n
    for i in range(len(pad) // 2):
        lo[n - 1 - i], hi[n - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return lo + hi


def _sdpa(b, node, vals):
    p = _Args(b, node)
    q, k, v = p["query"], p["key"], p["value"]
    qm = p.meta("query")
    dt, E = qm.dtype.name, qm.shape[-1]
    if p["enable_gqa"] or (p["dropout_p"] and p["dropout_p"] > 0):
        raise OnnxExporterError("torch.onnx.export: scaled_dot_product_attention with dropout or enable_gqa has no "
                                "ONNX mapping here")
    scale = p["scale"] if p["scale"] is not None else 1.0 / math.sqrt(E)
    n = len(qm.shape)
    perm = list(range(n - 2)) + [n - 1, n - 2]
    attn = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k], perm=perm)]), b.const(scale, dt)])
    mask = p["attn_mask"]
    if p["is_causal"]:
        L, S = qm.shape[-2], p.meta("key").shape[-2]
        if isinstance(L, fx.Sym) or isinstance(S, fx.Sym):
            raise OnnxExporterError("torch.onnx.export: is_causal attention over a dynamic sequence length")
        keep = [i >= j for i in range(L) for j in range(S)]
        attn = b.op("Where", [b.const(keep, "bool", (L, S)), attn, b.const(-math.inf, dt)])
    if mask is not None:
        if p.meta("attn_mask").dtype.name == "bool":
            attn = b.op("Where", [mask, attn, b.const(-math.inf, dt)])
        else:
            attn = b.op("Add", [attn, mask])
        # PyTorch's safe softmax: a row masked everywhere attends to nothing (zeros)
        masked = b.op("Cast", [b.op("Equal", [attn, b.const(-math.inf, dt)])], to=_ELEM[dt])
        dead = b.op("Cast", [b.reduce("ReduceMin", masked, [n - 1], True)], to=_ELEM["bool"])
        w = b.op("Softmax", [b.op("Where", [dead, b.const(0.0, dt), attn])], axis=-1)
        w = b.op("Where", [dead, b.const(0.0, dt), w])
    else:
        w = b.op("Softmax", [attn], axis=-1)
    return b.op("MatMul", [w, v])


def _baddbmm(b, node, vals):
    p, dt = _Args(b, node), _meta(node).dtype.name
    y = b.op("MatMul", [p["batch1"], p["batch2"]])
    if p["alpha"] != 1:
        y = b.op("Mul", [y, b.const(p["alpha"], dt)])
    inp = p["input"] if p["beta"] == 1 else b.op("Mul", [p["input"], b.const(p["beta"], dt)])
    return b.op("Add", [inp, y])


def _rsqrt(b, node, vals):
    return b.op("Reciprocal", [b.op("Sqrt", [vals[0]])])


def _leaky_relu(b, node, vals):
    return b.op("LeakyRelu", [vals[0]], alpha=float(node.normalized_arguments()["negative_slope"]))


def _elu(b, node, vals):
    return b.op("Elu", [vals[0]], alpha=float(node.normalized_arguments()["alpha"]))


def _softplus(b, node, vals):
    p = _Args(b, node)
    if p["beta"] != 1 or p["threshold"] != 20:
        raise OnnxExporterError("torch.onnx.export: softplus with beta != 1 or threshold != 20 has no ONNX mapping "
                                "here")
    # PyTorch returns x itself above the threshold; Softplus(x) == x there in float32
    return b.op("Softplus", [vals[0]])


_OPS = {
    # nn.functional
    "linear": _linear, "conv1d": _conv, "conv2d": _conv, "conv_transpose1d": _conv_transpose,
    "conv_transpose2d": _conv_transpose, "max_pool1d": _pool("max"), "max_pool2d": _pool("max"),
    "avg_pool1d": _pool("avg"), "avg_pool2d": _pool("avg"), "adaptive_avg_pool1d": _adaptive("avg"),
    "adaptive_avg_pool2d": _adaptive("avg"), "adaptive_max_pool2d": _adaptive("max"),
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "group_norm": _group_norm,
    "instance_norm": _instance_norm, "embedding": _embedding,
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"), "gelu": _gelu, "silu": _silu,
    "hardtanh": _hardtanh, "leaky_relu": _leaky_relu, "elu": _elu, "softplus": _softplus,
    "hardswish": _unary("HardSwish"), "hardsigmoid": _unary("HardSigmoid", alpha=1.0 / 6, beta=0.5),
    "dropout": _dropout, "dropout1d": _dropout, "dropout2d": _dropout, "dropout3d": _dropout,
    "alpha_dropout": _dropout, "feature_alpha_dropout": _dropout, "pad": _pad,
    "scaled_dot_product_attention": _sdpa,
    # tensor ops
    "add": _binary("Add"), "sub": _binary("Sub"), "subtract": _binary("Sub"), "rsub": _binary("Rsub"),
    "mul": _binary("Mul"), "multiply": _binary("Mul"), "div": _binary("Div"), "divide": _binary("Div"),
    "true_divide": _binary("Div"), "pow": _binary("Pow"), "maximum": _binary("Max"), "minimum": _binary("Min"),
    "eq": _binary("Equal", True), "ne": _binary("NotEqual", True), "lt": _binary("Less", True),
    "le": _binary("LessOrEqual", True), "gt": _binary("Greater", True), "ge": _binary("GreaterOrEqual", True),
    "logical_and": _binary("And", True), "logical_or": _binary("Or", True),
    "matmul": _binary("MatMul"), "mm": _binary("MatMul"), "bmm": _binary("MatMul"), "addmm": _addmm,
    "baddbmm": _baddbmm,
    "relu": _unary("Relu"), "sigmoid": _unary("Sigmoid"), "tanh": _unary("Tanh"), "exp": _unary("Exp"),
    "log": _unary("Log"), "sqrt": _unary("Sqrt"), "rsqrt": _rsqrt, "neg": _unary("Neg"), "abs": _unary("Abs"),
    "erf": _unary("Erf"), "reciprocal": _unary("Reciprocal"), "sin": _unary("Sin"), "cos": _unary("Cos"),
    "floor": _unary("Floor"), "ceil": _unary("Ceil"), "sign": _unary("Sign"), "logical_not": _unary("Not"),
    "clamp": _clamp, "clip": _clamp,
    "view": _reshape_to_meta, "reshape": _reshape_to_meta, "flatten": _reshape_to_meta,
    "unflatten": _reshape_to_meta, "squeeze": _reshape_to_meta, "view_as": _reshape_to_meta,
    "reshape_as": _reshape_to_meta, "unsqueeze": _unsqueeze, "expand": _expand, "expand_as": _expand,
    "permute": _permute, "transpose": _transpose, "t": _t, "cat": _cat, "concat": _cat, "split": _split,
    "chunk": _split, "unbind": None, "getitem": _getitem,
    "contiguous": _identity, "clone": _identity, "detach": _identity,
    "to": _to_meta_dtype, "float": _to_meta_dtype, "double": _to_meta_dtype, "long": _to_meta_dtype,
    "int": _to_meta_dtype, "bool": _to_meta_dtype, "type_as": _to_meta_dtype, "half": _to_meta_dtype,
    "mean": _reduction("ReduceMean"), "sum": _reduction("ReduceSum"), "amax": _reduction("ReduceMax"),
    "amin": _reduction("ReduceMin"), "var": _var, "max": _reduction("ReduceMax"), "min": _reduction("ReduceMin"),
    "masked_fill": _masked_fill, "where": _where,
}
del _OPS["unbind"]


def _op_name(fn):
    name = getattr(fn, "__name__", "")
    # an in-place op maps as its out-of-place form: ONNX values are never written
    return name[:-1] if name.endswith("_") and not name.startswith("_") and name[:-1] in _OPS else name


def _exportable(fn):
    return _op_name(fn) in _OPS


# ---- export ------------------------------------------------------------------------------------------
def export(model, args=(), f=None, kwargs=None, export_params=True, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamic_axes=None, keep_initializers_as_inputs=False,
           dynamic_shapes=None, training=TrainingMode.EVAL, do_constant_folding=True, dynamo=True,
           external_data=False, **unused):
    """torch.onnx.export: write `model` traced on `args` as an ONNX model to f (a path or a binary
    file); returns None. opset_version: 17 to 21 (default 18)."""
    opset = 18 if opset_version is None else int(opset_version)
    if not 17 <= opset <= 21:
        raise ValueError(f"torch.onnx.export: opset_version {opset} is not supported (webtorch writes 17 to 21)")
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]
    kwargs = kwargs or {}
    was_training = getattr(model, "training", False)
    if hasattr(model, "train") and training != TrainingMode.PRESERVE:
        model.train(training == TrainingMode.TRAINING)
    _state["exporting"] = True
    try:
        flat = fx.flatten_inputs(args, kwargs)
        names_in = list(input_names or [])
        shapes = dynamic_shapes or _axes_to_shapes(dynamic_axes, names_in, flat, model, args)
        ep = _export(model, args, kwargs, shapes, leaf=_exportable)
        data = _to_onnx(ep, opset, names_in, list(output_names or []), dynamic_axes or {})
    finally:
        _state["exporting"] = False
        if hasattr(model, "train"):
            model.train(was_training)
    if f is None:
        return data
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(f, "wb") as fh:
            fh.write(data)
    return None


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
    g = (b"".join(_f_bytes(1, n) for n in b.nodes) + _f_bytes(2, "main_graph")
         + b"".join(_f_bytes(5, t) for t in b.inits) + b"".join(_f_bytes(11, v) for v in graph_inputs)
         + b"".join(_f_bytes(12, v) for v in graph_outputs))
    opset_id = _f_bytes(1, "") + _f_int(2, opset)
    return (_f_int(1, 8) + _f_bytes(2, "webtorch") + _f_bytes(3, __version__) + _f_bytes(7, g)
            + _f_bytes(8, opset_id))


def _convert(b, node):
    if node.target is operator.getitem:
        return _getitem_tuple(b, node, None)
    name = _op_name(node.target)
    conv = _OPS.get(name)
    if conv is None:
        raise OnnxExporterError(f"torch.onnx.export: the op '{fx.target_name(node.target)}' (node {node.name}) has "
                                "no ONNX mapping in webtorch")
    vals = [b.values[a.name] if isinstance(a, fx.Node) else a for a in node.args]
    return conv(b, node, vals)
