"""vmap: a batched tensor per level and batching rules by op family, as functorch's BatchedTensor.

A `BatchedTensor` shows one example (its logical shape) and holds the whole batch (`_value`, the batch dim
first; a lower level's BatchedTensor under nested vmaps). Every routed op that meets one comes to
`BatchedTensor.__torch_function__`, which runs the op once on the batch by the rule of its family:

    element-wise   tensors aligned (the batch dim first, the logical dims right-aligned) and broadcast
    dim-taking     reductions, scans, softmax, views and joins: each dim argument shifted past the batch dim
    shape          view/reshape/expand/permute/repeat/flatten on the batch's shape
    matmul         matmul/mm/bmm/mv/dot/linear as one batched matmul; conv with the batch folded into N
    composite      losses and normalizations: their own code, whose ops are batched in turn
    fallback       anything else: once per example, stacked, with PyTorch's performance warning

Nothing reads a BatchedTensor's memory: its storage has no buffer, so an op that bypassed the rules would fail
loudly rather than compute a wrong number.
"""
import functools
import inspect
import warnings

from .. import _late
from .._geometry import contiguous_strides
from .._tensor import Storage, Tensor
from ..autograd.function import Function
from ..ops import registry

_levels = []  # the vmaps running now, outermost first: [level, batch size, randomness]

_ITEM_MSG = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
             "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
             "somewhere inside PyTorch internals, please file a bug report.")
_FLOW_MSG = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
             "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
_RANDOM_MSG = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
               "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class BatchedTensor(Tensor):
    """One example of a batch at a vmap level: `_value` holds the batch (its dim 0), `_level` the level."""

    @classmethod
    def wrap(cls, value, level):
        st = Storage(None, value.dtype, value.device, 0, value._storage.backend)
        shape = tuple(value.shape[1:])
        t = cls._make(st, shape, contiguous_strides(shape), 0)
        t._value, t._level = value, level
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        level = max(x._level for x in _tensors(args, kwargs) if isinstance(x, BatchedTensor))
        name = _name(func)
        if name in RANDOM:
            _check_random(name)
        rule = RULES.get(name, _fallback)
        return rule(func, level, args, kwargs)

    @property
    def requires_grad(self):
        return self._value.requires_grad

    def item(self):
        raise RuntimeError(_ITEM_MSG)

    tolist = numpy = __float__ = __int__ = __index__ = item

    def __bool__(self):
        raise RuntimeError(_FLOW_MSG)

    def detach(self):
        return BatchedTensor.wrap(self._value.detach(), self._level)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def T(self):
        return self.permute(*range(self.dim() - 1, -1, -1))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def __repr__(self, *, tensor_contents=None):
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))
        elif isinstance(a, Tensor):
            yield a


@functools.lru_cache(maxsize=None)
def _names():
    names = {}
    for table in (registry.METHODS, registry.FUNCTIONS):
        for n, f in table.items():
            names.setdefault(f, n)
    return names


def _name(func):
    return _names().get(func, getattr(func, "__name__", ""))


def size_of(level):
    for lvl, b, _r in _levels:
        if lvl == level:
            return b
    raise RuntimeError(f"vmap: level {level} is not running")


def _check_random(name):
    if _levels and _levels[-1][2] == "error":
        raise RuntimeError(_RANDOM_MSG)


def unwrap(x, level):
    """(the batch of x at `level`, True) or (x, False) when x is not batched there."""
    if isinstance(x, BatchedTensor) and x._level == level:
        return x._value, True
    return x, False


def wrap(out, level):
    if isinstance(out, Tensor):
        return BatchedTensor.wrap(out, level)
    if isinstance(out, tuple) and hasattr(type(out), "_fields"):
        return type(out)(*(wrap(o, level) for o in out))
    if isinstance(out, (tuple, list)):
        return type(out)(wrap(o, level) for o in out)
    return out


def materialize(x, level):
    """x's batch at `level`, expanded from x when x is the same for every example. Under a higher level's batch
    (a transform run inside a vmap running inside it: jacrev(jacrev(f)), jacfwd(jacrev(f))) that batch stays
    outermost: its examples hold this level's batch as their first dim."""
    if isinstance(x, BatchedTensor) and x._level > level:
        return BatchedTensor.wrap(materialize(x._value, level).movedim(0, 1), x._level)
    v, batched = unwrap(x, level)
    return v if batched else x.unsqueeze(0).expand(size_of(level), *x.shape)


