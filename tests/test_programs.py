"""Unmodified PyTorch programs (tests/programs/) run under `python -m webtorch` print PyTorch's
numbers: each runs once with real python + torch and with webtorch on `--device cpu` and
`--device webgpu`; the text must match exactly apart from numbers, which must match within
tolerance. The programs use no random values (the cpu device draws PyTorch's numbers, webgpu's Philox
stream does not).

To add a program (an LSTM, a Transformer, a new optimizer...), drop it in tests/programs/ and add
a `Program` to PROGRAMS. Also here: what `python -m webtorch` promises a script (argv, __main__,
its own traceback, its exit status) and the `webtorch-run` entry point."""
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from _printout import assert_same_printout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "programs")


@dataclass(frozen=True)
class Program:
    script: str
    args: tuple = ()
    rtol: float = 1e-3
    atol: float = 1e-3
    devices: tuple = ("cpu", "webgpu")  # cpu only: a program drawing PyTorch's random streams

    def __str__(self):
        return self.script


PROGRAMS = [
    Program("mlp_regression.py", ("--epochs", "4")),       # torch.cuda idiom, DataParallel, StepLR
    Program("cnn_classifier.py"),                          # torch.accelerator, in-place ReLU after conv
    Program("manual_sgd.py", ("20",)),                     # .data updates, size=, range indexing
    Program("seq_classifier.py"),                          # bi-LSTM over pack_padded_sequence, GRU, ReduceLROnPlateau
    Program("tiny_transformer.py"),                        # TransformerEncoder + causal mask, AdamW, SequentialLR
    Program("resume_checkpoint.py"),                       # Conv3d/BatchNorm3d, OneCycleLR, save/load resume
    Program("sparse_gcn.py"),                              # sparse COO adjacency, torch.sparse.mm, early stopping
    Program("compiled_gpt.py"),                            # nanoGPT: torch.compile(model), grad accumulation, checkpoint
    Program("compile_config.py"),                          # torch.compile's config knobs, set_stance, graph_break
    Program("actor_critic.py", ("--episodes", "3")),       # RL: Categorical log_prob/entropy, smooth_l1, a CartPole
    Program("vae.py", ("--epochs", "3")),                  # VAE: Independent(Normal), Bernoulli, kl_divergence
    Program("cuda_checkpoint.py"),                         # "cuda" if available (the alias), torch.save(model) resumed
    Program("per_sample_grads.py"),                        # torch.func: vmap(grad(...)) + functional_call, DP-SGD clip
    Program("model_ensemble.py"),                          # torch.func: stack_module_state + functional_call ensemble
    Program("spatial_transformer.py"),                     # affine_grid + grid_sample (3 modes/paddings), SGD
    Program("weightnorm_gan.py"),                          # parametrizations weight/spectral norm, weight_norm hook
    Program("embedding_bag_text.py"),                      # EmbeddingBag with offsets, sum/max/weighted, StepLR
    Program("ctc_model.py"),                               # Conv1d + GRU + CTCLoss, padded and flat targets
    Program("forward_forward.py"),                         # nn.Linear subclass overriding train(), torch.xpu probe
    Program("graph_attention.py"),                         # GAT: where-masked attention, sparse int64 COO + eye
    Program("mass_spring.py"),                             # physics: in-place slice writes on non-leaf tensors
    Program("rnn_digits.py", devices=("cpu",)),            # LSTM + Dropout2d on 2-D input, Adadelta, shuffled loader
]

def _run(argv, webtorch):
    env = dict(os.environ)
    if webtorch:
        env["PYTHONPATH"] = os.path.join(ROOT, "py")
    else:
        env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, *argv], cwd=HERE, env=env, capture_output=True, text=True, timeout=300)


_torch_out = {}


def _torch_stdout(prog):
    if prog not in _torch_out:
        r = _run([prog.script, *prog.args], webtorch=False)
        assert r.returncode == 0, r.stderr
        _torch_out[prog] = r.stdout
    return _torch_out[prog]


