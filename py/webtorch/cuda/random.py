"""torch.cuda.random. Without CUDA: PyTorch's no-ops and AssertionErrors. Under the cuda alias,
webgpu tensors draw from webtorch's default generator, so the state is that generator's, and the
cuda seeding calls stay no-ops (as in the cpu run of the same script under PyTorch)."""
from .. import random as _random
from ._state import _lazy_init, is_available

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device="cuda"):
    _lazy_init()
    return _random.get_rng_state()


def get_rng_state_all():
    return [get_rng_state()] if is_available() else []


def set_rng_state(new_state, device="cuda"):
    if is_available():
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def initial_seed():
    _lazy_init()
    return _random.initial_seed()
