"""torch.torch_version.TorchVersion: a version string that compares as a version (PEP 440), as
PyTorch's `torch.__version__` does: `torch.__version__ >= "2.0"`, `< (3, 0)`, `== "2.13.0"`.
Pure Python (no `packaging`, which Pyodide lacks)."""
import re

__all__ = ["TorchVersion"]

_PEP440 = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|c|alpha|beta|pre|preview)[-_.]?(\d*))?"
                     r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
                     re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "rc": 2, "c": 2, "pre": 2, "preview": 2}


def _key(v):
    """packaging.version.Version's ordering key for the PEP 440 version string v."""
    m = _PEP440.fullmatch(v.strip())
    if m is None:
        raise ValueError(f"Invalid version: '{v}'")
    release, pre, pre_n, post, dev, local = m.groups()
    nums = [int(x) for x in release.split(".")]
    while len(nums) > 1 and nums[-1] == 0:
        nums.pop()
    if pre is not None:
        pre_key = (_PRE[pre.lower()], int(pre_n or 0))
    else:
        pre_key = (-1, 0) if dev is not None and post is None else (3, 0)
    local_key = tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in re.split(r"[-_.]", local or "")
                      if p)
    return (tuple(nums), pre_key, -1 if post is None else int(post or 0), 1 << 62 if dev is None else int(dev or 0),
            local_key)


def _other_key(other):
    if isinstance(other, (tuple, list)):
        other = ".".join(str(x) for x in other)
    if not isinstance(other, str):
        other = str(other)  # a packaging Version
    return _key(other)


class TorchVersion(str):
    def __lt__(self, other):
        return _key(self) < _other_key(other)

    def __le__(self, other):
        return _key(self) <= _other_key(other)

    def __gt__(self, other):
        return _key(self) > _other_key(other)

    def __ge__(self, other):
        return _key(self) >= _other_key(other)

    def __eq__(self, other):
        try:
            return _key(self) == _other_key(other)
        except ValueError:
            return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__
