"""Counter-based RNG (Philox4x32-10), the one recipe every backend follows.

Element i of a draw with (seed, offset) uses counter (i, 0, offset, 0) and key
(seed low 32 bits, seed high 32 bits); of the four output words w0..w3:
  uniform: (w0 >> 8) * 2**-24                                   in [0, 1)
  normal:  sqrt(-2 ln(((w0 >> 8) + 1) * 2**-24)) * cos(2 pi (w1 >> 8) * 2**-24)
Each draw advances the generator's offset by one, so draws never share counters.
The WGSL kernel (shaders/random.wgsl) implements the same words bit for bit.
"""
import math

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox(c0, c1, c2, c3, k0, k1):
    for _ in range(10):
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
        k0 = (k0 + W0) & MASK
        k1 = (k1 + W1) & MASK
    return c0, c1, c2, c3


def draw(n, kind, seed, offset):
    """n random floats (Python list) for one draw."""
    k0, k1 = seed & MASK, (seed >> 32) & MASK
    o = offset & MASK
    out = []
    for i in range(n):
        w0, w1, _, _ = philox(i & MASK, 0, o, 0, k0, k1)
        if kind == "uniform":
            out.append((w0 >> 8) * 2.0 ** -24)
        else:
            u1 = ((w0 >> 8) + 1) * 2.0 ** -24
            u2 = (w1 >> 8) * 2.0 ** -24
            out.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    return out


def draw_numpy(n, kind, seed, offset):
    """The same numbers as `draw`, vectorized with numpy (float64 array)."""
    import numpy as np  # optional dependency
    u64 = np.uint64
    c0 = np.arange(n, dtype=np.uint64) & u64(MASK)
    c1 = np.zeros(n, dtype=np.uint64)
    c2 = np.full(n, offset & MASK, dtype=np.uint64)
    c3 = np.zeros(n, dtype=np.uint64)
    k0, k1 = seed & MASK, (seed >> 32) & MASK
    for _ in range(10):
        p0 = u64(M0) * c0
        p1 = u64(M1) * c2
        c0, c1, c2, c3 = (((p1 >> u64(32)) ^ c1 ^ u64(k0)), p1 & u64(MASK),
                          ((p0 >> u64(32)) ^ c3 ^ u64(k1)), p0 & u64(MASK))
        k0 = (k0 + W0) & MASK
        k1 = (k1 + W1) & MASK
    if kind == "uniform":
        return (c0 >> u64(8)).astype(np.float64) * 2.0 ** -24
    u1 = ((c0 >> u64(8)).astype(np.float64) + 1.0) * 2.0 ** -24
    u2 = (c1 >> u64(8)).astype(np.float64) * 2.0 ** -24
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
