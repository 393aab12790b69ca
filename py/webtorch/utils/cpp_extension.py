"""torch.utils.cpp_extension: building C++/CUDA extensions. webtorch is pure Python (it also runs in the browser),
so every entry point raises RuntimeError; write new ops with torch.library.custom_op (Python kernels)."""

_NAMES = ("get_default_build_root", "check_compiler_ok_for_platform", "get_compiler_abi_compatibility_and_version",
          "BuildExtension", "CppExtension", "CUDAExtension", "SyclExtension", "include_paths", "library_paths", "load",
          "load_inline", "is_ninja_available", "verify_ninja_availability", "remove_extension_h_precompiler_headers",
          "get_cxx_compiler", "check_compiler_is_gcc")


def _no_cpp(name):
    def entry(*args, **kwargs):
        raise RuntimeError(f"torch.utils.cpp_extension.{name}: webtorch is pure Python and has no C++ runtime to "
                           "build or load extensions against; define the op with torch.library.custom_op instead")
    entry.__name__ = entry.__qualname__ = name
    return entry


globals().update({name: _no_cpp(name) for name in _NAMES})  # PyTorch's public names, each raising
