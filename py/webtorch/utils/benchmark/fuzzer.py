"""torch.utils.benchmark's Fuzzer family: FuzzedParameter, ParameterAlias, FuzzedTensor, FuzzedSparseTensor, Fuzzer.

PyTorch draws every parameter, permutation and the torch seed from a numpy RandomState; `_RandomState` below draws
the same numbers without numpy (numpy's legacy MT19937 seeding, random_sample, masked randint, uniform, shuffle and
choice), so `Fuzzer(..., seed=s).take(n)` yields PyTorch's parameters, shapes, strides and tensor values natively and
in the page alike. Where numpy is importable, a tensor's "order" property is a numpy array, as PyTorch's.
"""
import functools
import itertools as it
import math
import numbers
import random
import sys

from ... import (
    Size,
    bool as _bool,
    cat,
    finfo,
    float32,
    iinfo,
    long,
    manual_seed,
    rand,
    randint,
    randn_like,
    sparse_coo_tensor,
    tensor as _tensor,
)
from ..._mt19937 import N, init_genrand

try:
    import numpy as _np
except ImportError:  # the page: "order" stays a list
    _np = None

__all__ = ["Fuzzer", "FuzzedParameter", "ParameterAlias", "FuzzedTensor", "FuzzedSparseTensor"]

_DISTRIBUTIONS = ("loguniform", "uniform")


class _RandomState:
    """The part of numpy's legacy RandomState(seed) the Fuzzer draws from, word for word."""

    def __init__(self, seed):
        if not 0 <= seed <= 2 ** 32 - 1:
            raise ValueError("Seed must be between 0 and 2**32 - 1")
        self._rng = random.Random()
        self._rng.setstate((3, tuple(init_genrand(seed)) + (N,), None))

    def rand(self):
        return self._rng.random()  # CPython's 53-bit double is numpy's legacy random_sample

    random_sample = rand

    def _masked(self, rng):
        """numpy's bounded_masked draw of an integer in [0, rng] (32-bit words while rng fits in 32 bits)."""
        if rng == 0:
            return 0
        bits = 32 if rng <= 0xFFFFFFFF else 64
        mask = (1 << rng.bit_length()) - 1
        while True:
            word = self._rng.getrandbits(32)
            if bits == 64:
                word = word << 32 | self._rng.getrandbits(32)
            if word & mask <= rng:
                return word & mask

    def randint(self, low, high):
        if low >= high:
            raise ValueError("low >= high")
        return low + self._masked(high - 1 - low)

    def uniform(self, low=0.0, high=1.0):
        span = high - low
        if not math.isfinite(span):
            raise OverflowError("Range exceeds valid bounds")
        return low + span * self.rand()

    def permutation(self, n):
        out = list(range(n))
        for i in reversed(range(1, n)):
            j = self._masked(i)
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, n, p):
        """An index into range(n) drawn with probabilities p (replace=True, one sample)."""
        p = [float(v) for v in p]
        if len(p) != n:
            raise ValueError("'a' and 'p' must have same size")
        if math.isnan(math.fsum(p)):
            raise ValueError("probabilities contain NaN")
        if any(v < 0 for v in p):
            raise ValueError("probabilities are not non-negative")
        if abs(math.fsum(p) - 1.0) > math.sqrt(sys.float_info.epsilon):
            raise ValueError("probabilities do not sum to 1")
        cdf = list(it.accumulate(p))
        u = self.rand()
        return next((i for i, c in enumerate(cdf) if u < c / cdf[-1]), n)


class FuzzedParameter:
    """Specification for a parameter to be generated during fuzzing."""

    def __init__(self, name, minval=None, maxval=None, distribution=None, strict=False):
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self):
        return self._name

    def sample(self, state):
        if self._distribution == "loguniform":
            return self._loguniform(state)
        if self._distribution == "uniform":
            return self._uniform(state)
        if isinstance(self._distribution, dict):
            return self._custom_distribution(state)

    def _check_distribution(self, distribution):
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
        else:
            if any(i < 0 for i in distribution.values()):
                raise AssertionError("Probabilities cannot be negative")
            if not abs(sum(distribution.values()) - 1) > 1e-5:  # PyTorch 2.13's check, inverted as there
                raise AssertionError("Distribution is not normalized")
            if self._minval is not None:
                raise AssertionError("When passing a custom distribution, 'minval' must be None")
            if self._maxval is not None:
                raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def _loguniform(self, state):
        output = int(2 ** state.uniform(low=math.log2(self._minval) if self._minval is not None else None,
                                        high=math.log2(self._maxval) if self._maxval is not None else None))
        if self._minval is not None and output < self._minval:
            return self._minval
        if self._maxval is not None and output > self._maxval:
            return self._maxval
        return output

    def _uniform(self, state):
        if isinstance(self._minval, int) and isinstance(self._maxval, int):
            return int(state.randint(low=self._minval, high=self._maxval + 1))
        return state.uniform(low=self._minval, high=self._maxval)

    def _custom_distribution(self, state):
        return list(self._distribution)[state.choice(len(self._distribution), p=tuple(self._distribution.values()))]


