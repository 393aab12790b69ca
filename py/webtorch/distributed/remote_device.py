"""torch.distributed.remote_device: `_remote_device`, a device on a worker ('<workername>/<device>',
'rank:<rank>/<device>' or '<device>'), as the sharding and RPC APIs name placements."""
from .._device import device as _device_type

__all__ = []


def _is_valid_local_device(name):
    try:
        _device_type(name)
        return True
    except Exception:
        return False


class _remote_device:
    def __init__(self, remote_device):
        error = (f"Could not parse remote_device: {remote_device}. The valid format is '<workername>/<device>' or "
                 "'rank:<rank>/<device>' or '<device>'")
        self._worker_name, self._rank, device = None, None, remote_device
        if isinstance(remote_device, str):
            fields = remote_device.split("/")
            if len(fields) > 2:
                raise ValueError(error)
            if len(fields) == 2:
                self._worker_name, device = fields
            elif not _is_valid_local_device(fields[0]):
                self._worker_name, device = fields[0], "cpu"
        elif not isinstance(remote_device, _device_type):
            raise TypeError(f"Invalid type for remote_device: {type(remote_device)}")
        if self._worker_name is not None and not self._worker_name:
            raise ValueError(error)
        self._device = _device_type(device)
        fields = (self._worker_name or "").split(":")
        if len(fields) > 2 or len(fields) == 2 and (fields[0] != "rank" or not fields[1].isdigit()):
            raise ValueError(error)
        if len(fields) == 2:
            self._rank, self._worker_name = int(fields[1]), None

    def worker_name(self):
        return self._worker_name

    def rank(self):
        return self._rank

    def device(self):
        return self._device

    def __repr__(self):
        if self._worker_name is not None:
            return f"{self._worker_name}/{self._device}"
        if self._rank is not None:
            return f"rank:{self._rank}/{self._device}"
        return str(self._device)

    def __eq__(self, other):
        return isinstance(other, _remote_device) and (self._worker_name, self._device, self._rank) == (
            other._worker_name, other._device, other._rank)

    def __hash__(self):
        return hash(self._worker_name) ^ hash(self._device) ^ hash(self._rank)
