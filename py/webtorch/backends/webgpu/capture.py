"""Capture and replay: record a step's driver commands once, replay them with almost no Python.

    with backend.capture() as cap:        # flushes pending work first
        outs = fn(*inputs)                # runs eagerly AND records every driver command
    prog = cap.program(inputs=[...], outputs=[...])
    outs = prog.replay(new_inputs)        # fresh tensors holding the outputs' new values

Recording is at the driver-protocol level (`drivers/driver.py`): while it is active the capture is a
stage of the backend's command sink (`backend.commands`, between fusion's barrier and the driver), so
every `dispatch`, `copy_buffer` and `write_buffer` the backend makes is kept with its buffer handles
and parameter words; `read_buffer` (`.item()`, `.tolist()`, `bool(t)`, printing) raises
`CaptureBreak`. The allocator notes the buffers it hands out meanwhile (`alloc.fresh`), and
`webtorch.random` tells the active capture which generator drew (`active()._draw`).

Buffers. Every buffer a recorded command touches is pinned (`CachingAllocator.pin`) while a
capture or program uses it: a pinned buffer released by its tensor is not returned to the
allocator's pool (it becomes the program's). Parameters, gradients, optimizer state and BN
running stats keep their identity, so a replay updates them in place and eager code sees it.

Program. `program()` runs two passes over the command list, then prebuilds what a replay
submits:
* dead-command elimination: a command is dropped when every buffer it writes is a temporary
  (released during the capture, not an output) that no later kept command reads; which
  bindings a kernel writes is read from its WGSL (`_writes`), all of them when unsure;
* memory planning: temporaries allocated during the capture whose live ranges (first to last
  command) do not overlap share one buffer of their size class; the others go back to the pool.
Host writes recorded in the capture become copies from one constants buffer; the dispatches'
parameter words live in one parameter buffer; bind groups are created once. A replay copies the
new inputs into the captured input buffers (GPU-side; a strided, expanded or misaligned input is
made contiguous first), patches the random kernels' Philox
seed/offset words (advancing each generator exactly as the eager calls would), encodes the
prebuilt list and submits it once, then copies the outputs into allocator-cached buffers
(one per storage: outputs that were views of one another still are). In
the browser (`drivers/browser.py`) the list lives in JavaScript: one replay is one JS call;
natively (`drivers/native.py`) the compute-pass calls go straight to wgpu-native.

`equivalent(other)`: the same commands with the same pipelines, parameter words, host writes
and workgroups, buffers matched by role (the order of first use) and random slots matched by
(generator, relative offset). A per-step Python value baked into a kernel (a step counter, a
bias correction) makes two captures of the same step differ; the optimizers take such values
from device tensors while a capture is active (`Optimizer._capture_prologue`), so they do not.
"""
import gc
import re
import struct

from ..._geometry import contiguous_strides, numel
from ..base import Strided
from .codegen import ITEM

_ACTIVE = None          # the Capture recording now (one at a time)
MASK = 0xFFFFFFFF
RING = 64               # replays whose device-side checks can be queued at once (Program)


class front:
    """The tensor types a replay returns, bound by the tensor-level layer (webtorch.webgpu) when it loads: the
    backend never imports the layers above."""
    Tensor = Storage = None


class CaptureBreak(RuntimeError):
    """A read to the host inside a capture: the value depends on the GPU's results, so the
    recorded step cannot be replayed without Python seeing it (a graph break)."""


def active():
    """The Capture recording now, or None."""
    return _ACTIVE


class paused:
    """Context manager: driver commands inside are run but not recorded (one-time setup made
    while a capture is active, e.g. an optimizer moving its step count onto the device)."""

    def __enter__(self):
        global _ACTIVE
        self.cap, _ACTIVE = _ACTIVE, None
        return self

    def __exit__(self, *exc):
        global _ACTIVE
        _ACTIVE = self.cap


class _Pins:
    """Handles pinned in the allocator, unpinned when the owner (a Capture or a Program) dies."""

    def __init__(self, alloc):
        self.alloc = alloc
        self.handles = {}

    def add(self, h):
        if id(h) not in self.handles:
            self.handles[id(h)] = h
            self.alloc.pin(h)

    def release(self):
        hs, self.handles = self.handles, {}
        for h in hs.values():
            self.alloc.unpin(h)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


