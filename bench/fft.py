"""FFTs of complex64 data on webtorch's webgpu device (WGSL kernels), its cpu device (numpy.fft) and PyTorch CPU,
side by side in one run: ms per call (best of the rounds, the sides alternating each round), ratios against
PyTorch CPU, and each side's error against PyTorch in float32 (max |error| / max |X|).

    python bench/fft.py [--log2n 20] [--rounds 5]

The cases: one transform of 2^log2n points (one Stockham pass per dispatch on webgpu), the same number of points as
rows of 256 (every pass in workgroup memory, one dispatch), and rows of 1000 points (Bluestein).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import torch  # noqa: E402

import webtorch as wt  # noqa: E402


def _cases(log2n):
    n = 1 << log2n
    return {f"fft 2^{log2n}": (1, n), f"fft {n // 256} rows x 256": (n // 256, 256),
            f"fft {n // 1024} rows x 1000": (n // 1024, 1000)}


def _sides():
    sides = {"PyTorch CPU": (torch.fft.fft, lambda x: x, lambda r: r),
             "webtorch cpu": (wt.fft.fft, _to_wt, _to_torch)}
    if wt.webgpu.is_available():
        sides["webtorch webgpu"] = (wt.fft.fft, lambda x: _to_wt(x).to("webgpu"), _to_torch)
    return sides


def _to_wt(x):
    return wt.view_as_complex(wt.from_numpy(torch.view_as_real(x).numpy().copy()))


def _to_torch(r):
    return torch.view_as_complex(torch.from_numpy(wt.view_as_real(r).cpu().numpy()))


def _sync(r):
    if r.device.type == "webgpu":
        wt.webgpu.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    g = torch.Generator().manual_seed(0)
    sides, cases = _sides(), _cases(args.log2n)
    data = {c: torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g))
            for c, shape in cases.items()}
    best = {(s, c): float("inf") for s in sides for c in cases}
    err = {}
    for r in range(args.rounds):
        for c, x in data.items():
            for s, (fft, make, back) in sides.items():   # the sides alternate each round
                arg = make(x)
                if r == 0:   # warm-up (pipelines, twiddle tables) and the error against PyTorch
                    want = torch.fft.fft(x.to(torch.complex128))
                    err[s, c] = float((back(fft(arg)).to(torch.complex128) - want).abs().max() / want.abs().max())
                t0 = time.perf_counter()
                _sync(fft(arg))
                best[s, c] = min(best[s, c], time.perf_counter() - t0)
    print(f"complex64 FFTs, ms per call (best of {args.rounds} alternating rounds); error: max |X - X_f64| / max |X|")
    print("| case | " + " | ".join(sides) + " | " + " | ".join(f"{s} vs PyTorch" for s in sides if s[0] == "w") +
          " | " + " | ".join(f"error {s}" for s in sides) + " |")
    print("|---" * (1 + 3 * len(sides) - 1) + "|")
    for c in cases:
        ms = [f"{best[s, c] * 1e3:.2f}" for s in sides]
        ratio = [f"{best['PyTorch CPU', c] / best[s, c]:.2f}x" for s in sides if s[0] == "w"]
        errs = [f"{err[s, c]:.1e}" for s in sides]
        print(f"| {c} | " + " | ".join(ms + ratio + errs) + " |")


if __name__ == "__main__":
    main()
