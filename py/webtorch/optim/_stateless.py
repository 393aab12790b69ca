"""optim.swap_in_optimizer_params_and_state (PyTorch 2.13's torch/optim/_stateless.py): inside the block the
optimizer steps other parameters, with the state and hyperparameters of an `optimizer.state_dict()`-style dict;
its own parameters, groups and state come back after."""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _validate_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _validate_groups(optimizer, param_groups):
    if not isinstance(param_groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(param_groups).__name__}.")
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return param_groups


def _group_ids(idx, group, swapin_group):
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(pid, int) for pid in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only, live_only = [k for k in swapin_group if k not in group], [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the live "
                           f"optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only in "
                           f"live: {live_only}.")
    return ids


def _prepare(optimizer, swapin_parameters, swapin_optim_state):
    """(the state by packed id, [(live group, swap-in group, its parameters)]) after PyTorch's checks."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _validate_state(swapin_optim_state.get("state"))
    groups = _validate_groups(optimizer, swapin_optim_state.get("param_groups"))
    flat, offset, seen, infos = list(swapin_parameters.values()), 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        infos.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    state, infos = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state, snapshots = optimizer.state, [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for group, swapin_group, params in infos:
            group.update({k: v for k, v in swapin_group.items() if k != "params"}, params=params)
            for p, pid in zip(params, swapin_group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
