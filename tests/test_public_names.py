"""webtorch's public names against the installed PyTorch's, module by module (issue #22).

A module's public names are its `__all__` when it has one, else `dir()` without underscores, less
the modules and the helpers it imports from outside torch (`Optional`, `Callable`, `math`, ...),
as PyTorch's own test_public_bindings does. A name PyTorch has and webtorch lacks must be in one
of two tables:

  EXCLUDED  families left out for good, each with its reason (patterns);
  PENDING   names an open issue will add (`tests/_public_names_pending.py`, per module and issue).

The test fails on a new gap and on a stale entry (an excluded pattern or a pending name that
webtorch has, or that PyTorch does not). Regenerate PENDING from the current state in one command:

    PYTHONPATH=py python tests/test_public_names.py > tests/_public_names_pending.py
"""
import fnmatch
import importlib
import re
import types
import warnings

import pytest

torch = pytest.importorskip("torch") if __name__ != "__main__" else importlib.import_module("torch")

import webtorch  # noqa: E402

_BACKENDS = ["cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps", "nnpack",
             "openmp", "opt_einsum", "python_native", "quantized", "xeon", "xnnpack"]
MODULES = (["", "Tensor", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.parametrize",
            "nn.utils.parametrizations", "nn.utils.rnn", "nn.utils.stateless", "optim", "utils.data",
            "utils.checkpoint", "autograd", "accelerator", "cuda", "backends"]
           + ["backends." + b for b in _BACKENDS]
           + ["serialization", "types", "random", "amp", "compiler", "export", "onnx", "jit", "linalg", "fft",
              "special", "signal.windows", "masked", "distributions", "func", "autograd.forward_ad",
              "autograd.functional", "fx", "utils._pytree", "distributed", "profiler", "autograd.profiler", "hub",
              "multiprocessing", "nested", "sparse", "library", "testing", "utils", "utils.hooks", "utils.model_zoo",
              "utils.cpp_extension", "utils.benchmark"])

