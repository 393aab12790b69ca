"""Generators. A seed drives two streams: the cpu device draws PyTorch's CPU stream (mt19937,
`_mt19937.py`, the same numbers as PyTorch's CPU), the webgpu device a counter-based Philox stream
(a seed plus an offset that advances once per draw, as PyTorch's CUDA generator)."""
import time

from . import _dtype, _late, _mt19937
from ._device import as_device
from .backends.webgpu import capture as _capture

DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val


class Generator:
    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._mt = _mt19937.MT19937(DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise RuntimeError("Overflow when unpacking long")
        self._seed = seed & ((1 << 64) - 1)
        self._offset = 0
        self._mt.manual_seed(self._seed)
        return self

    def seed(self):
        s = int(time.time_ns()) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """A cpu generator's state is PyTorch's (5056 bytes, loads in PyTorch and back); a webgpu
        generator's is its Philox seed and offset."""
        if self.device.type == "cpu":
            return _late.creation.tensor(list(self._mt.get_state()), dtype=_dtype.uint8)
        return _late.creation.tensor([self._seed & 0xFFFFFFFF, self._seed >> 32,
                                      self._offset & 0xFFFFFFFF, self._offset >> 32], dtype=_dtype.int64)

    def set_state(self, state):
        if self.device.type == "cpu":
            if state.dtype is not _dtype.uint8:
                raise RuntimeError("RNG state must be a torch.ByteTensor")
            self._mt.set_state(bytes(state.tolist()))
            self._seed = self._mt.seed
            return self
        a, b, c, d = state.tolist()
        self._seed = a | (b << 32)
        self._offset = c | (d << 32)
        return self

    def clone_state(self):
        """A new generator of the same device in this one's state."""
        g = Generator(self.device)
        g._restore(self._save())
        return g

    def get_offset(self):
        if self.device.type == "cpu":
            raise RuntimeError("CPU Generator does not use offset")
        return self._offset

    def set_offset(self, offset):
        if self.device.type == "cpu":
            raise RuntimeError("CPU Generator does not use offset")
        self._offset = int(offset)
        return self

    def graphsafe_get_state(self):
        if self.device.type == "cpu":
            raise NotImplementedError("graphsafe_get_state is not supported in this Generator")
        return self.clone_state()

    def graphsafe_set_state(self, state):
        if self.device.type == "cpu":
            raise NotImplementedError("graphsafe_set_state is not supported in this Generator")
        self._restore(state._save())
        return self

    def _save(self):
        """Both streams' positions (fork_rng, checkpoint's recomputation)."""
        return self._seed, self._offset, self._mt.get_state()

    def _restore(self, saved):
        self._seed, self._offset, mt = saved
        self._mt.set_state(mt)

    def _next_draw(self):
        off = self._offset
        self._offset += 1
        cap = _capture.active()
        if cap is not None:               # a webgpu capture records which generator drew
            cap._draw(self, self._seed, off)
        return self._seed, off


default_generator = Generator()


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def thread_safe_generator():
    """The DataLoader thread worker's generator; None here (webtorch's DataLoader has no workers: the
    default generator is used, as PyTorch's main process does)."""
    return None


class fork_rng:
    def __init__(self, devices=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        self._state = default_generator._save()

    def __exit__(self, *a):
        default_generator._restore(self._state)
