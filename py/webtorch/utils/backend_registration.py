"""torch.utils.backend_registration: PrivateUse1 (out-of-tree device) registration, which webtorch has no dispatch
key for: both entry points raise."""


def rename_privateuse1_backend(backend_name):
    raise RuntimeError(f"rename_privateuse1_backend({backend_name!r}): webtorch has no PrivateUse1 dispatch key to "
                       "rename (its devices are cpu and webgpu)")


def generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_packed_sequence=True,
                                             for_storage=False, unsupported_dtype=None):
    raise RuntimeError("generate_methods_for_privateuse1_backend: webtorch has no PrivateUse1 backend "
                       "(its devices are cpu and webgpu)")