_QUANT = "quantized tensors and their kernels (FBGEMM/QNNPACK internals): webtorch has no quantized dtypes"
_TS_IR = "TorchScript's C++ IR, compiler and interpreter types: webtorch traces to Python, no TorchScript IR"
_DISPATCH = "the C++ dispatcher's internals (dispatch keys, operator registry, C++ loggers and benchmarks)"
_VENDOR = "a vendor kernel library's entry point (cuDNN, MIOpen, oneDNN, FBGEMM): no such library here"
_CALLGRIND = "Valgrind/Callgrind instruction counts of PyTorch's C++ runtime: webtorch has no C++ runtime"
_SEMI = "2:4 semi-structured sparsity: NVIDIA's cuSPARSELt / CUTLASS kernels, no such library here"
_VENDOR_MOD = "a vendor library's switches (ROCm, cuSPARSELt, KleidiAI, Xeon, XNNPACK, NNPACK, python DSLs)"
# (module, fnmatch pattern, reason): PyTorch names webtorch leaves out for good
EXCLUDED = [
    ("testing", "FileCheck", _TS_IR),
    ("", "cudnn_*", _VENDOR), ("", "miopen_*", _VENDOR), ("", "mkldnn_*", _VENDOR), ("", "fbgemm_*", _VENDOR),
    ("", "quantized_*", _QUANT), ("", "q_*", _QUANT), ("", "quantize_per_*", _QUANT), ("", "dequantize", _QUANT),
    ("", "int_repr", _QUANT), ("", "qscheme", _QUANT),
    ("", "choose_qparams_optimized", _QUANT), ("", "fake_quantize_*", _QUANT),
    ("", "fused_moving_avg_obs_fake_quant", _QUANT), ("", "empty_quantized", _QUANT),
    ("", "*Type", _TS_IR), ("", "Type", _TS_IR), ("", "parse_ir", _TS_IR), ("", "parse_schema", _TS_IR),
    ("", "parse_type_comment", _TS_IR), ("", "merge_type_from_type_comment", _TS_IR),
    ("", "import_ir_module*", _TS_IR), ("", "unify_type_list", _TS_IR), ("", "Script*", _TS_IR),
    ("", "LiteScriptModule", _TS_IR), ("", "ConcreteModuleType*", _TS_IR), ("", "CompilationUnit", _TS_IR),
    ("", "FunctionSchema", _TS_IR), ("", "Argument", _TS_IR), ("", "*ArgumentSpec", _TS_IR),
    ("", "Graph", _TS_IR), ("", "Block", _TS_IR), ("", "Node", _TS_IR), ("", "Value", _TS_IR), ("", "Use", _TS_IR),
    ("", "Code", _TS_IR), ("", "Gradient", _TS_IR), ("", "GraphExecutorState", _TS_IR), ("", "ExecutionPlan", _TS_IR),
    ("", "StaticModule", _TS_IR), ("", "ErrorReport", _TS_IR), ("", "FileCheck", _TS_IR), ("", "CallStack", _TS_IR),
    ("", "AliasDb", _TS_IR), ("", "IODescriptor", _TS_IR), ("", "InferredType", _TS_IR), ("", "TracingState", _TS_IR),
    ("", "DeepCopyMemoTable", _TS_IR), ("", "JITException", _TS_IR), ("", "cpp", _TS_IR),
    ("", "DispatchKey*", _DISPATCH), ("", "ExcludeDispatchKeyGuard", _DISPATCH), ("", "OperatorInfo", _DISPATCH),
    ("", "Tag", _DISPATCH), ("", "AggregationType", _DISPATCH), ("", "SUM", _DISPATCH), ("", "AVG", _DISPATCH),
    ("", "LockingLogger", _DISPATCH), ("", "NoopLogger", _DISPATCH), ("", "ThroughputBenchmark", _DISPATCH),
    ("", "Benchmark*", _DISPATCH),
    ("Tensor", "q_*", _QUANT), ("Tensor", "int_repr", _QUANT), ("Tensor", "dequantize", _QUANT),
    ("Tensor", "qscheme", _QUANT), ("Tensor", "to_mkldnn", _VENDOR),
    ("nn.functional", "BroadcastingList*", "TorchScript's type annotations"),
    ("nn.functional", "TYPE_CHECKING", "typing's flag, imported into the namespace"),
    ("library", "get_kernel", _DISPATCH),
    ("utils.benchmark", "*Callgrind*", _CALLGRIND), ("utils.benchmark", "FunctionCount*", _CALLGRIND),
    ("sparse", "SparseSemiStructured*", _SEMI), ("sparse", "to_sparse_semi_structured", _SEMI),
    ("sparse", "solve", "in PyTorch's torch.sparse.__all__ but not defined there (reading it raises AttributeError)"),
    ("utils", "cmake_prefix_path", "the path of PyTorch's CMake files for C++ builds: webtorch has no C++ library"),
    ("utils.hooks", "BackwardHook", "nn.Module's full backward hooks run on PyTorch's C++ BackwardHookFunction nodes; "
                                    "webtorch's Module implements them without this helper class"),
    ("autograd.profiler", "parse_nvprof_trace", "reads CUDA's nvprof SQLite output: webtorch has no CUDA"),
    ("autograd.profiler", "load_nvprof", "reads CUDA's nvprof SQLite output: webtorch has no CUDA"),
] + [("backends.xnnpack", "*", _VENDOR_MOD)] + [
    ("backends.python_native", p, _VENDOR_MOD) for p in ("cutedsl", "triton", "*dispatch_keys", "*operation*",
                                                         "is_dsl_disabled")]

# the issue a gap belongs to: by module, and within torch / Tensor by name (the numerics and transforms families)
MODULE_ISSUE = {"linalg": 24, "fft": 24, "special": 24, "signal.windows": 24, "masked": 24, "distributions": 25,
                "func": 25, "autograd.forward_ad": 25, "autograd.functional": 25}
NAME_ISSUE = [(24, r"(linalg_.*|det|logdet|slogdet|inverse|pinverse|svd|qr|lu.*|cholesky.*|triangular_solve|geqrf|orgqr"
                   r"|ormqr|matrix_exp|matrix_power|lobpcg|nuclear_norm|frobenius_norm|chain_matmul|eig|symeig|lstsq"
                   r"|solve|complex.*|c(double|float|half)|chalf|view_as_(real|complex).*|polar|angle|real|imag"
                   r"|conj.*|resolve_(conj|neg)|is_(conj|neg)|stft|istft|fft_.*|lgamma_?|digamma_?|polygamma_?"
                   r"|mvlgamma_?|igamma.*|special_.*|.*_window)"),
              (25, r"(poisson|binomial|_standard_gamma|_sample_dirichlet|vmap)")]


