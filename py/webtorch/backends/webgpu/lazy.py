"""Lazy element-wise fusion: chains of `ewise` ops become one dispatch.

On lavapipe and SwiftShader a dispatch costs ~50 us whatever it computes, so `z = z + 1`
two hundred times is two hundred dispatches' worth of fixed cost. Instead, `ewise` into a
full contiguous `out` records a pending node on the output buffer (`GPUBuffer.pend`) and
returns; a later `ewise` that reads that buffer through its plain contiguous view refers to
the node instead of the memory. The pending group is materialized as ONE generated kernel
(`shaders/ewise.wgsl` with a body evaluating every node in order, built from the same
per-op expressions as the single-op kernels, `backend.ewise_expr`), which writes only the
outputs whose Python buffer is still alive (a weakref per node): a dead intermediate needs no
store at all.

When the group is materialized
------------------------------
* before any other GPU work: every command goes through the backend's command sink
  (`backend.commands`, a `Barrier`: dispatch/read_buffer/write_buffer/copy_buffer/flush/
  synchronize), which materializes the group first, so reduce, matmul, take, put, scan, sort,
  the fused row kernels, custom ops, host reads and writes, and single-op ewise that cannot be
  deferred all see written memory, in program order;
* when an op cannot join: a different shape, a pending input read through any view other
  than its full contiguous one (broadcast, transposed, sliced), an out that is not a full
  contiguous buffer, an in-place op (out is an input, or a buffer a pending node reads);
* when the group reaches MAX_NODES nodes or the storage bindings it needs (distinct input
  buffers + live outputs, + 1 for the int64/division flag of a group that sets it) would pass
  maxStorageBuffersPerShaderStage - 1 (P takes one).

Epilogues: a float32 or bfloat16 matmul into a full contiguous `out` starts a group as its root node
(`defer_matmul`); the ewise ops that follow join it as above (they may read the product
through any contiguous view of its elements), and the group is dispatched as ONE matmul
kernel whose store evaluates them per element (`Epilogue`): bias + activation after
`F.linear`, scale + mask in attention, relu's backward mask after a weight-gradient product.
The product itself is stored only if its buffer is still alive. A matmul always starts a new
group (its operands are materialized first); an op that reads one of its operands as a leaf
cannot join.

The kernel is cached by the group's structure (ops, dtypes, collapsed rank, which operands
are contiguous, binding map); scalars travel in the parameter words, so `x + 1` and `x + 2`
share a pipeline. Set WEBTORCH_FUSION=0 (or `set_enabled(False)`) to dispatch every op at
once as before.
"""
import os
import weakref
from collections import namedtuple

from ..._geometry import contiguous_strides, is_contiguous, numel
from ..base import Strided
from .codegen import (
    CT,
    ST,
    bind_once,
    collapse,
    conv,
    ewise_expr,
    ewise_groups,
    ewise_src,
    index_code,
    load,
    rnd,
    scalar_bits,
    store,
)

MAX_NODES = 64
_DUMMY = ("a", "b", "c")


def _opaque(v, ct, mask):
    """v ^ mask (a runtime zero) in compute type ct"""
    if ct == "f32":
        return f"bitcast<f32>(bitcast<u32>({v}) ^ {mask})"
    return f"({v} ^ bitcast<i32>({mask}))" if ct == "i32" else f"({v} ^ {mask})"


class Epilogue:
    """A pending group's element-wise tail, applied by a matmul kernel at its store: `source(
    bbase, pbase)` is WGSL declaring `bufs` at bindings bbase.. and `fn epilogue(i: u32, mm: f32)`
    (i: the product's row-major index, mm: its value) reading `words` from P[pbase..]; `key`
    identifies the generated code, `dtypes` the storage types it touches."""
    __slots__ = ("key", "bufs", "words", "dtypes", "source")

    def __init__(self, key, bufs, words, dtypes, source):
        self.key, self.bufs, self.words, self.dtypes, self.source = key, bufs, words, dtypes, source


def _after_pending(name):
    """The driver command `name`, run after the pending fused group is dispatched (program order)."""
    def command(self, *args):
        f = self.fusion
        if f.nodes and not f.busy:
            f.flush()
        return getattr(self.next, name)(*args)
    command.__name__ = name
    return command


