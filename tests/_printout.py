"""Compare what two runs of one program printed: the text must be identical apart from numbers,
and the numbers equal within tolerance (webtorch's printout against PyTorch's)."""
import re

_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def assert_same_printout(got, want, rtol=1e-3, atol=1e-3):
    assert _NUM.sub("#", got) == _NUM.sub("#", want), f"webtorch printed:\n{got}\nPyTorch printed:\n{want}"
    g, w = [float(v) for v in _NUM.findall(got)], [float(v) for v in _NUM.findall(want)]
    bad = [(a, b) for a, b in zip(g, w) if abs(a - b) > atol + rtol * abs(b)]
    assert not bad, f"numbers differ (webtorch, PyTorch): {bad}\nwebtorch:\n{got}\nPyTorch:\n{want}"
