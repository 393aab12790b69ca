"""Printing tensors the way PyTorch prints them."""
import math

from . import _dtype, _late


class _Opts:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _Opts()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            setattr(PRINT_OPTS, k, v)
    PRINT_OPTS.sci_mode = sci_mode


def _flatten(x):
    if isinstance(x, list):
        for e in x:
            yield from _flatten(e)
    else:
        yield x


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        p = PRINT_OPTS.precision
        if not floating:
            self.width = max((len(self._plain(v)) for v in values), default=1)
            return
        # as PyTorch: the width is that of the nonzero finite values (signed); zeros, nan and inf are
        # padded to it, never widen it
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:  # zeros, nan, inf only: PyTorch's int mode ("0.", "-0.", "nan"), no padding
            return
        lo, hi = min(abs(v) for v in finite), max(abs(v) for v in finite)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        if self.sci_mode:
            self.width = max(len(f"{v:.{p}e}") for v in finite)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") for v in finite) + 1
        else:
            self.width = max(len(f"{v:.{p}f}") for v in finite)

    @staticmethod
    def _plain(v):
        if isinstance(v, bool):
            return str(v)
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        return str(v)

    def format(self, v):
        p = PRINT_OPTS.precision
        if self.floating:
            if not math.isfinite(v):
                s = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            elif self.sci_mode:
                s = f"{v:.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}."
            else:
                s = f"{v:.{p}f}"
        else:
            s = self._plain(v)
        return " " * (self.width - len(s)) + s


class _ComplexFormatter:
    """PyTorch's pair of formatters for a complex tensor: one for the real parts, one for the imaginary parts
    (printed signed and stripped, with a 'j')."""

    def __init__(self, values):
        self.re = _Formatter([v.real for v in values], True)
        self.im = _Formatter([v.imag for v in values], True)
        self.width = self.re.width + self.im.width + 1

    def format(self, v):
        imag = (self.im.format(v.imag) + "j").lstrip()
        return self.re.format(v.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarize(nested, shape):
    """Keep edge items of every dim (as in PyTorch's get_summarized_data)."""
    e = PRINT_OPTS.edgeitems
    if not shape:
        return nested
    if shape[0] > 2 * e:
        items = nested[:e] + nested[-e:]
    else:
        items = nested
    if len(shape) == 1:
        return items
    return [_summarize(x, shape[1:]) for x in items]


def _vector_str(vals, indent, fmt, summarize, n):
    e = PRINT_OPTS.edgeitems
    elem_len = fmt.width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / elem_len)))
    if summarize and n > 2 * e:
        data = [fmt.format(v) for v in vals[:e]] + [" ..."] + [fmt.format(v) for v in vals[-e:]]
    else:
        data = [fmt.format(v) for v in vals]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(vals, shape, indent, fmt, summarize):
    if len(shape) == 0:
        return fmt.format(vals)
    if len(shape) == 1:
        return _vector_str(vals, indent, fmt, summarize, shape[0])
    e = PRINT_OPTS.edgeitems
    if summarize and shape[0] > 2 * e:
        slices = ([_tensor_str(v, shape[1:], indent + 1, fmt, summarize) for v in vals[:e]] + ["..."] +
                  [_tensor_str(v, shape[1:], indent + 1, fmt, summarize) for v in vals[-e:]])
    else:
        slices = [_tensor_str(v, shape[1:], indent + 1, fmt, summarize) for v in vals]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_repr(t, prefix="tensor(", indent=None, bare=False):
    """repr(t); bare: the values only, no device/dtype/grad suffixes (a sparse tensor's parts)."""
    indent = len(prefix) if indent is None else indent
    shape = tuple(t.shape)
    numel = t.numel()
    summarize = numel > PRINT_OPTS.threshold
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":  # no values to print
        body = "..."
        suffixes.append(f"size={shape}")
    elif numel == 0:
        body = "[]"
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
    else:
        data = t.detach()
        if summarize:
            data = _summarized_tensor(data)
        nested = data.tolist()
        flat = list(_flatten(nested)) if isinstance(nested, list) else [nested]
        fmt = _ComplexFormatter(flat) if t.dtype.is_complex else _Formatter(flat, t.dtype.is_floating_point)
        body = _tensor_str(nested, shape, indent, fmt, summarize)
    if t.dtype not in (_dtype.get_default_dtype(), _dtype.get_default_dtype().to_complex(), _dtype.int64,
                       _dtype.bool_):
        suffixes.append(f"dtype={t.dtype}")
    elif t.dtype is _dtype.bool_ and numel == 0:
        suffixes.append(f"dtype={t.dtype}")
    elif t.dtype is _dtype.int64 and numel == 0:
        suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    s = prefix + body
    if bare:
        return s + ")"
    last = len(s.split("\n")[-1])
    for suf in suffixes:
        if last + len(suf) + 2 > PRINT_OPTS.linewidth:
            s += ",\n" + " " * indent + suf
            last = indent + len(suf)
        else:
            s += ", " + suf
            last += len(suf) + 2
    return s + ")"


def _summarized_tensor(t):
    """The edge items of t along every dim (shape keeps the full sizes' structure for printing)."""
    e = PRINT_OPTS.edgeitems
    for d in range(t.dim()):
        n = t.shape[d]
        if n > 2 * e:
            t = _late.shape.cat([t.narrow(d, 0, e), t.narrow(d, n - e, e)], d)
    return _Summarized(t)


class _Summarized:
    """Wraps the edge-item tensor so that _tensor_str slices it as if full-sized."""

    def __init__(self, t):
        self.t = t
        self.shape = t.shape

    def tolist(self):
        return self.t.tolist()
