"""PyTorch's OpInfo samples of the linear-algebra ops in complex64 (issue #24): the entries of torch.linalg and
the top-level factorizations (det, inverse, cholesky, lu, qr, svd, ...) that PyTorch runs on complex64, their
first SAMPLES samples (one: a few seconds in all), forward and gradient on cpu, with opinfo_harness's comparisons
and tolerances. The main tier (test_opinfo.py) runs every op in float32; tests/test_linalg_complex.py covers
cpu-pure and webgpu."""
import opinfo_harness as H
import pytest
import torch

import webtorch as wt

SAMPLES = 1
_TOP = {"det", "inverse", "logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_solve",
        "lu_unpack", "qr", "svd", "pinverse", "matrix_exp", "geqrf", "ormqr", "triangular_solve"}
OPS = [k for k, reason in H.selected() if reason is None and (k.startswith("linalg.") or k.split(".")[0] in _TOP)
       and torch.complex64 in H.op_db()[k].supported_dtypes("cpu")]
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _forward(k, fn, s):
    expected = H.op_db()[k].op(s.input, *s.args, **s.kwargs)
    with wt.no_grad():
        actual, _ = H.call(fn, s, "cpu")
    if k in ("linalg.eig", "linalg.eigh"):
        expected = H._eig_phase(actual, expected)
    H.compare(actual, expected, "cpu")


@pytest.mark.parametrize("op", OPS)
def test_opinfo_complex64(op):
    o, fn = H.op_db()[op], H.resolve(op)
    failed = []
    for kind in ("forward", "grad") if o.supports_autograd else ("forward",):
        torch.manual_seed(0)
        for i, s in zip(range(SAMPLES), o.sample_inputs("cpu", torch.complex64, requires_grad=kind == "grad")):
            try:
                H._check_grad(o, fn, s, "cpu") if kind == "grad" else _forward(op, fn, s)
            except H.Unsupported:
                pass
            except Exception as e:
                failed.append(f"{kind} #{i}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
    assert not failed, "; ".join(failed)
