"""Variable-length sequence classification: Embedding + bidirectional 2-layer LSTM over a
pack_padded_sequence batch, a GRU head over pad_packed_sequence's output, gradient clipping,
Adam with ReduceLROnPlateau. Sequences are built by formula (no RNG)."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

VOCAB, PAD = 12, 0


def make_data():
    """Class 1: the sequence rises more often than it falls."""
    seqs, labels = [], []
    for i in range(16):
        n = 3 + (i * 5) % 6
        s = [1 + (i * 7 + j * (3 if i % 2 else 8)) % (VOCAB - 1) for j in range(n)]
        seqs.append(torch.tensor(s))
        labels.append(int(sum(b > a for a, b in zip(s, s[1:])) * 2 > len(s) - 1))
    return seqs, torch.tensor(labels)


class SeqClassifier(nn.Module):
    def __init__(self, vocab, emb=6, hidden=8, classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        padded, out_lengths = pad_packed_sequence(out, batch_first=True)
        _, h_gru = self.gru(padded)
        return self.fc(h_gru[-1]), out_lengths


def init_weights(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            p.copy_(0.4 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i).view_as(p))


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    seqs, labels = make_data()
    lengths = torch.tensor([len(s) for s in seqs])
    tokens = pad_sequence(seqs, batch_first=True, padding_value=PAD)
    print("batch", tuple(tokens.shape), "lengths", lengths.tolist())

    model = SeqClassifier(VOCAB).to(device)
    init_weights(model)
    print(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)
    tokens, labels = tokens.to(device), labels.to(device)
    for epoch in range(6):
        model.train()
        for start in range(0, len(seqs), 8):
            optimizer.zero_grad()
            logits, _ = model(tokens[start:start + 8], lengths[start:start + 8])
            loss = F.cross_entropy(logits, labels[start:start + 8])
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
        model.eval()
        with torch.no_grad():
            logits, out_lengths = model(tokens, lengths)
            val = F.cross_entropy(logits, labels).item()
        scheduler.step(val)
        acc = (logits.argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch} loss {val:.4f} acc {acc:.3f} grad_norm {norm.item():.4f} "
              f"lr {optimizer.param_groups[0]['lr']:.4f}")
    print("out lengths", out_lengths.tolist())
    print("probs", [round(p, 4) for p in logits.softmax(1)[:, 1].tolist()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
