"""Graph breaks split the frame: Dynamo's resume functions, on the function's AST instead of its bytecode.

When call 1's trace of a compiled function met graph breaks, split(code_fn, root, frames) cuts the body at the
top-level statements the breaks happened in (the statement itself reads a value, or calls a function that does):

    [statements before] -> [the statement with the break] -> [statements after] -> ...

Each segment becomes a generated function compiled with the user's file name and line numbers (tracebacks and
later break reports name the user's lines), with the function's globals and closure cells. It takes the frame's
locals it reads as arguments and returns, as a dict, the locals it binds that a later segment reads; the last
segment returns the function's value. The caller (eval_frame.py) compiles the segments without a break
(each its own CompiledFunction: guards, capture, replay) and runs the break statements eagerly, each call.

split() returns a str instead of a Plan when the frame cannot be split safely; the whole frame then runs eagerly.
"""
import ast
import inspect
import types

_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


class _Unbound(str):
    """A local the frame has not bound yet: the segment deletes it, so reading it raises UnboundLocalError. A str,
    so a segment's guards tell it from a value (a str's type and value are guarded)."""
    __slots__ = ()


UNBOUND = _Unbound("<unbound local>")


class Segment:
    """One piece of the body: call(*[locals named by ins]) runs it; outs: the locals it hands on (None: the last
    segment, whose result is the function's value); eager: a statement with a graph break."""

    def __init__(self, call, fn, ins, outs, eager):
        self.call, self.fn, self.ins, self.outs, self.eager = call, fn, ins, outs, eager


class Plan:
    """The segments of a split frame; run(args, kwargs) is the call."""

    def __init__(self, sig, root, segments):
        self.sig, self.head, self.segments = sig, () if root is None else (root,), segments

    def run(self, args, kwargs):
        bound = self.sig.bind(*self.head, *args, **kwargs)
        bound.apply_defaults()
        frame = dict(bound.arguments)
        for seg in self.segments:
            out = seg.call(*[frame.get(n, UNBOUND) for n in seg.ins])
            if seg.outs is None:
                return out
            for n in seg.outs:
                if n in out:
                    frame[n] = out[n]
                else:
                    frame.pop(n, None)


