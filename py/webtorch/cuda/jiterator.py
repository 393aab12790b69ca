"""torch.cuda.jiterator: CUDA kernels compiled from C++ strings, which webtorch cannot run
(webtorch.webgpu.custom_op takes a WGSL kernel instead)."""
__all__ = []


def _create_jit_fn(code_string, **kwargs):
    raise RuntimeError("torch.cuda.jiterator compiles CUDA C++; webtorch has no CUDA "
                       "(webtorch.webgpu.custom_op runs a WGSL kernel)")


_create_multi_output_jit_fn = _create_jit_fn
