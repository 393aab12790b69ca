"""Custom WGSL kernels as autograd-aware ops (webtorch's "C++ extension" path, WebGPU-native).

    silu = webtorch.webgpu.custom_op("SiLU", WGSL, backward=silu_backward)
    y = silu(x)          # y.grad_fn.name() == "SiLUBackward"

See docs/custom_kernels.md for the binding layout and a complete example.
"""
import re
import struct

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..backends.webgpu.codegen import MASK, ST, f32_bits
from ..ops import _prims
from ..ops._common import recording

_DT = {"float32", "float16", "int32", "int64", "bool", "uint8"}


def _header(name, in_dts, out_dt, wg, n_params):
    n = len(in_dts)
    lines = ["enable f16;"] if "float16" in (*in_dts, out_dt) else []
    lines.append(f"// custom op {name}: generated bindings")
    for k, dt in enumerate(in_dts):
        lines.append(f"@group(0) @binding({k}) var<storage, read_write> in{k}: array<{ST[dt]}>;")
    lines.append(f"@group(0) @binding({n}) var<storage, read_write> out: array<{ST[out_dt]}>;")
    lines.append(f"@group(0) @binding({n + 1}) var<storage, read> P: array<u32>;")
    lines.append(f"const WG: u32 = {wg}u;")
    lines.append(f"const N_INPUTS: u32 = {n}u;")
    lines.append("fn out_numel() -> u32 { return P[0]; }")
    lines.append("fn in_numel(k: u32) -> u32 { return P[1u + k]; }")
    lines.append("fn out_ndim() -> u32 { return P[1u + N_INPUTS]; }")
    lines.append("fn out_shape(d: u32) -> u32 { return P[2u + N_INPUTS + d]; }")
    lines.append("fn param_u32(k: u32) -> u32 { return P[2u + N_INPUTS + out_ndim() + k]; }")
    lines.append("fn param_i32(k: u32) -> i32 { return bitcast<i32>(param_u32(k)); }")
    lines.append("fn param_f32(k: u32) -> f32 { return bitcast<f32>(param_u32(k)); }")
    lines.append("// flat invocation index over a (possibly folded 2-D/3-D) grid of WG-thread groups")
    lines.append("fn flat_index(wid: vec3<u32>, nwg: vec3<u32>, lix: u32) -> u32 "
                 "{ return ((wid.z * nwg.y + wid.y) * nwg.x + wid.x) * WG + lix; }")
    return "\n".join(lines) + "\n"