def _pad(v, k):
    """v (a batch) with k size-1 dims after its batch dim."""
    for _ in range(k):
        v = v.unsqueeze(1)
    return v


def _unbatched_destination(dest, level, args, kwargs):
    """An in-place op writing every example into one tensor: PyTorch's error (the batch does not fit)."""
    shape = registry.FUNCTIONS["broadcast_shapes"](*(x.shape for x in _tensors(args, kwargs)))
    raise RuntimeError(f"output with shape {list(dest.shape)} doesn't match the broadcast shape "
                       f"{[size_of(level)] + list(shape)}")


# ---- element-wise ------------------------------------------------------------------------------
def _inplace(name):
    return (name.endswith("_") and not name.endswith("__")) or name.startswith("__i")


def elementwise(func, level, args, kwargs):
    """Tensors broadcast from the right: a batch gets size-1 dims after its batch dim up to the widest rank."""
    rank = max(x.dim() for x in _tensors(args, kwargs))
    name = _name(func)
    if _inplace(name) and args and isinstance(args[0], Tensor) and not unwrap(args[0], level)[1]:
        _unbatched_destination(args[0], level, args, kwargs)

    def align(x):
        if not isinstance(x, Tensor):
            return x
        v, batched = unwrap(x, level)
        return _pad(v, rank - x.dim()) if batched else x

    out = func(*[align(a) for a in args], **{k: align(v) for k, v in kwargs.items()})
    return args[0] if _inplace(name) else wrap(out, level)


# ---- dim-taking ops ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _signature(func):
    try:
        return inspect.signature(getattr(func, "_impl", func))
    except (TypeError, ValueError):
        return None


def _shift(d, rank):
    if isinstance(d, (tuple, list)):
        return type(d)(_shift(e, rank) for e in d)
    if not isinstance(d, int):
        return d
    r = max(rank, 1)
    if not -r <= d < r:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], but got {d})")
    return d % r + 1 if rank else 1


def dims(*params, extra=0, full=None):
    """The rule of an op whose `params` name dims of its first tensor (`extra`: dims the op adds, as
    unsqueeze's and stack's). `full`: how the op reduces over all dims when its dim is None."""
    def rule(func, level, args, kwargs):
        sig = _signature(func)
        if sig is None:
            return _fallback(func, level, args, kwargs)
        if any(p not in sig.parameters for p in params):
            return _fallback(func, level, args, kwargs)
        ba = sig.bind(*args, **kwargs)
        first = next(iter(ba.arguments))
        x = ba.arguments[first]
        if isinstance(x, (list, tuple)):
            ba.arguments[first] = type(x)(materialize(t, level) for t in x)
            rank = x[0].dim()
        else:
            if any(unwrap(t, level)[1] for t in _tensors(args[1:], {}) if t is not x):
                return _fallback(func, level, args, kwargs)
            ba.arguments[first], batched = unwrap(x, level)
            if not batched:
                return _fallback(func, level, args, kwargs)
            rank = x.dim()
        scalar = rank == 0 and not extra and not isinstance(x, (list, tuple))
        if scalar:   # an example that is a scalar: its dim 0 / -1 is a size-1 dim after the batch dim
            ba.arguments[first], rank = ba.arguments[first].unsqueeze(1), 1
        for p in params:
            d = ba.arguments.get(p, sig.parameters[p].default if p in sig.parameters else None)
            if d is None or (d == () and full is not None):   # sum(x, ()) reduces every dim, as dim=None
                if full is None or p != params[0]:
                    continue
                return full(func, level, ba, first, rank)
            if d is not inspect.Parameter.empty:
                ba.arguments[p] = _shift(d, rank + extra)
        out = func(*ba.args, **ba.kwargs)
        return wrap(_squeeze_scalar(out) if scalar else out, level)
    return rule


