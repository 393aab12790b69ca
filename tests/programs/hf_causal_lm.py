"""Hugging Face transformers, unchanged: GPT-2 and Llama causal LMs from small configs.

    python hf_causal_lm.py make DIR    # PyTorch: weights from a fixed seed, save_pretrained (safetensors) into DIR
    python hf_causal_lm.py run DIR [DEVICE]   # from_pretrained, forward with labels, generate, 3 AdamW steps,
                                              # save_pretrained / from_pretrained round trip; a JSON line per model
    python hf_causal_lm.py make+run DIR       # both, in one process

DEVICE defaults to the CUDA idiom's choice (a default device set with `--device` would ask transformers for
accelerate's device map, so the device is named here)."""
import json
import os
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

MODELS = {
    "gpt2": (GPT2LMHeadModel, lambda: GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                                 bos_token_id=1, eos_token_id=2)),
    "llama": (LlamaForCausalLM, lambda: LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                                                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                    max_position_embeddings=32, bos_token_id=1, eos_token_id=2)),
}
device = sys.argv[3] if len(sys.argv) > 3 else "cuda" if torch.cuda.is_available() else "cpu"


def rounded(t):
    return [round(v, 6) for v in t.detach().float().cpu().reshape(-1).tolist()]


def run(cls, path):
    model = cls.from_pretrained(path).to(device)
    ids = torch.tensor([[5, 17, 33, 12, 60, 41, 9, 88], [1, 2, 3, 4, 5, 6, 7, 8]], device=device)
    out = {}
    with torch.no_grad():
        r = model(ids, labels=ids)
    out["logits"], out["loss"] = rounded(r.logits), r.loss.item()
    prompt = ids[:1, :4]
    out["greedy"] = model.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=0).tolist()
    samples = []
    for _ in range(2):
        torch.manual_seed(0)
        samples.append(model.generate(prompt, max_new_tokens=6, do_sample=True, top_k=20, pad_token_id=0).tolist())
    out["samples"] = samples
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = model(ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out["train"] = losses
    model.eval()
    trained = os.path.join(path, "trained")
    model.save_pretrained(trained)
    back = cls.from_pretrained(trained).to(device)
    with torch.no_grad():
        logits = model(ids).logits
        out["trained_logits"] = rounded(logits)
        out["roundtrip"] = (back(ids).logits - logits).abs().max().item()
    return out


def main():
    mode, root = sys.argv[1:3]
    for name, (cls, config) in MODELS.items():
        path = os.path.join(root, name)
        if "make" in mode.split("+"):
            torch.manual_seed(0)
            cls(config()).save_pretrained(path)
        if "run" in mode.split("+"):
            print(json.dumps({"model": name, **run(cls, path)}))


if __name__ == "__main__":
    main()