class Barrier:
    """The backend's command sink (`backend.commands`): every driver command the backend and the layers above
    issue passes here, dispatches the pending fused group first, then goes on to `next`: the driver, or a
    capture recording in front of it (capture.py)."""

    def __init__(self, fusion, next):
        self.fusion, self.next = fusion, next

    dispatch, copy_buffer, write_buffer, read_buffer, flush, synchronize = map(_after_pending, (
        "dispatch", "copy_buffer", "write_buffer", "read_buffer", "flush", "synchronize"))


# a node of the pending group: op(args) in cdtype, its output of dtype odt into the buffer `ref()` (a weakref: a
# dead output is not stored), `idx` its place in the group
Pending = namedtuple("Pending", "op cdtype odt args ref idx")
_pending = tuple.__new__  # Pending(*fields) without the namedtuple's Python-level __new__


def _hashable(x):
    """View x with its list fields as tuples (a dict key), or None where it holds something unhashable (no GPU
    buffer) or is no view."""
    if isinstance(x, Strided):
        x = Strided(x.buf, tuple(x.shape), tuple(x.strides), x.offset, x.dtype)
        try:
            hash(x)
            return x
        except TypeError:
            pass
    return None


def _live_outputs_of(nodes):
    """(node index, buffer) of the pending nodes whose output buffer is still alive, no longer pending"""
    outs = []
    for nd in nodes:
        b = nd.ref()
        if b is not None:
            b.pend = None
            outs.append((nd.idx, b))
    return outs


def _needed(nodes, outs):
    """[whether some live output needs node i]: the outputs and, backwards, the nodes they read"""
    need = [False] * len(nodes)
    for i, _ in outs:
        need[i] = True
    for i in range(len(nodes) - 1, -1, -1):
        if need[i]:
            for a in nodes[i].args:
                if a[0] == "n":
                    need[a[1]] = True
    return need


def _compact(nodes, need, leafviews):
    """The needed nodes renumbered: (descs (op, cdtype, odt, args) with args ("n", node) | ("l", leaf) | ("s",),
    {old node index: new}, the leaf views they read in first-use order, their scalars' words in order)."""
    nmap, lmap, used_leaves = {}, {}, []
    descs, words_sc = [], []
    for i, nd in enumerate(nodes):
        if not need[i]:
            continue
        ad = []
        for a in nd.args:
            if a[0] == "n":
                ad.append(("n", nmap[a[1]]))
            elif a[0] == "l":
                li = lmap.get(a[1])
                if li is None:
                    li = lmap[a[1]] = len(used_leaves)
                    used_leaves.append(leafviews[a[1]])
                ad.append(("l", li))
            else:
                ad.append(("s",))
                words_sc.append(a[1])
        nmap[i] = len(descs)
        descs.append((nd.op, nd.cdtype, nd.odt, tuple(ad)))
    return descs, nmap, used_leaves, words_sc


