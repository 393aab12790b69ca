"""Helpers available to code run in the webtorch playground (inside the Pyodide worker).

    show_graph(t)              draw the autograd graph behind tensor `t` (t.grad_fn and its
                               next_functions, down to the AccumulateGrad leaves)
    plot(value, series="loss") append a point (x = 0, 1, 2, ... per series) to the live plot
    plot_point(series, x, y)   append the point (x, y) to `series`
    plot_clear()               clear the live plot

Each is also importable as `from webtorch_playground import show_graph, plot, ...`.
Messages go to the page as JSON strings through the JS module `webtorch_playground_host`,
registered by the worker, so no JS proxy outlives a call.
"""
import json
import os
import sys
import traceback

__all__ = ["show_graph", "plot", "plot_point", "plot_clear"]

_counters = {}


def _post(kind, payload):
    try:
        import webtorch_playground_host as host
    except ImportError:  # outside the playground (e.g. natively): a no-op
        return
    host.post(kind, json.dumps(payload))


def _number(v):
    if hasattr(v, "item"):
        v = v.item()
    return float(v)


def plot(value, series="loss"):
    """Append `value` (a number or a one-element tensor) to `series` of the live plot."""
    x = _counters.get(series, 0)
    _counters[series] = x + 1
    _post("plot", {"series": str(series), "x": x, "y": _number(value)})


def plot_point(series, x, y):
    """Append the point (x, y) to `series` of the live plot."""
    _post("plot", {"series": str(series), "x": _number(x), "y": _number(y)})


def plot_clear():
    _counters.clear()
    _post("plot_clear", {})


def _fn_name(fn):
    name = getattr(fn, "name", None)
    if callable(name):
        try:
            return str(name()).rsplit("::", 1)[-1]   # torch::autograd::AccumulateGrad
        except Exception:
            pass
    return type(fn).__name__


def _shape(t):
    try:
        return "(" + ", ".join(str(int(s)) for s in tuple(t.shape)) + ")"
    except Exception:
        return ""


def graph_of(t):
    """The autograd DAG behind tensor `t` as {"nodes": [...], "edges": [[src, dst], ...]}.
    Edges run from inputs to the nodes that consume them (leaves first, `t` last)."""
    nodes, edges, ids = [], [], {}

    def node_id(fn):
        key = id(fn)
        if key not in ids:
            ids[key] = len(nodes)
            var = getattr(fn, "variable", None)
            if var is not None:
                label = _fn_name(fn)
                nodes.append({"id": ids[key], "label": label, "kind": "leaf",
                              "detail": "leaf " + _shape(var)})
            else:
                nodes.append({"id": ids[key], "label": _fn_name(fn), "kind": "fn", "detail": ""})
            stack.append(fn)
        return ids[key]

    stack = []
    out = {"id": 0, "label": "tensor " + _shape(t), "kind": "tensor",
           "detail": "requires_grad" if getattr(t, "requires_grad", False) else ""}
    nodes.append(out)
    ids["__out__"] = 0
    root = getattr(t, "grad_fn", None)
    if root is not None:
        edges.append([node_id(root), 0])
    seen = set()
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for nxt in getattr(fn, "next_functions", ()) or ():
            f = nxt[0] if isinstance(nxt, (tuple, list)) else nxt
            if f is None:
                continue
            edges.append([node_id(f), ids[id(fn)]])
    return {"nodes": nodes, "edges": edges}


def show_graph(t, title=None):
    """Draw the autograd graph of tensor `t` in the playground's Graph panel."""
    g = graph_of(t)
    g["title"] = title or ""
    _post("graph", g)
    return None


# ---- the worker's entry point -------------------------------------------------------------

def _user_namespace():
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    ns.update({k: globals()[k] for k in __all__})
    return ns


def _is_internal(filename):
    """A frame of webtorch (or of the libraries it runs on), not of the user's code."""
    lib = sys.modules.get("webtorch")
    root = os.path.dirname(lib.__file__) + os.sep if lib is not None and lib.__file__ else None
    return root is not None and filename.startswith(root)


def _trim(te, e, hide):
    """Drop the frames of TracebackException `te` (of `e`) before the user's code and those
    whose file name `hide`s, and so in its chained exceptions; returns how many `hide` hid."""
    stack = list(te.stack)
    user = [i for i, f in enumerate(stack) if f.filename == "<playground>"]
    if user:
        stack = stack[user[0]:]
    elif isinstance(e, SyntaxError):  # raised compiling the user's code: no frame is theirs
        stack = []
    kept = [f for f in stack if not hide(f.filename)]
    te.stack = traceback.StackSummary.from_list(kept)
    hidden = len(stack) - len(kept)
    for chained, cause in ((te.__cause__, e.__cause__), (te.__context__, e.__context__)):
        if chained is not None:
            hidden += _trim(chained, cause, hide)
    return hidden


def _print_exception(e):
    """Print the traceback as a PyTorch user sees it: the user's frames, without this module's
    or webtorch's own.  The page gets the full one (behind a toggle) and the failing line."""
    full, te = (traceback.TracebackException(type(e), e, e.__traceback__) for _ in range(2))
    _trim(full, e, lambda name: False)
    hidden = _trim(te, e, _is_internal)
    sys.stderr.write("".join(te.format()))
    sys.stderr.flush()
    line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) and e.filename == "<playground>" else None
    for f in te.stack:
        if f.filename == "<playground>":
            line = f.lineno
    _post("error", {"line": line, "hidden": hidden, "full": "".join(full.format())})


def set_cuda_alias(on):
    """The page's "cuda = WebGPU" switch: "cuda" names the WebGPU device (where there is one) for
    the run, as `python -m webtorch --device webgpu` does; off, torch.cuda is PyTorch's without CUDA."""
    lib = sys.modules.get("webtorch")
    if lib is not None:
        lib._device.set_cuda_alias(bool(on) and lib.webgpu.is_available())


async def run_user_code(code, cuda_alias=False):
    """Run `code` in a fresh namespace; returns True, or False after printing a traceback."""
    import linecache
    from pyodide.code import eval_code_async
    _counters.clear()
    set_cuda_alias(cuda_alias)
    # so tracebacks show the user's source lines
    linecache.cache["<playground>"] = (len(code), None, code.splitlines(True), "<playground>")
    try:
        await eval_code_async(code, _user_namespace(), filename="<playground>",
                              return_mode="none")
        return True
    except SystemExit as e:
        if e.code not in (None, 0):
            sys.stderr.write(f"SystemExit: {e.code}\n")
            return False
        return True
    except BaseException as e:  # KeyboardInterrupt from Stop included
        _print_exception(e)
        return False
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
