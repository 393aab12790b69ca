"""The differential fuzzer of eager programs (tests/fuzz_eager.py) on fixed seeds, and the minimized
programs of the mismatches it found, each compared with PyTorch on cpu, cpu-pure and webgpu.

A failure prints each minimized program as Python source; `python tests/fuzz_eager.py --device
webgpu --n 5000 --seed 1` runs a longer fuzz."""
import pytest
import torch

import webtorch as wt
from fuzz_eager import diff, fuzz, source

# programs per device: ~45 s together on 2 cores (webgpu on lavapipe is the slow one)
N = {"cpu": 100, "cpu-pure": 30, "webgpu": 25}


@pytest.fixture
def fuzz_device(request, device):
    return request.node.callspec.params["device"], device


def test_fuzz_eager(fuzz_device):
    name, device = fuzz_device
    bad, _ = fuzz(wt, device, range(N[name]))
    report = "\n\n".join(f"# seed {seed}: {msg}\n{source(lines, device)}" for seed, msg, lines in bad)
    assert not bad, f"{len(bad)} of {N[name]} programs differ from PyTorch on {name}:\n\n{report}"


# Minimized programs of mismatches the fuzzer found, fixed at their root: each must stay equal.
REGRESSIONS = {
    "nan_to_num_grad_sign": [  # PyTorch's NanToNumBackward0: grad * isfinite(x) keeps -0.0 at a replaced -inf
        "v0 = m.tensor([[3.0, -1.75, 1e-40], [3.0, 0.5, -inf]], device=dev, requires_grad=True)",
        "v2 = m.nan_to_num(v0)",
        "m.autograd.backward([v2], [m.tensor([[-0.5, 2.0, 2.0], [0.25, 0.25, -0.5]], device=dev)])"],
    "ldexp_exponent_dtype": [  # a float16 exponent's 2**100 is inf in PyTorch (pow in the exponent's dtype)
        "v0 = m.tensor([[-0.25], [1.0], [2.0]], device=dev, requires_grad=True)",
        "v1 = m.tensor([[-1.0], [1.75], [100.0]], dtype=m.float16, device=dev)",
        "v2 = m.ldexp(v0, v1)", "v3 = m.ldexp(v0, m.tensor([[3], [-150], [7]], device=dev))",
        "(v2.sum() + v3.sum()).backward()"],
    "huber_zero_difference_grad_sign": [  # PyTorch's huber_loss_backward: norm * x * grad keeps -0.0
        "v0 = m.tensor(3.5, device=dev, requires_grad=True)",
        "v1 = m.nn.functional.huber_loss(v0, v0, delta=0.5)",
        "m.autograd.backward([v1], [m.tensor(-0.5, device=dev)])"],
    "mm_inner_size_one_zero_sign": [  # PyTorch's gemm keeps a product's -0.0 when K == 1 (not for one row/column)
        "v0 = m.tensor([[-1.0], [2.0], [1.0]], device=dev, requires_grad=True)",
        "v1 = m.tensor([[0.0, -0.0, 3.0]], device=dev, requires_grad=True)",
        "v2 = v0 @ v1", "v3 = m.nn.functional.linear(v0.unsqueeze(0), v1.t())", "v4 = v0[:1] @ v1",
        "v5 = m.bmm(v0.unsqueeze(0), v1.unsqueeze(0))", "(v2.sum() + v3.sum() + v4.sum() + v5.sum()).backward()"],
    "index_fill_negative_index": [  # webtorch raised IndexError for -n <= index < 0
        "v0 = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=dev, requires_grad=True)",
        "v1 = v0.index_fill(0, m.tensor([-3, -1], device=dev), -1)",
        "v1.sum().backward()"],
    "index_add_vector_out_of_range": [  # RuntimeError, not PyTorch's IndexError, for a vector
        "v0 = m.zeros(3, device=dev).index_add(0, m.tensor([-1], device=dev), m.ones(1, device=dev))"],
    "tensor_inf_to_int": [  # OverflowError, not PyTorch's RuntimeError
        "v0 = m.tensor([1.0, inf], dtype=m.int64, device=dev)"],
    "tensor_nan_to_int": [  # ValueError, not PyTorch's RuntimeError
        "v0 = m.tensor([nan], dtype=m.int32, device=dev)"],
    "median_nan": [  # the NaN skipped (1.0, not nan); ties of median() over all got the whole gradient
        "v0 = m.tensor([[1.0, nan, 0.5, nan], [2.0, 1.0, 3.0, 0.0]], device=dev, requires_grad=True)",
        "v1 = m.median(v0, 1)",
        "v2 = m.median(v0, 0, keepdim=True)",
        "v3 = m.median(v0[1])",
        "v4 = m.tensor([2.0, 1.0, 1.0, 3.0], device=dev, requires_grad=True)",
        "m.autograd.backward([v1[0], v2[0], v3, m.median(v4)], [m.ones(2, device=dev), m.ones(1, 4, device=dev), m.tensor(2.0, device=dev), m.tensor(1.0, device=dev)])"],
    "xlogy_dtype_nan": [  # float32 for float16 and int64 operands, 0 for xlogy(0, nan), a TypeError for a number self
        "v0 = m.tensor([0.0, 1.0, 2.0], dtype=m.float16, device=dev)",
        "v1 = m.xlogy(v0, m.tensor([0, 2, 3], device=dev))",
        "v2 = m.xlogy(m.tensor([0.0, 2.0], device=dev), nan)",
        "v3 = m.xlogy(2, v0)",
        "v4 = m.xlogy(m.tensor([0.0, 0.0, 1.0], device=dev), m.tensor([nan, 0.0, 4.0], device=dev))"],
    "loss_dtypes": [  # huber_loss not in input's dtype; mse/smooth_l1 refused a bool operand
        "v0 = m.tensor([1.5, -2.0], dtype=m.float16, device=dev)",
        "v1 = m.tensor([0.25, 3.0], device=dev)",
        "v2 = F.huber_loss(v0, v1, delta=0.5)",
        "v3 = F.mse_loss(m.tensor([True, False], device=dev), v0)",
        "v4 = F.smooth_l1_loss(m.tensor([True, False], device=dev), v0, reduction='none')"],
    "triu_bool": [  # int64, not bool (the 0 it fills with promoted it)
        "v0 = m.tensor([[True, True, False], [True, True, True]], device=dev)",
        "v1 = v0.triu(1)",
        "v2 = v0.tril()"],
    "repeat_copies": [  # repeat returned an alias of its input: an in-place op on the input changed it
        "v0 = m.tensor([[1, 2]], device=dev)",
        "v1 = v0.repeat(2, 1, 1)",
        "v2 = m.tensor([[1.5, -2.0]], device=dev, requires_grad=True)",
        "v3 = v2.repeat(2, 1)",
        "v4 = v3.abs_()",
        "v0[..., :1].zero_()",
        "v3.sum().backward()"],
    "int_fill_nonfinite": [  # masked_fill/fill_/full/index_fill of inf, NaN or out-of-range into ints: a RuntimeError
        "v0 = m.tensor([[7, 6]], dtype=m.int32, device=dev)",
        "v1 = v0.masked_fill(v0 > 6, nan)"],
    "int_fill_out_of_range": [
        "v0 = m.full((2,), 1e10, dtype=m.int32, device=dev)"],
    "int_index_fill_inf": [
        "v0 = m.tensor([1, 2], device=dev).index_fill(0, m.tensor([0], device=dev), inf)"],
    "int_fill__inf": [
        "v0 = m.tensor([1, 2], dtype=m.uint8, device=dev).fill_(-1.0)"],
    "prod_grad_inf_nan": [  # webtorch gave the exact products of the others; PyTorch's g * y / x has NaN at an inf
        "v0 = m.tensor([[1.0, inf, 2.0], [1e-40, -4.0, nan]], device=dev, requires_grad=True)",
        "v1 = m.tensor([[0.0, 0.0], [inf, 2.0]], device=dev, requires_grad=True)",
        "m.autograd.backward([m.prod(v0, 1), m.prod(v1)], [m.tensor([0.5, 1.0], device=dev), m.tensor(2.0, device=dev)])"],
    "loss_0d_operand": [  # a 0-d float32 operand lost to float16 (PyTorch broadcasts before promoting)
        "v0 = m.tensor([4.0, 1.0, 3.75], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor(2.5, device=dev, requires_grad=True)",
        "v2 = F.mse_loss(v1, v0)",
        "v3 = F.l1_loss(v1, v0)",
        "v4 = F.smooth_l1_loss(v0, v1)",
        "m.autograd.backward([v2, v3, v4], [m.tensor(1.0, device=dev), m.tensor(1.0, device=dev), m.tensor(1.0, device=dev)])"],
    "argmax_bool": [
        "v0 = m.argmax(m.tensor([False, True], device=dev))"],
    "argmin_bool_dim": [
        "v0 = m.argmin(m.tensor([[False, True]], device=dev), 1)"],
    "broadcast_tensors_identity": [  # PyTorch returns an operand of the broadcast shape itself (a leaf stays a leaf)
        "v0 = m.tensor([[1.75], [-0.25]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor([100.0, 3.75, -1.0], device=dev, requires_grad=True)",
        "v2 = m.broadcast_tensors(v0, v0)[0]",
        "v3 = m.broadcast_tensors(v1, m.tensor(2.0, device=dev))[0]",
        "m.autograd.backward([v2, v3], [m.ones(2, 1, dtype=m.float16, device=dev), m.ones(3, device=dev)])"],
    "erfinv_output_modified": [  # erfinv saved its output: an in-place op on it broke backward
        "v0 = m.tensor([0.5, -0.25, 0.0], device=dev, requires_grad=True)",
        "v1 = m.erfinv(v0 * 1)",
        "v2 = v1.mul_(-0.5)",
        "v2.sum().backward()"],
    "softmax_grad_zero_sign": [  # +0.0 where PyTorch's y * (g - sum(g * y)) gives -0.0 (y underflowed to 0)
        "v0 = m.tensor([[2.0, -3.5, -3.75], [-0.25, 1e+30, -1.0]], device=dev, requires_grad=True)",
        "v1 = F.softmax(v0, -1)",
        "v1.backward(m.tensor([[0.25, -0.5, 0.25], [0.0, 0.5, 0.0]], device=dev))"],
    "bce_with_logits_grad_at_zero": [  # gradient 1 - target at x = 0 (max(-x, 0) and |x| differentiated apart)
        "v0 = m.tensor([3.5, 0.0, -0.0, 1.5], device=dev, requires_grad=True)",
        "v1 = F.binary_cross_entropy_with_logits(v0, m.tensor([0.0, 0.0, 1.0, 1.0], device=dev))",
        "v2 = F.binary_cross_entropy_with_logits(v0, m.tensor([1.0, 0.0, 1.0, 0.0], device=dev), pos_weight=m.tensor([2.0, 2.0, 2.0, 2.0], device=dev))",
        "m.autograd.backward([v1, v2], [m.tensor(1.0, device=dev), m.tensor(0.5, device=dev)])"],
    "addcdiv_int_tensor1": [  # value * tensor1 wrapped in int32 before the division
        "v0 = m.tensor([[1.0, 0.5]], device=dev, requires_grad=True)",
        "v1 = m.tensor([[-2147483648, 2147483647]], dtype=m.int32, device=dev)",
        "v2 = m.addcdiv(v0, v1, m.tensor([1.0, 0.5], device=dev), value=2)",
        "v2.sum().backward()"],
    "rtruediv_is_reciprocal_mul": [  # number / tensor divided; PyTorch's is reciprocal(tensor) * number
        "v0 = m.tensor([3e-08, 2.0, -0.0, 49.0], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor([7.0, 49.0, 3.0, 0.0], device=dev)",
        "v2 = -0.0 / v0",
        "v3 = 7.0 / v1",
        "v4 = 1 / m.tensor([3, 0], device=dev)",
        "v2.backward(m.ones(4, dtype=m.float16, device=dev))"],
    "lerp_mixed_dtypes": [  # PyTorch's lerp does not promote: a RuntimeError
        "v0 = m.lerp(m.tensor([1.0], dtype=m.float16, device=dev), m.tensor([2.0], device=dev), 0.25)"],
    "inplace_into_expanded": [  # computed; PyTorch refuses to write one element twice (zero_ and masked_fill_ may)
        "v0 = m.ones(1, 3, device=dev).expand(2, 3)",
        "v0.zero_()",
        "v0.masked_fill_(v0 == 0, 2.0)",
        "v0.mul_(2)"],
    "inplace_on_unbind_output": [  # computed; PyTorch refuses an in-place op on an output of unbind or split
        "v0 = m.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev, requires_grad=True)",
        "v1 = (v0 * 1).unbind(0)",
        "v1[1].mul_(2)"],
    "inplace_on_split_output_view": [
        "v0 = m.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev, requires_grad=True)",
        "v1 = (v0 * 1).split([1, 1])",
        "v1[1][0].zero_()"],
    "inplace_view_ops": [  # t_, transpose_, swapaxes_, squeeze_, unsqueeze_, as_strided_ were missing
        "v0 = m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], device=dev, requires_grad=True)",
        "v1 = v0 * 1",
        "v2 = v1.sin()",
        "v1.t_()",
        "v3 = (v0 * 2).unsqueeze_(0).transpose_(0, 2).swapaxes_(1, 2).swapdims_(0, 1).squeeze_(2)",
        "v4 = (v0 * 3)[1].unsqueeze_(1).squeeze_((1,)).squeeze_()",
        "v5 = (v0 * 4).as_strided_((2, 2), (1, 3), 1)",
        "v6 = v1 * m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=dev)",
        "m.autograd.backward([v6, v3, v4, v5], [m.ones(3, 2, device=dev), m.ones(1, 3, 2, device=dev), m.ones(3, device=dev), m.ones(2, 2, device=dev)])",
        "v2.sum().backward()"],  # v1.t_() bumped the version of what sin saved
    "where_number_out_of_range": [  # wrapped into the int dtype; PyTorch's overflow error
        "v0 = m.tensor([1, -2], dtype=m.int32, device=dev)",
        "v1 = m.where(v0 > 0, v0, -2**31)",
        "v2 = m.where(v0 > 0, m.tensor([3, 4], dtype=m.uint8, device=dev), -1)",
        "v3 = m.where(v0 > 0, 2**31, v0)"],
    "where_number_out_of_float_range": [
        "v0 = m.where(m.tensor([True, False], device=dev), m.tensor([1.0, 2.0], device=dev), 1e300)"],
    "number_past_64_bits": [  # wrapped; PyTorch's OverflowError from its Scalar argument
        "v0 = m.tensor([1, 2], device=dev) * 2**70"],
    "logcumsumexp_range": [  # one shift for the whole row: exp(-100 - 100) underflowed, -inf for -100
        "v0 = m.tensor([[-100.0, 100.0, -inf, 1.0, 1e+30], [-inf, -inf, 1.0, nan, 2.0]], device=dev, requires_grad=True)",
        "v1 = m.logcumsumexp(v0, 1)",
        "v1.backward(m.tensor([[1.0, -2.0, 0.5, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]], device=dev))"],
    "smooth_l1_huber_grad_inf": [  # the unselected square's gradient 0 * inf made NaN at an infinite difference
        "v0 = m.tensor([inf, 1.0, -inf, nan, 0.25, -3.0], device=dev, requires_grad=True)",
        "v1 = m.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 0.0], device=dev)",
        "v2 = F.smooth_l1_loss(v0, v1, beta=0.5)",
        "v3 = F.huber_loss(v0, v1, reduction='sum', delta=2.0)",
        "m.autograd.backward([v2, v3], [m.tensor(1.0, device=dev), m.tensor(0.5, device=dev)])"],
    "xlogy_number_self": [  # XlogyBackward0 with an edge for the number (PyTorch's overload has its own node)
        "v0 = m.tensor([1.5, 2.0, 0.0], device=dev, requires_grad=True)",
        "v1 = m.xlogy(0, v0)",
        "v2 = [f.name() for f, _ in v1.grad_fn.next_functions] + [v1.grad_fn.name()]",
        "v3 = len(m.remainder(2.0, v0).grad_fn.next_functions)",
        "v1.sum().backward()"],
    "softsign_bool": [  # a float result; PyTorch's abs refuses bool
        "v0 = F.softsign(m.tensor([True, False], device=dev))"],
    "norm_0_grad_none": [  # zeros; PyTorch's nodes pass no gradient on as none (norm 0 has none)
        "v0 = m.tensor([[1.0, 0.0]], device=dev, requires_grad=True)",
        "v1 = m.norm(v0.reshape(-1), 0)",
        "v1.backward()"],
    "logcumsumexp_negative_zero": [
        "v0 = m.tensor([[-0.0, -2.5, inf]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.logcumsumexp(v0, 1)"],
    "hardswish_grad_at_3": [  # PyTorch's middle branch is -3 < x < 3 (webtorch's took x = 3, not x = -3)
        "v0 = m.tensor([3.0, -3.0, 2.9, -2.9, 3.1], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.hardswish(v0)",
        "v1.backward(m.tensor([2.0, 1.0, 1.0, 1.0, 1.0], dtype=m.float16, device=dev))"],
    "inplace_on_output_of_scan": [  # cumprod's result was a view of a temporary made in no_grad: PyTorch's error
        "v0 = m.tensor([[0.5, -2.5, -0.5], [-3.0, 3e+38, 3.25]], device=dev, requires_grad=True)",
        "v1 = m.cumprod(v0, 0)",
        "v2 = v1[1:].mul_(-0.0)"],
    "median_bool": [  # computed; PyTorch's kernels refuse bool (topk, kthvalue, median) and quantile all but float/double
        "v0 = m.median(m.tensor([[False, True, False]], device=dev), -1)"],
    "median_all_bool": [
        "v0 = m.median(m.tensor([[False, True, False]], device=dev))"],
    "topk_bool": [
        "v0 = m.topk(m.tensor([[False, True, False]], device=dev), 1)"],
    "kthvalue_bool": [
        "v0 = m.kthvalue(m.tensor([[False, True, False]], device=dev), 1)"],
    "kthvalue_0d_bool": [  # PyTorch runs no kernel on a 0-d input: a bool is taken
        "v0 = m.kthvalue(m.all(m.tensor([[1.0, 2.0]], device=dev)), 1, -1)"],
    "loss_integer_operands": [  # computed in the integer dtype; PyTorch's kernels refuse a non-floating common dtype
        "v0 = m.tensor([[4, -6, -6], [10, -4, -1]], device=dev)",
        "v1 = F.smooth_l1_loss(m.amin(v0), v0)"],
    "mse_integer_operands": [
        "v0 = F.mse_loss(m.tensor([1, 2], device=dev), m.tensor([True, False], device=dev))"],
    "cosine_similarity_integer_operands": [
        "v0 = F.cosine_similarity(m.tensor([-7, -5, 3], device=dev), m.tensor([False, True, True], device=dev), dim=-1)"],
    "median_all_nan_grad": [  # NaN everywhere; PyTorch shares the gradient between the NaNs (as max())
        "v0 = m.tensor([[inf], [1e-40], [nan]], device=dev, requires_grad=True)",
        "v1 = m.tensor([3.0, nan, 1.0, nan], device=dev, requires_grad=True)",
        "m.autograd.backward([m.median(v0), m.median(v1)], [m.tensor(1.0, device=dev), m.tensor(2.0, device=dev)])"],
    "layer_norm_empty_shape": [  # the identity normalization; PyTorch refuses normalized_shape []
        "v0 = F.layer_norm(m.tensor(3.25, device=dev), ())"],
    "quantile_int": [
        "v0 = m.quantile(m.tensor([1, 2, 3], dtype=m.int32, device=dev), 0.5)"],
    "logcumsumexp_int": [
        "v0 = m.logcumsumexp(m.tensor([1, 2], device=dev), 0)"],
    # webgpu-rest: webgpu-only findings
    "std_var_extreme_finite": [  # webgpu (float32 squares): inf for 3e38s, 0 for 1e-30s and subnormals
        "v0 = m.std(m.tensor([3e+38, -3e+38, 1e+38], device=dev))",
        "v1 = m.tensor([[1e-30, 2e-30, -1e-30], [1e-40, -1e-40, 3e-41]], device=dev)",
        "v2 = m.std(v1, 1, keepdim=True)",
        "v3 = m.var(v1 * 1e+28, 1, correction=0)",
        "v4 = m.std(m.tensor([300.0, -300.0, 5.0], dtype=m.float16, device=dev))",
        "v5 = m.var(m.tensor([[inf, 1.0], [nan, 0.0], [0.0, 0.0]], device=dev), 1)"],
    "pow_negative_zero_odd": [  # webgpu: pow(-0, odd) past the repeated-squaring range lost its sign (inf, 0)
        "v0 = m.tensor([-1595.0, -65.0, 65.0, -66.0, 1e+10, -3.0, -0.5], device=dev)",
        "v1 = m.pow(m.tensor(-0.0, device=dev), v0)",
        "v2 = (-1e-09) ** v0.half()"],  # the number rounds to float16 -0.0 first
    "sum_order_overflow": [  # webgpu's tree added x0 + x2 first: 3e38 + 1e38 = inf where PyTorch's sum is 1e38
        "v0 = m.tensor([[3e+38, -3e+38, 1e+38], [-3e+38, 3e+38, -1e+38]], device=dev)",
        "v1 = m.sum(v0, 1)",
        "v2 = m.mean(v0, 1, keepdim=True)",
        "v3 = m.nansum(v0[0])"],
    "acosh_huge_negative": [  # webgpu: inf (t (t + 2) overflowed) where acosh(x < 1) is NaN
        "v0 = m.acosh(m.tensor([-3e+38, -1e+30, -2.0, 0.5, 1.0, 1e+30, nan], device=dev))",
        "v1 = m.acosh(m.tensor([-60000.0, 1.5], dtype=m.float16, device=dev))"],
    "lerp_float16_opmath": [  # end - input in float16 overflowed (PyTorch computes in float32, weight unrounded)
        "v0 = m.tensor([-60000.0, 60000.0, 1.5, -2.25], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor([60000.0, -60000.0, 0.001, 3.0], dtype=m.float16, device=dev)",
        "v2 = m.lerp(v0, v1, 0.25)",
        "v3 = m.lerp(v0, v1, 0.7)",
        "v4 = m.addcmul(v0, v1, v1, value=-1e-5)",
        "m.autograd.backward([v2, v3], [m.ones(4, dtype=m.float16, device=dev), m.ones(4, dtype=m.float16, device=dev)])"],
    "norm_single_element": [  # inf: PyTorch takes |x| where each result reduces one element (no square)
        "v0 = m.tensor(1e+30, device=dev, requires_grad=True)",
        "v1 = m.tensor([[1e+30, 2.0], [1e-40, 0.0]], device=dev, requires_grad=True)",
        "v2 = m.norm(v0)",
        "v3 = m.norm(v1[:1], dim=0)",
        "v4 = m.norm(v1[:, :1], 3, dim=1, keepdim=True)",
        "v5 = m.norm(v0, dim=0)",  # a 0-d input with a dim given squares (inf)
        "v6 = m.norm(v1, dim=1)",
        "m.autograd.backward([v2, v3], [m.tensor(2.0, device=dev), m.ones(2, device=dev)])"],
    "float16_mean_norm_opmath": [  # float16 sums rounded before the division / square root: inf
        "v0 = m.tensor([[60000.0, 60000.0, 1.0], [300.0, 300.0, -0.25]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.mean(v0, 1)",
        "v2 = m.mean(v0[:, :2])",
        "v3 = m.norm(v0[1])",
        "v4 = m.norm(v0[1], 3)",
        "m.autograd.backward([v1, v3], [m.ones(2, dtype=m.float16, device=dev), m.tensor(1.0, dtype=m.float16, device=dev)])"],
    "bce_with_logits_zero_grad_sign": [  # +0.0 where PyTorch's (sigmoid(x) - target) * g is -0.0
        "v0 = m.tensor([-3.75, 2.0, 0.0], device=dev, requires_grad=True)",
        "v1 = m.tensor([1.0, 0.0, 1.0], device=dev, requires_grad=True)",
        "v2 = F.binary_cross_entropy_with_logits(v0, v1, reduction='none')",
        "v3 = F.binary_cross_entropy_with_logits(v0, v1, weight=m.tensor([2.0, -1.0, 0.5], device=dev), pos_weight=m.tensor([3.0, 1.0, 0.25], device=dev))",
        "v4 = [f.name() if f else None for f, _ in v3.grad_fn.next_functions]",
        "m.autograd.backward([v2, v3], [m.tensor([0.0, -0.0, 1.0], device=dev), m.tensor(0.5, device=dev)])"],
    "layer_norm_negative_zero": [  # -0.0 where PyTorch's kernel adds the (zero) bias last
        "v0 = m.tensor([[-0.0, -0.0, 0.0], [-1.0, -1.0, -1.0]], device=dev, requires_grad=True)",
        "v1 = F.layer_norm(v0, (3,))",
        "v2 = F.layer_norm(v0, (3,), weight=m.tensor([-1.0, 2.0, 1.0], device=dev))",
        "m.autograd.backward([v1, v2], [m.ones(2, 3, device=dev), m.ones(2, 3, device=dev)])"],
    "hooks_called_with_none": [  # not called; PyTorch calls a tensor's hooks with None when no gradient reaches it
        "v0 = m.tensor([1.0, 0.0], device=dev, requires_grad=True)",
        "v1 = v0 * 2",
        "v2 = []",
        "h0 = v0.register_hook(lambda g: v2.append(g is None))",
        "h1 = v1.register_hook(lambda g: v2.append(g is None))",
        "v3 = (v0 * 1).unbind(0)",
        "h2 = v3[0].register_hook(lambda g: v2.append(g is None))",
        "m.autograd.backward([m.norm(v1, 0), v3[1]], [m.tensor(1.0, device=dev), m.tensor(2.0, device=dev)])"],
    "nanmedian_mode_special_xlogy": [  # missing
        "v0 = m.tensor([[1.0, nan, 0.5, nan], [2.0, 1.0, 2.0, 1.0], [nan, nan, nan, -1.0]], device=dev, requires_grad=True)",
        "v1 = m.nanmedian(v0, 1)",
        "v2 = m.nanmedian(v0)",
        "v3 = v0.nanmedian(0, keepdim=True)",
        "v4 = m.mode(v0, 1)",
        "v5 = m.mode(m.tensor([[3, 1, 3, 1, 2], [0, 0, 1, 1, 1]], device=dev), 1, True)",
        "v6 = m.mode(m.tensor([0.0, -0.0, 1.0], device=dev)).values",
        "v7 = m.special.xlogy(v0, 2.0)",
        "m.autograd.backward([v1[0], v2, v3[0], v4[0]], [m.tensor([1.0, 2.0, 3.0], device=dev), m.tensor(0.5, device=dev), m.ones(1, 4, device=dev), m.ones(3, device=dev)])"],
    "float16_through_float32": [  # a Python float rounded to float16 once: PyTorch rounds it to float32 first
        "v0 = m.tensor([-990.1053724670969, -904.7499924815656], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.fmod(v0[:1], v0[1:])",
        "v2 = m.full((2,), -904.7499924815656, dtype=m.float16, device=dev)",
        "v3 = m.remainder(v0, v2)",
        "v4 = m.floor_divide(m.tensor([65504.0, -1.0], dtype=m.float16, device=dev), m.tensor([0.1, 0.0], dtype=m.float16, device=dev))",
        "v3.backward(m.ones(2, dtype=m.float16, device=dev))"],  # cpu-pure: struct.error for floor_divide past 65504
    "cosine_similarity_norms": [  # w12 / sqrt(n1 * n2): PyTorch divides by each norm (clamped without grad)
        "v0 = m.tensor([[0.75], [3e-08], [inf], [0.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.cosine_similarity(v0, v0, dim=-1)",
        "v2 = m.tensor([[1e+30, 1e+30], [1e-09, 2e-09], [3.0, -1.0]], device=dev, requires_grad=True)",
        "v3 = F.cosine_similarity(v2, v2.flip(0), dim=-1)",
        "m.autograd.backward([v3], [m.ones(3, device=dev)])"],
    "logcumsumexp_grad_overflow": [  # g * exp(x - y) summed: PyTorch sums g's signed parts in log space
        "v0 = m.tensor([[1e+30, 1e+30, 3.0], [3e+38, 3e+38, -1.0], [-inf, 1e+30, -1e+30]], device=dev, requires_grad=True)",
        "v1 = m.logcumsumexp(v0, 1)",
        "v1.backward(m.tensor([[1.0, 1.0, 1.0], [1.0, -0.5, 0.0], [1.0, 1.0, 1.0]], device=dev))"],
    "addcdiv_integer_division": [  # computed; PyTorch refuses integer tensor1 and tensor2
        "v0 = m.tensor([6, 9, -9], dtype=m.int32, device=dev)",
        "v1 = m.addcdiv(v0, v0, v0, value=2)"],
    "cosine_similarity_integer_operand": [  # an integer operand is converted to the common float dtype first
        "v0 = m.tensor([[-0.5, 3.25, -1.25]], device=dev, requires_grad=True)",
        "v1 = F.cosine_similarity(m.tensor([[-8, -5, 9], [-8, -1, 6]], dtype=m.int32, device=dev), v0, dim=-1)",
        "v2 = F.cosine_similarity(m.tensor([[-2.25, 2.25, -inf]], dtype=m.float16, device=dev), m.tensor([[-1, 6, 4]], device=dev), dim=-1)",
        "v1.backward(m.ones(2, device=dev))"],
    "smooth_l1_same_operand_zero_sign": [  # +0.0: PyTorch's target gradient is the formula with the operands swapped
        "v0 = m.tensor([[-2.25, -2.0, -1.5]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.smooth_l1_loss(v0, v0).unsqueeze(0)",
        "m.autograd.backward([v1], [m.tensor([-0.5], dtype=m.float16, device=dev)])"],
    "pow_grad_order": [  # g * exponent * x ** (e - 1): PyTorch's g * (exponent * x ** (e - 1)) overflows (or not) apart
        "v0 = m.tensor([0.75, -1.75, 3.0, -0.25], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor([3e+38, 1.0, -0.0, 1e-40], device=dev, requires_grad=True)",
        "m.autograd.backward([v0 ** 65504.0, m.square(v1)], [m.tensor([2.0, 0.25, 0.0, 1.0], dtype=m.float16, device=dev), m.tensor([0.25, 1.0, 1.0, 1.0], device=dev)])"],
    "ldexp_grad_integer_power": [  # 2 ** other in floats; PyTorch's grad * pow(2, other) is an integer power (2 ** -1 is 0)
        "v0 = m.tensor([[-2.25, -2.0, -1.75], [4.0, 1.75, -3.0]], device=dev, requires_grad=True)",
        "v1 = m.ldexp(v0, m.tensor([[-1, 5, -1], [-7, 0, -4]], dtype=m.int32, device=dev))",
        "v1.backward(m.tensor([[1.0, 1.0, 1.0], [1.0, -0.5, 1.0]], device=dev))"],
    "cumprod_grad_single_element_dim": [  # NaN (y / x of inf); PyTorch's gradient along a dim of size 1 is g
        "v0 = m.tensor([[-100000.0], [-inf], [-2.5]], device=dev, requires_grad=True)",
        "v1 = m.tensor(-inf, device=dev, requires_grad=True)",
        "m.autograd.backward([m.cumprod(v0, 1), v0, m.cumprod(v1, 0)], [m.tensor([[-0.5], [-0.5], [0.25]], device=dev), m.tensor([[0.0], [0.25], [2.0]], device=dev), m.tensor(3.0, device=dev)])"],
    "clamp__result_dtype": [  # computed; PyTorch's in-place clamp refuses a result type it can't cast to self's
        "v0 = m.tensor([[True, False], [True, True]], device=dev)",
        "v1 = v0[1:].clamp_(min=0)"],
    "fill_one_float16_unchecked": [  # PyTorch's fill_ / full of one float16 element skip the range check: inf
        "v0 = m.zeros(1, dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.sort(v0 * 1, dim=-1, stable=True)[0].fill_(1e+30)",
        "v2 = m.full((), -70000.0, dtype=m.float16, device=dev)",
        "v3 = m.zeros(3, dtype=m.float16, device=dev)[1:2].fill_(1e+30)"],
    "gelu_float16_one_plus_erf": [  # PyTorch's float16 kernel is h * (1 + erf) (its float32 one h * erf + h)
        "v0 = m.tensor([-5.625, -0.0, -6.0, -2.25, 3.0], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.gelu(v0)",
        "v2 = F.gelu(v0.float())",
        "v1.backward(m.ones(5, dtype=m.float16, device=dev))"],
    "addcdiv_addcmul_grad_rows": [  # the composite's gradient (2.0) where PyTorch's row -g * value * t1 / t2 ** 2 is NaN
        "v0 = m.tensor([[-2.573, -2.75, 3.5], [0.0, 3.25, -inf], [-1.5, -60000.0, -inf]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.addcdiv(v0, v0, v0, value=2)",
        "v2 = m.addcmul(v0, v0, v0, value=-0.5)",
        "m.autograd.backward([v0, v1, v2], [m.tensor([[-0.5, -0.5, -0.5], [1.0, 1.0, -0.5], [0.0, 2.0, 0.25]], dtype=m.float16, device=dev), m.tensor([[0.25, 2.0, -0.5], [0.0, 1.0, 0.25], [1.0, 0.0, 1.0]], dtype=m.float16, device=dev), m.ones(3, 3, dtype=m.float16, device=dev)])"],
    "neg__bool": [  # computed on cpu-pure; PyTorch refuses neg_ of bool as neg
        "v0 = m.tensor([True, False], device=dev).neg_()"],
    "scatter_0d_src": [  # IndexError; PyTorch takes a 0-d src as of size 1 in every dim
        "v0 = m.tensor([0.5, 2.0], device=dev, requires_grad=True)",
        "v1 = m.tensor(0.25, device=dev, requires_grad=True)",
        "v2 = m.scatter(v0, -1, m.zeros(1, dtype=m.int64, device=dev), v1 * 2)",
        "v2.backward(m.tensor([1.0, 3.0], device=dev))"],
    "softmax_empty_integer": [  # NotImplementedError; PyTorch runs no kernel on an empty input
        "v0 = F.softmax(m.tensor([], dtype=m.int64, device=dev), 0)"],
    "cumsum_negative_zero": [  # -0.0; PyTorch's running sum starts from 0 (0 + -0.0 is 0.0)
        "v0 = m.tensor([[-0.0, -0.0, 1.0], [0.75, -0.0, -4.0]], device=dev, requires_grad=True)",
        "v1 = m.cumsum(v0, -1)",
        "v2 = m.cumsum(v0, 0, dtype=m.float16)",
        "v1.backward(m.tensor([[-0.0, 1.0, -0.0], [1.0, 1.0, 1.0]], device=dev))"],
    "layer_norm_float16_opmath": [  # NaN: float16's rsqrt derivative overflowed (PyTorch computes in float32)
        "v0 = m.tensor([[-3.75], [0.25], [-1.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.layer_norm(v0, (1,))",
        "v2 = F.layer_norm(m.tensor([[300.0, -300.0, 1.0]], dtype=m.float16, device=dev), (3,))",
        "v1.backward(m.tensor([[-0.5], [0.0], [1.0]], dtype=m.float16, device=dev))"],
    "index_put_number_out_of_range": [  # wrapped; PyTorch's checked conversion of the number (floats: inf)
        "v0 = m.tensor([9], dtype=m.int32, device=dev)",
        "v1 = m.tensor([0.5, -0.5], dtype=m.float16, device=dev)",
        "v1[v1 > 0] = 1e+30",
        "v1[m.tensor([1, 1], device=dev)] = -1e+30",
        "v0[m.tensor([0, 0], device=dev)] = inf"],
    "fill__grad_zeros": [  # g * 0 (-0.0); PyTorch's CopyBackwards gives the overwritten tensor zeros
        "v0 = m.tensor([1.0, nan], device=dev, requires_grad=True)",
        "v1 = v0.to(m.float16)",
        "v1.fill_(0)",
        "v1.backward(m.tensor([-0.5, inf], dtype=m.float16, device=dev))"],
    "copy__old_history_zeros": [  # the old history got no gradient (None); PyTorch's CopyBackwards gives it zeros
        "v0 = m.tensor([0.5, -1.0], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.tensor([-1.75, 2.75], device=dev, requires_grad=True)",
        "v2 = m.maximum(v0, v0)",
        "v3 = v2.copy_(v1)",
        "m.autograd.backward([v3, v2], [m.tensor([2.0, 0.25], dtype=m.float16, device=dev), m.ones(2, dtype=m.float16, device=dev)])"],
    "unique_nan": [  # NaNs in the set's arbitrary order; PyTorch puts each NaN last, in the order met
        "v0 = m.tensor([nan, 2.0, nan, inf, 1.0, -inf, 2.0], device=dev)",
        "v1 = m.unique(v0, return_inverse=True, return_counts=True)"],
    "xlogy_operand_in_common_dtype": [  # log of the int64 100000 (11.5); PyTorch casts it to float16 first (inf)
        "v0 = m.tensor([[1.75, -4.0], [0.0, 2.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.xlogy(v0, m.tensor(100000, device=dev))",
        "v2 = m.xlogy(v0, m.tensor(70000.0, device=dev))",
        "v1.backward(m.ones(2, 2, dtype=m.float16, device=dev))"],
    "pow_minus_one_inf": [  # webgpu: NaN (inf * log2(1)) where C's pow(-1, +-inf) is 1
        "v0 = m.pow(m.tensor([-1.0, -1.0, -1.0, 1.0], device=dev), m.tensor([inf, -inf, nan, nan], device=dev))",
        "v1 = m.pow(m.tensor([-1.0, -1.0], dtype=m.float16, device=dev), m.tensor([1e+10, -3e+38], dtype=m.float16, device=dev))"],
    "copy_slices_region_gradient": [  # 0.0: the view's -0.0 gradient was added to the region's +0.0
        "v0 = m.tensor([1.0, -2.0, 3.0], device=dev, requires_grad=True)",
        "v1 = v0 * 1.0",
        "v2 = v1[1:].mul_(0.0)",
        "v1.backward(m.full((3,), -1.0, device=dev))"],
    "copy_slices_fill": [  # a fill does not read the view: its region gets +0.0
        "v0 = m.tensor([1.0, -2.0, 3.0], device=dev, requires_grad=True)",
        "v1 = v0.clone()",
        "v2 = v1[1:].fill_(4.0)",
        "v1.backward(m.full((3,), -1.0, device=dev))"],
    "softmax_backward_row_sum": [  # PyTorch sums a last-dim row from its first element: all -0.0 gives -0.0
        "v0 = m.tensor([[3.75, 0.25, -1.25], [1.0, -0.5, 2.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.softmin(v0, -1, dtype=m.float32) * -0.0",
        "v2 = m.tensor([[3.75, 0.25, -1.25], [1.0, -0.5, 2.0]], device=dev, requires_grad=True)",
        "v3 = v2.softmax(-1) * -0.0",
        "v4 = v2.log_softmax(1) * -0.0",
        "v5 = v2.softmax(0) * -0.0",
        "m.autograd.backward([v1, v3, v4, v5], [m.ones(2, 3, device=dev)] * 4)"],
    "mse_loss_same_operands": [  # 0.0: -0.0 + 0.0; PyTorch's target gradient swaps the operands (both -0.0)
        "v0 = m.tensor([1.0, -2.0, 0.0, -0.0], device=dev, requires_grad=True)",
        "v1 = F.mse_loss(v0, v0)",
        "v2 = F.mse_loss(v0.half(), v0.half(), reduction='none')",
        "m.autograd.backward([v1, v2], [m.tensor(-1.0, device=dev), m.full((4,), -0.5, dtype=m.float16, device=dev)])"],
    "cosine_similarity_norm_clone": [  # -0.0: the clamped norm's gradient went through a where (+0.0 added)
        "v0 = m.tensor([-2.75], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.cosine_similarity(v0, v0, dim=-1)",
        "v1.backward(m.tensor(0.0, dtype=v1.dtype, device=dev))"],
    "masked_select_norm_rows": [  # masked_select's gradient accumulated into zeros; norm's for p < 1 a decomposition
        "v0 = m.tensor([[-1.75, 0.0, 0.25, 3.0], [-0.5, 1.5, -4.0, 0.5]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.norm(m.masked_select(v0, v0 < 1), -1)",
        "v2 = m.linalg.vector_norm(v0, 0.5, dim=1)",
        "v3 = m.linalg.vector_norm(v0, 3)",
        "v4 = m.linalg.vector_norm(v0, -inf, dim=0)",
        "m.autograd.backward([v1, v2, v3, v4], [m.tensor(-0.5, dtype=m.float16, device=dev), "
        "m.tensor([-1.0, 0.0], dtype=m.float16, device=dev), m.tensor(-0.0, dtype=m.float16, device=dev), "
        "m.tensor([1.0, -1.0, 2.0, -0.0], dtype=m.float16, device=dev)])"],
    "addcmul_bool": [  # computed; PyTorch's kernel has no bool form
        "v0 = m.tensor([False, True, False], device=dev)",
        "v1 = m.addcmul(v0, v0, v0, value=-0.5)"],
    "ldexp_integer_self": [  # 0.0: an int64 exponent wrapped to int32; an integer self goes through pow(2.0, other)
        "v0 = m.tensor([1, 3, -2, 5], dtype=m.int32, device=dev)",
        "v1 = m.ldexp(v0, m.tensor([2 ** 32 + 1, -200, 3, -1], device=dev))",
        "v2 = m.ldexp(v0.float(), m.tensor([3, -1, 0, 2], dtype=m.int32, device=dev))"],
    "pow_square_roots": [  # C's pow: (-inf) ** 0.5 is inf, (-0.0) ** 0.5 0.0; PyTorch's kernel takes sqrt / rsqrt
        "v0 = m.tensor([-inf, -0.0, 0.0, inf, -4.0, 2.25], device=dev, requires_grad=True)",
        "v1 = v0 ** 0.5",
        "v2 = v0 ** -0.5",
        "v3 = v0.detach().clone().pow_(0.5)",
        "v4 = m.tensor([True, False], device=dev) ** True",
        "(v1 + v2).backward(m.ones(6, device=dev))"],
    "pow_bool_tensors": [  # computed; PyTorch's kernel has no bool form
        "v0 = m.tensor([[False, True, False]], device=dev)",
        "v1 = m.pow(v0, v0.unsqueeze(2))"],
    "cumprod_grad_after_zero": [  # NaN before the zero: a later -inf * 0 term of the products
        "v0 = m.tensor([[0.25, -inf, 0.0], [2.0, 0.5, -1.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = m.cumprod(v0, -1)",
        "v1.backward(m.tensor([[1.0, 2.0, 0.0], [1.0, 1.0, 1.0]], dtype=m.float16, device=dev))"],
    "dim_results_contiguous": [  # cumprod / sort / topk along dim 0 gave permuted views (view(-1) raised)
        "v0 = m.tensor([[[0.5, -2.75, -6.0], [2.5, 3.0, -3.0]], [[-1.25, 1.5, -2.25], [2.0, 0.25, 1.5]]], device=dev, requires_grad=True)",
        "v1 = m.cumprod(v0, 0).view(-1)",
        "v2 = m.sort(v0, dim=0)[1].view(-1)",
        "v3 = m.topk(v0, 1, 0)[0].view(-1)",
        "v4 = m.kthvalue(v0, 1, 0)[1].view(-1)",
        "v5 = m.cummax(v0, 0)[1].view(-1)",
        "(v1.sum() + v3.sum()).backward()"],
    "value_selecting_grad_written": [  # +0.0: the gradient added into zeros (PyTorch writes it: -0.0 stays)
        "v0 = m.tensor([[1.0, 3.0, 2.0], [4.0, 0.5, 0.25]], device=dev, requires_grad=True)",
        "v1 = m.max(v0, 1)[0]",
        "v2 = m.median(v0, 1)[0]",
        "v3 = m.mode(v0, 0)[0]",
        "m.autograd.backward([v1, v2, v3], [m.full((2,), -0.0, device=dev), m.full((2,), -0.0, device=dev), m.full((3,), -0.0, device=dev)])"],
    "flip_roll_grad_written": [  # +0.0: flip's / roll's gradient added into zeros (PyTorch flips / rolls g)
        "v0 = m.tensor([[[2.25, 0.75, -1.25], [-1.75, 1.25, -0.75]]], device=dev, requires_grad=True)",
        "v1 = v0.flip(1)",
        "v2 = v1.abs_()",
        "v3 = v0.roll(1, 2) * 1.0",
        "m.autograd.backward([v1, v3], [m.tensor([[[0.0, 0.0, 1.0], [-0.5, 0.25, 1.0]]], device=dev), m.full((1, 2, 3), -0.0, device=dev)])"],
    "scatter_src_dims": [  # computed; PyTorch checks src's dims against index's
        "v0 = m.tensor([3.5], device=dev)",
        "v1 = m.scatter(v0, -1, m.zeros_like(v0, dtype=m.int64), m.tensor([[3.5], [-4.0]], device=dev))"],
    "float16_softmax_gelu_opmath": [  # each product rounded to float16; PyTorch's kernels: float32, one rounding
        "v0 = m.tensor([0.5, -3.75, -2.0], dtype=m.float16, device=dev, requires_grad=True)",
        "v1 = F.softmax(v0.reshape(-1), 0)[0]",
        "v2 = m.tensor([[4.0, -1.5, -3.0], [3.25, 3.75, 4.0], [-3.25, -0.5, 0.75]], dtype=m.float16, device=dev, "
        "requires_grad=True)",
        "v3 = F.gelu(v2)",
        "m.autograd.backward([v1, v3], [m.tensor(1.0, dtype=m.float16, device=dev), "
        "m.tensor([[2.0, 0.0, 2.0], [0.25, -0.5, 0.0], [0.25, -0.5, 1.0]], dtype=m.float16, device=dev)])"],
    "copy_onto_itself": [  # the overlap error; PyTorch's copy_ of a tensor onto itself is a no-op
        "v0 = m.tensor([[-0.0, 2.927, 1.75]], dtype=m.float16, device=dev)",
        "v1 = v0.expand(2, 3)",
        "v2 = v1.copy_(v1)",
        "v3 = (m.ones(1, 3, device=dev, requires_grad=True) * 2).expand(2, 3)",
        "v4 = v3.copy_(v3)"],
    "sgd_float16_alpha": [  # alpha unrounded; PyTorch's vectorized kernel (64 elements: no scalar tail) rounds alpha
        "v0 = (m.arange(64, device=dev) * 0.37 - 11.0).to(m.float16).requires_grad_()",
        "v1 = m.arange(64, device=dev).to(m.float16) * 0.1 - 3.0",
        "v2 = v1.add(v1.flip(0), alpha=0.9)",
        "v3 = v1.sub(v1.flip(0), alpha=-2.3)",
        "opt = m.optim.SGD([v0], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
        "(v0 * v0).sum().backward()",
        "opt.step()",
        "opt.zero_grad()",
        "(v0 * v0 * v0).sum().backward()",
        "opt.step()"],
    "sgd_float16_scalar_tail": [  # PyTorch's scalar loop (numel % 32 last elements) rounds alpha * b to float16
        "v0 = m.tensor([[[3.75, 3.0, -1.0], [0.75, -3.75, -2.25]], [[1.75, 3.25, 1.25], [0.5, -3.25, -2.25]]], "
        "dtype=m.float16, device=dev, requires_grad=True)",
        "opt = m.optim.SGD([v0], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
        "loss0 = (v0.sin() * 3).sum()",
        "loss0.backward()",
        "opt.step()",
        "v1 = m.arange(40, device=dev).to(m.float16).add(m.arange(40, device=dev).to(m.float16) * 0.37, alpha=0.1)"],
    "lerp_grad_rows": [  # PyTorch's rows grad * (1 - weight): -0.0 kept (the differentiated decomposition gave 0.0)
        "v0 = m.tensor(-3.25, device=dev, requires_grad=True)",
        "v1 = m.lerp(v0, v0, 0.25)",
        "v3 = m.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)",
        "v2 = m.lerp(v3.expand(2, 3), m.tensor([[0.5], [2.0]], device=dev), m.tensor([0.3, 0.7, -1.0], device=dev))",
        "m.autograd.backward([v1, v2], [m.tensor(-0.0, device=dev), m.full((2, 3), 1.5, device=dev)])"],
    "float16_pow_half_is_pow": [  # float16 takes C's pow for +-0.5 (pow(-inf, 0.5) is inf), not sqrt / rsqrt
        "v0 = m.tensor([-inf, -0.0, 0.0, 2.0, inf, -1.0], dtype=m.float16, device=dev)",
        "v1 = v0 ** 0.5", "v2 = v0 ** -0.5"],
    "ldexp_integer_exponent_saturates": [  # C's ldexp: inf * 2**-2**31 is inf and 0 * 2**200 is 0 (not NaN)
        "v0 = m.tensor([[-7, 0, -2147483648], [0, 3, 200]], dtype=m.int32, device=dev)",
        "v1 = m.tensor([[inf, 0.0, inf], [-0.0, 1.5, 1e-30]], device=dev)",
        "v2 = m.ldexp(v1, v0)",
        "v3 = m.ldexp(v1.to(m.float16), -v0)"],
    "ldexp_bool_exponent": [  # PyTorch's kernel refuses a bool exponent of a floating self
        "v0 = m.ldexp(m.tensor([1.5, 2.0], dtype=m.float16, device=dev), m.tensor([True, False], device=dev))"],
    "nadam_float16_opmath": [  # PyTorch's lerp_/addcmul_ compute a float16 update in float32, rounded once
        "v0 = m.tensor([[3e-08, -2.75, 0.5], [-0.0, 3e-08, 1.0]], dtype=m.float16, device=dev, requires_grad=True)",
        "opt = m.optim.NAdam([v0], lr=0.01)",
        "loss0 = F.softmax(v0.reshape(-1), 0)[0]",
        "loss0.backward()",
        "opt.step()"],
}