def _squeeze_scalar(out):
    if isinstance(out, Tensor):
        return out.squeeze(1) if out.dim() == 2 else out
    if isinstance(out, tuple) and hasattr(type(out), "_fields"):
        return type(out)(*(_squeeze_scalar(o) for o in out))
    if isinstance(out, (tuple, list)):
        return type(out)(_squeeze_scalar(o) for o in out)
    return out


def _over_all(func, level, ba, first, rank):
    """A reduction over every logical dim: the batch flattened to (B, n) and reduced over dim 1."""
    v = ba.arguments[first]
    ba.arguments[first] = v.reshape(v.shape[0], -1)
    ba.arguments["dim"] = 1
    out = func(*ba.args, **ba.kwargs)
    return wrap(out[0] if _name(func) in ("max", "min", "median", "nanmedian") else out, level)


def _squeeze_all(func, level, ba, first, rank):
    v = ba.arguments[first]
    return wrap(v.squeeze(tuple(i + 1 for i, s in enumerate(v.shape[1:]) if s == 1)), level)


def _roll_flat(func, level, ba, first, rank):
    v = ba.arguments[first]
    return wrap(v.reshape(v.shape[0], -1).roll(ba.arguments["shifts"], 1).reshape(v.shape), level)


# ---- shape ops ----------------------------------------------------------------------------------
def _sizes(args):
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def _size_rule(method, pad=False):
    """view/reshape/expand/repeat: the batch dim before the given sizes (`pad`: the batch first gets size-1
    dims up to the sizes' rank, as expand's and repeat's leading new dims)."""
    def rule(func, level, args, kwargs):
        v, batched = unwrap(args[0], level)
        if not batched or any(isinstance(a, Tensor) for a in args[1:]):
            return _fallback(func, level, args, kwargs)
        sizes = _sizes(args[1:]) or _sizes(tuple(kwargs.values()))
        if pad:
            v = _pad(v, len(sizes) - args[0].dim())
        lead = (1,) if method == "repeat" else (-1,) if method == "expand" else (v.shape[0],)
        return wrap(getattr(v, method)(*(lead + tuple(sizes))), level)
    return rule


def _as_rule(method):
    """view_as/reshape_as/expand_as: the other tensor's logical shape."""
    def rule(func, level, args, kwargs):
        other = args[1] if len(args) > 1 else kwargs["other"]
        return getattr(args[0], method)(*other.shape)
    return rule


def _permute(func, level, args, kwargs):
    v, batched = unwrap(args[0], level)
    if not batched:
        return _fallback(func, level, args, kwargs)
    order = _sizes(args[1:]) or _sizes(tuple(kwargs.values()))
    return wrap(v.permute(0, *(_shift(d, args[0].dim()) for d in order)), level)


def _t(func, level, args, kwargs):
    return args[0] if args[0].dim() < 2 else args[0].transpose(0, 1)


def _getitem(func, level, args, kwargs):
    x, index = args
    v, batched = unwrap(x, level)
    idx = index if isinstance(index, tuple) else (index,)
    if all(isinstance(i, Tensor) and not i.dtype.is_floating_point for i in idx) and \
            any(unwrap(i, level)[1] for i in idx):
        return wrap(_index_batched(v, batched, idx, level), level)
    if not batched or not _basic_or_adjacent(idx) or any(unwrap(i, level)[1] for i in idx if isinstance(i, Tensor)):
        return _fallback(func, level, args, kwargs)
    return wrap(v[(slice(None),) + idx], level)


def _index_batched(v, batched, idx, level):
    """x[i0, i1, ...] with integer index tensors, some batched (flex_attention's `bias[b][h][q_idx][kv_idx]`): one
    advanced indexing, each batched index's batch dim leading (aligned past the others' dims), x's own batch
    taken along it."""
    n = size_of(level)
    depth = max(i.dim() for i in idx)
    phys = []
    for i in idx:
        p, b = unwrap(i, level)
        phys.append(p.reshape(n, *[1] * (depth - i.dim()), *p.shape[1:]) if b else p)
    if batched:
        phys.insert(0, _late.creation.arange(n, device=v.device).reshape(n, *[1] * depth))
    return v[tuple(phys)]


