"""Generators: a seed plus an offset that advances once per draw (counter-based Philox)."""
import time

from . import _dtype, _late
from ._device import as_device
from .backends.webgpu import capture as _capture


class Generator:
    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = 67280421310721
        self._offset = 0

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise RuntimeError("Overflow when unpacking long")
        self._seed = seed & ((1 << 64) - 1)
        self._offset = 0
        return self

    def seed(self):
        s = int(time.time_ns()) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return _late.creation.tensor([self._seed & 0xFFFFFFFF, self._seed >> 32,
                                      self._offset & 0xFFFFFFFF, self._offset >> 32], dtype=_dtype.int64)

    def set_state(self, state):
        a, b, c, d = state.tolist()
        self._seed = a | (b << 32)
        self._offset = c | (d << 32)
        return self

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


class fork_rng:
    def __init__(self, devices=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        self._state = (default_generator._seed, default_generator._offset)

    def __exit__(self, *a):
        default_generator._seed, default_generator._offset = self._state


def thread_safe_generator():
    """The generator of the current DataLoader thread worker, None elsewhere (the global generator is then used).
    webtorch's DataLoader loads in the calling thread, so this is always None."""
    return None
