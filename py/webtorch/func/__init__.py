"""torch.func: composable function transforms (JAX-style) over webtorch's autograd and vmap's batching rules."""
from .._functorch.eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .._functorch.einops import rearrange
from .._functorch.functional_call import functional_call, stack_module_state
from .._functorch.vmap import BatchedTensor as _BatchedTensor, vmap


def functionalize(func, *, remove="mutations"):
    """PyTorch's functionalize removes mutations from a traced program; run eagerly its result is func's, which
    is what this returns."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators "
                           "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")
    return func


def debug_unwrap(tensor, *, recurse=True):
    """The batch a BatchedTensor holds (every level's with `recurse`); any other tensor itself."""
    while isinstance(tensor, _BatchedTensor):
        tensor = tensor._value
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root):
    """Every batch norm under root stops tracking running statistics (they would mix the examples of a vmap)."""
    for m in root.modules():
        if hasattr(m, "track_running_stats") and hasattr(m, "running_mean"):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian",
           "jacfwd", "jacrev", "jvp", "linearize", "vjp", "functional_call", "stack_module_state", "debug_unwrap",
           "rearrange"]
