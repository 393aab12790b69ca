"""torch.onnx.export's op mappings: each op fx records (a call_function node) as ONNX nodes, by name in `_OPS`
(the tracer's leaves: what has a mapping stays one node, the rest decomposes)."""
import math
import operator

from . import _dtype, fx
from ._onnx_proto import _ELEM, OnnxExporterError


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
            hi = [d * (kk - 1) - low for d, kk, low in zip(dil, k, lo)]
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

    def c(v):
        return b.const(v, dt)
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

    def bound(v):
        return "" if v is None else _scalar_or(b, v, dt)
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


def _symbolic(b, node, vals):
    """torch.onnx.ops.symbolic / symbolic_multi_out: the ONNX operator they stand for, in its domain."""
    domain, _, op_type = node.args[0].rpartition("::")
    attrs = node.args[2] if len(node.args) > 2 else node.kwargs.get("attrs")
    ins = ["" if x is None else b.values[x.name] for x in node.args[1]]
    multi = "dtypes" in node.kwargs
    outs = b.custom(domain, node.kwargs.get("version"), op_type, ins, len(node.kwargs["dtypes"]) if multi else 1,
                    attrs or {}, node.kwargs.get("metadata_props") or {})
    return outs if multi else outs[0]


_OPS = {
    # torch.onnx.ops
    "symbolic": _symbolic, "symbolic_multi_out": _symbolic,
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