def _as_strided(func, level, args, kwargs):
    """as_strided within each example's memory (its storage offset counted from the example's start), as
    PyTorch's rule. An example's strides here are its logical (contiguous) ones: an example laid out otherwise
    raises (a copy would silently drop writes through the view)."""
    ba = _signature(func).bind(*args, **kwargs).arguments
    v, batched = unwrap(ba["input"], level)
    if not batched:
        return _fallback(func, level, args, kwargs)
    if any(n > 1 and st != c for n, st, c in zip(v.shape[1:], v.stride()[1:], contiguous_strides(v.shape[1:]))):
        raise RuntimeError("vmap: Calling Tensor.as_strided is not supported unless the batch dims being vmapped "
                           "over are at the front of the tensor (in memory layout). When they are not at the front "
                           "of the tensor this operation can be error prone so we actively discourage it; please "
                           "file us a bug report and/or try to express the as_strided operation in terms of PyTorch "
                           "view operations")
    offset = v.storage_offset() + (ba.get("storage_offset") or 0)
    return wrap(v.as_strided((v.shape[0],) + tuple(ba["size"]), (v.stride(0),) + tuple(ba["stride"]), offset), level)


def _as_strided_scatter(func, level, args, kwargs):
    """Its own code (a clone of the input, an as_strided view of it written) on the input's batch, so that a
    batched src lands in every example's copy (forward AD's in-place writes through views under vmap use it)."""
    return composite(func, level, (wrap(materialize(args[0], level), level),) + tuple(args[1:]), kwargs)


def _basic_or_adjacent(idx):
    """The index keeps its advanced (tensor, list) entries in one run, so the batch dim stays first."""
    adv = [i for i, e in enumerate(idx) if isinstance(e, (Tensor, list))]
    return not adv or adv[-1] - adv[0] == len(adv) - 1


def _setitem(func, level, args, kwargs):
    x, index, value = args
    v, batched = unwrap(x, level)
    idx = index if isinstance(index, tuple) else (index,)
    if not batched or not _basic_or_adjacent(idx) or any(unwrap(i, level)[1] for i in idx if isinstance(i, Tensor)):
        return _fallback(func, level, args, kwargs)
    target = (slice(None),) + idx
    val, vb = unwrap(value, level) if isinstance(value, Tensor) else (value, False)
    if vb:
        val = _pad(val, v[target].dim() - 1 - value.dim())
    v[target] = val
    return None


# ---- joins ------------------------------------------------------------------------------------------
def _join(extra):
    def rule(func, level, args, kwargs):
        sig = _signature(func)
        ba = sig.bind(*args, **kwargs)
        ts = ba.arguments["tensors"]
        rank = max(t.dim() for t in ts)
        ba.arguments["tensors"] = type(ts)(materialize(t, level) for t in ts)
        ba.arguments["dim"] = _shift(ba.arguments.get("dim", 0), rank + extra)
        return wrap(func(*ba.args, **ba.kwargs), level)
    return rule


def _gather_like(func, level, args, kwargs):
    """gather/scatter/take_along_dim: input, index (and src) all batched; the dim shifted."""
    sig = _signature(func)
    ba = sig.bind(*args, **kwargs)
    rank = next(iter(ba.arguments.values())).dim()
    for k, v in ba.arguments.items():
        if isinstance(v, Tensor):
            ba.arguments[k] = materialize(v, level)
    if ba.arguments.get("dim") is None:
        return _fallback(func, level, args, kwargs)
    ba.arguments["dim"] = _shift(ba.arguments["dim"], rank)
    return wrap(func(*ba.args, **ba.kwargs), level)


def _unbatched_result(func, level, args, kwargs):
    """new_tensor: a fresh tensor of the given data, the same for every example."""
    return func(unwrap(args[0], level)[0], *args[1:], **kwargs)


def _new_batched(func, level, args, kwargs):
    """new_zeros/new_ones/new_empty/new_full of a batched tensor: one fresh tensor per example (PyTorch's
    NEW_BLAH_BATCH_RULE), so that it may be written in place with batched values (as backward formulas do)."""
    v, batched = unwrap(args[0], level)
    if not batched:
        return func(*args, **kwargs)
    full = _name(func) == "new_full"
    given = args[1:2] if full else args[1:]
    size = _sizes(given) if given else tuple(kwargs.pop("size"))
    return wrap(func(v, (v.shape[0],) + size, *args[2:] if full else (), **kwargs), level)


