"""GPU buffers and the caching allocator of the WebGPU backend.

Freed buffers go back to a pool by size class when the Python `GPUBuffer` object dies, and
are reused, as PyTorch's CUDA caching allocator does.
"""


def _size_class(nbytes):
    """Round up to 256 B, then to the next of 2^k * {1, 1.25, 1.5, 1.75} (< 25% waste)."""
    n = max(256, (nbytes + 255) & ~255)
    p = 1 << (n - 1).bit_length()        # next power of two >= n
    q = p // 8                           # steps of p/8 between p/2 and p
    if p >= 2048:
        return ((n + q - 1) // q) * q
    return p


class GPUBuffer:
    """A backend `buf`: a pooled GPU buffer holding `numel` elements of `dtype`. When this
    object is garbage collected the GPU buffer returns to the allocator's pool."""
    __slots__ = ("handle", "nbytes", "numel", "dtype", "_alloc", "pend", "__weakref__")

    def __init__(self, alloc, handle, nbytes, numel, dtype):
        self._alloc, self.handle, self.nbytes, self.numel, self.dtype = alloc, handle, nbytes, numel, dtype
        self.pend = None     # the pending fused node that will write this buffer (lazy.py)

    def __del__(self):
        try:
            self._alloc.release(self.handle, self.nbytes)
        except Exception:
            pass

    def __len__(self):
        return self.numel

    def __repr__(self):
        return f"GPUBuffer({self.numel} x {self.dtype}, {self.nbytes} B)"


class CachingAllocator:
    def __init__(self, driver, max_bytes, cache_limit=None):
        self.driver = driver
        self.max_bytes = max_bytes
        self.pool = {}                   # size class -> [handles]
        self.allocated_bytes = 0         # bytes handed out and alive
        self.reserved_bytes = 0          # bytes of all GPU buffers created and not destroyed
        self.peak_allocated = self.peak_reserved = 0   # their highest values (torch.cuda's peaks)
        self.reuses = 0
        self.creates = 0
        self.cache_limit = cache_limit if cache_limit is not None else 1 << 30
        # handles handed out, held strongly here: a GPUBuffer collected in a reference cycle
        # (an exception's traceback -> frame -> tensor) has its finalizer run together with
        # those of the cycle's other objects; were the driver's buffer object in that cycle
        # too, it could be released before GPUBuffer.__del__ returns it to the pool, and the
        # pool would then hand out a dead buffer
        self.live = {}
        self.pins = {}                   # id(handle) -> [pin count, handle, size if released]
        self.fresh = None                # while a capture watches: {id(handle): size} of each handed out
        self._classes = {}               # bytes asked -> their size class (at most max_bytes)

    def pin(self, h):
        """Keep handle h out of the pool while a captured program uses it (capture.py)."""
        e = self.pins.get(id(h))
        if e is None:
            self.pins[id(h)] = [1, h, None]
        else:
            e[0] += 1

    def unpin(self, h):
        e = self.pins[id(h)]
        e[0] -= 1
        if e[0] == 0:
            del self.pins[id(h)]
            if e[2] is not None:         # its tensor died while pinned: pool it now
                self.release(h, e[2])

    def alloc(self, nbytes, numel, dtype):
        """A GPUBuffer of `numel` elements of `dtype` (`nbytes` bytes): a pooled GPU buffer of its size class, or
        a new one."""
        size = self._classes.get(nbytes)
        if size is None:
            if (nbytes + 3) & ~3 > self.max_bytes:
                raise RuntimeError(
                    f"WebGPU out of memory: tried to allocate {nbytes} bytes, over the adapter's "
                    f"largest buffer ({self.max_bytes} bytes: maxBufferSize/maxStorageBufferBindingSize)")
            size = self._classes[nbytes] = min(_size_class(nbytes), max(self.max_bytes, 4) & ~3)
        lst = self.pool.get(size)
        if lst:
            self.reuses += 1
            self.allocated_bytes += size
            if self.allocated_bytes > self.peak_allocated:
                self.peak_allocated = self.allocated_bytes
            h = lst.pop()
        else:
            h = self._create(size)
        self.live[id(h)] = h
        if self.fresh is not None:
            self.fresh[id(h)] = size
        return GPUBuffer(self, h, size, numel, dtype)

    def _create(self, size):
        """A new GPU buffer of `size` bytes (the pool emptied first if the driver finds no room)."""
        try:
            h = self.driver.create_buffer(size)
        except RuntimeError as e:
            if "lost" in str(e).lower():
                raise
            self.empty_cache()
            try:
                h = self.driver.create_buffer(size)
            except RuntimeError as e2:
                raise RuntimeError(f"WebGPU out of memory: tried to allocate {size} bytes ({e2})") from None
        self.creates += 1
        self.reserved_bytes += size
        self.allocated_bytes += size
        self.peak_allocated = max(self.peak_allocated, self.allocated_bytes)
        self.peak_reserved = max(self.peak_reserved, self.reserved_bytes)
        return h

    def release(self, handle, size):
        e = self.pins.get(id(handle)) if self.pins else None
        if e is not None:
            e[2] = size
            return
        self.live.pop(id(handle), None)
        self.allocated_bytes -= size
        lst = self.pool.get(size)
        if lst is None:
            self.pool[size] = [handle]
        else:
            lst.append(handle)
        if self.reserved_bytes - self.allocated_bytes > self.cache_limit:
            self.empty_cache()

    @property
    def cached_bytes(self):
        """The bytes of the pooled buffers (created, not destroyed, not handed out)."""
        return self.reserved_bytes - self.allocated_bytes

    def reset_peak(self):
        self.peak_allocated, self.peak_reserved = self.allocated_bytes, self.reserved_bytes

    def empty_cache(self):
        for size, lst in self.pool.items():
            for h in lst:
                self.driver.destroy_buffer(h)
                self.reserved_bytes -= size
        self.pool = {}

