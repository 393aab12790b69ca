"""dtypes and PyTorch's type-promotion rules."""


class dtype:
    __slots__ = ("name", "itemsize", "is_floating_point", "_signed", "kind", "_rank")

    def __init__(self, name, itemsize, kind, rank):
        self.name = name
        self.itemsize = itemsize
        self.kind = kind  # 'b' bool, 'i' integer, 'f' floating, 'c' complex, 'o' bits and quantized
        self.is_floating_point = kind == "f"
        self._signed = name not in ("bool", "float8_e8m0fnu") and not name.startswith(("uint", "bits", "quint"))
        self._rank = rank

    @property
    def is_signed(self):
        if self.kind == "o":
            raise RuntimeError("isSignedType not supported for quantized types" if self.name.startswith(("q", "quint"))
                               else "Bits types are undefined")
        return self._signed

    @property
    def is_complex(self):
        return self.kind == "c"

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The dtype of a complex dtype's real and imaginary parts (itself for a real dtype)."""
        return _REAL.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts are this floating dtype (itself for a complex dtype)."""
        if self.kind == "c":
            return self
        if self.kind != "f" or self._rank < 0:
            raise RuntimeError(f"Unknown Complex ScalarType for {_C_NAMES[self.name]}")
        return _COMPLEX[self]


bool_ = dtype("bool", 1, "b", 0)
uint8 = dtype("uint8", 1, "i", 1)
int8 = dtype("int8", 1, "i", 2)
int16 = dtype("int16", 2, "i", 3)
int32 = dtype("int32", 4, "i", 4)
int64 = dtype("int64", 8, "i", 5)
float16 = dtype("float16", 2, "f", 6)
bfloat16 = dtype("bfloat16", 2, "f", 7)
float32 = dtype("float32", 4, "f", 8)
float64 = dtype("float64", 8, "f", 9)
complex32 = dtype("complex32", 4, "c", 10)
complex64 = dtype("complex64", 8, "c", 11)
complex128 = dtype("complex128", 16, "c", 12)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex32, complex64, complex128)
# PyTorch's "barebones" unsigned types: stored on cpu, with few ops (ops/_common.py: check_wide_uint), no promotion
# but to a floating dtype (_promote_unstored); rank -1 keeps them out of promote_types' lattice
uint16, uint32, uint64 = WIDE_UINT = tuple(dtype(f"uint{bits}", bits // 8, "i", -1) for bits in (16, 32, 64))
# dtypes no backend stores (a tensor of one raises): objects with PyTorch's attributes, finfo/iinfo and promotion
# errors, so code that names them (quantization configs, KV-cache classes) imports and runs
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn_x2 = (
    dtype(name, 1, "f", -1) for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                                         "float8_e8m0fnu", "float4_e2m1fn_x2"))
SUB_BYTE = tuple(dtype(f"{sign}int{bits}", 1, "i", -1) for sign in ("u", "") for bits in range(1, 8))
OPAQUE = tuple(dtype(name, size, "o", -1) for name, size in (
    ("bits8", 1), ("bits16", 2), ("bits1x8", 1), ("bits2x4", 1), ("bits4x2", 1), ("qint8", 1), ("quint8", 1),
    ("qint32", 4), ("quint4x2", 1), ("quint2x4", 1)))
UNSTORED = (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
            float4_e2m1fn_x2) + SUB_BYTE + OPAQUE
BY_NAME = {d.name: d for d in ALL + WIDE_UINT + UNSTORED}
bit = BY_NAME["uint1"]
NP_NAMES = {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
            "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
            "complex64": "complex64", "complex128": "complex128", "uint16": "uint16", "uint32": "uint32",
            "uint64": "uint64"}
# aliases PyTorch users write
ALIASES = {"float": float32, "double": float64, "half": float16, "int": int32, "long": int64,
           "short": int16, "bool": bool_, "cfloat": complex64, "cdouble": complex128, "chalf": complex32}
_REAL = {complex32: float16, complex64: float32, complex128: float64}
_COMPLEX = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}
# c10's ScalarType names (the messages of to_complex)
_C_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
            "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
            "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
            **{d.name: d.name[0].upper() + d.name[1:] for d in UNSTORED}}
_C_NAMES.update({f"uint{b}": f"UInt{b}" for b in (1, 2, 3, 4, 5, 6, 7, 16, 32, 64)}, qint8="QInt8", quint8="QUInt8",
                qint32="QInt32", quint4x2="QUInt4x2", quint2x4="QUInt2x4")

# PyTorch's legacy tensor type names (torch.FloatTensor, x.type() == 'torch.FloatTensor')
TENSOR_TYPES = {float32: "FloatTensor", float64: "DoubleTensor", float16: "HalfTensor", int64: "LongTensor",
                int32: "IntTensor", int16: "ShortTensor", int8: "CharTensor", uint8: "ByteTensor",
                bool_: "BoolTensor", bfloat16: "BFloat16Tensor", complex64: "ComplexFloatTensor",
                complex128: "ComplexDoubleTensor", complex32: "ComplexHalfTensor"}

_default = [float32]


def _by_name(name):
    return BY_NAME[name]


def opmath(d):
    """The dtype PyTorch's CPU kernels compute d in: float32 for float16 / bfloat16 (rounded once into d), else d."""
    return float32 if d.kind == "f" and d.itemsize == 2 else d


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if d not in (float16, float32, float64, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def promote_types(a, b):
    """torch.promote_types for two dtypes."""
    if a is b:
        return a
    if a._rank < 0 or b._rank < 0:
        return _promote_unstored(a, b)
    if a.kind == "c" or b.kind == "c":  # the complex of the promoted parts; an integer or bool gives way
        if a.kind != "c":
            a, b = b, a
        return promote_types(a.to_real(), b.to_real()).to_complex() if b.kind in "fc" else a
    if a.kind == b.kind == "i":
        # uint8 with a signed int promotes to the signed type (int8 + uint8 -> int16)
        if {a.name, b.name} == {"uint8", "int8"}:
            return int16
    if {a.name, b.name} == {"float16", "bfloat16"}:
        return float32
    return a if a._rank > b._rank else b


def _promote_unstored(a, b):
    """c10's promoteTypes where a dtype no backend stores takes part: quantized, bits and float8 types never
    promote; the unsigned types past uint8 (and uint1-uint7) promote only to a floating dtype, which wins."""
    pair = f"{_C_NAMES[a.name]} and {_C_NAMES[b.name]}"
    names = (a.name, b.name)
    if any(n.startswith(("qint", "quint")) for n in names):
        raise RuntimeError("promoteTypes with quantized numbers is not handled yet; figure out what the correct "
                           f"rules should be, offending types: {_C_NAMES[a.name]} {_C_NAMES[b.name]}")
    if any(n.startswith("bits") for n in names):
        raise RuntimeError(f"Promotion from {pair} is unsupported.")
    if any(n.startswith("float8") for n in names):
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote {pair}")
    if any(d.name.startswith("uint") and d._rank < 0 for d in (a, b)):
        for d in (a, b):
            if d.kind == "f":
                return d
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote {pair}")
    raise RuntimeError(f"Promotion is not supported for {pair}")  # c10: an internal assert (int1-int7, float4)


def _scalar_kind(x):
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, complex):
        return "c"
    return "f"


