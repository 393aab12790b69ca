"""Hugging Face transformers, unchanged: GPT-2 and Llama causal LMs from small configs, in full; ten more
architectures (BERT, T5, OPT, GPT-NeoX, Mistral, Qwen2, Phi-3, Gemma, Mixtral, Qwen2-MoE) through a forward with
labels, its backward and a greedy generate.

    python hf_causal_lm.py make DIR    # PyTorch: weights from a fixed seed, save_pretrained (safetensors) into DIR
    python hf_causal_lm.py run DIR [DEVICE [MODEL...]]   # from_pretrained, forward with labels, generate,
                                    # 3 AdamW steps, save_pretrained / from_pretrained round trip (GPT-2, Llama);
                                    # a JSON line per model (all of them unless named)
    python hf_causal_lm.py make+run DIR [DEVICE]         # both, in one process

DEVICE defaults to the CUDA idiom's choice (a default device set with `--device` would ask transformers for
accelerate's device map, so the device is named here)."""
import json
import os
import sys

import torch
import transformers as T
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

MODELS = {
    "gpt2": (GPT2LMHeadModel, lambda: GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                                 bos_token_id=1, eos_token_id=2)),
    "llama": (LlamaForCausalLM, lambda: LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                                                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                    max_position_embeddings=32, bos_token_id=1, eos_token_id=2)),
}
SMALL = dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
MORE = {
    "bert": (T.BertForMaskedLM, lambda: T.BertConfig(**SMALL, hidden_dropout_prob=0.0,
                                                     attention_probs_dropout_prob=0.0)),
    "t5": (T.T5ForConditionalGeneration, lambda: T.T5Config(vocab_size=96, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                                            num_heads=4, dropout_rate=0.0, decoder_start_token_id=0)),
    "opt": (T.OPTForCausalLM, lambda: T.OPTConfig(vocab_size=96, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                                                  num_attention_heads=4, word_embed_proj_dim=32, dropout=0.0)),
    "gpt_neox": (T.GPTNeoXForCausalLM, lambda: T.GPTNeoXConfig(**SMALL)),
    "mistral": (T.MistralForCausalLM, lambda: T.MistralConfig(**SMALL, num_key_value_heads=2)),
    "qwen2": (T.Qwen2ForCausalLM, lambda: T.Qwen2Config(**SMALL, num_key_value_heads=2)),
    "phi3": (T.Phi3ForCausalLM, lambda: T.Phi3Config(**SMALL, pad_token_id=0)),
    "gemma": (T.GemmaForCausalLM, lambda: T.GemmaConfig(**SMALL, num_key_value_heads=2, head_dim=8)),
    "mixtral": (T.MixtralForCausalLM, lambda: T.MixtralConfig(**SMALL, num_key_value_heads=2, num_local_experts=4,
                                                              num_experts_per_tok=2)),
    "qwen2_moe": (T.Qwen2MoeForCausalLM, lambda: T.Qwen2MoeConfig(**SMALL, num_key_value_heads=2, num_experts=4,
                                                                  num_experts_per_tok=2, moe_intermediate_size=16,
                                                                  shared_expert_intermediate_size=16)),
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


def forward(name, cls, path):
    """A forward with labels, the gradient of its loss, and greedy ids (an encoder: its logits only)."""
    model = cls.from_pretrained(path).to(device)
    ids = torch.tensor([[5, 17, 33, 12, 60, 41, 9, 88]], device=device)
    r = model(ids, labels=ids, **({"decoder_input_ids": ids} if name == "t5" else {}))
    r.loss.backward()
    grad = torch.stack([p.grad.abs().sum() for p in model.parameters() if p.grad is not None]).sum().item()
    greedy = [] if name == "bert" else model.generate(ids[:, :4], max_new_tokens=3, do_sample=False).tolist()
    return {"logits": rounded(r.logits), "loss": r.loss.item(), "grad_abs_sum": grad, "greedy": greedy}


def main():
    mode, root = sys.argv[1:3]
    steps, names = mode.split("+"), sys.argv[4:] or [*MODELS, *MORE]
    for name, (cls, config) in {**MODELS, **MORE}.items():
        path = os.path.join(root, name)
        if name not in names:
            continue
        if "make" in steps:
            torch.manual_seed(0)
            cls(config()).save_pretrained(path)
        if "run" in steps:
            result = run(cls, path) if name in MODELS else forward(name, cls, path)
            print(json.dumps({"model": name, **result}))


if __name__ == "__main__":
    main()
