"""torch.nn.functional: every layer's computation, written in webtorch ops (so every backend runs
it and autograd differentiates it). Signatures follow PyTorch.

Lowerings: convolution = im2col (a gather at computed offsets, whose backward is a scatter-add,
right for overlapping windows) + one batched matmul; transposed convolution = matmul + col2im
(a scatter-add); max/avg pooling = the same window gather + max(dim)/sum; adaptive pooling and
bilinear interpolation = small interpolation matrices applied by matmul.

The families live in nn/_functional/ (activation, attention, conv, dropout, linear, loss,
normalization, padding, pooling, resampling, sparse); this module is PyTorch's one namespace of them.
"""
# names this module showed before it was split by family (dir(F) is unchanged)
import math  # noqa: F401
import struct  # noqa: F401
import warnings  # noqa: F401

from .. import finfo  # noqa: F401
from .._dtype import bool_, int64  # noqa: F401
from .._tensor import Tensor  # noqa: F401
from ..autograd import grad_mode  # noqa: F401
from ..ops._common import check_inplace_dtype, composite_node, name_of  # noqa: F401
from ..ops.activation import (
    celu,
    elu,
    elu_,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    selu,
    sigmoid,
    silu,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ..ops.registry import FUNCTIONS as _FUNCTIONS
from ..overrides import (  # noqa: F401
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    torch_function,
)
from . import grad  # noqa: F401  (torch.nn.functional.grad is torch.nn.grad)

# private helpers nn/modules reach through F (_ntuple, _single, _canonical_mask, _none_or_dtype, _output_padding,
# _legacy_reduction)
from ._functional._util import _ntuple, _single  # noqa: F401
from ._functional.activation import gumbel_softmax, log_softmax, softmax, softmin
from ._functional.attention import (  # noqa: F401
    _canonical_mask,
    _in_projection,
    _in_projection_packed,
    _mha_shape_check,
    _none_or_dtype,
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ._functional.conv import (
    _output_padding,  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ._functional.ctc import ctc_loss
from ._functional.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._functional.fractional_pooling import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ._functional.grouped import ScalingType, SwizzleType, grouped_mm, scaled_grouped_mm, scaled_mm  # noqa: F401
from ._functional.linear import bilinear, linear
from ._functional.loss import (
    _legacy_reduction,  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cosine_similarity,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    linear_cross_entropy,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    pairwise_distance,
    pdist,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._functional.normalization import (  # noqa: F401
    _verify_batch_size,
    _verify_spatial_size,
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from ._functional.notes import (  # noqa: F401
    assert_int_or_pair,
    boolean_dispatch,
    reproducibility_notes,
    sparse_support_notes,
    tf32_notes,
)
from ._functional.padding import pad
from ._functional.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)
from ._functional.resampling import (
    channel_shuffle,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ._functional.sparse import embedding, embedding_bag, one_hot
from ._functional.unpooling import _unpool_output_size, max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401
from ._functional.vision import (  # noqa: F401
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)

# PyTorch's F.celu_, F.selu_ and F.rrelu_ are torch.celu_, torch.selu_ and torch.rrelu_
celu_, selu_, rrelu_ = (_FUNCTIONS[name] for name in ("celu_", "selu_", "rrelu_"))

_threshold = threshold  # the name PyTorch defines threshold under

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "unfold", "fold", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool2d", "batch_norm", "instance_norm", "layer_norm",
    "group_norm", "rms_norm", "local_response_norm", "normalize", "dropout", "dropout1d", "dropout2d",
    "dropout3d", "alpha_dropout", "feature_alpha_dropout", "embedding", "one_hot", "pad", "interpolate",
    "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
    "scaled_dot_product_attention", "multi_head_attention_forward", "relu", "relu_", "relu6", "leaky_relu",
    "leaky_relu_", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "softmin", "elu", "elu_", "selu",
    "celu", "hardswish", "hardsigmoid", "hardtanh", "hardtanh_", "mish", "softplus", "softsign", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "glu", "prelu", "threshold", "threshold_", "rrelu",
    "gumbel_softmax", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "triplet_margin_loss", "multilabel_soft_margin_loss", "cosine_similarity",
    "pairwise_distance", "pdist", "affine_grid", "grid_sample", "embedding_bag", "ctc_loss",
    "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "channel_shuffle",
    "native_channel_shuffle", "celu_", "selu_", "rrelu_", "linear_cross_entropy",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "conv_tbc",
]