# ---- recording -----------------------------------------------------------------------------
class Capture:
    """Records the driver commands of the code run inside `with backend.capture() as cap:`."""

    def __init__(self, backend, on_read=None):
        self.be = backend
        self.on_read = on_read      # called on a read to the host, which then runs (None: it raises CaptureBreak)
        self.cmds = []              # ("d", pipe, bufs, params, wg) | ("c", src, so, dst, do, n) | ("w", buf, off, data)
        self.pins = _Pins(backend.alloc)
        self.fresh = {}             # id() of each handle the allocator handed out during the capture: its size
        self.draws = []             # (generator, seed, offset) of each random draw, in order
        self.checks = []            # deferred device-side checks registered during the capture
        self.done = False
        self.broken = None
        self.next = None            # the driver, while this capture records in front of it

    # -- context manager
    def __enter__(self):
        global _ACTIVE
        if _ACTIVE is not None:
            raise RuntimeError("webgpu capture: a capture is already active (captures do not nest)")
        if self.done:
            raise RuntimeError("webgpu capture: a Capture records once; make a new one with backend.capture()")
        be = self.be
        be.fusion.flush()
        be.driver.flush()
        # no cycle collection while recording: which temporaries are alive when fused work is
        # materialized (lazy.py writes only live outputs) then depends on the code alone, so
        # two captures of one step record the same kernels
        gc.collect()
        self._gc = gc.isenabled()
        gc.disable()
        self._nchecks = len(be._checks)
        self.next, be.commands.next = be.commands.next, self
        be.alloc.fresh = self.fresh
        _ACTIVE = self
        return self

    def __exit__(self, et, ev, tb):
        global _ACTIVE
        try:
            if et is None:
                self.be.fusion.flush()          # pending element-wise work belongs to the capture
                self.checks = list(self.be._checks[self._nchecks:])
        finally:
            _ACTIVE = None
            if self._gc:
                gc.enable()
            self.be.commands.next, self.be.alloc.fresh = self.next, None
            self.done = True
            if et is not None:
                self.broken = ev
        return False

    def _live(self):
        return _ACTIVE is self

    # -- the recorded driver commands (this capture is the command sink's stage before the driver)
    def dispatch(self, pipe, buffers, params, workgroups):
        r = self.next.dispatch(pipe, buffers, params, workgroups)
        if self._live():
            for h in buffers:
                self.pins.add(h)
            self.cmds.append(("d", pipe, tuple(buffers), bytes(params), tuple(workgroups)))
        return r

    def copy_buffer(self, src, so, dst, do, size):
        r = self.next.copy_buffer(src, so, dst, do, size)
        if self._live() and size:
            self.pins.add(src)
            self.pins.add(dst)
            self.cmds.append(("c", src, so, dst, do, size))
        return r

    def write_buffer(self, buf, offset, data):
        if self._live():
            b = bytes(memoryview(data).cast("B"))
            if b:
                self.pins.add(buf)
                self.cmds.append(("w", buf, offset, b))
        return self.next.write_buffer(buf, offset, data)

    def read_buffer(self, buf, offset, size):
        if self._live() and self.on_read is not None:
            self.on_read()
        elif self._live():
            raise CaptureBreak(
                "a read to the host (.item(), .tolist(), .numpy(), bool(tensor), printing) inside a "
                "webgpu capture: the captured step cannot contain it (a graph break)")
        return self.next.read_buffer(buf, offset, size)

    def flush(self):
        return self.next.flush()

    def synchronize(self):
        return self.next.synchronize()

    def _draw(self, gen, seed, offset):
        if self._live():
            self.draws.append((gen, seed, offset))

    def setup(self):
        """Context manager for one-time setup made inside a capture (an optimizer moving its step
        count onto the device): pending fused work is materialized first (recorded, so every
        capture of the step groups its kernels alike), then the setup's commands run unrecorded."""
        self.be.fusion.flush()
        return paused()

    # -- results
    @property
    def dispatches(self):
        return sum(1 for c in self.cmds if c[0] == "d")

    def _canon(self):
        """The command list with buffers numbered by first use and random words masked."""
        num, rng = {}, self._rng_slots()
        out = []
        for i, c in enumerate(self.cmds):
            if c[0] == "d":
                bufs = tuple(num.setdefault(id(h), len(num)) for h in c[2])
                params = c[3]
                if i in rng:
                    params = params[:4] + params[16:]
                    out.append(("d", id(c[1]), bufs, params, c[4], rng[i][1:]))
                else:
                    out.append(("d", id(c[1]), bufs, params, c[4]))
            elif c[0] == "c":
                out.append(("c", num.setdefault(id(c[1]), len(num)), c[2], num.setdefault(id(c[3]), len(num)),
                            c[4], c[5]))
            else:
                out.append(("w", num.setdefault(id(c[1]), len(num)), c[2], c[3]))
        return out

    def _rng_slots(self):
        """{command index: (generator, generator index, offset relative to the capture's first
        draw of that generator)} for the random kernels' dispatches."""
        be = self.be
        rand = {id(p) for k, p in be._memo.items() if isinstance(k, tuple) and k and k[0] == "rand"}
        gens, first, by = [], {}, {}
        for g, seed, off in self.draws:
            if id(g) not in first:
                first[id(g)] = off
                gens.append(g)
            by[(seed & MASK, (seed >> 32) & MASK, off & MASK)] = g
        slots = {}
        for i, c in enumerate(self.cmds):
            if c[0] == "d" and id(c[1]) in rand:
                s0, s1, o = struct.unpack_from("<3I", c[3], 4)
                g = by.get((s0, s1, o))
                if g is None:
                    raise RuntimeError("webgpu capture: a random kernel's draw was not seen from its generator")
                slots[i] = (g, gens.index(g), (o - first[id(g)]) & MASK)
        return slots

    def equivalent(self, other):
        """True when `other` recorded the same commands: same pipelines, parameter words, host
        writes and workgroups, buffers matched by role, random slots by (generator, relative
        offset). Two captures of one step differ when a Python value baked into a kernel
        changed between them (then replaying either would compute a wrong number)."""
        if self.broken is not None or other.broken is not None or not (self.done and other.done):
            return False
        if len(self.cmds) != len(other.cmds):
            return False
        a, b = self._canon(), other._canon()
        if a != b:
            return False
        ga = [g for g, _, _ in self.draws]
        gb = [g for g, _, _ in other.draws]
        return len(ga) == len(gb) and all(x is y for x, y in zip(ga, gb))

    def program(self, inputs=(), outputs=()):
        """The replayable Program: `inputs` are the tensors whose contents change per call (their
        buffers get the new values at each replay), `outputs` the tensors handed back."""
        if not self.done:
            raise RuntimeError("webgpu capture: program() is built after the `with` block ends")
        if self.broken is not None:
            raise RuntimeError(f"webgpu capture: the captured code raised ({self.broken!r}); nothing to replay")
        return Program(self, list(inputs), list(outputs))


