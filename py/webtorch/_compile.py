"""torch.compile, reached as `webtorch.compile` on first use (torch._dynamo imports nn, optim and fx, which import
the top package: the top package imports none of them when it loads)."""
from ._dynamo import eval_frame

DEFAULT_BACKEND = ["inductor"]  # torch.compiler.set_default_backend's


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,  # noqa: A001
            name=None, disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """torch.compile: see webtorch/_dynamo/eval_frame.py (per guard list: trace once, then replay on webgpu)."""
    kw = dict(fullgraph=fullgraph, dynamic=dynamic, backend=DEFAULT_BACKEND[0] if backend is None else backend,
              mode=mode, options=options, disable=disable, recompile_limit=recompile_limit)
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return eval_frame.compile_callable(model, **kw)
        return fn
    return eval_frame.compile_callable(model, **kw)
