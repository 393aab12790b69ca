"""torch.backends.cuda: settable flags with no effect (webtorch has no CUDA)."""


class _Matmul:
    """`torch.backends.cuda.matmul.allow_tf32` and friends: stored, never used."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built():
    return False
