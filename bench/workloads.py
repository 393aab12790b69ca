# The three training workloads of issue #12, written against PyTorch's API only, so the same text
# runs on webtorch (natively: bench/steps.py; in Pyodide: bench/browser/webtorch_bench.py, which
# prepends this file) and on PyTorch. Each builder returns `step()`: one training step that
# returns the loss tensor without reading it (a readback is the caller's choice).
#   mlp          784-128-10, batch 64, nn.Linear/ReLU, F.cross_entropy, SGD lr 0.1
#   transformer  a tiny causal Transformer (GPT-style pre-norm blocks): 2 layers, d=64, 4 heads,
#                T=32, B=8, vocab 64, F.scaled_dot_product_attention(is_causal=True), AdamW
#   poly         y = a + b x + c x^2 fit to 256 points with SGD: 3 parameters, many tiny ops
#                (the loop runs POLY_STEPS of them)
POLY_STEPS = 2000


def build_mlp(torch, dev):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 784).to(dev)
    y = (torch.arange(64) * 7 % 10).to(dev)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def build_transformer(torch, dev, d=64, heads=4, layers=2, T=32, B=8, vocab=64):
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
    model = GPT().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = (torch.arange(B * (T + 1)) * 37 % vocab).view(B, T + 1)
    idx, tgt = data[:, :T].to(dev), data[:, 1:].to(dev)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).view(-1, vocab), tgt.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    return step


def build_poly(torch, dev):
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