@pytest.mark.parametrize("name", REGRESSIONS)
def test_fuzz_regression(name, device):
    lines = REGRESSIONS[name]
    msg = diff(lines, wt, device, torch)
    if device == "webgpu" and msg is not None and msg.startswith("limit:"):
        pytest.skip(f"the program needs what webgpu refuses by design: {msg}")
    assert msg is None, f"{msg}\n{source(lines, device)}"


# PyTorch's CPU kernels round lerp's, addcmul's and add's (alpha) multiply-add once (an FMA); webtorch's cpu computes
# them in float64 and rounds once. WGSL has no f64: webgpu rounds the product first (a documented limit).
FUSED_MULTIPLY_ADD = [
    "v0 = m.tensor([0.605, 0.045, 2.0, 0.1], device=dev, requires_grad=True)",
    "v1 = m.tensor([1.1, 0.3, -1.0, 0.7], device=dev, requires_grad=True)",
    "v2 = m.addcmul(v0, v1, v1, value=-0.5)",
    "v3 = m.sign(v2)",  # -7e-9 where a rounded product cancels to 0
    "v4 = m.addcmul(v0, v1, v1, value=-0.3) * 1e8",
    "v5 = m.lerp(v0, v1, 0.3) * 1e8",
    "v6 = m.lerp(v0, v1, m.tensor([0.7, 0.3, -2.0, 1.0], device=dev)) * 1e8",
    "v7 = m.add(v0, v1, alpha=-0.55) * 1e8",  # add's alpha too: fma(other, alpha, input)
    "m.autograd.backward([v2, v5, v6], [m.ones(4, device=dev), m.ones(4, device=dev), m.ones(4, device=dev)])"]