# ---- passes --------------------------------------------------------------------------------
_BIND = re.compile(r"@binding\((\d+)\)\s*var<storage,\s*read_write>\s*(\w+)")
_WRITES = {}


def _writes(be, pipe, nbufs):
    """The binding indices a kernel may write (assignments to `name[...]`, atomics), from its
    WGSL source; every binding when the source is unknown."""
    key = (id(pipe), nbufs)
    w = _WRITES.get(key)
    if w is None:
        src = next((s for s, p in be._pipes.items() if p is pipe), None)
        if src is None:
            w = frozenset(range(nbufs))
        else:
            names = {int(k): n for k, n in _BIND.findall(src)}
            w = set()
            for k, n in names.items():
                if re.search(rf"\b{n}\s*\[[^;]*?\]\s*(\.\w+\s*)?[-+*/%|&^]?=(?!=)", src) or \
                        re.search(rf"atomic\w*\(\s*&\s*{n}\b", src):
                    w.add(k)
            if id(pipe) in be._i64_pipes:
                w.add(nbufs - 1)             # the int64 overflow flag, bound last
            w = frozenset(x for x in w if x < nbufs)
        _WRITES[key] = w
    return w


def _rw(be, c):
    """(buffers read, buffers written) of a command, as id() sets."""
    if c[0] == "d":
        bufs = c[2]
        w = _writes(be, c[1], len(bufs))
        return {id(h) for h in bufs}, {id(bufs[k]) for k in w}
    if c[0] == "c":
        return {id(c[1])}, {id(c[3])}
    return set(), {id(c[1])}


