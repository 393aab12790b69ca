"""PyTorch's CPU random engine: at::mt19937 seeded with init_genrand, and its 5056-byte state.

The words come from Python's own mt19937 (`random.Random`, in C in CPython and Pyodide), which
draws the same 32-bit stream once given the same 624-word key: PyTorch's (left, next) position
maps onto Python's index (624: twist before the next word).

State bytes (CPUGeneratorImplState, x86-64 layout): uint64 initial seed, int32 left, int32
seeded, uint64 next, uint64 state[624], double normal_x, normal_y, normal_rho, int32
normal_is_valid (+4 pad), float next_float_normal_sample, bool valid (+3 pad).
"""
import random
import struct
import sys
from array import array

N = 624
MASK = 0xFFFFFFFF
STATE_SIZE = 5056
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")


def init_genrand(seed):
    key = [seed & MASK]
    for j in range(1, N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & MASK)
    return key


class MT19937:
    """One CPU generator's engine: the word stream plus the two cached Box-Muller samples."""

    def __init__(self, seed):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        self.seed = seed
        self._rng = random.Random()
        self._rng.setstate((3, tuple(init_genrand(seed)) + (N,), None))
        self._fresh = True              # PyTorch's next_ is 0 until the first twist
        self.next_double_normal = None  # normal_distribution<double>'s cached second sample
        self.next_float_normal = None

    def words(self, n):
        """The next n 32-bit words of the stream (array('I'))."""
        out = array("I")
        if n:
            self._fresh = False
            out.frombytes(self._rng.getrandbits(32 * n).to_bytes(4 * n, "little"))
            if sys.byteorder == "big":
                out.byteswap()
        return out

    def get_state(self):
        _, internal, _ = self._rng.getstate()
        key, pos = internal[:N], internal[N]
        left, nxt = (1, 0 if self._fresh else N) if pos >= N else (N + 1 - pos, pos)
        nd, nf = self.next_double_normal, self.next_float_normal
        return b"".join((_HEAD.pack(self.seed, left, 1, nxt), struct.pack(f"<{N}Q", *key),
                         _TAIL.pack(0.0, nd or 0.0, 0.0, nd is not None, nf or 0.0, nf is not None)))

    def set_state(self, data):
        if len(data) != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                               f"state size to be {len(data)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(data, 0)
        if not (seeded and 0 < left <= N and 0 <= nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        key = [w & MASK for w in struct.unpack_from(f"<{N}Q", data, _HEAD.size)]
        _, normal_y, _, normal_valid, float_normal, float_valid = _TAIL.unpack_from(data, _HEAD.size + 8 * N)
        self.seed = seed
        self._rng.setstate((3, tuple(key) + (N if left == 1 else nxt,), None))
        self._fresh = left == 1 and nxt == 0
        self.next_double_normal = normal_y if normal_valid else None
        self.next_float_normal = float_normal if float_valid else None
