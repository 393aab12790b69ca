"""PyTorch's OpInfo database against webtorch: forward, gradient and error_inputs of every op
webtorch has, on cpu and webgpu (see opinfo_harness.py; the counts are printed at the end of
the run by summary.py)."""
import collections
import json

import pytest

import opinfo_harness as H

SELECTED = H.selected()
RUN = [k for k, reason in SELECTED if reason is None]
# PyTorch's own deprecation notes (kl_div's 'mean', ...) say nothing about webtorch here
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_coverage(request):
    """The harness finds webtorch's ops (a broken lookup would silently select nothing)."""
    reasons = collections.Counter(reason for _, reason in SELECTED if reason is not None)
    request.node.user_properties.append(("opinfo_coverage", json.dumps({"run": len(RUN), "left out": reasons})))
    assert len(RUN) >= 350, f"only {len(RUN)} OpInfos selected"


@pytest.mark.parametrize("kind", H.KINDS)
@pytest.mark.parametrize("device", ["cpu", "webgpu"], indirect=True)
@pytest.mark.parametrize("op", RUN)
def test_opinfo(op, device, kind, request):
    dev = request.node.callspec.params["device"]
    res = H.run(op, dev, kind)
    request.node.user_properties.append(("opinfo", json.dumps([op, dev, kind, res.counts()])))
    if res.missing:
        pytest.skip(f"{op}: not implemented in webtorch (a name it uses is missing)")
    bad = res.unexpected()
    assert not bad, f"{op} {dev} {kind}: " + "; ".join(f"#{i}: {m}" for i, m in bad)
    fixed = res.xpassed()
    assert not fixed, f"{op} {dev} {kind}: samples {fixed} listed in XFAIL now pass: remove them"
