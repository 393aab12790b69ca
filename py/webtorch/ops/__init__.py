"""Every op, defined once; `bind_methods` attaches them to Tensor as methods and operators."""
from . import pointwise, reduction, shape, indexing, linalg  # noqa: F401
from .pointwise import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403


def _reflect(fn):
    return lambda self, other: fn(other, self)


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return pointwise.logical_not(self) if self.dtype.name == "bool" else pointwise.bitwise_not(self)


def bind_methods(Tensor, creation):
    p, r, s, i, l, c = pointwise, reduction, shape, indexing, linalg, creation
    methods = {}
    for op in list(p.UNARY) + list(p.BINARY):
        methods[op] = getattr(p, op)
        methods[op + "_"] = getattr(p, op + "_")
    for mod, names in (
        (p, "add add_ sub sub_ subtract multiply divide true_divide negative absolute pow pow_ float_power "
            "where clamp clamp_ clip clip_ clamp_min clamp_max square lerp addcmul addcdiv sgn xlogy logaddexp "
            "hypot deg2rad rad2deg nan_to_num isclose allclose equal arcsin arccos arctan arcsinh arccosh arctanh "
            "greater greater_equal less less_equal not_equal arctan2 fix rsub bitwise_left_shift "
            "bitwise_right_shift"),
        (r, "sum nansum sum_to_size mean nanmean prod max min amax amin aminmax argmax argmin all any var std "
            "var_mean std_mean norm logsumexp cumsum cumprod cummax cummin logcumsumexp softmax log_softmax "
            "sort argsort msort topk kthvalue median quantile unique bincount"),
        (s, "view reshape view_as reshape_as permute transpose swapaxes swapdims t adjoint movedim moveaxis "
            "expand expand_as broadcast_to squeeze unsqueeze flatten unflatten as_strided narrow select "
            "diagonal unbind split chunk tensor_split clone contiguous copy_ zero_ fill_ resize_ flip fliplr "
            "flipud roll repeat tile repeat_interleave tril triu tril_ triu_"),
        (i, "gather scatter scatter_add scatter_ scatter_add_ index_select index_add index_add_ index_copy "
            "index_fill index_put index_put_ masked_fill masked_fill_ masked_scatter masked_select nonzero "
            "take take_along_dim argwhere count_nonzero"),
        (l, "matmul mm bmm mv dot vdot outer ger inner addmm addmv baddbmm addbmm tensordot trace diag "
            "diag_embed cross"),
        (c, "to cpu cuda webgpu double half long short byte char bfloat16 type_as new_tensor new_zeros "
            "new_ones new_full new_empty uniform_ normal_ bernoulli_ random_ exponential_ bernoulli"),
    ):
        for n in names.split():
            methods[n] = getattr(mod, n)
    methods["where"] = lambda self, condition, other: p.where(condition, self, other)  # self is the input
    methods["unfold"] = s.tensor_unfold
    methods.update({"float": c.float_, "int": c.int_, "bool": c.bool_m, "type": c.type_,
                    "div_": p.div_, "divide_": p.div_, "mul_": p.mul_, "multiply_": p.mul_,
                    "subtract_": p.sub_, "true_divide_": p.div_})
    for n, f in methods.items():
        setattr(Tensor, n, f)
    Tensor.T = property(s._T)
    Tensor.mT = property(s._mT)
    Tensor.H = property(s._T)
    Tensor.mH = property(s._mT)
    Tensor._alias_view = s._alias_view
    Tensor.__getitem__ = i.getitem
    Tensor.__setitem__ = i.setitem
    ops = {
        "add": p.add, "sub": p.sub, "mul": p.mul, "truediv": p.div, "floordiv": p.floor_divide,
        "mod": p.remainder, "pow": p.pow, "matmul": l.matmul, "and": p.bitwise_and, "or": p.bitwise_or,
        "xor": p.bitwise_xor, "lshift": p.lshift, "rshift": p.rshift,
    }
    for n, f in ops.items():
        setattr(Tensor, f"__{n}__", f)
        setattr(Tensor, f"__r{n}__", _reflect(f))
    for n in ("add", "mul", "and", "or", "xor"):  # commutative: PyTorch keeps self first (2 * x is mul(x, 2))
        setattr(Tensor, f"__r{n}__", getattr(Tensor, f"__{n}__"))
    Tensor.__rsub__ = lambda self, other: p.rsub(self, other)
    inplace = {"add": p.add_, "sub": p.sub_, "mul": p.mul_, "truediv": p.div_, "floordiv": p.floor_divide_,
               "mod": p.remainder_, "pow": p.pow_, "and": p.bitwise_and_, "or": p.bitwise_or_,
               "xor": p.bitwise_xor_, "lshift": p.lshift_, "rshift": p.rshift_}
    for n, f in inplace.items():
        setattr(Tensor, f"__i{n}__", f)
    Tensor.__imatmul__ = lambda self, other: self.copy_(l.matmul(self, other))
    cmp = {"eq": p.eq, "ne": p.ne, "lt": p.lt, "le": p.le, "gt": p.gt, "ge": p.ge}
    for n, f in cmp.items():
        setattr(Tensor, f"__{n}__", f)
    Tensor.__neg__ = p.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = p.abs
    Tensor.__invert__ = _invert
    Tensor.__hash__ = lambda self: id(self)