# ---- matrix products ------------------------------------------------------------------------
class _SharedMatmul(Function):
    """Rows (B, k) times one matrix held by every example (a batch expanded with stride 0, as an input that grad
    under vmap differentiates per example): one matmul forward; backward gives each example its own gradient,
    the outer product of its row and its output gradient (a broadcast multiply, no K=1 product)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a.matmul(b[0])

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        outer = (g.unsqueeze(-1) * a.unsqueeze(-2)).transpose(-1, -2) if b.stride(1) == 1 else \
            a.unsqueeze(-1) * g.unsqueeze(-2)   # laid out as b is (a transposed weight: no copy back)
        return g.matmul(b[0].transpose(0, 1)), outer


def _shared(v):
    """v is one matrix for every example, on webgpu (where the K=1 products of the per-example gradients are
    slow: bench/func.py 7.8 -> 3.0 s; numpy's batched matmul is faster than the broadcast there: 135 vs 280 ms)."""
    return type(v) is Tensor and v.dim() == 3 and v.stride(0) == 0 and v.device.type == "webgpu"


def _matmul(func, level, args, kwargs):
    """matmul's rules on one example, run on the batch: a vector becomes a matrix, the batch dims are
    right-aligned (size-1 dims after the batch dim), the added dims squeezed again."""
    a, b = args[0], args[1]
    (va, in_a), (vb, in_b) = unwrap(a, level), unwrap(b, level)
    if not in_b and (b.dim() == 1 or b.dim() <= max(a.dim(), 2)):   # the batch rides in a's leading dims
        return wrap(va.matmul(b), level)
    if not in_a and a.dim() <= 2:
        return wrap(vb.matmul(a) if a.dim() == 1 and b.dim() == 1 else
                    a.matmul(vb.unsqueeze(-1)).squeeze(-1) if b.dim() == 1 else a.matmul(vb), level)
    if in_a and in_b and a.dim() == 1 and b.dim() == 2 and type(va) is Tensor and _shared(vb):
        return wrap(_SharedMatmul.apply(va, vb), level)
    va, vb = (va if in_a else a.unsqueeze(0)), (vb if in_b else b.unsqueeze(0))
    if a.dim() == 1 and b.dim() == 1:
        return wrap((va * vb).sum(-1), level)
    xa = va.unsqueeze(-2) if a.dim() == 1 else va
    xb = vb.unsqueeze(-1) if b.dim() == 1 else vb
    ra, rb = xa.dim() - 1, xb.dim() - 1
    out = _pad(xa, rb - ra).matmul(_pad(xb, ra - rb))
    if a.dim() == 1:
        out = out.squeeze(-2)
    if b.dim() == 1:
        out = out.squeeze(-1)
    return wrap(out, level)


def _linear(func, level, args, kwargs):
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else kwargs.get("bias")
    if not unwrap(w, level)[1] and (b is None or not unwrap(b, level)[1]):
        return wrap(func(unwrap(x, level)[0], w, b), level)
    out = x.matmul(w.transpose(-1, -2) if w.dim() > 1 else w)
    return out if b is None else out + b


def _addmm(func, level, args, kwargs):
    """addmm/addmv/baddbmm: beta * input + alpha * (a @ b), batched by the rules of its ops."""
    sig = _signature(func).bind(*args, **kwargs).arguments
    x, a, b = (v for v in sig.values() if isinstance(v, Tensor))
    return sig.get("beta", 1) * x + sig.get("alpha", 1) * a.matmul(b)


def _outer(func, level, args, kwargs):
    return args[0].unsqueeze(-1) * args[1]


def leading(func, level, args, kwargs):
    """Ops on an example's trailing dims (layer_norm, embedding lookups, one_hot): run on the batch when only the
    first tensor is batched, else by their own code."""
    first, *rest = list(_tensors(args, kwargs))
    if any(unwrap(t, level)[1] for t in rest):
        return composite(func, level, args, kwargs)
    return wrap(func(unwrap(first, level)[0], *args[1:], **kwargs), level)


def _conv(func, level, args, kwargs):
    x, w = args[0], args[1]
    v, batched = unwrap(x, level)
    rest = [a for a in args[2:] if isinstance(a, Tensor)] + [a for a in kwargs.values() if isinstance(a, Tensor)]
    if not batched or unwrap(w, level)[1] or any(unwrap(t, level)[1] for t in rest):
        return _fallback(func, level, args, kwargs)
    n_spatial = w.dim() - 2
    unbatched = x.dim() == n_spatial + 1
    folded = v.reshape(-1, *v.shape[2:]) if not unbatched else v
    out = func(folded, w, *args[2:], **kwargs)
    return wrap(out if unbatched else out.reshape(v.shape[0], -1, *out.shape[1:]), level)


# ---- composite and fallback ------------------------------------------------------------------
def composite(func, level, args, kwargs):
    """The op's own code, on the batched tensors: each op inside it is batched by its rule."""
    return getattr(func, "_impl", func)(*args, **kwargs)


def _fallback(func, level, args, kwargs):
    """Once per example, results stacked: PyTorch's slow path, with its warning."""
    warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                  f"aten::{_name(func)}. Please file us an issue on GitHub so that we can prioritize its "
                  "implementation.", UserWarning, stacklevel=3)
    n = size_of(level)
    name = _name(func)
    if (_inplace(name) or name == "setitem") and not unwrap(args[0], level)[1]:
        _unbatched_destination(args[0], level, args, kwargs)

    def pick(x, i):
        if isinstance(x, (list, tuple)) and not hasattr(type(x), "_fields"):
            return type(x)(pick(e, i) for e in x)
        v, batched = unwrap(x, level) if isinstance(x, Tensor) else (x, False)
        return v[i] if batched else x

    outs = [func(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()}) for i in range(n)]
    if _inplace(name) or name == "setitem":
        return None if name == "setitem" else args[0]
    return wrap(_stack_results(outs), level)