def split(code_fn, root, frames):
    """A Plan for code_fn (called on root: self, or None) cut at the top-level statements holding frames (each
    break's frame of code_fn), or why the frame cannot be split."""
    code = getattr(code_fn, "__code__", None)
    why = ("no Python code" if code is None else
           "a lambda" if code.co_name == "<lambda>" else
           "a generator or coroutine" if code.co_flags & _FLAGS else
           "*args or **kwargs" if code.co_flags & _VARARGS else
           "zero-argument super()" if "__class__" in code.co_freevars else None)
    if why:
        return why
    fdef = _source(code_fn)
    if fdef is None:
        return "no source"
    body = fdef.body
    if code.co_cellvars:  # a comprehension reading a local runs at once; a function object could outlive a segment
        called = {id(a) for n in ast.walk(fdef) if isinstance(n, ast.Call) for a in n.args}
        if any(isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or
               isinstance(n, ast.GeneratorExp) and id(n) not in called for s in body for n in ast.walk(s)):
            return "a local read by a nested function"
    cut = set()
    for fs in frames:
        i = next((i for i, s in enumerate(body) if s.lineno <= fs.lineno <= s.end_lineno), None)
        if fs.filename != code.co_filename or fs.name != code.co_name or i is None:
            return f"the break at {fs.filename}:{fs.lineno} is outside the compiled frame"
        cut.add(i)
    for node in _own_nodes(body):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return f"a {type(node).__name__.lower()} statement at line {node.lineno}"
    groups = []  # (statements, eager): runs of statements with and without a break
    for i, stmt in enumerate(body):
        if groups and groups[-1][1] == (i in cut):
            groups[-1][0].append(stmt)
        else:
            groups.append(([stmt], i in cut))
    for stmts, _ in groups[:-1]:
        ret = next((n for n in _own_nodes(stmts) if isinstance(n, ast.Return)), None)
        if ret is not None:
            return f"a return before the last break (line {ret.lineno})"
    local = _locals(code)
    first = code.co_varnames[:1] if root is not None else ()
    bound = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    names = [{n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name)} & local for stmts, _ in groups]
    segments = []
    for k, (stmts, eager) in enumerate(groups):
        ins = tuple(sorted(names[k] & bound - set(first)))
        last = k == len(groups) - 1
        fn = _function(code_fn, fdef, stmts, first, ins, last)
        stored = _locals(fn.__code__) - set(first + ins) | {
            n.id for n in _own_nodes(stmts) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        outs = None if last else tuple(sorted(stored & local & set().union(*names[k + 1:])))
        if not last:
            fn.__kwdefaults__["_wt_pick"] = _picker(outs)
        bound |= stored & local
        segments.append(Segment(fn if root is None else types.MethodType(fn, root), fn, ins, outs, eager))
    return Plan(inspect.signature(code_fn), root, segments)


def _locals(code):
    return set(code.co_varnames) | set(code.co_cellvars)  # cells: locals a comprehension reads (Python 3.11)


def _source(code_fn):
    """code_fn's FunctionDef with the file's line numbers and columns (None without source)."""
    try:
        lines, start = inspect.getsourcelines(code_fn)
    except (OSError, TypeError):
        return None
    indented = lines[0][:1].isspace()  # a method or nested function: parse it inside `if 1:` to keep its columns
    try:
        tree = ast.parse(("if 1:\n" if indented else "") + "".join(lines))
    except SyntaxError:
        return None
    ast.increment_lineno(tree, start - 1 - indented)
    fdef = tree.body[0].body[0] if indented else tree.body[0]
    return fdef if isinstance(fdef, ast.FunctionDef) and fdef.name == code_fn.__code__.co_name else None


def _own_nodes(stmts):
    """The nodes of stmts outside nested functions, lambdas and classes."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _picker(outs):
    return lambda frame: {n: frame[n] for n in outs if n in frame}


def _function(code_fn, fdef, stmts, first, ins, last):
    """A function named as code_fn, with its globals and closure cells, running stmts on first (self) + ins (an
    argument passed as UNBOUND is deleted first); it returns stmts' value if last, else its locals through
    _wt_pick."""
    code = code_fn.__code__
    free, params = code.co_freevars, first + ins
    text = ("def _wt_resume():\n" + (f"    {' = '.join(free)} = None\n" if free else "") +
            f"    def {code.co_name}({', '.join(params)}{', ' if params else ''}*, _wt_unbound, _wt_pick):\n"
            f"        pass\n    return {code.co_name}\n")
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = fdef.lineno
            node.col_offset = node.end_col_offset = fdef.col_offset
    inner = tree.body[0].body[-2]
    head = [ast.parse(f"if {p} is _wt_unbound:\n    del {p}").body[0] for p in ins]
    tail = [] if last else [ast.parse("return _wt_pick(locals())").body[0]]
    for node in head + tail:
        at = stmts[0] if node in head else stmts[-1]
        for n in ast.walk(node):
            if hasattr(n, "lineno"):
                n.lineno = n.end_lineno = at.lineno
                n.col_offset = n.end_col_offset = at.col_offset
    inner.body = head + list(stmts) + tail
    outer = compile(tree, code.co_filename, "exec")
    seg = next(c for c in next(c for c in outer.co_consts if isinstance(c, types.CodeType)).co_consts
               if isinstance(c, types.CodeType))
    cells = dict(zip(free, code_fn.__closure__ or ()))
    fn = types.FunctionType(seg, code_fn.__globals__, code.co_name, None, tuple(cells[n] for n in seg.co_freevars))
    fn.__kwdefaults__ = {"_wt_unbound": UNBOUND, "_wt_pick": None}
    fn.__qualname__ = code_fn.__qualname__
    return fn