def _eliminate(be, cmds, temps, keep_idx):
    """[(index, command)] without the commands whose writes all land in temporaries that no
    later kept command reads (commands in `keep_idx` stay)."""
    needed, keep = set(), []
    for i in range(len(cmds) - 1, -1, -1):
        reads, writes = _rw(be, cmds[i])
        if i in keep_idx or any(w not in temps or w in needed for w in writes):
            keep.append((i, cmds[i]))
            needed |= reads
    keep.reverse()
    return keep


def _plan(cmds, temps, size_of):
    """Liveness-based reuse among temporaries: {id(handle): handle to use instead}."""
    first, last, handle = {}, {}, {}
    for i, c in enumerate(cmds):
        hs = c[2] if c[0] == "d" else (c[1], c[3]) if c[0] == "c" else (c[1],)
        for h in hs:
            if id(h) in temps:
                first.setdefault(id(h), i)
                last[id(h)] = i
                handle[id(h)] = h
    free, subst = {}, {}      # size -> handles free for reuse; id -> handle to use instead
    ends = sorted((last[k], k) for k in last)
    order = sorted(first, key=first.get)
    j = 0
    for k in order:
        i = first[k]
        while j < len(ends) and ends[j][0] < i:
            e = ends[j][1]
            h = subst.get(e, handle[e])
            free.setdefault(size_of(e), []).append(h)
            j += 1
        lst = free.get(size_of(k))
        if lst:
            subst[k] = lst.pop()
    return subst


def _plan_writes(be, c):
    """The handles a command of a Program's plan writes."""
    if c[0] == "d":
        return [c[2][k] for k in _writes(be, c[1], len(c[2]))]
    return [c[3]] if c[0] == "c" else [c[2]]