def _torch_module(name):
    return torch.Tensor if name == "Tensor" else importlib.import_module("torch" + ("." + name if name else ""))


def _webtorch_module(name):
    if name == "Tensor":
        return webtorch.Tensor
    try:
        return importlib.import_module("webtorch" + ("." + name if name else ""))
    except ImportError:
        return None


def _imported_helper(obj):
    """A module, or an object a module imported from outside torch (typing, builtins, math, ...)."""
    if isinstance(obj, types.ModuleType):
        return True
    mod = getattr(obj, "__module__", None)
    return isinstance(mod, str) and not isinstance(obj, type(torch.float32)) and not mod.startswith("torch")


def public_names(name):
    m = _torch_module(name)
    names = getattr(m, "__all__", None) if name != "Tensor" else None
    if names is None:
        names = set(dir(m))
        if isinstance(m, types.ModuleType) and type(m) is not types.ModuleType:  # a module subclass (cudnn)
            names |= set(dir(type(m))) - set(dir(types.ModuleType))
        with warnings.catch_warnings():  # a deprecated attribute warns when read (distributed.reduce_op)
            warnings.simplefilter("ignore")
            names = {n for n in names if not _imported_helper(getattr(m, n, None))}
    return {n for n in names if not n.startswith("_")}


def _excluded(name, n):
    return any(m == name and fnmatch.fnmatchcase(n, p) for m, p, _ in EXCLUDED)


def gaps(name):
    """PyTorch's public names of module `name` that webtorch lacks and does not exclude."""
    wm = _webtorch_module(name)
    return sorted(n for n in public_names(name) if not _excluded(name, n) and (wm is None or not hasattr(wm, n)))


def issue_of(name, n):
    if name in ("", "Tensor"):
        return next((i for i, pat in NAME_ISSUE if re.fullmatch(pat, n)), 22)
    return MODULE_ISSUE.get(name, 22)


def pending_table():
    table = {}
    for name in MODULES:
        for n in gaps(name):
            table.setdefault(name, {}).setdefault(issue_of(name, n), []).append(n)
    return table


def _pending():
    from _public_names_pending import PENDING  # not at the top: regenerating truncates it first
    return PENDING


@pytest.mark.parametrize("name", MODULES, ids=lambda n: n or "torch")
def test_public_names(name):
    listed = {n for names in _pending().get(name, {}).values() for n in names.split()}
    missing = set(gaps(name))
    assert not missing - listed, f"torch.{name}: names in neither EXCLUDED nor PENDING: {sorted(missing - listed)}"
    stale = listed - missing
    assert not stale, f"torch.{name}: stale PENDING names (webtorch has them, or PyTorch does not): {sorted(stale)}"


def test_no_stale_exclusion():
    stale = []
    for m, p, _ in EXCLUDED:
        hits = [n for n in public_names(m) if fnmatch.fnmatchcase(n, p)]
        wm = _webtorch_module(m)
        if not hits or (wm is not None and any(hasattr(wm, n) for n in hits)):
            stale.append((m, p))
    assert not stale, f"EXCLUDED patterns matching no PyTorch name, or names webtorch has: {stale}"


def test_pending_names_only_for_known_modules():
    assert set(_pending()) <= set(MODULES)


if __name__ == "__main__":
    print('"""Public names PyTorch has and webtorch lacks, per module and issue (generated by\n'
          '`PYTHONPATH=py python tests/test_public_names.py > tests/_public_names_pending.py`)."""\n')
    print("PENDING = {")
    for name, by_issue in pending_table().items():
        print(f"    {name!r}: {{")
        for issue, names in sorted(by_issue.items()):
            lines, line = [], ""
            for n in names:
                if len(line) + len(n) > 100:
                    lines.append(line)
                    line = ""
                line += n + " "
            lines.append(line)
            body = "\n".join(f"            {ln!r}" for ln in lines)
            print(f"        {issue}: (\n{body}),")
        print("    },")
    print("}")