def _param_word(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v & MASK
    if isinstance(v, float):
        return f32_bits(v)
    raise TypeError(f"custom_op params must be int, float or bool, not {type(v).__name__}")


class CustomOp:
    """A compiled custom kernel; call it like an op: `op(*tensors, params=(...))`."""

    def __init__(self, name, wgsl_source, *, entry="main", output_shape=None, output_dtype=None,
                 input_dtypes=None, workgroup_size=256, grid=None, backward=None, save_output=True):
        if not name or not name.isidentifier():
            raise ValueError(f"custom_op name must be an identifier, got {name!r}")
        self.name, self.source, self.entry = name, wgsl_source, entry
        self.output_shape, self.output_dtype, self.input_dtypes = output_shape, output_dtype, input_dtypes
        self.workgroup_size, self.grid, self.backward = int(workgroup_size), grid, backward
        self._pipes = {}
        used = [int(k) for k in re.findall(r"\bin(\d+)\b", wgsl_source)]
        self.n_inputs = max(used) + 1 if used else None      # inputs the kernel reads (in0, in1, ...)
        self._fn = self._make_function() if backward is not None else None
        self.__name__ = name

    # ---- the kernel --------------------------------------------------------------------
    def _pipeline(self, be, in_dts, out_dt):
        key = (id(be), in_dts, out_dt)
        p = self._pipes.get(key)
        if p is None:
            src = _header(self.name, in_dts, out_dt, self.workgroup_size, 0) + self._mark_used(len(in_dts))
            try:
                p = be.driver.create_pipeline(src, self.entry)
            except RuntimeError as e:
                raise RuntimeError(f"custom_op {self.name!r}: WGSL compilation failed: {e}") from None
            be.pipelines_compiled += 1
            self._pipes[key] = p
        return p

    def _mark_used(self, n):
        """The source with every binding referenced at the top of the entry point: pipelines
        use layout 'auto', which drops bindings the entry point never touches."""
        m = re.search(r"\bfn\s+" + re.escape(self.entry) + r"\s*\(", self.source)
        if m is None:
            raise RuntimeError(f"custom_op {self.name!r}: entry point fn {self.entry}(...) not found in the WGSL")
        i = self.source.find("{", m.end())
        if i < 0:
            raise RuntimeError(f"custom_op {self.name!r}: entry point {self.entry} has no body")
        uses = " ".join(f"_ = &in{k};" for k in range(n)) + " _ = &out; _ = &P;"
        return self.source[:i + 1] + " " + uses + self.source[i + 1:]

    def _check(self, inputs):
        if not inputs:
            raise TypeError(f"custom_op {self.name!r} needs at least one tensor input")
        for k, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"custom_op {self.name!r}: input {k} must be a Tensor, not {type(t).__name__}")
            if t.device.type != "webgpu":
                raise RuntimeError(f"custom_op {self.name!r}: input {k} is on {t.device}, but custom WGSL "
                                   f"kernels run on webgpu; move it with .to('webgpu')")
        if self.n_inputs is not None and len(inputs) != self.n_inputs:
            raise TypeError(f"custom_op {self.name!r} takes {self.n_inputs} tensor inputs, got {len(inputs)}")
        want = self.input_dtypes
        if want is None:
            want = ["float32"] * len(inputs)
        elif isinstance(want, (str, _dtype.dtype)):
            want = [want] * len(inputs)
        want = [w.name if isinstance(w, _dtype.dtype) else str(w).replace("torch.", "") for w in want]
        if len(want) != len(inputs):
            raise TypeError(f"custom_op {self.name!r} takes {len(want)} tensor inputs, got {len(inputs)}")
        for k, (t, w) in enumerate(zip(inputs, want)):
            if t.dtype.name != w:
                raise TypeError(f"custom_op {self.name!r}: input {k} has dtype {t.dtype}, expected torch.{w}")
        return tuple(want)

    def run(self, *inputs, params=()):
        """Run the kernel (no autograd): a new output tensor."""
        in_dts = self._check(inputs)
        shape = tuple(self.output_shape(*inputs)) if self.output_shape is not None else tuple(inputs[0].shape)
        od = self.output_dtype
        od = (od.name if isinstance(od, _dtype.dtype) else str(od).replace("torch.", "")) if od is not None \
            else in_dts[0]
        if od not in _DT:
            raise TypeError(f"custom_op {self.name!r}: unsupported output dtype {od}")
        dev = inputs[0].device
        inputs = [t if t.is_contiguous() and t._offset == 0 else _prims.ewise("copy", [t], t.dtype, t.dtype)
                  for t in inputs]     # kernels index inputs flat from element 0
        out = _prims.empty(shape, getattr(_dtype, od), dev)
        n = out.numel()
        if n == 0:
            return out
        be = out._backend
        pipe = self._pipeline(be, in_dts, od)
        words = [n] + [t.numel() for t in inputs] + [len(shape), *shape] + [_param_word(v) for v in params]
        if self.grid is not None:
            g = tuple(self.grid(*inputs))
            g = tuple(g) + (1,) * (3 - len(g))
        else:
            g = be.grid(-(-n // self.workgroup_size))
        bufs = [t._storage.buf.handle for t in inputs] + [out._storage.buf.handle]
        seen = set()
        for b in bufs:
            if id(b) in seen:
                raise RuntimeError(f"custom_op {self.name!r}: the same buffer is bound twice; pass distinct "
                                   f"tensors (or a .clone())")
            seen.add(id(b))
        be.commands.dispatch(pipe, bufs, struct.pack(f"<{len(words)}I", *[w & MASK for w in words]), g)
        return out

    # ---- autograd ----------------------------------------------------------------------
    def _make_function(self):
        op = self

        def forward(ctx, *args):
            *inputs, params = args
            out = op.run(*inputs, params=params)
            ctx.save_for_backward(*inputs, out)
            ctx.params = params
            return out

        def backward(ctx, grad):
            grads = op.backward(ctx, grad)
            if not isinstance(grads, tuple):
                grads = (grads,)
            return (*grads, None)

        ns = {"forward": staticmethod(forward), "backward": staticmethod(backward),
              "_node_name": f"{self.name}Backward", "__module__": "webtorch_custom_ops"}
        return type(self.name, (Function,), ns)

    def __call__(self, *inputs, params=()):
        if self._fn is not None and recording(*inputs):
            return self._fn.apply(*inputs, tuple(params))
        return self.run(*inputs, params=params)

    def __repr__(self):
        return f"<webgpu custom_op {self.name}>"


def custom_op(name, wgsl_source, *, entry="main", output_shape=None, output_dtype=None, input_dtypes=None,
              workgroup_size=256, grid=None, backward=None):
    """Make a WGSL compute kernel callable as a webtorch op (see docs/custom_kernels.md).

    name          the op's name; its autograd node is `<name>Backward`
    wgsl_source   WGSL with the entry point (and any helper functions). webtorch prepends the
                  bindings: inputs `in0..in{n-1}`, output `out` (arrays of the dtypes' storage
                  types), parameters `P`, the constant `WG` and helpers out_numel(), in_numel(k),
                  out_ndim(), out_shape(d), param_f32/param_i32/param_u32(k), flat_index(...)
    output_shape  fn(*inputs) -> shape (default: the first input's shape)
    output_dtype  default: the first input's dtype
    input_dtypes  a dtype or a list (default float32 for every input); others raise TypeError
    workgroup_size threads per workgroup (WG); grid fn(*inputs) -> (x, y, z) workgroup counts
                  (default: enough WG-groups for the output, folded past 65,535)
    backward      fn(ctx, grad) -> gradient(s) of the inputs, written with webtorch ops (or other
                  custom ops); ctx.saved_tensors == (*inputs, output), ctx.params the params.
                  None: the op is not differentiable.
    """
    return CustomOp(name, wgsl_source, entry=entry, output_shape=output_shape, output_dtype=output_dtype,
                    input_dtypes=input_dtypes, workgroup_size=workgroup_size, grid=grid, backward=backward)