# ---- the program ---------------------------------------------------------------------------
class Program:
    """A captured step, prebuilt for replay (see the module doc)."""

    def _ring_copies(self, post):
        """Copies of this replay's checked values into the next ring slot (`self._queued`: the
        checks on it, queued after the submit)."""
        be, k = self.be, self._ring_slot
        self._ring_slot = (k + 1) % RING
        queued = {id(c) for c in be._checks}
        if any(id(c) in queued for c in self._ring_queued[k]):
            be._read_checked(None, 0, 0)           # one wait; raises a failed check's error
        base = k * self._ring_stride
        self._queued = []
        for v, _, fail in self.checks:
            n = numel(v.shape)
            post.append((v.buf.handle, v.offset * 4, self._ring.handle, base * 4, n * 4))
            self._queued.append((Strided(self._ring, tuple(v.shape), contiguous_strides(v.shape), base, "int32"),
                                 None, fail))
            base += n
        self._ring_queued[k] = self._queued

    def __init__(self, cap, inputs, outputs):
        be = self.be = cap.be
        d, alloc = be.driver, be.alloc
        self._pins = _Pins(alloc)
        self._own = []
        self.inputs = [self._slot(t) for t in inputs]
        storages, self.views = layout(outputs)
        for s in storages:
            if s.device.type != "webgpu":
                raise ValueError(f"webgpu capture: output tensors must be on webgpu, got {s.device}")
        self.outputs = [(s.buf.handle, s.dtype, s.numel, s.device) for s in storages]
        for h in [s[0] for s in self.inputs] + [o[0] for o in self.outputs]:
            self._pins.add(h)
        # temporaries: buffers the capture touched whose tensors are gone (the program's own)
        temps = {k for k in cap.pins.handles if alloc.pins[k][2] is not None}
        rng = cap._rng_slots()
        cmds = _eliminate(be, cap.cmds, temps, rng)
        self.eliminated = len(cap.cmds) - len(cmds)
        subst = _plan([c for _, c in cmds], temps & cap.fresh.keys(), lambda k: alloc.pins[k][2])
        self.reused = len(subst)
        h_ = lambda h: subst.get(id(h), h)                          # noqa: E731
        # the parameter words and the host writes' data, each in one buffer; random slots
        a = d._align
        params, consts, plan, self.rng = bytearray(), bytearray(), [], []
        for i, c in cmds:
            hs = [h_(h) for h in (c[2] if c[0] == "d" else (c[1], c[3]) if c[0] == "c" else (c[1],))]
            for h in hs:
                self._pins.add(h)
            if c[0] == "d":
                start = (len(params) + a - 1) // a * a
                params.extend(b"\0" * (start - len(params)))
                params.extend(c[3] or b"\0\0\0\0")
                plan.append(("d", c[1], hs, start, max(4, len(c[3])), c[4]))
                if i in rng:
                    self.rng.append((start + 4, rng[i][1], rng[i][2]))
            elif c[0] == "c":
                plan.append(("c", hs[0], c[2], hs[1], c[4], c[5]))
            else:
                data = c[3] + b"\0" * (-len(c[3]) % 4)
                plan.append(("k", len(consts), hs[0], c[2], len(data)))
                consts.extend(data)
        # each generator advances per replay by its draws in the capture, as the eager call did
        gens = []
        for g, _, _ in cap.draws:
            if all(g is not x for x in gens):
                gens.append(g)
        self.generators = [(g, sum(1 for x, _, _ in cap.draws if x is g)) for g in gens]
        # device-side checks (index bounds, `backend.defer_check`): each replay copies the checked
        # values into a slot of a ring and queues the checks on that slot, so every replay's values
        # are checked at the next sync; reusing a slot whose checks are still queued resolves them
        # first (one wait per RING replays made without any host read)
        self.checks = cap.checks
        if self.checks:
            self._ring_stride = sum(numel(v.shape) for v, _, _ in self.checks)
            self._ring = be.empty(RING * self._ring_stride, "int32")
            self._ring_slot = 0
            self._ring_queued = [()] * RING
        flag = be._i64_flag.handle if be._i64_flag is not None else None
        self.i64 = flag is not None and any(c[0] == "d" and any(h is flag for h in c[2]) for c in plan)
        self.dispatches = sum(1 for c in plan if c[0] == "d")
        self.copies = len(plan) - self.dispatches
        self.submits = 1
        self._params = self._buffer(params)
        self._consts = self._buffer(consts) if consts else None
        self._impl = d.build_replay(self, plan)
        # (handle, bytes) of the buffers a replay writes that outlive it: its input slots and the buffers allocated
        # during the capture that are not temporaries (activations, outputs): what a forward leaves for its
        # backward (dynamo/aot.py copies them away for a graph still to be backpropagated)
        written = {id(h): h for c in plan for h in _plan_writes(be, c)}
        self.kept = [(h, (off + nb + 3) & ~3) for h, off, nb, _, _ in self.inputs] + \
            [(h, cap.fresh[k]) for k, h in written.items() if k in cap.fresh and k not in temps]
        self.reads = {id(h) for c in plan for h in (c[2] if c[0] == "d" else (c[1],) if c[0] == "c" else ())}

    def _buffer(self, data):
        d = self.be.driver
        h = d.create_buffer(max(4, len(data)))
        self._own.append(h)
        if data:
            d.write_buffer(h, 0, bytes(data))
        return h

    @staticmethod
    def _slot(t):
        """An input's (buffer, byte offset, bytes, shape, dtype)."""
        if t.device.type != "webgpu":
            raise ValueError(f"webgpu capture: input tensors must be on webgpu, got {t.device}")
        h = t._storage.buf.handle
        if tuple(t._stride) != contiguous_strides(t.shape):
            raise ValueError("webgpu capture: an input tensor must be contiguous (pass a contiguous clone)")
        it = ITEM[t.dtype.name]
        return (h, t._offset * it, t.numel() * it, tuple(t.shape), t.dtype)

    def __del__(self):
        try:
            self._pins.release()
            for h in self._own:
                self.be.driver.destroy_buffer(h)
        except Exception:
            pass

    # -- replay
    def replay(self, new_inputs=()):
        """Run the captured step again on `new_inputs` (tensors matching the captured inputs'
        shapes and dtypes; webgpu or cpu); returns the outputs as fresh tensors (outputs that
        were views of one another at the capture are views of one another again)."""
        new_inputs = list(new_inputs)
        if len(new_inputs) != len(self.inputs):
            raise ValueError(f"replay: expected {len(self.inputs)} inputs, got {len(new_inputs)}")
        be = self.be
        pre, copies = [], []  # copies: inputs moved or laid out afresh, held until the submit reads them
        for (h, off, nb, shape, dt), t in zip(self.inputs, new_inputs):
            if tuple(t.shape) != shape or t.dtype != dt:
                raise ValueError(f"replay: an input of shape {tuple(t.shape)} and dtype {t.dtype} where the "
                                 f"capture had {shape} and {dt}")
            if t.device.type != "webgpu":
                t = t.to("webgpu")
                copies.append(t)
            elif tuple(t._stride) != contiguous_strides(shape) or t._offset * ITEM[dt.name] & 3:
                # a strided, expanded or (float16) odd-offset input: a contiguous copy at offset 0 (copy_buffer
                # moves whole 4-byte words)
                t = t.detach().clone()
                copies.append(t)
            src = t._storage.buf.handle
            so = t._offset * ITEM[dt.name]
            if src is h and so == off:
                continue
            pre.append((src, so, h, off, (nb + 3) & ~3))
        post, storages = [], []
        for h, dt, n, device in self.outputs:
            buf = be.empty(n, dt.name)
            post.append((h, 0, buf.handle, 0, min(buf.nbytes, (n * ITEM[dt.name] + 3) & ~3)))
            storages.append(front.Storage(buf, dt, device, n, be))
        outs = views(storages, self.views)
        words = None
        if self.rng:
            base = []
            for g, n in self.generators:
                base.append((g._seed, g._offset))
                g._offset += n
            words = [(off, (base[gi][0] & MASK, (base[gi][0] >> 32) & MASK, (base[gi][1] + rel) & MASK))
                     for off, gi, rel in self.rng]
        else:
            for g, n in self.generators:
                g._offset += n
        if self.checks:
            self._ring_copies(post)
        be.fusion.flush()
        be.driver.flush()
        self._impl.run(pre, post, words)
        d = be.driver
        d.submits += 1
        d.dispatches += self.dispatches
        if self.i64:
            be._i64_armed = True
        if self.checks:
            be._checks.extend(self._queued)
        return outs