def _stack_results(outs):
    first = outs[0]
    if isinstance(first, Tensor):
        return _late.shape.stack(outs)
    if isinstance(first, tuple) and hasattr(type(first), "_fields"):
        return type(first)(*(_stack_results([o[i] for o in outs]) for i in range(len(first))))
    if isinstance(first, (tuple, list)):
        return type(first)(_stack_results([o[i] for o in outs]) for i in range(len(first)))
    raise RuntimeError(f"vmap: the fallback cannot batch a result of type {type(first).__name__}")


# ---- random ops ---------------------------------------------------------------------------------
RANDOM = frozenset("rand_like randn_like randint_like bernoulli bernoulli_ normal_ uniform_ exponential_ random_ "
                   "dropout dropout_ alpha_dropout feature_alpha_dropout dropout1d dropout2d dropout3d "
                   "multinomial rrelu".split())


def _random_same(func, level, args, kwargs):
    """randomness='same': one draw of an example's shape, shared by the batch."""
    if not (_levels and _levels[-1][2] == "same"):
        return elementwise(func, level, args, kwargs)
    x = args[0]
    name = _name(func)
    if name.endswith("_like"):
        return func(_late.creation.empty(x.shape, dtype=x.dtype, device=x.device), *args[1:], **kwargs)
    if name.startswith("dropout") or name.endswith("dropout"):
        mask = func(_late.creation.ones(x.shape, dtype=x.dtype, device=x.device), *args[1:], **kwargs)
        return x * mask
    return _fallback(func, level, args, kwargs)


# ---- the table ------------------------------------------------------------------------------------
_ELEMENTWISE = """where clamp clamp_min clamp_max clip lerp addcmul addcdiv masked_fill nan_to_num float_power clone
    contiguous to float double half int long bool byte char short bfloat16 type_as zero_ fill_ copy_ tril triu relu
    relu6 gelu silu mish elu selu celu leaky_relu softplus softsign hardtanh hardsigmoid hardswish logsigmoid
    tanhshrink softshrink hardshrink threshold prelu zeros_like ones_like empty_like full_like cpu webgpu cuda detach_
    requires_grad_ absolute add pow rsub square sgn positive negative fix divide multiply subtract true_divide greater
    greater_equal less less_equal not_equal arccos arccosh arcsin arcsinh arctan arctan2 arctanh deg2rad rad2deg isclose
    bitwise_left_shift bitwise_right_shift"""
