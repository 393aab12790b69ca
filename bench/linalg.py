"""Linear algebra side by side: a batched 64x64 solve (64 systems, 8 right-hand sides), batches of small
QR, eigh and SVD (WGSL kernels on webgpu, one workgroup per matrix) and a 512x512 SVD, float32, on webtorch's
webgpu device, its cpu device and PyTorch CPU, in one run; ms per call (best of the rounds, the sides
alternating), and ratios.

    python bench/linalg.py [--rounds N]

On CPU adapters (lavapipe) matrices larger than 64 on a side are factored on the host (README, "Linear
algebra"), so there the 512x512 SVD says what a host round trip costs.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import numpy as np  # noqa: E402

import webtorch as wt  # noqa: E402

try:
    import torch
except ImportError:  # PyTorch's column is optional
    torch = None


def _cases():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 64, 64)) + 8 * np.eye(64)).astype(np.float32)
    b = rng.standard_normal((64, 64, 8)).astype(np.float32)
    m = rng.standard_normal((512, 512)).astype(np.float32)
    s = rng.standard_normal((256, 16, 16)).astype(np.float32)
    return {"solve 64x(64x64)": (lambda L, a, b: L.linalg.solve(a, b), (a, b)),
            "qr 256x(16x16)": (lambda L, s: L.linalg.qr(s), (s,)),
            "eigh 256x(16x16)": (lambda L, s: L.linalg.eigh(s + s.mT), (s,)),
            "svd 256x(16x16)": (lambda L, s: L.linalg.svd(s, full_matrices=False), (s,)),
            "svd 512x512": (lambda L, m: L.linalg.svd(m, full_matrices=False), (m,))}


def _sides():
    sides = {"webtorch cpu": (wt, lambda x: wt.tensor(x), lambda r: [t.tolist() for t in _outs(r)])}
    if wt.webgpu.is_available():
        sides["webtorch webgpu"] = (wt, lambda x: wt.tensor(x, device="webgpu"),
                                    lambda r: [t.cpu().tolist() for t in _outs(r)])
    if torch is not None:
        sides["PyTorch CPU"] = (torch, torch.from_numpy, lambda r: None)
    return sides


def _outs(r):
    return r if isinstance(r, tuple) else (r,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    rounds = ap.parse_args().rounds
    sides, cases = _sides(), _cases()
    best = {(s, c): float("inf") for s in sides for c in cases}
    for _ in range(rounds):
        for c, (fn, inputs) in cases.items():
            for s, (L, make, sync) in sides.items():  # alternate the sides each round
                args = [make(x) for x in inputs]
                sync(fn(L, *args))  # warm (pipelines, caches)
                t0 = time.perf_counter()
                sync(fn(L, *args))
                best[s, c] = min(best[s, c], time.perf_counter() - t0)
    print("| ms per call | " + " | ".join(cases) + " |")
    print("|---|" + "---:|" * len(cases))
    for s in sides:
        print(f"| {s} | " + " | ".join(f"{best[s, c] * 1e3:.1f}" for c in cases) + " |")
    if "webtorch webgpu" in sides:
        for other in [s for s in sides if s != "webtorch webgpu"]:
            print(f"| ratio {other} / webgpu | " + " | ".join(
                f"{best[other, c] / best['webtorch webgpu', c]:.2f}" for c in cases) + " |")


if __name__ == "__main__":
    main()
