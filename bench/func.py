"""torch.func on a 784-128-10 MLP, on webgpu and cpu, ms (best of a few alternating rounds) and the ratio:

  per-sample gradients over 64 examples: vmap(grad(loss)) against a Python loop of 64 backward passes;
  the Jacobian of the logits (10) in the input (784): jacrev (vmap(vjp_fn) over the identity's 10 rows) against
  jacrev(chunk_size=1) (one vjp_fn per row: webtorch's jacrev before it was vectorized), and jacfwd (vmap(jvp)
  over the identity's 784 columns) against a loop of 784 jvps (webtorch's jacfwd before).

    python bench/func.py [cpu] [webgpu] [--torch]

--torch adds PyTorch CPU (the same program) as a reference row.
"""
import os
import sys
import time

sys.path.insert(0, os.environ.get("WEBTORCH_PY") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import webtorch  # noqa: E402

N, D, H, K = 64, 784, 128, 10


def setup(T, dev):
    g = T.Generator().manual_seed(0)
    params = {"w1": T.randn(H, D, generator=g) * 0.05, "b1": T.zeros(H), "w2": T.randn(K, H, generator=g) * 0.1,
              "b2": T.zeros(K)}
    params = {k: v.to(dev) for k, v in params.items()}
    x = T.randn(N, D, generator=g).to(dev)
    y = T.randint(0, K, (N,), generator=g).to(dev)
    F = T.nn.functional

    def loss(p, xi, yi):
        h = F.relu(F.linear(xi, p["w1"], p["b1"]))
        return F.cross_entropy(F.linear(h, p["w2"], p["b2"]).unsqueeze(0), yi.unsqueeze(0))

    def vmapped():
        return T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    def loop():
        leaves = {k: v.detach().requires_grad_() for k, v in params.items()}
        per = []
        for i in range(N):
            per.append(T.autograd.grad(loss(leaves, x[i], y[i]), list(leaves.values())))
        return {k: T.stack([p[j] for p in per]) for j, k in enumerate(leaves)}
    return vmapped, loop


def jacobians(T, dev):
    """(jacrev, jacrev one row at a time, jacfwd, jacfwd one column at a time) of the MLP's logits in its input."""
    g = T.Generator().manual_seed(1)
    w1, b1 = (T.randn(H, D, generator=g) * 0.05).to(dev), T.zeros(H).to(dev)
    w2, b2 = (T.randn(K, H, generator=g) * 0.1).to(dev), T.zeros(K).to(dev)
    x = T.randn(D, generator=g).to(dev)
    F = T.nn.functional

    def mlp(xi):
        return F.linear(F.relu(F.linear(xi, w1, b1)), w2, b2)

    def jacfwd_loop():
        eye = T.eye(D, device=dev)
        return T.stack([T.func.jvp(mlp, (x,), (eye[i],))[1] for i in range(D)], -1)
    return {"jacrev": (lambda: T.func.jacrev(mlp)(x), lambda: T.func.jacrev(mlp, chunk_size=1)(x)),
            "jacfwd": (lambda: T.func.jacfwd(mlp)(x), jacfwd_loop)}


def _leaf(out):
    return out["w1"] if isinstance(out, dict) else out


def timed(fn, T, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        _leaf(fn()).sum().item()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def check(T, vmapped, loop):
    a, b = vmapped(), loop()
    if not isinstance(a, dict):
        return float((a - b).abs().max().item())
    return max(float((a[k] - b[k]).abs().max().item()) for k in a)


def compare(T, label, vec, loop):
    diff = check(T, vec, loop)   # also the warm-up (kernel compiles)
    tv = tl = float("inf")
    for _ in range(3):   # alternate the two sides (noisy neighbours)
        tv = min(tv, timed(vec, T, 1))
        tl = min(tl, timed(loop, T, 1))
    print(f"| {label} | {tv:.1f} | {tl:.1f} | {tl / tv:.1f}x | {diff:.1e} |")


def main():
    devs = [a for a in sys.argv[1:] if not a.startswith("--")] or ["webgpu", "cpu"]
    rows = [(webtorch, d, f"webtorch {d}") for d in devs]
    if "--torch" in sys.argv:
        import torch
        rows.append((torch, "cpu", "PyTorch cpu"))
    print(f"per-sample gradients, {D}-{H}-{K} MLP, {N} examples: ms per batch (best of 3 alternating rounds)\n")
    print("| | vmap(grad) ms | loop ms | loop / vmap | max abs diff |")
    print("|---|---:|---:|---:|---:|")
    for T, dev, label in rows:
        compare(T, label, *setup(T, dev))
    for kind, loop in (("jacrev", "jacrev(chunk_size=1)"), ("jacfwd", f"{D} jvps")):
        print(f"\n{kind} of the logits ({K}) in the input ({D}): ms (best of 3 alternating rounds)\n")
        print(f"| | {kind} ms | {loop} ms | loop / vectorized | max abs diff |")
        print("|---|---:|---:|---:|---:|")
        for T, dev, label in rows:
            compare(T, label, *jacobians(T, dev)[kind])


if __name__ == "__main__":
    main()