class ParameterAlias:
    """Indicates that a parameter should alias the value of another parameter (chains allowed, cycles not)."""

    def __init__(self, alias_to):
        self.alias_to = alias_to

    def __repr__(self):
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype):
    if dtype == _bool:
        return 1
    if dtype.is_floating_point or dtype.is_complex:
        return int(finfo(dtype).bits / 8)
    return int(iinfo(dtype).bits / 8)


def prod(values, base=1):
    """The product in Python ints (no overflow)."""
    return functools.reduce(lambda x, y: int(x) * int(y), values, base)


class FuzzedTensor:
    """A tensor drawn per step: sizes and steps from the parameters, a random memory order, strides from steps."""

    def __init__(self, name, size, steps=None, probability_contiguous=0.5, min_elements=None, max_elements=None,
                 max_allocation_bytes=None, dim_parameter=None, roll_parameter=None, dtype=float32, cuda=False,
                 tensor_constructor=None):
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor

    @property
    def name(self):
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        if dtype.is_floating_point or dtype.is_complex:
            return rand(size=size, dtype=dtype, device="cpu")
        return randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _make_tensor(self, params, state):
        size, steps, allocation_size = self._get_size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw_tensor = constructor(size=allocation_size, dtype=self._dtype, **params)
        if self._cuda:
            raw_tensor = raw_tensor.cuda()

        # A random memory order: permute, .contiguous(), permute back.
        dim = len(size)
        order = list(range(dim))
        if state.rand() > self._probability_contiguous:
            while dim > 1 and order == list(range(dim)):
                order = state.permutation(raw_tensor.dim())
            raw_tensor = raw_tensor.permute(tuple(order)).contiguous()
            raw_tensor = raw_tensor.permute(tuple(sorted(range(dim), key=order.__getitem__)))

        tensor = raw_tensor[tuple(slice(0, n * step, step) for n, step in zip(size, steps, strict=True))]
        properties = {
            "numel": int(tensor.numel()),
            "order": order if _np is None else _np.array(order),
            "steps": steps,
            "is_contiguous": tensor.is_contiguous(),
            "dtype": str(self._dtype),
        }
        return tensor, properties

    def _get_size_and_steps(self, params):
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values):
            values = tuple(params.get(i, i) for i in values)[:dim]
            return values + (1,) * (dim - len(values))

        size, steps = resolve(self._size), resolve(self._steps or ())
        return size, steps, tuple(n * step for n, step in zip(size, steps, strict=True))

    def satisfies_constraints(self, params):
        size, _, allocation_size = self._get_size_and_steps(params)
        num_elements = prod(size)
        if num_elements < 0:
            raise AssertionError("Computed number of elements is negative")
        allocation_bytes = prod(allocation_size, base=dtype_size(self._dtype))

        def nullable_greater(left, right):
            return left is not None and right is not None and left > right

        return not (nullable_greater(num_elements, self._max_elements)
                    or nullable_greater(self._min_elements, num_elements)
                    or nullable_greater(allocation_bytes, self._max_allocation_bytes))


