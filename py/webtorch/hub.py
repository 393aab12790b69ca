"""torch.hub: models from a `hubconf.py` (a local directory, or a GitHub repository downloaded into the hub cache)
and weights from URLs (`load_state_dict_from_url` reads the file already in `<hub dir>/checkpoints`, else downloads
it with urllib). Offline, a GitHub source raises as PyTorch's does; weights load with `webtorch.load` (safetensors,
PyTorch's zip checkpoints).
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from . import serialization

try:
    from tqdm.auto import tqdm  # the progress bar PyTorch uses when tqdm is installed
except ImportError:
    class tqdm:
        """A minimal progress bar on stderr (PyTorch's fallback when tqdm is not installed)."""

        def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
            self.total, self.disable, self.unit, self.n = total, disable, unit, 0

        def update(self, n):
            if self.disable:
                return
            self.n += n
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%" if self.total else f"\r{self.n} bytes")
            sys.stderr.flush()

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if not self.disable:
                sys.stderr.write("\n")

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN, ENV_TORCH_HOME, ENV_XDG_CACHE_HOME = "GITHUB_TOKEN", "TORCH_HOME", "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


def get_dir():
    """The hub cache directory: set_dir's, else `$TORCH_HOME/hub` ($TORCH_HOME defaults to $XDG_CACHE_HOME/torch)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    home = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.join(os.path.expanduser(os.getenv(ENV_TORCH_HOME, home)), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [p for p in getattr(m, VAR_DEPENDENCY, None) or () if importlib.util.find_spec(p) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(m, model, None) if model in dir(m) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _remove_if_exists(path):
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _parse_repo_info(github):
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:  # the default branch: main if it exists, else master
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            ref = next((r for r in ("main", "master") if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{r}")),
                       None)
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo could not be found in "
                                   f"the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get(ENV_GITHUB_TOKEN) is not None:
        headers["Authorization"] = f"token {os.environ[ENV_GITHUB_TOKEN]}"
    for prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                   f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            with urlopen(Request(f"{prefix}?per_page=100&page={page}", headers=headers)) as r:
                response = json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))
            if not response:
                break
            if any(br["name"] == ref or br["commit"]["sha"].startswith(ref) for br in response):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's a commit from a "
                     "forked repo, please call hub.load() with forked repo directly.")


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    open(filepath, "a").close()
    with open(filepath) as f:
        trusted = tuple(line.strip() for line in f)
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = (owner_name in trusted or owner_name_branch in next(os.walk(hub_dir))[1]
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: B904 - PyTorch's exception type
        if response.lower() not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The repository's directory in the hub cache, downloaded (GitHub's zipball) unless cached."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, normalized_br + ".zip")
    _remove_if_exists(cached_file)
    url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as z:
        extracted = os.path.join(hub_dir, z.infolist()[0].filename)
        _remove_if_exists(extracted)
        for member in z.infolist():  # PyTorch's safe extraction: no absolute paths, nothing outside hub_dir
            target = os.path.realpath(os.path.join(hub_dir, member.filename))
            if os.path.isabs(member.filename) or not target.startswith(os.path.realpath(hub_dir) + os.sep):
                raise ValueError(f"Archive entry escapes the extraction directory: {member.filename}")
        z.extractall(hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The callable entrypoints (names without a leading underscore) of a GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose, skip_validation=skip_validation)
    m = _import_hubconf(repo_dir)
    return [f for f in dir(m) if callable(getattr(m, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of entrypoint `model` of a GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=skip_validation)
    return _load_entry_from_hubconf(_import_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """`model(*args, **kwargs)` from the hubconf.py of a directory (source="local") or GitHub repository."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                           skip_validation=skip_validation)
    with _add_to_sys_path(repo_or_dir):
        entry = _load_entry_from_hubconf(_import_hubconf(repo_or_dir), model)
        return entry(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download url to dst (through a temporary file; with hash_prefix, the SHA256 must start with it)."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        try:
            f = open(dst + "." + uuid.uuid4().hex + ".partial", "w+b")  # noqa: SIM115
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            size = u.info().get("Content-Length")
            sha256 = hashlib.sha256()
            with tqdm(total=int(size) if size else None, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as pbar:
                while buffer := u.read(READ_DATA_CHUNK):
                    f.write(buffer)
                    sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            digest = sha256.hexdigest()
            if hash_prefix is not None and digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """The object saved at url, loaded from `<hub dir>/checkpoints/<file name>` (downloaded there first if absent)."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        r = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, r.group(1) if r else None, progress=progress)
    return serialization.load(cached_file, map_location=map_location, weights_only=weights_only)
