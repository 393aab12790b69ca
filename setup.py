"""Package layout (metadata is in pyproject.toml).

    py/webtorch/**             -> webtorch/**              (the library)
    shaders/*.wgsl             -> webtorch/shaders/*.wgsl  (WGSL kernels, inside the wheel)
    py/webtorch/**/*.js        -> webtorch/**/*.js         (the browser driver's JavaScript)
    server/webtorch_server/**  -> webtorch_server/**       (the playground server)

At run time the WebGPU backend looks for <package dir>/shaders first (an installed wheel),
then <repo>/shaders (a checkout or an editable install).
"""
from setuptools import find_namespace_packages, setup

EXCLUDE = ["*.__pycache__", "*.__pycache__.*"]
packages = (
    find_namespace_packages("py", include=["webtorch", "webtorch.*"], exclude=EXCLUDE)
    + find_namespace_packages("server", include=["webtorch_server", "webtorch_server.*"], exclude=EXCLUDE)
    + ["webtorch.shaders"]
)

setup(
    packages=packages,
    package_dir={
        "webtorch": "py/webtorch",
        "webtorch_server": "server/webtorch_server",
        "webtorch.shaders": "shaders",
    },
    package_data={"webtorch.shaders": ["*.wgsl"], "webtorch.backends.webgpu.drivers": ["*.js"]},
    include_package_data=False,
    zip_safe=False,
)