# the optimizers' addcmul too: centered RMSprop's square_avg.addcmul(grad_avg, grad_avg, value=-1) is inf (fma of
# inf and a product past float32's range), not inf - inf = NaN (seed 50000411)
RMSPROP_CENTERED_FMA = [
    "v0 = m.tensor([[-2.5, 1.0, -2.0], [-1.5, -1.25, 0.0], [1e+30, -2.0, -0.75]], device=dev, requires_grad=True)",
    "opt = m.optim.RMSprop([v0], lr=0.01, momentum=0.5, centered=True)",
    "loss0 = (v0 * v0).sum()",
    "loss0.backward()",
    "opt.step()"]


@pytest.mark.parametrize("program", [FUSED_MULTIPLY_ADD, RMSPROP_CENTERED_FMA], ids=["ops", "rmsprop"])
def test_fused_multiply_add(fuzz_device, program):
    name, device = fuzz_device
    if name == "webgpu":
        pytest.skip("WGSL has no f64 to round a multiply-add once in")
    msg = diff(program, wt, device, torch)
    assert msg is None, f"{msg}\n{source(program, device)}"


def test_fill_integer_with_value_requiring_grad(device):
    """fill_ / setitem of a 0-d float that requires grad into an integer tensor takes the value (webtorch
    raised). PyTorch also gives the integer tensor history, a state its next op refuses ("Autograd not
    support dtype: Long"): webtorch's stays a plain tensor."""
    for m, dev in ((torch, "cpu"), (wt, device)):
        v0, v1 = m.tensor([[1, 2], [3, 4]], device=dev), m.tensor([7, 8], dtype=m.uint8, device=dev)
        s = m.tensor([-1.5, 2.5], device=dev, requires_grad=True)
        v0[0] = s[1] * 1
        v1.fill_(s[0] * -2)
        assert v0.tolist() == [[2, 2], [3, 4]] and v1.tolist() == [3, 3], m