class FuzzedSparseTensor(FuzzedTensor):
    """A sparse COO tensor drawn per step, its density, coalescing and sparse_dim from the parameters."""

    def __init__(self, name, size, min_elements=None, max_elements=None, dim_parameter=None, sparse_dim=None,
                 nnz=None, density=None, coalesced=None, dtype=float32, cuda=False):
        super().__init__(name=name, size=size, min_elements=min_elements, max_elements=max_elements,
                         dim_parameter=dim_parameter, dtype=dtype, cuda=cuda)
        self._density = density
        self._coalesced = coalesced
        self._sparse_dim = sparse_dim

    @staticmethod
    def sparse_tensor_constructor(size, dtype, sparse_dim, nnz, is_coalesced):
        """A COO tensor of nnz random indices (twice as many entries, duplicated, when not coalesced)."""
        if isinstance(size, numbers.Number):
            size = [size] * sparse_dim
        if all(size[d] <= 0 for d in range(sparse_dim)) and nnz != 0:
            raise AssertionError("invalid arguments")
        v_size = [nnz] + list(size[sparse_dim:])
        if dtype.is_floating_point:
            v = rand(size=v_size, dtype=dtype, device="cpu")
        else:
            v = randint(1, 127, size=v_size, dtype=dtype, device="cpu")
        i = rand(sparse_dim, nnz, device="cpu")
        i.mul_(_tensor(size[:sparse_dim]).unsqueeze(1).to(i))
        i = i.to(long)
        if not is_coalesced:
            v = cat([v, randn_like(v)], 0)
            i = cat([i, i], 1)
        x = sparse_coo_tensor(i, v, Size(size))
        return x.coalesce() if is_coalesced else x

    def _make_tensor(self, params, state):
        size, _, _ = self._get_size_and_steps(params)
        density = params["density"]
        nnz = math.ceil(sum(size) * density)
        if nnz > sum(size):
            raise AssertionError("nnz cannot exceed total number of elements")
        is_coalesced = params["coalesced"]
        sparse_dim = min(params["sparse_dim"] if self._sparse_dim else len(size), len(size))
        tensor = self.sparse_tensor_constructor(size, self._dtype, sparse_dim, nnz, is_coalesced)
        if self._cuda:
            tensor = tensor.cuda()
        sparse_dim = tensor.sparse_dim()
        properties = {
            "numel": int(tensor.numel()),
            "shape": tensor.size(),
            "is_coalesced": tensor.is_coalesced(),
            "density": density,
            "sparsity": 1.0 - density,
            "sparse_dim": sparse_dim,
            "dense_dim": tensor.dense_dim(),
            "is_hybrid": len(size[sparse_dim:]) > 0,
            "dtype": str(self._dtype),
        }
        return tensor, properties


class Fuzzer:
    """Draws parameter sets (resampling until the constraints hold) and the tensors they specify."""

    def __init__(self, parameters, tensors, constraints=None, seed=None):
        if seed is None:
            seed = random.SystemRandom().randrange(2 ** 32 - 1)
        self._seed = seed
        self._parameters = Fuzzer._unpack(parameters, FuzzedParameter)
        self._tensors = Fuzzer._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        name_overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if name_overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {name_overlap}")
        self._rejections = 0
        self._total_generated = 0

    @staticmethod
    def _unpack(values, cls):
        return tuple(it.chain.from_iterable([[i] if isinstance(i, cls) else i for i in values]))

    def take(self, n):
        state = _RandomState(self._seed)
        manual_seed(state.randint(low=0, high=2 ** 63))
        for _ in range(n):
            params = self._generate(state)
            tensors, tensor_properties = {}, {}
            for t in self._tensors:
                tensors[t.name], tensor_properties[t.name] = t._make_tensor(params, state)
            yield tensors, tensor_properties, params

    @property
    def rejection_rate(self):
        return self._rejections / self._total_generated if self._total_generated else 0.

    def _generate(self, state):
        strict_params = {}
        for _ in range(1000):
            candidate_params = {}
            for p in self._parameters:
                if p.strict and p.name in strict_params:
                    candidate_params[p.name] = strict_params[p.name]
                else:
                    candidate_params[p.name] = p.sample(state)
                    if p.strict:
                        strict_params[p.name] = candidate_params[p.name]
            candidate_params = self._resolve_aliases(candidate_params)
            self._total_generated += 1
            if not all(f(candidate_params) for f in self._constraints) or \
                    not all(t.satisfies_constraints(candidate_params) for t in self._tensors):
                self._rejections += 1
                continue
            return candidate_params
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params):
        params = dict(params)
        alias_count = sum(isinstance(v, ParameterAlias) for v in params.values())
        while alias_count:
            for k in list(params):
                if isinstance(params[k], ParameterAlias):
                    params[k] = params[params[k].alias_to]
            alias_count_new = sum(isinstance(v, ParameterAlias) for v in params.values())
            if alias_count == alias_count_new:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            alias_count = alias_count_new
        return params
