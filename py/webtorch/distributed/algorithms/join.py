"""torch.distributed.algorithms.join, PyTorch's algorithm on webtorch's collectives: inside `with Join(joinables)`,
a rank whose inputs ran out shadows the collectives of the ranks still training (each joinable's `JoinHook.main_hook`)
until every rank has joined, then runs each `post_hook`. The ranks count who still trains with an all_reduce of a
1-element tensor on the joinables' device and process group, as PyTorch does."""
import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from ...ops import _creation
from .. import all_reduce, get_rank

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank runs per collective of the others (`main_hook`) and once all joined (`post_hook`)."""

    def main_hook(self) -> None:
        pass

    def post_hook(self, is_last_joiner: bool) -> None:
        pass


class Joinable(ABC):
    """A class whose collectives a Join shadows: it calls `Join.notify_join_context(self)` before each."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        ...


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Join:
    WARN_THRESHOLD = 1000

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(enable=enable, throw_on_early_termination=throw_on_early_termination,
                                                is_first_joinable=i == 0)
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[0].join_device
        self._rank = get_rank(self._process_group)

    def __enter__(self):
        ...

    def __exit__(self, type, value, traceback):
        """Shadow the others' collectives until every rank joined (nothing on an exception or when disabled)."""
        if not self._enable or type:
            return
        is_last_joiner, i = True, 0
        while self._get_num_nonjoined_procs() != 0:
            if i > self.WARN_THRESHOLD:
                warnings.warn(f"Detected uneven input skew of greater than {self.WARN_THRESHOLD}. This means that "
                              f"rank {self._rank} has at least {self.WARN_THRESHOLD} fewer inputs than other "
                              "currently-active ranks. This level of skew could lead to performance degradation "
                              "during training.", stacklevel=2)
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for join_hook in self._join_hooks:
                join_hook.main_hook()
            is_last_joiner = False
            i += 1
        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        count = _creation.zeros(1, device=self._device)
        all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self):
        all_reduce(_creation.ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a Joinable before its per-iteration collectives: counts this rank as still training (the first
        joinable only); returns the async all_reduce's work, or None."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = all_reduce(_creation.ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = _creation.zeros(1, device=device)
            all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
