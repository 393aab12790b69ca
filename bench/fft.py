"""FFT of 2^20 complex64 points: webtorch's cpu device (numpy.fft), webtorch's webgpu device and PyTorch CPU,
side by side in one run (best of a few alternating rounds; ratios, not a timed test).

    python bench/fft.py [log2 n]

webtorch's webgpu device holds no complex tensors yet (torch.fft raises TypeError there): its row prints the
reason instead of a figure until the WebGPU FFT kernels land.
"""
import sys
import time

import torch

import webtorch as wt

ROUNDS = 5


def _best(fn):
    fn()  # warm-up
    best = float("inf")
    for _ in range(ROUNDS):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(log2n=20):
    n = 1 << log2n
    g = torch.Generator().manual_seed(0)
    x = torch.complex(torch.randn(n, generator=g), torch.randn(n, generator=g))
    w = wt.view_as_complex(wt.from_numpy(torch.view_as_real(x).numpy().copy()))
    rows = {"PyTorch CPU": lambda: torch.fft.fft(x), "webtorch cpu (numpy)": lambda: wt.fft.fft(w).sum().item()}
    times = {name: _best(fn) for name, fn in rows.items()}
    try:
        wg = w.to("webgpu")
        times["webtorch webgpu"] = _best(lambda: wt.fft.fft(wg).sum().item())
    except (TypeError, RuntimeError) as e:
        times["webtorch webgpu"] = f"n/a ({e})"
    flops = 5 * n * log2n  # the usual radix-2 count
    print(f"FFT of 2^{log2n} complex64 points (best of {ROUNDS})")
    print("| | ms | GFLOP/s | vs PyTorch CPU |\n|---|---:|---:|---:|")
    ref = times["PyTorch CPU"]
    for name, t in times.items():
        if isinstance(t, str):
            print(f"| {name} | {t} | | |")
        else:
            print(f"| {name} | {t * 1e3:.2f} | {flops / t / 1e9:.2f} | {ref / t:.2f}x |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
