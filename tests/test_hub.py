"""Issue #22: torch.hub against PyTorch 2.13: hubconf.py entrypoints from a local directory, the cache directory,
load_state_dict_from_url from the hub cache, download_url_to_file (file:// here: no network), offline errors."""
import os

import pytest
import torch

import webtorch as wt

HUBCONF = '''
dependencies = ["math"]


def tiny(n=3, bias=True):
    """A tiny linear model."""
    import torch
    torch.manual_seed(0)
    return torch.nn.Linear(n, 2, bias=bias)


def needs_missing():
    pass


def _helper():
    pass
'''


@pytest.fixture
def hubdir(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "hubconf.py").write_text(HUBCONF)
    return tmp_path


def test_load_local(hubdir, monkeypatch):
    repo = str(hubdir / "repo")
    for lib in (torch, wt):
        monkeypatch.setitem(__import__("sys").modules, "torch", lib)
        m = lib.hub.load(repo, "tiny", 4, source="local", bias=False)
        assert type(m) is lib.nn.Linear and (m.in_features, m.bias) == (4, None)
        for args, err, msg in ((("nope",), RuntimeError, "Cannot find callable nope in hubconf"),
                               (("_nope",), RuntimeError, "Cannot find callable _nope in hubconf"),
                               ((3,), ValueError, "Invalid input: model should be a string of function name")):
            with pytest.raises(err, match=msg):
                lib.hub.load(repo, *args, source="local")
        with pytest.raises(ValueError, match='Unknown source: "svn". Allowed values: "github" | "local".'):
            lib.hub.load(repo, "tiny", source="svn")
    monkeypatch.undo()


def test_dirs(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setattr(wt.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert wt.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert wt.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    wt.hub.set_dir("~/somewhere")
    assert wt.hub.get_dir() == os.path.expanduser("~/somewhere")


def test_state_dict_from_cache_and_download(monkeypatch, tmp_path):
    sd = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])}
    monkeypatch.setattr(wt.hub, "_hub_dir", str(tmp_path / "hub"))
    os.makedirs(tmp_path / "hub" / "checkpoints")
    torch.save(sd, tmp_path / "hub" / "checkpoints" / "model-abc123.pth")
    got = wt.hub.load_state_dict_from_url("https://example.invalid/weights/model-abc123.pth")  # cached: no network
    assert {k: v.tolist() for k, v in got.items()} == {k: v.tolist() for k, v in sd.items()}
    src = tmp_path / "src.pth"
    torch.save(sd, src)
    wt.hub.download_url_to_file(src.as_uri(), str(tmp_path / "copy.pth"), progress=False)
    assert (tmp_path / "copy.pth").read_bytes() == src.read_bytes()
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "ffff", got'):
        wt.hub.download_url_to_file(src.as_uri(), str(tmp_path / "bad.pth"), hash_prefix="ffff", progress=False)
    assert not (tmp_path / "bad.pth").exists() and [p.name for p in tmp_path.glob("*.partial")] == []
    got = wt.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(tmp_path / "md"), progress=False)
    assert got["w"].tolist() == sd["w"].tolist() and (tmp_path / "md" / "src.pth").exists()


def test_github_source_offline(monkeypatch, tmp_path):
    """Without a network, a GitHub source not in the cache raises as PyTorch's does; a cached one loads."""
    for lib in (torch, wt):
        monkeypatch.setattr(lib.hub, "_hub_dir", str(tmp_path / lib.__name__))
        monkeypatch.setattr(lib.hub, "urlopen", _offline)
        with pytest.raises(RuntimeError, match="It looks like there is no internet connection and the repo could "
                                               "not be found in the cache"):
            lib.hub.list("someone/repo")
    cached = tmp_path / "webtorch" / "pytorch_vision_main"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text(HUBCONF)
    assert wt.hub.list("pytorch/vision") == ["needs_missing", "tiny"]
    assert wt.hub.help("pytorch/vision", "tiny") == "A tiny linear model."


def _offline(*args, **kwargs):
    from urllib.error import URLError
    raise URLError("offline")