_REDUCTIONS = """sum mean prod amax amin max min argmax argmin var std nansum nanmean all any count_nonzero median
    nanmedian logsumexp norm var_mean std_mean aminmax repeat_interleave"""
_DIM_OPS = """softmax log_softmax cumsum cumprod cummax cummin logcumsumexp sort argsort topk kthvalue mode narrow
    select split chunk tensor_split unbind unflatten normalize glu index_select index_fill index_add index_copy"""
_COMPOSITE = """cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy
    binary_cross_entropy_with_logits kl_div group_norm rms_norm cosine_similarity pairwise_distance softmin trace
    diag_embed einsum tensordot hstack vstack dstack column_stack row_stack atleast_1d atleast_2d atleast_3d tile vdot
    sum_to_size"""


def _build():
    rules = dict.fromkeys(_COMPOSITE.split(), composite)
    names = set(registry.ELEMENTWISE) | set(_ELEMENTWISE.split())
    rules.update(dict.fromkeys(names | {n + "_" for n in names if n + "_" in registry.METHODS}, elementwise))
    rules.update(dict.fromkeys(_REDUCTIONS.split(), dims("dim", full=_over_all)))
    rules.update(dict.fromkeys(_DIM_OPS.split(), dims("dim")))
    rules.update(dict.fromkeys(("matmul", "mm", "bmm", "mv", "dot", "inner"), _matmul))
    rules.update(dict.fromkeys(("addmm", "addmv", "baddbmm"), _addmm))
    rules.update(dict.fromkeys(("gather", "scatter", "scatter_add", "take_along_dim"), _gather_like))
    rules.update(dict.fromkeys(("new_zeros", "new_ones", "new_full", "new_empty"), _new_batched))
    rules["new_tensor"] = _unbatched_result
    rules.update(dict.fromkeys(("cat", "concat", "concatenate"), _join(0)))
    rules.update(dict.fromkeys(("layer_norm", "embedding", "one_hot"), leading))
    rules.update(dict.fromkeys(("conv1d", "conv2d", "conv3d"), _conv))
    rules.update(dict.fromkeys(("view", "reshape"), _size_rule("reshape")))
    rules.update(dict.fromkeys(("expand", "broadcast_to"), _size_rule("expand", pad=True)))
    rules.update(dict.fromkeys(("view_as", "reshape_as"), _as_rule("reshape")))
    rules.update(dict.fromkeys(("transpose", "swapdims"), dims("dim0", "dim1")))
    rules.update(dict.fromkeys(("movedim", "moveaxis"), dims("source", "destination")))
    rules.update({
        "unsqueeze": dims("dim", extra=1), "squeeze": dims("dim", full=_squeeze_all),
        "swapaxes": dims("axis0", "axis1"),
        "flatten": dims("start_dim", "end_dim"), "diagonal": dims("dim1", "dim2"), "unfold": dims("dimension"),
        "roll": dims("dims", full=_roll_flat), "flip": dims("dims"), "stack": _join(1),
        "repeat": _size_rule("repeat", pad=True), "expand_as": _as_rule("expand"), "permute": _permute, "t": _t,
        "getitem": _getitem, "setitem": _setitem, "as_strided": _as_strided, "as_strided_scatter": _as_strided_scatter,
        "linear": _linear, "outer": _outer, "ger": _outer,
    })
    rules.update(dict.fromkeys(RANDOM, _random_same))
    return rules


RULES = _build()


# ---- pytrees -------------------------------------------------------------------------------------
def tree_flatten(tree):
    """(leaves, spec): tuples, lists and dicts opened, anything else a leaf."""
    if isinstance(tree, (tuple, list)) and not hasattr(type(tree), "_fields"):
        parts = [tree_flatten(x) for x in tree]
        return [leaf for p in parts for leaf in p[0]], (type(tree), None, [p[1] for p in parts])
    if isinstance(tree, dict):
        parts = [tree_flatten(v) for v in tree.values()]
        return [leaf for p in parts for leaf in p[0]], (dict, list(tree), [p[1] for p in parts])
    return [tree], None


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, keys, children = s
        values = [build(c) for c in children]
        return dict(zip(keys, values)) if kind is dict else kind(values)
    return build(spec)


