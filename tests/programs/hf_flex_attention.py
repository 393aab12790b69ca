"""A Llama causal LM with attn_implementation="flex_attention" (transformers builds its causal and padding masks
as a BlockMask with create_block_mask and calls torch.compile(flex_attention)): logits of a left-padded batch and
greedy ids, as a JSON line.

    python hf_flex_attention.py [DEVICE [ATTN_IMPLEMENTATION]]"""
import json
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=32, bos_token_id=1, eos_token_id=2)
config._attn_implementation = "flex_attention" if len(sys.argv) < 3 else sys.argv[2]
model = LlamaForCausalLM(config)
with torch.no_grad():  # the same weights in both libraries
    for i, p in enumerate(model.parameters()):
        p.copy_((torch.arange(p.numel()) * 0.37 + i).sin().reshape(p.shape) * 0.2 + (1.0 if p.dim() == 1 else 0.0))
model.to(device).eval()
ids = torch.tensor([[5, 17, 33, 12, 60, 41, 9, 88], [1, 2, 3, 4, 5, 6, 7, 8]], device=device)
mask = torch.tensor([[1] * 8, [0, 0] + [1] * 6], device=device)
with torch.no_grad():
    logits = model(ids, attention_mask=mask).logits
    greedy = model.generate(ids[:1, :4], max_new_tokens=4, do_sample=False, pad_token_id=0).tolist()
print(json.dumps({"logits": [round(v, 6) for v in logits.float().cpu().reshape(-1).tolist()], "greedy": greedy,
                  "impl": model.config._attn_implementation}))
