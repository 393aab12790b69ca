# The three training workloads of issue #12, written against PyTorch's API only, so the same text
# runs on webtorch (natively: bench/steps.py; in Pyodide: bench/browser/webtorch_bench.py, which
# prepends this file) and on PyTorch. Each builder returns `step()`: one training step that
# returns the loss tensor without reading it (a readback is the caller's choice). `wrap` (e.g.
# torch.compile) is applied to the model alone, the step staying eager around it: PyTorch's usual
# `model = torch.compile(model)` pattern (poly has no model: None).
#   mlp          784-128-10, batch 64, nn.Linear/ReLU, F.cross_entropy, SGD lr 0.1
#   transformer  a tiny causal Transformer (GPT-style pre-norm blocks): 2 layers, d=64, 4 heads,
#                T=32, B=8, vocab 64, F.scaled_dot_product_attention(is_causal=True), AdamW
#   poly         y = a + b x + c x^2 fit to 256 points with SGD: 3 parameters, many tiny ops
#                (the loop runs POLY_STEPS of them)
POLY_STEPS = 2000


def build_mlp(torch, dev, wrap=None):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    model = wrap(net) if wrap else net
    x = torch.randn(64, 784).to(dev)
    y = (torch.arange(64) * 7 % 10).to(dev)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def build_transformer(torch, dev, wrap=None, d=64, heads=4, layers=2, T=32, B=8, vocab=64):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in self.qkv(self.ln1(x)).split(c, 2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            return self.head(self.ln(self.blocks(x)))

    torch.manual_seed(0)
    net = GPT().to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    model = wrap(net) if wrap else net
    data = (torch.arange(B * (T + 1)) * 37 % vocab).view(B, T + 1)
    idx, tgt = data[:, :T].to(dev), data[:, 1:].to(dev)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).view(-1, vocab), tgt.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    return step


def build_poly(torch, dev, wrap=None):
    if wrap:
        return None
    x = torch.linspace(-1, 1, 256).to(dev)
    y = 0.5 - 2 * x + 3 * x * x
    a, b, c = (torch.zeros((), device=dev, requires_grad=True) for _ in range(3))
    opt = torch.optim.SGD([a, b, c], lr=0.1)

    def step():
        loss = (a + b * x + c * x * x - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


WORKLOADS = {"mlp": build_mlp, "transformer": build_transformer, "poly": build_poly}


# The same three steps in tinygrad (a peer, bench/steps.py's tinygrad-jit row; bench/run.py's MLP
# column): each under TinyJit, which captures the kernels of call 2 and replays them from call 3.
# `tg` is the tinygrad module. Initial values differ from the PyTorch-API builders (timings only).
def tinygrad_mlp(tg):
    import numpy as np
    r = np.random.default_rng(0)
    X = tg.Tensor(r.standard_normal((64, 784)).astype(np.float32)).realize()
    Y = tg.Tensor((np.arange(64) * 7 % 10).astype(np.int32)).realize()
    ps = [_tinygrad_param(tg, r.standard_normal(sh) * sc) for sh, sc in
          (((128, 784), 0.03), ((128,), 0.0), ((10, 128), 0.1), ((10,), 0.0))]
    W1, b1, W2, b2 = ps
    opt = tg.nn.optim.SGD(ps, lr=0.1)

    def loss_fn():
        h = (X @ W1.T + b1).relu()
        return _tinygrad_cross_entropy(h @ W2.T + b2, Y)
    return _tinygrad_step(tg, opt, loss_fn)


def tinygrad_transformer(tg, d=64, heads=4, layers=2, T=32, B=8, vocab=64):
    import numpy as np
    nn = tg.nn
    data = (np.arange(B * (T + 1)) * 37 % vocab).reshape(B, T + 1).astype(np.int32)
    idx, tgt = tg.Tensor(data[:, :T]).realize(), tg.Tensor(data[:, 1:]).realize()
    tok, pos, ln, head = nn.Embedding(vocab, d), nn.Embedding(T, d), nn.LayerNorm(d), nn.Linear(d, vocab)
    blocks = [dict(ln1=nn.LayerNorm(d), ln2=nn.LayerNorm(d), qkv=nn.Linear(d, 3 * d), proj=nn.Linear(d, d),
                   fc=nn.Linear(d, 4 * d), out=nn.Linear(4 * d, d)) for _ in range(layers)]
    ar = tg.Tensor.arange(T).reshape(1, T).realize()

    def block(m, x):
        q, k, v = (z.reshape(B, T, heads, d // heads).transpose(1, 2) for z in m["qkv"](m["ln1"](x)).split(d, 2))
        y = q.scaled_dot_product_attention(k, v, is_causal=True)
        x = x + m["proj"](y.transpose(1, 2).reshape(B, T, d))
        return x + m["out"](m["fc"](m["ln2"](x)).gelu())

    def loss_fn():
        x = tok(idx) + pos(ar)
        for m in blocks:
            x = block(m, x)
        return _tinygrad_cross_entropy(head(ln(x)).reshape(-1, vocab), tgt.reshape(-1))
    params = tg.nn.state.get_parameters([tok, pos, ln, head] + [list(m.values()) for m in blocks])
    for p in params:
        p.requires_grad = True
    return _tinygrad_step(tg, tg.nn.optim.AdamW(params, lr=1e-3), loss_fn)


def tinygrad_poly(tg):
    import numpy as np
    x = tg.Tensor(np.linspace(-1, 1, 256, dtype=np.float32)).realize()
    y = (0.5 - 2 * x + 3 * x * x).realize()
    a, b, c = ps = [_tinygrad_param(tg, np.zeros(1)) for _ in range(3)]  # shape (1,): a 0-d one got no grad
    return _tinygrad_step(tg, tg.nn.optim.SGD(ps, lr=0.1), lambda: (a + b * x + c * x * x - y).pow(2).mean())


def _tinygrad_cross_entropy(logits, y):
    return -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()


def _tinygrad_param(tg, value):
    import numpy as np
    t = tg.Tensor(np.asarray(value, dtype=np.float32))
    t.requires_grad = True
    return t.realize()


def _tinygrad_step(tg, opt, loss_fn):
    @tg.TinyJit
    def step():
        with tg.Context(TRAINING=1):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            opt.step()
            return loss.realize()
    return step


TINYGRAD = {"mlp": tinygrad_mlp, "transformer": tinygrad_transformer, "poly": tinygrad_poly}
