"""Hugging Face transformers, unchanged, with webtorch as `torch` (`python -m webtorch`).

tests/programs/hf_causal_lm.py builds GPT-2 and Llama causal LMs from small configs with PyTorch (fixed seed,
`save_pretrained`: safetensors), then runs `from_pretrained`, a forward with labels, greedy and sampled
`generate`, 3 AdamW steps and a `save_pretrained` / `from_pretrained` round trip: once with PyTorch, once with
webtorch on cpu and once on webgpu. Logits, losses and greedy token ids must be PyTorch's. Ten more architectures
(BERT, T5, OPT, GPT-NeoX, Mistral, Qwen2, Phi-3, Gemma, Mixtral, Qwen2-MoE: its experts are a torch.library custom
op with a registered backward) run a forward with labels, its backward and a greedy
generate on cpu, and all but the two MoE models on webgpu too (5 s of lavapipe in the one process).

Sampled ids on cpu are PyTorch's: the cpu device draws PyTorch's CPU stream (mt19937) and multinomial's
exponential_ trick. On webgpu (a Philox stream, as PyTorch's CUDA) a sampled run is checked against itself
(re-seeding draws the same ids).
USE_HUB_KERNELS=NO (transformers' switch) in every run: the `kernels` package that transformers installs validates
device types and knows no "webgpu"."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("transformers", reason="transformers is not installed (the test extra in pyproject pins it)")
from safetensors.numpy import load_file  # noqa: E402  (installed with transformers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "programs", "hf_causal_lm.py")
ATOL = 1e-4  # float32 logits and losses, also after 3 AdamW steps (measured: at most 4e-6 apart)


def _run(args, webtorch):
    env = {**os.environ, "USE_HUB_KERNELS": "NO", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    env.pop("PYTHONPATH", None)
    if webtorch:
        env["PYTHONPATH"] = os.path.join(ROOT, "py")
    argv = ["-m", "webtorch", PROGRAM] if webtorch else [PROGRAM]
    r = subprocess.run([sys.executable, *argv, *args], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return {d["model"]: d for d in map(json.loads, r.stdout.splitlines())}


@pytest.fixture(scope="module")
def pytorch(tmp_path_factory):
    """The weights PyTorch made (a directory per model) and what PyTorch's run of the program printed."""
    root = tmp_path_factory.mktemp("hf")
    return root, _run(["make+run", str(root / "weights"), "cpu"], webtorch=False)


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=ATOL)


# on webgpu: the MoE models' expert routing (transformers' grouped_mm path off cpu) is not checked there
WEBGPU = ["gpt2", "llama", "bert", "t5", "opt", "gpt_neox", "mistral", "qwen2", "phi3", "gemma"]


@pytest.mark.parametrize("dev", ["cpu", "webgpu"])
def test_transformers_print_pytorchs_numbers(pytorch, dev, request):
    if dev == "webgpu":
        request.getfixturevalue("webgpu")
    root, want = pytorch
    run_dir = root / f"webtorch-{dev}"
    shutil.copytree(root / "weights", run_dir, ignore=shutil.ignore_patterns("trained"))  # PyTorch's, compared below
    got = _run(["run", str(run_dir), dev, *(WEBGPU if dev == "webgpu" else [])], webtorch=True)
    assert sorted(got) == sorted(WEBGPU if dev == "webgpu" else want)
    for name, g in got.items():
        w = want[name]
        _close(g["logits"], w["logits"])
        _close(g["loss"], w["loss"])
        assert g["greedy"] == w["greedy"], name
        if "grad_abs_sum" in w:
            np.testing.assert_allclose(g["grad_abs_sum"], w["grad_abs_sum"], rtol=1e-5)
            continue
        assert g["samples"][0] == g["samples"][1] and len(g["samples"][0][0]) == len(w["samples"][0][0]), name
        if dev == "cpu":
            assert g["samples"] == w["samples"], name
        _close(g["train"], w["train"])
        _close(g["trained_logits"], w["trained_logits"])
        assert g["roundtrip"] == 0.0, name
        # the file webtorch's save_pretrained wrote holds PyTorch's trained weights, under PyTorch's names
        mine = load_file(str(run_dir / name / "trained" / "model.safetensors"))
        theirs = load_file(str(root / "weights" / name / "trained" / "model.safetensors"))
        assert sorted(mine) == sorted(theirs), name
        for k in theirs:
            assert mine[k].dtype == theirs[k].dtype and mine[k].shape == theirs[k].shape, k
            _close(mine[k], theirs[k])


def test_flex_attention_llama_prints_pytorchs_numbers():
    """attn_implementation="flex_attention": webtorch's flex_attention (eager semantics) gives the logits and greedy
    ids of PyTorch's eager flex_attention (TORCHDYNAMO_DISABLE=1: the torch.compile transformers wraps it in compiles,
    on PyTorch's CPU, a kernel whose rows after fully masked (left-padded) rows are NaN)."""
    program = os.path.join(ROOT, "tests", "programs", "hf_flex_attention.py")
    started = []
    for webtorch in (False, True):  # side by side
        env = {**os.environ, "USE_HUB_KERNELS": "NO", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error",
               "TORCHDYNAMO_DISABLE": "1"}
        env.pop("PYTHONPATH", None)
        if webtorch:
            env["PYTHONPATH"] = os.path.join(ROOT, "py")
        argv = ["-m", "webtorch", program] if webtorch else [program]
        started.append(subprocess.Popen([sys.executable, *argv, "cpu"], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True))
    runs = []
    for r in started:
        out, err = r.communicate(timeout=600)
        assert r.returncode == 0, err[-4000:]
        runs.append(json.loads(out))
    want, got = runs
    assert got["impl"] == want["impl"] == "flex_attention" and got["greedy"] == want["greedy"]
    _close(got["logits"], want["logits"])

