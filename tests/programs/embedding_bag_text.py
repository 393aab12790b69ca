"""A bag-of-words text classifier as in PyTorch's text classification tutorial: nn.EmbeddingBag over
flattened token ids with offsets (mean), a Linear head, CrossEntropyLoss, SGD with StepLR; then the
sum, max, per_sample_weights and padding_idx forms. Token streams built by formula (no RNG)."""
import torch
import torch.nn as nn

VOCAB, CLASSES = 20, 3


def make_batch(step, n=6):
    """Class c: tokens drawn from its third of the vocabulary; each text a different length."""
    texts, labels = [], []
    for i in range(n):
        c = (i + step) % CLASSES
        length = 2 + (i * 3 + step) % 5
        texts.append(torch.tensor([1 + c * 6 + (i * 5 + j * 7 + step) % 6 for j in range(length)]))
        labels.append(c)
    offsets = torch.tensor([0] + [len(t) for t in texts[:-1]]).cumsum(0)
    return torch.cat(texts), offsets, torch.tensor(labels)


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.fc = nn.Linear(dim, classes)

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TextClassifier(VOCAB, 8, CLASSES)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(0.5 * torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p))
    model.to(device)
    print(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 3, gamma=0.5)
    for step in range(8):
        text, offsets, labels = (t.to(device) for t in make_batch(step))
        optimizer.zero_grad()
        out = model(text, offsets)
        loss = criterion(out, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        scheduler.step()
        acc = (out.argmax(1) == labels).float().mean().item()
        print(f"step {step} loss {loss.item():.5f} acc {acc:.3f} lr {scheduler.get_last_lr()[0]:.3f}")
    text, offsets, _ = (t.to(device) for t in make_batch(100))
    w = model.embedding.weight.detach()
    with torch.no_grad():
        for mode in ("sum", "max"):
            bag = nn.EmbeddingBag.from_pretrained(w, mode=mode)
            print(mode, [round(v, 4) for v in bag(text, offsets)[:2].flatten().tolist()])
        psw = torch.linspace(0.5, 1.5, text.numel(), device=device)
        bag = nn.EmbeddingBag.from_pretrained(w, mode="sum", padding_idx=7)
        print("weighted", [round(v, 4) for v in bag(text, offsets, per_sample_weights=psw)[:2].flatten().tolist()])
        fixed = nn.EmbeddingBag.from_pretrained(w, mode="mean")
        print("2d", [round(v, 4) for v in fixed(text[:12].view(3, 4))[:, :3].flatten().tolist()])


if __name__ == "__main__":
    main()
