"""torch.cuda.tunable: TunableOp (GEMM autotuning on CUDA/ROCm), absent here; the functions raise
PyTorch's AttributeError without CUDA."""
from ._state import _missing_c

__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "record_untuned_enable",
           "record_untuned_is_enabled", "set_max_tuning_duration", "get_max_tuning_duration",
           "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename", "get_filename",
           "get_results", "get_validators", "read_file", "tune_gemm_in_file", "mgpu_tune_gemm_in_file",
           "set_rotating_buffer_size", "get_rotating_buffer_size", "set_numerical_check_tolerances"]


def _absent(name):
    def f(*args, **kwargs):
        _missing_c(f"_cuda_tunableop_{name}")
    f.__name__ = name
    return f


enable = _absent("enable")
is_enabled = _absent("is_enabled")
tuning_enable = _absent("tuning_enable")
tuning_is_enabled = _absent("tuning_is_enabled")
record_untuned_enable = _absent("record_untuned_enable")
record_untuned_is_enabled = _absent("record_untuned_is_enabled")
set_max_tuning_duration = _absent("set_max_tuning_duration")
get_max_tuning_duration = _absent("get_max_tuning_duration")
set_max_tuning_iterations = _absent("set_max_tuning_iterations")
get_max_tuning_iterations = _absent("get_max_tuning_iterations")
set_filename = _absent("set_filename")
get_filename = _absent("get_filename")
get_results = _absent("get_results")
get_validators = _absent("get_validators")
read_file = _absent("read_file")
tune_gemm_in_file = _absent("tune_gemm_in_file")
mgpu_tune_gemm_in_file = _absent("mgpu_tune_gemm_in_file")
set_rotating_buffer_size = _absent("set_rotating_buffer_size")
get_rotating_buffer_size = _absent("get_rotating_buffer_size")
set_numerical_check_tolerances = _absent("set_numerical_check_tolerances")