def _spec_str(spec):
    if spec is None:
        return "*"
    kind, keys, children = spec
    return f"TreeSpec({kind.__name__}, {keys}, [{', '.join(_spec_str(c) for c in children)}])"


def _broadcast_dims(dims, spec, what, fn_name):
    """Each leaf's dim: `dims` is a prefix of the inputs' tree (an int or None applies to a whole subtree)."""
    if dims is None or isinstance(dims, int):
        return [dims] * _count(spec)
    kind, keys, children = spec if spec is not None else (None, None, None)
    ok = spec is not None and isinstance(dims, (tuple, list, dict)) and len(dims) == len(children)
    if not ok:
        dspec = tree_flatten(dims)[1]
        raise ValueError(f"vmap({fn_name}, {what}={dims}, ...)(<inputs>): {what} is not compatible with the "
                         f"structure of `inputs`. {what} has structure {_spec_str(dspec)} but inputs has "
                         f"structure {_spec_str(spec)}.")
    values = [dims[k] for k in keys] if isinstance(dims, dict) else list(dims)
    return [d for v, c in zip(values, children) for d in _broadcast_dims(v, c, what, fn_name)]


def _count(spec):
    return 1 if spec is None else sum(_count(c) for c in spec[2])


# ---- vmap ----------------------------------------------------------------------------------------
def _batch_size(leaves, dims, fn_name, in_dims):
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({fn_name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be int or None "
                             f"for every input, got {d}")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({fn_name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({fn_name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"vmap({fn_name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                         "with a non-None in_dim")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _unbatch(out, level, size, out_dims, fn_name):
    leaves, spec = tree_flatten(out)
    dims = _broadcast_dims(out_dims, spec, "out_dims", fn_name)
    res = []
    for x, d in zip(leaves, dims):
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({fn_name}, ...): `{fn_name}` must only return Tensors, got type {type(x)}. Did "
                             "you mean to set out_dims= to None for output?")
        v = materialize(x, level) if d is not None else x
        if d is None and unwrap(x, level)[1]:
            raise ValueError(f"vmap({fn_name}, ...): `{fn_name}` can not return a BatchedTensor when out_dim is None")
        res.append(v.movedim(0, d) if d is not None else v)
    return tree_unflatten(res, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fn_name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({fn_name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        leaves, spec = tree_flatten(args)
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) or in_dims is None else in_dims, spec,
                               "in_dims", fn_name)
        size = _batch_size(leaves, dims, fn_name, in_dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, leaves, dims, spec, size, kwargs, randomness, out_dims, fn_name)
        outs = []
        for s in range(0, size, chunk_size):
            n = min(chunk_size, size - s)
            part = [x.narrow(d, s, n) if d is not None else x for x, d in zip(leaves, dims)]
            outs.append(_run(func, part, dims, spec, n, kwargs, randomness, out_dims, fn_name))
        return _cat_chunks(outs, out_dims, fn_name)
    return wrapped


def _run(func, leaves, dims, spec, size, kwargs, randomness, out_dims, fn_name):
    level = (_levels[-1][0] if _levels else 0) + 1
    batched = [BatchedTensor.wrap(x.movedim(d, 0), level) if d is not None else x for x, d in zip(leaves, dims)]
    _levels.append([level, size, randomness])
    try:
        out = func(*tree_unflatten(batched, spec), **kwargs)
        return _unbatch(out, level, size, out_dims, fn_name)
    finally:
        _levels.pop()


def _cat_chunks(outs, out_dims, fn_name):
    leaves0, spec = tree_flatten(outs[0])
    dims = _broadcast_dims(out_dims, spec, "out_dims", fn_name)
    parts = [tree_flatten(o)[0] for o in outs]
    return tree_unflatten([_late.shape.cat([p[i] for p in parts], d) if d is not None else leaves0[i]
                           for i, d in enumerate(dims)], spec)