class Fusion:
    def __init__(self, be):
        self.be = be
        self.enabled = os.environ.get("WEBTORCH_FUSION", "1") != "0"
        lim = be.driver.limits or {}
        self.max_bind = max(4, int(lim.get("max-storage-buffers-per-shader-stage", 8))) - 1
        self.max_nodes = MAX_NODES
        self.busy = False
        self.checked = {}        # (op, cdtype, odt) -> whether its node binds the int64/division flag (i64_ or int64)
        self._reset()

    def _reset(self):
        self.shape = None
        self.n = 0
        self.strides = None       # contiguous_strides(shape)
        self.nodes = []
        self.leaves = {}          # a leaf's view (Strided, the group's shape) -> its arg ("l", index)
        self.leafviews = []       # strong references: a leaf buffer cannot die and be reused
        self.leafbufs = {}        # id(buf) -> buf (and the root matmul's operands)
        self.root = None          # the group's matmul: root(Epilogue or None) dispatches it
        self.rootbufs = ()        # ids of its operands' buffers
        self.flag = False         # a node binds the int64/division flag (one more binding)
        self.live_bound = 0       # at least the count of live outputs (`_live_outputs`)
        self.new = None           # (new leaf views, new leaf buffers) of the node `_args` read last, or None

    def set_enabled(self, on):
        self.flush()
        self.enabled = bool(on)

    # ---- recording --------------------------------------------------------------------
    def _args(self, op, inputs, cdtype):
        """-> the node's args, its new leaf views {view: its arg} and new leaf buffers {id: buf} in `self.new` (None:
        no new leaf); None when a pending input is read through a view that cannot be inlined, or a leaf is the
        group's matmul operand or no GPU buffer of its dtype."""
        args = []
        self.new = None
        leaves = self.leaves
        for k, x in enumerate(inputs):
            try:             # a leaf of the group already (no node writes its buffer: that flushes the group first)
                a = leaves.get(x)
            except TypeError:                   # a view with a list among its fields
                x = _hashable(x)
                if x is None:
                    return None
                a = leaves.get(x)
            if a is None:
                if not isinstance(x, Strided):
                    a = ("s", scalar_bits(x, "bool" if (op == "where" and k == 0) else cdtype))
                else:
                    nd = getattr(x.buf, "pend", None)
                    if nd is None:
                        a = self._new_leaf(x)
                    elif x.offset == 0 and tuple(x.shape) == self.shape and x.dtype == nd.odt and \
                            (x.strides == self.strides or is_contiguous(self.shape, x.strides)):
                        a = ("n", nd.idx)
                    if a is None:
                        return None
            args.append(a)
        return args

    def _new_leaf(self, x):
        """The arg of view x as a new leaf of the group (kept in `self.new` until the node joins), or None when x is
        the group's matmul operand or no GPU buffer of its dtype."""
        b = x.buf
        if x.dtype != getattr(b, "dtype", None) or id(b) in self.rootbufs:
            return None
        if self.new is None:
            self.new = {}, {}
        newv, newb = self.new
        a = newv.get(x)
        if a is None:
            a = newv[x] = ("l", len(self.leafviews) + len(newv))
            if id(b) not in self.leafbufs:
                newb[id(b)] = b
        return a

    def _crowded(self, flag):
        """Whether the storage bindings the group needs with one more node (distinct leaf buffers and the node's new
        ones, `self.new`, + live outputs, + 1 for the int64/division flag where a node sets it (`flag` this one)),
        would pass maxStorageBuffersPerShaderStage - 1 (P takes one)."""
        nb = len(self.leafbufs) + (len(self.new[1]) if self.new else 0) + (self.flag or flag) + 1 - self.max_bind
        return nb + self.live_bound > 0 and nb + self._live_outputs() > 0

    def _live_outputs(self):
        """the count of pending outputs still alive (kept as `live_bound`, which each new node raises by one:
        outputs only die, so it bounds the count until the next one)"""
        self.live_bound = sum(1 for nd in self.nodes if nd.ref() is not None)
        return self.live_bound

    def defer(self, op, out, inputs, cdtype):
        """Record `ewise(op, out, inputs, cdtype)` as a pending node; False when it must be
        dispatched now (the caller then does, after this group is materialized)."""
        if not self.enabled or self.busy:
            return False
        ob = out.buf
        shape = tuple(out.shape)
        n = numel(shape)
        if out.offset != 0 or getattr(ob, "numel", -1) != n or getattr(ob, "pend", 1) is not None or \
                out.dtype != ob.dtype or not is_contiguous(shape, out.strides):
            return False
        for x in inputs:
            if isinstance(x, Strided) and x.buf is ob:
                return False
        if id(ob) in self.leafbufs:           # a pending node reads its old contents
            self.flush()
        return self.record(op, ob, shape, n, inputs, cdtype)

    def record(self, op, ob, shape, n, inputs, cdtype):
        """`defer` into the whole of buffer `ob` (of `shape`, n elements, its own dtype the op's out dtype), which
        no pending node reads or writes (a new buffer: what the element-wise hot path gives, `Primitives.ewise_new`)."""
        if not self.enabled or self.busy:
            return False
        odt = ob.dtype
        flag = self.checked.get((op, cdtype, odt))
        if flag is None:                        # unsupported op/dtype: raise now, not later
            flag = self.checked[op, cdtype, odt] = "int64" in (cdtype, odt) or \
                "i64_" in ewise_expr(op, cdtype, list(_DUMMY[:len(inputs)]))[0]
        nodes = self.nodes
        if nodes and shape != self.shape:
            if self.root is not None and len(nodes) == 1 and n == self.n:
                self.shape, self.strides = shape, contiguous_strides(shape)  # a lone product's elements, row-major
            else:
                self.flush()
                nodes = self.nodes
        if not nodes:
            self._start(shape, n)
        args = self._args(op, inputs, cdtype)
        if args is None or len(nodes) >= self.max_nodes or \
                len(self.leafbufs) + len(inputs) + 2 + self.live_bound > self.max_bind and self._crowded(flag):
            self.flush()
            nodes = self.nodes
            self._start(shape, n)
            args = self._args(op, inputs, cdtype)
            if args is None:                    # an input that is no GPU buffer of its dtype
                return False
        if self.new is not None:
            newv, newb = self.new
            self.leaves.update(newv)
            self.leafviews.extend(newv)
            self.leafbufs.update(newb)
        nd = _pending(Pending, (op, cdtype, odt, args, weakref.ref(ob), len(nodes)))
        nodes.append(nd)
        if flag:
            self.flag = True
        ob.pend = nd
        self.live_bound += 1
        return True

    def _start(self, shape, n):
        """A new group over `shape` (n elements)."""
        self.shape, self.n, self.strides = shape, n, contiguous_strides(shape)

    def defer_matmul(self, out, operands, launch):
        """Record a float32 / bfloat16 matmul into `out` as the root of a new group; `launch(buf, None)`
        later dispatches the plain kernel storing into `out`'s buffer, `launch(None, epilogue)`
        the fused one (`launch` must not hold `out`'s buffer: a dead product is not stored).
        False when it must run now (fusion off, or `out` not a full contiguous buffer of its dtype)."""
        ob = out.buf
        shape = tuple(out.shape)
        n = numel(shape)
        dt = out.dtype
        if not self.enabled or self.busy or dt not in ("float32", "bfloat16") or out.offset != 0 or \
                getattr(ob, "numel", -1) != n or getattr(ob, "pend", 1) is not None or \
                ob.dtype != dt or not is_contiguous(shape, out.strides):
            return False
        self.flush()                        # the operands may be pending outputs
        self._start(shape, n)
        self.root = launch
        self.rootbufs = {id(v.buf) for v in operands}
        self.leafbufs.update((id(v.buf), v.buf) for v in operands)   # in-place writes flush first
        nd = Pending("matmul", dt, dt, (), weakref.ref(ob), 0)
        self.nodes.append(nd)
        ob.pend = nd
        self.live_bound = 1
        return True

    # ---- materializing ----------------------------------------------------------------
    def flush(self):
        if not self.nodes or self.busy:
            return
        nodes, leafviews, shape, n, root = self.nodes, self.leafviews, self.shape, self.n, self.root
        self._reset()
        outs = _live_outputs_of(nodes)
        if not outs:
            return
        need = _needed(nodes, outs)
        descs, nmap, used_leaves, words_sc = _compact(nodes, need, leafviews)
        # bindings: live outputs first, then each distinct leaf buffer once
        bufs = [b for _, b in outs]
        lbind = bind_once(bufs, used_leaves)
        cs, sts = collapse(shape, [contiguous_strides(shape)] + [v.strides for v in used_leaves])
        sts = sts[1:]
        R = len(cs)
        cst = contiguous_strides(cs)
        contig = tuple(st == cst for st in sts)
        be = self.be
        out_nodes, out_dts = [nmap[i] for i, _ in outs], [b.dtype for _, b in outs]
        key = ("fuse", R, tuple(descs), tuple(out_nodes),
               tuple(zip(lbind, (v.dtype for v in used_leaves), contig)))
        words = [n, *cs]
        for v, st in zip(used_leaves, sts):
            words += [v.offset, *st]
        words += words_sc
        words.append(0)                           # the zero word of _code's opaque uses
        self.busy = True
        try:
            if root is not None and need[0]:      # the matmul (node 0) is needed: the group is its epilogue
                if len(descs) == 1 and len(outs) == 1:
                    root(bufs[0], None)           # nothing joined: the plain product
                else:
                    dtypes = out_dts + [v.dtype for v in used_leaves] + [d[2] for d in descs]
                    root(None, Epilogue(key, bufs, words, dtypes,
                                        lambda bbase, pbase: self._epilogue(descs, out_nodes, out_dts, used_leaves,
                                                                            lbind, R, contig, bbase, pbase)))
            else:
                pipe = be.kernel(key, lambda: self._source(descs, out_nodes, out_dts, used_leaves, lbind, R, contig))
                be.run(pipe, bufs, words, ewise_groups(n, be.ew_k))
        finally:
            self.busy = False
        del leafviews, outs, bufs                 # (held until the dispatch is recorded)

    def _source(self, descs, out_nodes, out_dts, leaves, lbind, R, contig):
        """the group as an ewise.wgsl kernel over its elements"""
        decls, body, alldt = self._code(descs, out_nodes, out_dts, leaves, lbind, R, contig, 0, 0)
        names = [(f"o{li}", contig[li]) for li in range(len(leaves))]
        return ewise_src(self.be.ew_k, self.be.enable(*alldt), self.be.prelude, decls, index_code(R, names), body)

    def _code(self, descs, out_nodes, out_dts, leaves, lbind, R, contig, bbase, pbase):
        """-> (binding declarations: outputs and leaves from binding bbase, then P; the body
        for element i, its words from P[pbase]; the dtypes it touches). A matmul node is `mm`."""
        nl = len(leaves)
        binds = [f"@group(0) @binding({bbase + k}) var<storage, read_write> y{k}: array<{ST[dt]}>;"
                 for k, dt in enumerate(out_dts)]
        seen = set(range(len(out_dts)))
        for v, j in zip(leaves, lbind):
            if j not in seen:
                seen.add(j)
                binds.append(f"@group(0) @binding({bbase + j}) var<storage, read_write> x{j}: "
                             f"array<{ST[v.dtype]}>;")
        binds.append(f"@group(0) @binding({bbase + len(seen)}) var<storage, read> P: array<u32>;")
        body = []
        for li, (v, j) in enumerate(zip(leaves, lbind)):
            body.append(f"  let l{li} = {load(f'x{j}[o{li}]', v.dtype)};")
        sc = pbase + 1 + R + nl * (1 + R)
        zero = sc + sum(1 for _, _, _, ad in descs for a in ad if a[0] == "s")
        dts = []
        uses = 0
        for i, (op, cdtype, odt, ad) in enumerate(descs):
            if op == "matmul":                   # (the f32 sum, rounded to a bfloat16 product)
                body.append(f"  let v{i} = {rnd('mm', odt)};")
                dts.append(odt)
                continue
            args = []
            for k, a in enumerate(ad):
                want = "bool" if (op == "where" and k == 0) else cdtype
                if a[0] == "s":
                    args.append(f"bitcast<{CT[want]}>(P[{sc}u])" if CT[want] != "u32" else f"P[{sc}u]")
                    sc += 1
                    continue
                src, sdt = (f"l{a[1]}", leaves[a[1]].dtype) if a[0] == "l" else (f"v{a[1]}", dts[a[1]])
                # Shader compilers assume finite floats (WGSL allows it) and fold x - x,
                # (x + y) - y, log(exp(x)) and f32(i32(x)) (a trunc that keeps -0.0): every use
                # reads a value the compiler cannot see through (a runtime zero word masked by
                # a constant distinct per use), so each op computes as its own kernel would
                uses += 1
                args.append(conv(_opaque(src, CT[sdt], f"(P[{zero}u] & {uses}u)"), sdt, want))
            expr, rdt = ewise_expr(op, cdtype, args)
            v = conv(expr, rdt, odt)
            v = rnd(v, odt)                      # a float16 / bfloat16 as if stored and loaded back
            body.append(f"  let v{i} = {v};")
            dts.append(odt)
        for k, (i, dt) in enumerate(zip(out_nodes, out_dts)):
            body.append(f"  y{k}[i] = {store(f'v{i}', dt)};")
        alldt = list(out_dts) + [v.dtype for v in leaves] + dts
        return "\n".join(binds), "\n".join(body), alldt

    def _epilogue(self, descs, out_nodes, out_dts, leaves, lbind, R, contig, bbase, pbase):
        """the group after its matmul root as WGSL: bindings, the prelude, `fn epilogue`"""
        decls, body, _ = self._code(descs, out_nodes, out_dts, leaves, lbind, R, contig, bbase, pbase)
        index = index_code(R, [(f"o{li}", contig[li]) for li in range(len(leaves))], pbase=pbase + 1 + R,
                           shape_base=pbase + 1)
        return f"{decls}\n{self.be.prelude}\nfn epilogue(i: u32, mm: f32) {{\n{index}\n{body}\n}}\n"