def layout(tensors):
    """(the storages of `tensors`, each once, in order; per tensor what `views` needs to make it again on new
    storages: its storage's index, shape, stride, offset and base (its `_base`: the index of a tensor of the list or
    the geometry of one that is not; ("is", j) for tensors[j] listed again)), so aliases stay aliases."""
    index, storages, specs, pos = {}, [], [], {}
    for j, t in enumerate(tensors):
        pos.setdefault(id(t), j)
    for j, t in enumerate(tensors):
        if pos[id(t)] != j:
            specs.append(("is", pos[id(t)]))
            continue
        k = index.setdefault(id(t._storage), len(storages))
        if k == len(storages):
            storages.append(t._storage)
        b = t._base
        base = None if b is None else pos.get(id(b), (b._shape, b._stride, b._offset))
        specs.append((k, t._shape, t._stride, t._offset, base))
    return storages, specs


def views(storages, specs):
    """The tensors `layout` described, on `storages` (one per storage it listed)."""
    make = front.Tensor._make
    outs = [None if s[0] == "is" else make(storages[s[0]], *s[1:4]) for s in specs]
    bases = {}
    for j, spec in enumerate(specs):
        if spec[0] == "is":
            outs[j] = outs[spec[1]]
        elif isinstance(spec[4], int):
            outs[j]._base = outs[spec[4]]
        elif spec[4] is not None:
            key = (spec[0], spec[4])
            outs[j]._base = bases.get(key) or bases.setdefault(key, make(storages[spec[0]], *spec[4]))
    return outs


__all__ = ["Capture", "CaptureBreak", "Program", "active", "paused", "layout", "views"]
