"""A tiny causal Transformer language model on a repeating token pattern: nn.TransformerEncoder
with generate_square_subsequent_mask and a padding mask, sinusoidal positions, weight tying,
AdamW with a warm-up then cosine-restarts schedule (SequentialLR of LinearLR and
CosineAnnealingWarmRestarts), label smoothing. No dropout and no RNG: weights by formula."""
import math
import sys

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(0)]


class TransformerLM(nn.Module):
    def __init__(self, ntoken, d_model=16, nhead=2, d_hid=32, nlayers=2):
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout=0.0, activation="gelu", norm_first=True)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.linear = nn.Linear(d_model, ntoken)
        self.linear.weight = self.embedding.weight          # tied

    def forward(self, src, src_mask=None, padding_mask=None):
        x = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
        x = self.transformer_encoder(x, src_mask, src_key_padding_mask=padding_mask, is_causal=src_mask is not None)
        return self.linear(x)


def init_weights(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if name.endswith("bias"):
                p.zero_()
            elif "norm" in name:
                p.fill_(1.0)
            else:
                p.copy_(0.25 * torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 1.37 + i).view_as(p))


def main():
    ntoken, seq_len, batch = 7, 10, 4
    pattern = torch.tensor([1, 2, 3, 4, 5, 6, 3, 2])
    stream = pattern.repeat(8)
    starts = torch.arange(batch) * 3
    data = torch.stack([stream[s:s + seq_len + 1] for s in starts.tolist()], dim=1)   # (T+1, B)
    src, tgt = data[:-1], data[1:]
    padded = torch.zeros(batch, seq_len, dtype=torch.bool)
    padded[-1, -2:] = True                                         # last sequence is shorter
    padding_mask = torch.zeros(batch, seq_len).masked_fill(padded, float("-inf"))
    tgt = tgt.masked_fill(padded.t(), 0)

    model = TransformerLM(ntoken)
    init_weights(model)
    print(sum(p.numel() for p in model.parameters()), "parameters")
    mask = nn.Transformer.generate_square_subsequent_mask(seq_len)
    print(mask[:3, :3].tolist())
    criterion = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.05)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=3)
    restarts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=4, T_mult=2, eta_min=1e-3)
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, restarts], milestones=[3])
    model.train()
    for step in range(12):
        optimizer.zero_grad()
        logits = model(src, mask, padding_mask)
        loss = criterion(logits.view(-1, ntoken), tgt.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        scheduler.step()
        if step % 3 == 2:
            print(f"step {step + 1:2d} | loss {loss.item():.4f} | ppl {math.exp(loss.item()):7.3f} | "
                  f"lr {scheduler.get_last_lr()[0]:.5f}")
    model.eval()
    with torch.no_grad():
        out = model(src, mask, padding_mask)
        pred = out.argmax(-1)
        acc = (pred == tgt)[tgt != 0].float().mean().item()
        print("accuracy %.3f" % acc)
        print("next tokens", pred[:, 0].tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
