"""A small CTC sequence labeller (speech-recognition style): a 1-D convolution and a GRU over
feature frames, log_softmax over classes with blank 0, nn.CTCLoss with per-sample input and target
lengths (padded and concatenated target forms), Adam, greedy decoding. Frames built by formula (no
RNG)."""
import torch
import torch.nn as nn

CLASSES, FEATS = 5, 4


def make_batch():
    """Each label k is voiced as two frames with a bump in feature k % FEATS; silence between."""
    labels = [[1, 2, 3], [4, 4], [2, 1, 4, 3], [3]]
    frames, inputs, lengths = 14, [], []
    for b, seq in enumerate(labels):
        x = torch.zeros(frames, FEATS)
        t = 1
        for k in seq:
            x[t:t + 2, k % FEATS] = 1.0 + 0.1 * k
            x[t:t + 2, (k + 1) % FEATS] = 0.3
            t += 3
        inputs.append(x + 0.05 * torch.cos(torch.arange(frames * FEATS, dtype=torch.float32) + b).view(frames, FEATS))
        lengths.append(max(t, 6))
    targets = torch.zeros(len(labels), 4, dtype=torch.long)
    for b, seq in enumerate(labels):
        targets[b, :len(seq)] = torch.tensor(seq)
    return torch.stack(inputs), targets, torch.tensor(lengths), torch.tensor([len(s) for s in labels])


class CTCModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEATS, 8, 3, padding=1)
        self.gru = nn.GRU(8, 12, batch_first=True)
        self.out = nn.Linear(12, CLASSES)

    def forward(self, x):  # (N, T, F) -> (T, N, C) log-probabilities
        h = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        h, _ = self.gru(h)
        return self.out(h).log_softmax(2).transpose(0, 1)


def greedy(log_probs, lengths):
    best = log_probs.argmax(2).t().tolist()
    out = []
    for seq, n in zip(best, lengths.tolist()):
        dec, prev = [], 0
        for k in seq[:n]:
            if k != prev and k != 0:
                dec.append(k)
            prev = k
        out.append(dec)
    return out


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, targets, in_lens, tgt_lens = (t.to(device) for t in make_batch())
    model = CTCModel()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.35 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.47 + i).view_as(p))
    model.to(device)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    for step in range(10):
        optimizer.zero_grad()
        log_probs = model(x)
        loss = ctc(log_probs, targets, in_lens, tgt_lens)
        loss.backward()
        optimizer.step()
        print(f"step {step} ctc {loss.item():.5f}")
    with torch.no_grad():
        log_probs = model(x)
        flat = torch.cat([targets[b, :n] for b, n in enumerate(tgt_lens.tolist())])
        per_sample = nn.functional.ctc_loss(log_probs, flat, in_lens, tgt_lens, reduction="none")
        print("per sample", [round(v, 4) for v in per_sample.tolist()])
        print("sum", round(nn.CTCLoss(reduction="sum")(log_probs, targets, in_lens, tgt_lens).item(), 4))
        print("decoded", greedy(log_probs, in_lens))


if __name__ == "__main__":
    main()