_ORDER = {"b": 0, "i": 1, "f": 2, "c": 3}
_ZERO_DIM = {d: (d, 0) for d in ALL}  # cache-key entry of a 0-d tensor of dtype d
_rt_cache = {}
_Tensor = []  # webtorch.Tensor, filled by _tensor.py (this module is imported first)


def result_type(*args):
    """PyTorch's result_type over tensors and Python scalars: dimensioned tensors win over
    0-d tensors, which win over Python scalars, unless a lower category holds a higher kind
    (bool < integer < floating). Memoized on what decides it: each argument's dtype and
    whether it is 0-d, or a scalar's type, and the default dtype."""
    Tensor = _Tensor[0]
    key = [_default[0]]
    for a in args:
        if isinstance(a, Tensor):
            d = a._storage.dtype
            key.append(d if a._shape else _ZERO_DIM[d])
        else:
            key.append(type(a))
            if type(a) is int and not -(1 << 63) <= a < 1 << 64:  # PyTorch's Scalar: an int64 or a uint64
                raise OverflowError("int too big to convert")
    key = tuple(key)
    res = _rt_cache.get(key)
    if res is None:
        res = _rt_cache[key] = _result_type(args, Tensor)
    return res


def _result_type(args, Tensor):
    order = _ORDER
    dim_t, zero_t, scal = None, None, None
    for a in args:
        if isinstance(a, Tensor):
            if a.dim() > 0:
                dim_t = a.dtype if dim_t is None else promote_types(dim_t, a.dtype)
            else:
                zero_t = a.dtype if zero_t is None else promote_types(zero_t, a.dtype)
        elif a is not None:
            k = _scalar_kind(a)
            scal = k if scal is None else max(scal, k, key=order.get)
    if scal is not None:
        default = get_default_dtype()
        scal = {"b": bool_, "i": int64, "f": default, "c": default.to_complex()}[scal]
    return _combine(dim_t, _combine(zero_t, scal))


def _combine(higher, lower):
    """c10's combine_categories: the higher-priority category's dtype unless the lower one is of a higher kind
    (a complex meeting a floating dtype keeps the floating dtype's precision)."""
    if higher is None:
        return lower
    if lower is None or _ORDER[lower.kind] <= _ORDER[higher.kind]:
        return higher
    return higher.to_complex() if lower.kind == "c" and higher.kind == "f" else lower
