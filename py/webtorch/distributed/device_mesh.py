"""torch.distributed.device_mesh: `init_device_mesh` and `DeviceMesh`, PyTorch's own where the engine is
(see the package); without it, both raise NO_BACKEND_MSG."""
from .. import distributed

init_device_mesh = distributed.init_device_mesh


def __getattr__(name):
    if name == "DeviceMesh":
        return distributed.DeviceMesh
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