@pytest.mark.parametrize("dev", ["cpu", "webgpu"])
@pytest.mark.parametrize("prog", PROGRAMS, ids=str)
def test_program_prints_pytorchs_numbers(prog, dev, request):
    if dev not in prog.devices:
        pytest.skip(f"{prog} draws PyTorch's random numbers: cpu only")
    if dev == "webgpu":
        request.getfixturevalue("webgpu")
    r = _run(["-m", "webtorch", "--device", dev, prog.script, *prog.args], webtorch=True)
    assert r.returncode == 0, r.stderr
    assert_same_printout(r.stdout, _torch_stdout(prog), prog.rtol, prog.atol)


def test_script_sees_its_own_argv_name_and_traceback(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, torch\n"
        "print(sys.argv, __name__, torch.get_default_device())\n"
        "import helper\n"  # the script's directory is first on sys.path
        "def boom():\n"
        "    raise ValueError('bad ' + helper.WORD)\n"
        "boom()\n")
    (tmp_path / "helper.py").write_text("WORD = 'input'\n")
    r = _run(["-m", "webtorch", "--device", "cpu", str(script), "a", "--flag"], webtorch=True)
    assert r.returncode == 1
    assert r.stdout == f"[{str(script)!r}, 'a', '--flag'] __main__ cpu\n"
    err = r.stderr
    assert err.startswith("Traceback (most recent call last):\n"), err
    assert f'File "{script}", line 6, in <module>' in err and f'File "{script}", line 5, in boom' in err
    assert "raise ValueError('bad ' + helper.WORD)" in err and err.endswith("ValueError: bad input\n")
    assert "runpy" not in err and "__main__.py" not in err, err


def test_traceback_hides_webtorchs_frames(tmp_path, monkeypatch):
    """As PyTorch users see it: the script's frame and the error; webtorch's frames only on request."""
    script = tmp_path / "shapes.py"
    script.write_text("import torch\nlin = torch.nn.Linear(4, 3)\nlin(torch.randn(2, 5))\n")
    r = _run(["-m", "webtorch", "--device", "cpu", str(script)], webtorch=True)
    assert r.returncode == 1 and r.stderr.count('File "') == 1 and f'File "{script}", line 3' in r.stderr, r.stderr
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)\n(" in r.stderr, r.stderr
    assert r.stderr.rstrip().endswith("frames inside webtorch hidden; WEBTORCH_FULL_TRACEBACK=1 shows them)")
    monkeypatch.setenv("WEBTORCH_FULL_TRACEBACK", "1")
    r = _run(["-m", "webtorch", "--device", "cpu", str(script)], webtorch=True)
    assert r.stderr.count('File "') > 3 and "webtorch/nn/" in r.stderr and "hidden" not in r.stderr, r.stderr


def test_exit_status_and_usage():
    r = _run(["-m", "webtorch", "manual_sgd.py", "6", "--fail-above", "0.0"], webtorch=True)
    assert r.returncode == 3 and r.stderr == "loss too high\n"
    r = _run(["-m", "webtorch"], webtorch=True)
    assert r.returncode == 1 and "usage: python -m webtorch [--device {cpu,webgpu}] [--no-cuda-alias] SCRIPT.py [ARGS...]" in r.stderr
    r = _run(["-m", "webtorch", "--devcie", "webgpu", "x.py"], webtorch=True)
    assert r.returncode == 1 and "unknown option '--devcie'" in r.stderr
    r = _run(["-m", "webtorch", "--device", "cuda", "manual_sgd.py", "1"], webtorch=True)
    assert r.returncode == 1 and r.stderr.startswith("webtorch: --device cuda: webtorch has no CUDA backend")


def test_webtorch_run_entry_point():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["webtorch-run"] == "webtorch.__main__:main"
    from webtorch.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["--device"])
    assert e.value.code.startswith("usage:")


def test_device_cpu_hides_the_accelerator(tmp_path):
    """`--device cpu` is a CPU-only machine for the script: PyTorch's device choice through torch.accelerator
    (pytorch/examples' gat, mnist) gives cpu, and so the cpu's random streams (PyTorch's numbers)."""
    script = tmp_path / "acc.py"
    script.write_text("import torch\n"
                      "use_accel = torch.accelerator.is_available()\n"
                      "print(use_accel, torch.accelerator.current_accelerator(), torch.accelerator.device_count())\n")
    r = _run(["-m", "webtorch", "--device", "cpu", str(script)], webtorch=True)
    assert r.returncode == 0 and r.stdout == "False None 0\n", r.stderr
